"""The semantic tests on each supported numba release, and on the oldest and newest Python.

    nox -l                                          # the sessions
    nox -s "semantics(numba-0.63.0-numpy-1.24.0)"   # one of them
    nox -t oldest                                   # the same: the oldest numba and numpy
    nox -t oldest -- -m "not slow"                  # arguments after -- go to pytest

Each session installs the package with its test extra into a new virtual environment,
then runs the semantic tests twice: on the tier of kernels the package picks for that
numba, and on the portable tier (``ARGMAX_NUMBA_TIER=portable``). nox finds each Python
as ``python3.X`` on the PATH.
"""

from __future__ import annotations

import os

import nox

# A Python that is not installed fails its session, here as on CI: nox would otherwise
# skip it and still exit 0, which reads as a pass.
nox.options.error_on_missing_interpreters = True

# The numba releases the package supports, oldest first.
NUMBA_RELEASES = ["0.63.0", "0.63.1", "0.64.0", "0.65.1", "0.66.0", "0.67.0", "0.68.0", "0.68.1"]
# The oldest numpy that pyproject.toml allows; it runs with the oldest numba.
OLDEST_NUMPY = "1.24.0"
NEWEST_NUMBA = NUMBA_RELEASES[-1]

# The semantic tests: the oracle, differential, layout and error tests, @njit callers,
# the ONNX operator cases, dask, and shape inference.
SEMANTIC_TESTS = ["tests/api", "tests/jit", "tests/integrations", "tests/shape"]
# The ones that run ArgMax kernels, run again on the portable tier.
KERNEL_TESTS = ["tests/api", "tests/jit", "tests/integrations"]
PYTEST = ["python", "-m", "pytest", "-n", "2", "-q"]

# (numba, numpy pin or None) for each session of ``semantics``; ``nox -t oldest`` and
# ``nox -t newest`` pick the first and the last.
MATRIX = [
    nox.param(
        NUMBA_RELEASES[0],
        OLDEST_NUMPY,
        id=f"numba-{NUMBA_RELEASES[0]}-numpy-{OLDEST_NUMPY}",
        tags=["oldest"],
    ),
    *(nox.param(numba, None, id=f"numba-{numba}") for numba in NUMBA_RELEASES[1:-1]),
    nox.param(NEWEST_NUMBA, None, id=f"numba-{NEWEST_NUMBA}", tags=["newest"]),
]


def run_semantic_tests(session: nox.Session, *pins: str) -> None:
    """Install the package with ``pins`` and run the semantic tests on both tiers."""
    session.install(".[test]", *pins)
    session.run(
        "python",
        "-c",
        "import sys, llvmlite, numba, numpy; "
        "print('python', sys.version.split()[0], '| numba', numba.__version__, "
        "'| llvmlite', llvmlite.__version__, '| numpy', numpy.__version__)",
    )
    # A disk cache of compiled code for this session alone: code compiled by one numba
    # release is not for another.
    cache = os.path.join(session.create_tmp(), "numba-cache")
    # (None: the default tier, whatever ARGMAX_NUMBA_TIER nox was started with.)
    extra = session.posargs  # e.g. -m "not slow"
    env = {"NUMBA_CACHE_DIR": cache, "ARGMAX_NUMBA_TIER": None}
    session.run(*PYTEST, *extra, *SEMANTIC_TESTS, env=env)
    session.run(*PYTEST, *extra, *KERNEL_TESTS, env={**env, "ARGMAX_NUMBA_TIER": "portable"})


@nox.session(python="3.11")
@nox.parametrize(("numba", "numpy"), MATRIX)
def semantics(session: nox.Session, numba: str, numpy: str | None) -> None:
    """The semantic tests with one numba release (the oldest also with the oldest numpy)."""
    pins = [f"numba=={numba}"]
    if numpy is not None:
        pins.append(f"numpy=={numpy}")
    run_semantic_tests(session, *pins)


@nox.session(python=["3.10", "3.13"])
def pythons(session: nox.Session) -> None:
    """The semantic tests on the oldest and newest Python supported, with the newest numba."""
    run_semantic_tests(session, f"numba=={NEWEST_NUMBA}")

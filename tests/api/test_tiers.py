"""The two tiers of kernels: which one a process runs, the override, and the fallback."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import argmax_numba
import argmax_numba.api as api
from argmax_numba import argmax, tiers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A process whose numba says it is a release newer than the fast tier was tested with.
NEWER_NUMBA = """
import numba
numba.__version__ = "0.69.0"
numba.version_info = numba.version_info._replace(
    major=0, minor=69, patch=0, short=(0, 69), full=(0, 69, 0), string="0.69.0"
)
import warnings
import numpy as np
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import argmax_numba
    from argmax_numba import argmax
    x = np.random.default_rng(0).standard_normal((300, 200)).astype(np.float32)
    x[7, 9] = np.nan
    for axis in (0, 1):
        for last in (0, 1):
            want = np.argmax(x, axis) if not last else x.shape[axis] - 1 - np.argmax(
                np.flip(x, axis), axis
            )
            assert (argmax(x, axis, 0, last) == want).all(), (axis, last)

    @numba.njit
    def compiled(v):
        return argmax(v, 1, 0)

    assert (compiled(x) == np.argmax(x, 1)).all()
ours = [w for w in caught if issubclass(w.category, RuntimeWarning)]
print(argmax_numba.kernel_tier())
for w in ours:
    print("WARNING", w.message)
"""


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k != tiers.ENVIRONMENT}
    full.update(PYTHONPATH=ROOT, **env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full,
        cwd=ROOT,
        timeout=600,
    )


def test_an_untested_numba_gets_the_portable_tier_and_one_warning():
    proc = _python(NEWER_NUMBA)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "portable"
    warned = [line for line in lines if line.startswith("WARNING")]
    assert warned == [
        "WARNING numba 0.69.0 is newer than the fast kernels were tested with (0.63-0.68); "
        "using the portable kernels"
    ]


def test_the_environment_forces_the_fast_tier_with_a_warning():
    proc = _python(NEWER_NUMBA, ARGMAX_NUMBA_TIER="fast")
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "fast"
    warned = [line for line in lines if line.startswith("WARNING")]
    assert len(warned) == 1 and "as ARGMAX_NUMBA_TIER=fast asks" in warned[0], warned


def test_the_environment_chooses_the_portable_tier_silently():
    code = """
        import warnings
        warnings.simplefilter("error")
        import argmax_numba
        print(argmax_numba.kernel_tier())
    """
    proc = _python(code, ARGMAX_NUMBA_TIER="portable")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["portable"]


def test_an_unknown_tier_name_is_ignored_with_a_warning():
    code = """
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import argmax_numba
        print(argmax_numba.kernel_tier(), [str(w.message) for w in caught])
    """
    proc = _python(code, ARGMAX_NUMBA_TIER="fastest")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "'fastest' is neither 'fast' nor 'portable'; ignored" in proc.stdout
    assert proc.stdout.split()[0] in ("fast", "portable")


def test_numba_disable_jit_imports_and_answers_right():
    # Plain Python: slow, so small inputs; every layout family and both flags.
    code = """
        import numba, numpy as np
        assert numba.config.DISABLE_JIT
        import argmax_numba
        from argmax_numba import argmax
        rng = np.random.default_rng(2)
        for shape in [(9,), (40, 3), (3, 40), (4, 5, 6)]:
            for dtype in (np.float32, np.float16, np.int8, np.uint64):
                x = (rng.standard_normal(shape) * 3).astype(dtype)
                if x.dtype.kind == "f":
                    x.flat[::5] = np.nan
                for axis in range(x.ndim):
                    for last in (0, 1):
                        want = np.argmax(x, axis) if not last else (
                            x.shape[axis] - 1 - np.argmax(np.flip(x, axis), axis))
                        assert (argmax(x, axis, 0, last) == want).all(), (shape, dtype)
        print(argmax_numba.kernel_tier())
    """
    proc = _python(code, NUMBA_DISABLE_JIT="1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["portable"]


@pytest.fixture
def restore_tier():
    saved = tiers.current(), tiers.STATE.warned, api._PLANS
    yield
    tiers.use(saved[0])
    tiers.STATE.warned = saved[1]
    api._PLANS = saved[2]


def test_a_fast_kernel_that_fails_to_build_falls_back(monkeypatch, restore_tier):
    from argmax_numba.kernels import registry

    def broken(self, *args):
        raise RuntimeError("an internal moved")

    tiers.use(tiers.Tier.FAST)
    tiers.STATE.warned = False
    api._PLANS = {}
    monkeypatch.setattr(registry.KernelCode, "entry", broken)
    x = np.random.default_rng(1).standard_normal((64, 33)).astype(np.float32)
    with pytest.warns(RuntimeWarning, match="the fast kernels failed .*an internal moved"):
        got = argmax(x, 1, 0)
    np.testing.assert_array_equal(got, np.argmax(x, 1))
    assert argmax_numba.kernel_tier() == "portable"
    # One warning: later calls run the portable kernels without another.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(argmax(x, 0, 0), np.argmax(x, 0))
        np.testing.assert_array_equal(argmax(x.T, 1, 0), np.argmax(x.T, 1))


def test_both_tiers_agree_on_the_same_inputs():
    # The portable kernels are the fast ones' slow, obvious twin: on the same inputs,
    # both give the same answers (and numpy's).
    rng = np.random.default_rng(8)
    for shape in [(1000, 37), (37, 1000), (64, 65, 66), (5, 100000), (100000, 5)]:
        x = rng.integers(-3, 4, shape).astype(np.float32)
        x.flat[::97] = np.nan
        for axis in range(x.ndim):
            for last in (0, 1):
                with api.on_tier(tiers.Tier.FAST):
                    fast = argmax(x, axis, 1, last)
                with api.on_tier(tiers.Tier.PORTABLE):
                    portable = argmax(x, axis, 1, last)
                np.testing.assert_array_equal(fast, portable, err_msg=f"{shape} {axis} {last}")

"""The on-disk cache of compiled kernels: concurrent first use, read-only installs."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest

# These tests check the fast kernels: they run on them whatever tier the process chose.
pytestmark = pytest.mark.usefixtures("fast_tier")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHECK = textwrap.dedent(
    """
    import numpy as np
    from numba import njit
    from argmax_numba import argmax

    @njit
    def predict(s, axis):  # a user's compiled caller, compiled by each process at once
        return argmax(s, axis, 0, 0)

    x = np.random.default_rng(0).standard_normal((300, 200)).astype(np.float32)
    x[5, 7] = np.nan
    for axis in (0, 1):
        want = np.argmax(x, axis)
        assert (argmax(x, axis, 0) == want).all(), axis
        assert (argmax(x[:20, :30], axis, 0) == np.argmax(x[:20, :30], axis)).all()
        assert (predict(x, axis) == want).all(), axis
        assert (predict(x[:, :30], axis) == np.argmax(x[:, :30], axis)).all(), axis
    import argmax_numba.kernels.registry as k
    print("ok", k.KERNELS[(3, True)][k.Kernel.ROWS].driver.stats.cache_path)
    """
)


# Proof that the child really could not write into the install directory.
PROBE = textwrap.dedent(
    """
    import argmax_numba, os
    try:
        open(os.path.join(os.path.dirname(argmax_numba.__file__), "probe"), "w")
    except OSError:
        print("read-only")
    """
)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["ARGMAX_NUMBA_TIER"] = "fast"  # the disk cache of the fast kernels
    env.update(extra)
    return env


@pytest.mark.slow
def test_four_processes_on_an_empty_cache(tmp_path):
    # Python callers and compiled callers alike, four processes compiling at once.
    env = _env(NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHECK],
            env=env,
            cwd=tmp_path,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(4)
    ]
    results = [p.communicate(timeout=600) + (p.returncode,) for p in procs]
    for out, err, code in results:
        assert code == 0, err[-3000:]
        assert out.startswith("ok")
    assert any(f.endswith(".nbi") for _, _, fs in os.walk(tmp_path / "cache") for f in fs)
    # and a fifth process finds everything in the cache
    again = _run([sys.executable, "-c", CHECK], env, tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]


def _run(argv: list[str], env: dict[str, str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)


def _package_copy(tmp_path):
    """The package copied into ``tmp_path / "site"``, without its disk cache."""
    site = tmp_path / "site"
    shutil.copytree(
        os.path.join(ROOT, "argmax_numba"),
        site / "argmax_numba",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return site


def _read_only_copy(tmp_path):
    """The package copied into a directory that its files' modes make read-only."""
    site = _package_copy(tmp_path)
    for folder, _dirs, files in os.walk(site):
        for name in files:
            os.chmod(os.path.join(folder, name), 0o444)
        os.chmod(folder, 0o555)
    os.chmod(tmp_path, 0o755)
    return site


def _read_only_command(site, argv: list[str]) -> list[str]:
    """``argv`` run where ``site`` cannot be written to.

    File modes do that for an ordinary user; root ignores them, so for root the child
    runs in its own mount namespace with ``site`` bind-mounted read-only.
    """
    if os.geteuid() != 0:
        return argv
    script = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && exec "$@"'
    return ["unshare", "--mount", "sh", "-c", script, str(site), *argv]


@pytest.mark.slow
def test_read_only_install_directory(tmp_path):
    site = _read_only_copy(tmp_path)
    user_cache = tmp_path / "user-cache"
    user_cache.mkdir()
    os.chmod(user_cache, stat.S_IRWXU | stat.S_IRWXG | stat.S_IRWXO)
    env = _env(PYTHONPATH=str(site), XDG_CACHE_HOME=str(user_cache), HOME=str(user_cache))
    proc = _run(_read_only_command(site, [sys.executable, "-c", CHECK + PROBE]), env, user_cache)
    assert proc.returncode == 0, proc.stderr[-3000:]
    cache_path = proc.stdout.split()[1]
    assert cache_path.startswith(str(user_cache)), cache_path  # numba fell back to it
    assert proc.stdout.split()[-1] == "read-only"
    assert not any("__pycache__" in d for _, d, _ in os.walk(site))


def test_compiled_functions_hold_no_compiled_code_in_closures():
    # numba's cache key includes the pickled closure cells of a function: a compiled
    # function held in a cell pickles differently in every process, so the function
    # would be compiled again by every process instead of loaded from the cache.
    from numba.core.registry import CPUDispatcher

    from argmax_numba.dtypes import KeyKind
    from argmax_numba.kernels import registry

    sets = [registry.tasks_of(k, last) for k in KeyKind for last in (0, 1)]
    dispatchers = [tasks[name] for tasks in sets for name in tasks.names]
    for kernels in (registry.KERNELS[key] for key in registry.KERNEL_SETS):
        for kernel in kernels.all_codes():
            dispatchers += [kernel.driver, *kernel.tasks]
    assert len(dispatchers) > 100
    for fn in dispatchers:
        assert isinstance(fn, CPUDispatcher)
        cells = fn.py_func.__closure__ or ()
        held = [type(c.cell_contents).__name__ for c in cells]
        assert all(isinstance(c.cell_contents, int) for c in cells), (fn.py_func.__name__, held)


BFLOAT16_LATER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import argmax_numba
    assert "ml_dtypes" not in sys.modules, "import argmax_numba loaded ml_dtypes"
    import ml_dtypes
    x = np.random.default_rng(1).permutation(4096).reshape(64, 64).astype(ml_dtypes.bfloat16)
    for axis in (0, 1):
        want = np.argmax(x.astype(np.float32), axis, keepdims=True)
        assert (argmax_numba.argmax(x, axis) == want).all(), axis
    print("ok")
    """
)


def test_import_leaves_out_ml_dtypes_until_a_bfloat16_input():
    # Importing ml_dtypes takes longer than the rest of the import (docs/performance.md,
    # "ml_dtypes imported only when a bfloat16 array appears"); bfloat16 inputs still
    # work once their user has imported it.
    proc = _run([sys.executable, "-c", BFLOAT16_LATER], _env(PYTHONPATH=ROOT), ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[-1] == "ok"


CACHE_USE = textwrap.dedent(
    """
    import sys
    import numba.core.base
    refreshes = []  # numba filling its registries, as it does before it compiles
    refresh = numba.core.base.BaseContext.refresh
    numba.core.base.BaseContext.refresh = lambda self: refreshes.append(1) or refresh(self)
    import numpy as np
    from argmax_numba import argmax
    from argmax_numba.dtypes import KeyKind
    from argmax_numba.kernels import registry
    x = np.array([[1.0, -np.inf, 0.5], [0.0, -0.0, -1.0]], np.float32)
    masked_before = "numpy.ma" in sys.modules  # numpy 1.x imports it with numpy
    assert argmax(x, 1, 0).tolist() == [0, 0]
    # A first call makes only the task it runs (each of numba's dispatchers costs time),
    # and, where it loads its code from the cache, types no array in Python (numba's
    # typing of arrays imports numpy.ma, which is slow to import; compiling may import it
    # anyway, through scipy).
    made = [len(registry.tasks_of(k, last)) for k in KeyKind for last in (0, 1)]
    assert sum(made) == 1, made
    assert refreshes or masked_before or "numpy.ma" not in sys.modules
    hits = misses = 0
    for key in list(registry.KERNELS):
        for kernel in registry.KERNELS[key].all_codes():
            for fn in (kernel.driver, *kernel.tasks):
                hits += sum(fn.stats.cache_hits.values())
                misses += sum(fn.stats.cache_misses.values())
    print(hits, misses, len(refreshes))
    if "compile" in sys.argv:
        # a user's function compiled after the kernels were loaded without the registries
        @numba.njit
        def user(v):
            return argmax(v, 1, 0)
        assert user(x).tolist() == [0, 0]
        assert user(-x).tolist() == [1, 2]
        assert refreshes
    """
)


@pytest.mark.slow
def test_a_changed_module_is_never_served_stale_code(tmp_path):
    # numba takes a cached function for fresh while the file that defines it is
    # unchanged; the tasks are defined in one module and made of IR that others
    # generate, so a change to one of those alone must compile them again.
    site = _package_copy(tmp_path)
    env = _env(PYTHONPATH=str(site))

    def hits_misses_refreshes(*argv: str) -> list[int]:
        proc = _run([sys.executable, "-c", CACHE_USE, *argv], env, tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return [int(v) for v in proc.stdout.split()]

    first, again = hits_misses_refreshes(), hits_misses_refreshes("compile")
    assert first[0] == 0 and first[1] > 0 and first[2] > 0
    # all loaded from the cache, and without numba's registries (docs/performance.md,
    # "Compiled code loaded without numba's registries")
    assert again == [first[1], 0, 0]
    with open(site / "argmax_numba" / "vector" / "keys.py", "a") as f:
        f.write("\n# changed\n")
    assert hits_misses_refreshes() == first  # all compiled again
    assert hits_misses_refreshes() == again

"""Sections of the benchmark that need fresh processes: peak memory and start-up time.

Children are ``python -c`` programs run with the package's parent directory first on
``PYTHONPATH`` (so they import the same ``argmax_numba`` as the benchmark) and print
one JSON line. Each section prints its lines and returns ``(data, checks)``.
"""

from __future__ import annotations

import compileall
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

__all__ = ["STARTUP_LAYOUTS", "memory_section", "startup_section"]

COMPILE_TARGET_S = 1.5
WARM_TARGET_S = 0.5
# Allowed memory beyond the output: a fixed part plus a part per thread.
MEM_FIXED_MIB = 2.0
MEM_PER_THREAD_MIB = 1.0

_MEMORY_CHILD = """
import json, resource, sys
import numpy as np
import numba
import argmax_numba

shape, order, axis = tuple(json.loads(sys.argv[1])), sys.argv[2], int(sys.argv[3])
unit = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux

def proc_status(field):
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None

def sample():
    ru = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit
    return {"ru_maxrss": ru, "vmhwm": proc_status("VmHWM"), "rss": proc_status("VmRSS")}

def make(shape):
    buf = np.empty(shape[::-1] if order == "F" else shape, np.float32)
    np.random.default_rng(0).random(dtype=np.float32, out=buf)
    return buf.T if order == "F" else buf

argmax_numba.argmax(make(tuple(min(s, 64) for s in shape)), axis, 1, 0)  # compile first
x = make(shape)
before = sample()
out = argmax_numba.argmax(x, axis, 1, 0)
after = sample()
print(json.dumps({"before": before, "after": after, "out": out.nbytes, "input": x.nbytes,
                  "threads": numba.get_num_threads()}))
"""

_STARTUP_CHILD = """
import sys
import time
t_start = time.perf_counter()
import argmax_numba
t_import = time.perf_counter()
import json
import numpy as np
shape, axis = tuple(int(s) for s in sys.argv[1].split("x")), int(sys.argv[2])
x = np.random.default_rng(0).random(shape, dtype=np.float32)
t0 = time.perf_counter()
argmax_numba.argmax(x, axis, 1, 0)
t1 = time.perf_counter()
wall = time.time()
argmax_numba.argmax(x, axis, 1, 0)
t2 = time.perf_counter()
print(json.dumps({"import": t_import - t_start, "first": t1 - t0, "second": t2 - t1,
                  "setup": t0 - t_import, "wall": wall}))
"""


# numba's own start-up, for context: a one-line cached function, imported and called.
_FLOOR_MODULE = """
import numba


@numba.njit(cache=True)
def first(x):
    return x.argmax()
"""

_FLOOR_CHILD = """
import time
t_start = time.perf_counter()
import json
import numpy as np
import floor_probe
floor_probe.first(np.zeros(4, np.float32))
print(json.dumps({"total": time.perf_counter() - t_start}))
"""


def _package_root() -> str:
    """The directory holding the ``argmax_numba`` package the benchmark runs."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    root = _package_root()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def _run_child(code: str, args=(), env=None, timeout: float = 600) -> dict:
    """Run ``python -c code args`` and parse its last stdout line as JSON."""
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env or _child_env(),
        cwd=_package_root(),
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RuntimeError(f"child exited with {proc.returncode}: {tail[:200]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _memory_one(shape, order: str, axis: int) -> dict:
    """One child's numbers; ``extra`` is the growth of its peak RSS during the call.

    On Linux the peak is the process's own high-water mark (``VmHWM``): ``ru_maxrss``
    of a child also counts the peak of the process that launched it (the kernel carries
    it over through ``exec``), which here is the benchmark holding large arrays, so it
    would hide the call. ``ru_maxrss`` is used where ``/proc`` is not available.
    """
    res = _run_child(_MEMORY_CHILD, [json.dumps(list(shape)), order, str(axis)])
    before, after = res["before"], res["after"]
    res["source"] = "VmHWM" if before["vmhwm"] is not None else "ru_maxrss"
    key = "vmhwm" if before["vmhwm"] is not None else "ru_maxrss"
    res["extra"] = after[key] - before[key]
    res["slack"] = None if before["rss"] is None else max(0, before[key] - before["rss"])
    res["allowed"] = res["out"] + (MEM_FIXED_MIB + MEM_PER_THREAD_MIB * res["threads"]) * 2**20
    return res


def _slack(r: dict) -> str:
    """How far the peak before the call exceeded the RSS then (0 in a clean run)."""
    return "" if r["slack"] is None else f", slack {r['slack'] / 2**20:.1f} MiB"


def memory_section(nbytes: int):
    """Peak extra resident memory of one call on a C- and a Fortran-ordered float32 input.

    The child compiles on a small input first and then allocates the large one, so its
    peak RSS before the call is the input plus the interpreter (``slack`` shows any
    excess of that peak over the RSS then, which would hide part of the call's use).
    Target: peak after - peak before <= output + a small constant per thread.
    """
    d = 1024
    shape = (d, d, max(1, nbytes // (4 * d * d)))
    mib = 2**20
    print(
        f"\n[memory] peak RSS during one call, float32 {shape} "
        f"({4 * d * d * shape[2] / mib:.0f} MiB); extra = peak after - peak before"
    )
    data, ok, worst = {}, True, ""
    for order in ("C", "F"):
        for axis in range(3):
            try:
                r = _memory_one(shape, order, axis)
            except Exception as exc:
                print(f"  {order} axis {axis}: failed: {exc}")
                ok, worst = False, f"{order} axis {axis} failed"
                continue
            data[f"{order}{axis}"] = r
            good = r["extra"] <= r["allowed"]
            print(
                f"  {order} axis {axis}: extra {r['extra'] / mib:7.1f} MiB, output "
                f"{r['out'] / mib:6.1f} MiB, extra/output {r['extra'] / r['out']:5.2f}"
                f"{_slack(r)} ({r['source']}){'' if good else '  OVER'}"
            )
            if not good:
                ok, worst = False, f"{order} axis {axis}: {r['extra'] / mib:.1f} MiB extra"
    limit = f"output + {MEM_FIXED_MIB:g} MiB + {MEM_PER_THREAD_MIB:g} MiB/thread"
    return data, [(f"memory <= {limit}", ok, worst or "all within")]


def _wall(args, env=None) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, *args],
        env=env or _child_env(),
        check=True,
        cwd=_package_root(),
        capture_output=True,
    )
    return time.perf_counter() - start


# float32 inputs whose first calls compile different kernels: rows (the main case),
# columns, a few long rows split between the cores, rows of 4, columns of 3-D data, and
# a few columns of many rows (``narrow``).
STARTUP_LAYOUTS = (
    ((512, 512), 1),
    ((512, 512), 0),
    ((1 << 20,), 0),
    ((100000, 4), 1),
    ((64, 64, 64), 1),
    ((262144, 4), 0),
)


# Warm runs of each layout after the first, whose median counts: the worst layout decides
# the target, and single runs of the other layouts took 0.33-0.61 s in one benchmark on
# the Intel Xeon, where ten runs each of the one at 0.61 s (1048576 along axis 0) and of
# two others took 0.41-0.45 s (medians). In the next, three runs in a row of 512 x 512
# along axis 0 took 0.59 s (median) where twelve runs of it right after took 0.32 s,
# as the two others did: the layouts now run in turn.
WARM_LAYOUT_RUNS = 3


def _layout_name(layout) -> str:
    shape, axis = layout
    return f"{'x'.join(map(str, shape))} axis {axis}"


@contextlib.contextmanager
def _numba_floor():
    """A runner of numba's own start-up, for context: import and first call of a
    one-line ``@njit(cache=True)`` function with a warm cache, in a fresh process (its
    seconds); what numba itself takes before any kernel."""
    with tempfile.TemporaryDirectory(prefix="argmax-bench-floor-") as d:
        with open(os.path.join(d, "floor_probe.py"), "w") as f:
            f.write(_FLOOR_MODULE)
        env = _child_env(NUMBA_CACHE_DIR=os.path.join(d, "cache"))
        env["PYTHONPATH"] = os.pathsep.join((d, env["PYTHONPATH"]))
        _run_child(_FLOOR_CHILD, env=env)  # fills the cache
        yield lambda: _run_child(_FLOOR_CHILD, env=env)["total"]


def _startup_one(cache_dir: str, layout=STARTUP_LAYOUTS[0]) -> dict:
    """One fresh process: import, first call, and the time from launch to its end."""
    launched = time.time()
    shape, axis = layout
    args = ("x".join(map(str, shape)), str(axis))
    res = _run_child(_STARTUP_CHILD, args, env=_child_env(NUMBA_CACHE_DIR=cache_dir))
    res["from_start"] = res["wall"] - launched - res["setup"]
    return res


def _medians(runs: list[dict]) -> dict:
    return {k: statistics.median(r[k] for r in runs) for k in ("import", "first", "from_start")}


def startup_section(cold_runs: int, warm_runs: int, layouts: int = 1):
    """Import and first-call time in fresh processes, with an empty and a warm numba cache,
    for the first ``layouts`` of ``STARTUP_LAYOUTS`` (after the first: one cold run each,
    and the median of WARM_LAYOUT_RUNS warm ones, the layouts in turn).

    Targets: the cold first call (compilation) <= ``COMPILE_TARGET_S`` for every layout;
    with a warm cache, import + first call <= ``WARM_TARGET_S``. The package's Python
    bytecode is written first, as installing it does: children would otherwise compile
    its source on every import where ``PYTHONDONTWRITEBYTECODE`` is set.
    """
    print(f"\n[startup] fresh processes, float32 {_layout_name(STARTUP_LAYOUTS[0])} (medians)")
    compileall.compile_dir(os.path.join(_package_root(), "argmax_numba"), quiet=2)
    numba_alone = statistics.median(_wall(["-c", "import numba"]) for _ in range(3))
    print(f"  python -c 'import numba' (context): {numba_alone:.2f} s")
    cold, warm, floors, dirs = [], [], [], []
    try:
        with _numba_floor() as floor_run:
            for _ in range(cold_runs):
                dirs.append(tempfile.mkdtemp(prefix="argmax-bench-cache-"))
                cold.append(_startup_one(dirs[-1]))
            # numba's floor in turn with the warm runs: the machine's pace drifts.
            for _ in range(warm_runs):
                floors.append(floor_run())
                warm.append(_startup_one(dirs[-1]))
        others, caches, again = {}, {}, {}
        for layout in STARTUP_LAYOUTS[1:layouts]:
            name = _layout_name(layout)
            dirs.append(tempfile.mkdtemp(prefix="argmax-bench-cache-"))
            caches[name] = (dirs[-1], layout)
            others[name] = _startup_one(*caches[name])["first"]
            again[name] = []
        # The layouts in turn, so that a slow spell of the machine falls on several.
        for _ in range(WARM_LAYOUT_RUNS):
            for name, runs in again.items():
                runs.append(_startup_one(*caches[name]))
        others_warm = {
            name: statistics.median(r["import"] + r["first"] for r in runs)
            for name, runs in again.items()
        }
    except Exception as exc:
        print(f"  failed: {exc}")
        return {"error": str(exc)}, [("startup", False, "child failed")]
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    floor = statistics.median(floors)
    pairs = zip(warm, floors, strict=True)
    above = statistics.median(w["import"] + w["first"] - f for w, f in pairs)
    print(
        "  a one-line @njit(cache=True) function, warm cache, import + first call"
        f" (context, in turn with the warm runs): {floor:.2f} s"
    )
    c, w = _medians(cold), _medians(warm)
    for name, m in (("cold cache", c), ("warm cache", w)):
        print(
            f"  {name}: import {m['import']:.2f} s, first call {m['first']:.2f} s, "
            f"from process start {m['from_start']:.2f} s"
        )
    print(f"  warm cache, import + first call minus numba's (median of pairs): {above:+.2f} s")
    for name, first in others.items():
        print(
            f"  {name}: cold cache, first call {first:.2f} s; "
            f"warm cache, import + first call {others_warm[name]:.2f} s"
        )
    warm_total = w["import"] + w["first"]
    worst = max([c["first"], *others.values()])
    worst_warm = max([warm_total, *others_warm.values()])
    checks = [
        (
            f"cold first call (compile) <= {COMPILE_TARGET_S} s",
            worst <= COMPILE_TARGET_S,
            f"{c['first']:.2f} s" + (f", worst layout {worst:.2f} s" if others else ""),
        ),
        (
            f"warm import + first call <= {WARM_TARGET_S} s",
            worst_warm <= WARM_TARGET_S,
            f"{warm_total:.2f} s"
            + (f", worst layout {worst_warm:.2f} s" if others else "")
            + f"; numba's own floor {floor:.2f} s, a pair's difference {above:+.2f} s",
        ),
    ]
    data = {
        "python_import_numba": numba_alone,
        "numba_floor": floor,
        "warm_above_floor": above,
        "cold": cold,
        "warm": warm,
        "cold_layouts": others,
        "warm_layouts": others_warm,
    }
    return data, checks

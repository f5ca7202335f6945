"""The start-up of users' compiled functions that call ``argmax``, in fresh processes.

A user's ``@njit`` function ``predict(s, axis)`` returns ``argmax(s, axis, 0, 0)`` of a
float32 (256, 1000) input; the same function calling numba's own ``np.argmax(s, axis)``
runs beside it, and the bare function (no call, ``s.shape[0] + axis``) is the floor: what
any first compile in a fresh process costs. Each child times its function's first call
(compile and run; the imports before it are not counted) and checks the answer against
numpy. Three states of the disk cache:

- empty: nothing compiled on the machine yet (a new ``NUMBA_CACHE_DIR`` for each child);
- kernels cached: this package's code cached by an earlier process, the user's function
  not (``cache=False``);
- ``cache=True``: the user's function cached too, loaded by a new process.

Targets (the ratios the closing figures of the design are held to): with an empty cache
ours / numpy's at most 1.0; with the kernels cached at most 0.5 s above the bare
function's; with ``cache=True`` at most 0.2 s.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile

from .subproc import _child_env, _run_child

__all__ = ["CALLERS", "callers_section", "write_callers"]

EMPTY_RATIO_TARGET = 1.0
CACHED_ABOVE_BARE_S = 0.5
LOADED_TARGET_S = 0.2

# The body of ``predict`` for each caller.
CALLERS = {
    "ours": "argmax(s, axis, 0, 0)",
    "numpy": "np.argmax(s, axis)",
    "bare": "s.shape[0] + axis",
}

_MODULE = """
import numpy as np
from numba import njit

from argmax_numba import argmax


@njit(cache={cache})
def predict(s, axis):
    return {body}
"""

_CHILD = """
import json, sys, time
import numpy as np
import numba
sys.path.insert(0, sys.argv[1])
import argmax_numba
module = __import__(sys.argv[2])
s = np.random.default_rng(0).random((256, 1000), dtype=np.float32)
t0 = time.perf_counter()
got = module.predict(s, 1)
first = time.perf_counter() - t0
if sys.argv[2].startswith("caller_bare"):
    right = got == 257
else:
    right = bool((np.asarray(got) == np.argmax(s, 1)).all())
print(json.dumps({"first": first, "right": bool(right)}))
"""


def write_callers(folder: str, callers: dict[str, str] = CALLERS) -> None:
    """The module ``caller_{name}_{cache}`` of each caller in ``folder``, ``cache`` 0 or 1
    (``cache=True``)."""
    for name, body in callers.items():
        for cache in (False, True):
            path = os.path.join(folder, f"caller_{name}_{int(cache)}.py")
            with open(path, "w") as f:
                f.write(_MODULE.format(cache=cache, body=body))


def _first_call(folder: str, module: str, cache_dir: str) -> float:
    """One fresh process: the first call of ``module``'s ``predict`` (seconds)."""
    env = _child_env(NUMBA_CACHE_DIR=cache_dir)
    res = _run_child(_CHILD, (folder, module), env=env)
    if not res["right"]:
        raise RuntimeError(f"{module}: wrong answer")
    return res["first"]


def callers_section(runs: int):
    """The first call of each caller in each cache state, medians of ``runs`` children
    (the callers in turn); prints the lines and returns ``(data, checks)``."""
    print("\n[callers] a user's @njit function calling argmax, first call in a new process")
    folder = tempfile.mkdtemp(prefix="argmax-bench-callers-")
    dirs: list[str] = []

    def fresh_cache() -> str:
        dirs.append(tempfile.mkdtemp(prefix="argmax-bench-cache-"))
        return dirs[-1]

    try:
        write_callers(folder)
        times: dict[str, dict[str, list[float]]] = {
            state: {name: [] for name in CALLERS} for state in ("empty", "kernels", "cached")
        }
        for _ in range(runs):
            for name in CALLERS:
                cache_dir = fresh_cache()
                times["empty"][name].append(_first_call(folder, f"caller_{name}_0", cache_dir))
                times["kernels"][name].append(_first_call(folder, f"caller_{name}_0", cache_dir))
                _first_call(folder, f"caller_{name}_1", cache_dir)  # fills its cache
                times["cached"][name].append(_first_call(folder, f"caller_{name}_1", cache_dir))
    except Exception as exc:
        print(f"  failed: {exc}")
        return {"error": str(exc)}, [("compiled callers' start-up", False, "child failed")]
    finally:
        for d in [folder, *dirs]:
            shutil.rmtree(d, ignore_errors=True)
    med = {
        state: {name: statistics.median(v) for name, v in by.items()} for state, by in times.items()
    }
    labels = {
        "empty": "empty cache",
        "kernels": "package kernels cached",
        "cached": "cache=True, loaded",
    }
    for state, label in labels.items():
        m = med[state]
        print(
            f"  {label}: ours {m['ours']:.2f} s, numpy's np.argmax {m['numpy']:.2f} s, "
            f"bare {m['bare']:.2f} s; ours/numpy {m['ours'] / m['numpy']:.2f}, "
            f"ours - bare {m['ours'] - m['bare']:+.2f} s"
        )
    empty_ratio = med["empty"]["ours"] / med["empty"]["numpy"]
    above = med["kernels"]["ours"] - med["kernels"]["bare"]
    loaded = med["cached"]["ours"]
    checks = [
        (
            f"compiled caller, empty cache: ours/numpy <= {EMPTY_RATIO_TARGET}",
            empty_ratio <= EMPTY_RATIO_TARGET,
            f"{empty_ratio:.2f}",
        ),
        (
            f"compiled caller, kernels cached: ours - bare <= {CACHED_ABOVE_BARE_S} s",
            above <= CACHED_ABOVE_BARE_S,
            f"{above:+.2f} s",
        ),
        (
            f"compiled caller, cache=True: first call <= {LOADED_TARGET_S} s",
            loaded <= LOADED_TARGET_S,
            # (numba's own floor beside it: the bare function's first call)
            f"{loaded:.2f} s; the bare function's {med['cached']['bare']:.2f} s",
        ),
    ]
    return {"runs": times, "medians": med}, checks

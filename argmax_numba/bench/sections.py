"""In-process optional sections of the benchmark: calls from ``@njit`` code, and dask.

Each section prints its own lines and returns ``(data, checks)``: raw numbers for
``--json`` and ``(name, ok, detail)`` triples for the summary.
"""

from __future__ import annotations

import numpy as np

from .cases import cube_shape
from .timing import median, round_robin

__all__ = ["dask_section", "njit_section"]

NJIT_TARGET = 1.1


def _float32_cube(nbytes: int) -> np.ndarray:
    rng = np.random.default_rng(12)
    return rng.random(cube_shape(nbytes, 4), dtype=np.float32)


def _page_faults(fn) -> int:
    """Minor page faults (fresh pages mapped) during one call of ``fn``, where the
    platform counts them (else -1)."""
    try:
        import resource
    except ImportError:  # not on Windows
        return -1
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    fn()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def _user_function(argmax):
    """A user's ``@njit`` function calling ``argmax`` with constant flags."""
    import numba

    @numba.njit
    def from_njit(x, axis):
        return argmax(x, axis, 1, 0)

    return from_njit


def njit_section(argmax, nbytes: int, repeats: int):
    """``argmax`` called from a user's ``@njit`` function vs from Python, per axis.

    The compiled caller must not pay for being compiled: the target is a ratio
    (njit / Python) of at most ``NJIT_TARGET``.
    """
    x = _float32_cube(nbytes)
    print(f"\n[njit] from a user's @njit function vs from Python, float32 {x.shape}")
    try:
        from_njit = _user_function(argmax)
        from_njit(x, 0)
    except Exception as exc:
        msg = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
        print(f"  cannot call argmax from @njit code: {msg}")
        return {"error": msg}, [("njit/python <= 1.1", False, "not callable from @njit")]
    # The same bytes as rows of 4 too, whose int64 output is as large as a quarter of
    # the input's elements: the compiled caller allocates it.
    cases = {f"axis{a}": (f"axis {a}", x, a) for a in range(x.ndim)}
    if x.size % 4 == 0:
        tall = x.reshape(-1, 4)
        cases["rows_of_4"] = (f"{tall.shape[0]}x4 axis 1", tall, 1)
    data, worst = {}, 0.0
    for key, (name, y, axis) in cases.items():
        same = np.array_equal(from_njit(y, axis), argmax(y, axis, 1, 0))
        fns = {
            "python": lambda y=y, a=axis: argmax(y, a, 1, 0),
            "njit": lambda y=y, a=axis: from_njit(y, a),
        }
        samples = round_robin(fns, repeats, rotate=True)
        py, nj = median(samples["python"]), median(samples["njit"])
        # Page faults of one more call each: the output's pages are fresh or reused
        # ones, which the allocator decides (numpy's and numba's allocations differ).
        faults = {name: _page_faults(fn) for name, fn in fns.items()}
        worst = max(worst, nj / py)
        data[key] = {"samples": samples, "ratio": nj / py, "same_result": same, "faults": faults}
        flag = "" if same else "  RESULTS DIFFER"
        print(
            f"  {name}: python {py * 1e3:.2f} ms, njit {nj * 1e3:.2f} ms, "
            f"njit/python {nj / py:.2f} (page faults a call: python {faults['python']}, "
            f"njit {faults['njit']}){flag}"
        )
    check = (f"njit/python <= {NJIT_TARGET}", worst <= NJIT_TARGET, f"worst {worst:.2f}")
    return data, [check]


def _dask_modules():
    """(dask.array, argmax_numba.dask) or a reason why they cannot be used."""
    try:
        import dask.array as da
    except ImportError as exc:
        return None, f"dask is not importable ({exc})"
    try:
        from .. import dask as ours
    except ImportError as exc:
        return None, f"argmax_numba.dask is not importable ({exc})"
    return (da, ours), ""


def dask_section(n: int, chunk: int, repeats: int):
    """``argmax_numba.dask.argmax`` vs ``dask.array.argmax`` on one in-memory array."""
    print(f"\n[dask] {n}x{n} float32 in {chunk}x{chunk} chunks, threaded scheduler")
    mods, why = _dask_modules()
    if mods is None:
        print(f"  skipped: {why}")
        return {"skipped": why}, []
    da, ours = mods
    source = np.random.default_rng(13).random((n, n), dtype=np.float32)
    x = da.from_array(source, chunks=(chunk, chunk))
    data = {}
    for axis in (0, 1):
        fns = {
            "ours": lambda a=axis: ours.argmax(x, a, 1, 0).compute(scheduler="threads"),
            "dask": lambda a=axis: da.argmax(x, axis=a, keepdims=True).compute(scheduler="threads"),
        }
        try:
            same = np.array_equal(fns["ours"](), fns["dask"]())
        except Exception as exc:
            print(f"  axis {axis}: failed: {type(exc).__name__}: {str(exc)[:120]}")
            data[f"axis{axis}"] = {"error": repr(exc)}
            continue
        samples = round_robin(fns, repeats)
        t_ours, t_dask = median(samples["ours"]), median(samples["dask"])
        data[f"axis{axis}"] = {"samples": samples, "ratio": t_ours / t_dask, "same": same}
        flag = "" if same else "  RESULTS DIFFER"
        print(
            f"  axis {axis}: ours {t_ours * 1e3:.1f} ms, dask {t_dask * 1e3:.1f} ms, "
            f"ours/dask {t_ours / t_dask:.2f}{flag}"
        )
    return data, []

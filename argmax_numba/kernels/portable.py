"""The portable kernels: plain ``@njit(parallel=True)`` loops over the canonical layout.

They use only numba's public API (``numba.njit``, ``numba.prange``), so they work on any
numba, CPU and Python that numba supports, and under ``NUMBA_DISABLE_JIT=1`` they run as
plain Python. They are also the slow, obvious twin that the fast kernels are tested
against.

Two loops serve every layout of the canonical C-contiguous ``(outer, n, inner)`` view:

* ``reduce_rows`` for the last axis (``inner == 1``): each row is searched a chunk at a
  time, the chunk's largest key first (a reduction LLVM vectorises), then, only where
  that beats the best so far, its position in the chunk, read again from cache.
* ``reduce_middle`` for every other axis: each task owns a stretch of inner positions of
  one block ``x[o]`` and folds the ``n`` rows into a running best key and row number per
  position, a row at a time, so the input is read once, in memory order.

Elements are compared through integer keys, exactly as the fast kernels compare them:
integers are their own keys; a float's key is computed from its bits (the caller passes
floats as signed integers of the same width), ordered as the floats are, with every NaN
above +inf and ``-0.0 == +0.0``.
"""

from __future__ import annotations

import functools
from types import FunctionType

import numpy as np
from numba import njit, prange

from ..dtypes import KeyKind

__all__ = ["CHUNK", "STRETCH", "portable_kernels"]

# Elements of a row whose largest key is found before its position is looked for.
CHUNK = 2048
# Inner positions a task of ``reduce_middle`` owns (its running keys stay in L1).
STRETCH = 1024

# kind -> (bits of +inf, mask of the magnitude bits)
_FLOAT_BITS = {
    KeyKind.F16: (0x7C00, 0x7FFF),
    KeyKind.BF16: (0x7F80, 0x7FFF),
    KeyKind.F32: (0x7F800000, 0x7FFFFFFF),
    KeyKind.F64: (0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF),
}


def _key_functions(kind: int):
    """The key of one element of key kind ``kind``, and a new array for ``n`` keys of
    elements like ``x``'s, as inlined numba functions."""
    if kind == KeyKind.INT:

        def key(v):
            return v

        def keys(n, x):
            return np.empty(n, x.dtype)  # (uint64 keys need all 64 bits)

    else:

        def keys(n, x):
            return np.empty(n, np.int64)

        inf, mask = _FLOAT_BITS[KeyKind(kind)]

        def key(v):
            # The magnitude, every NaN's made the one above +inf's, negated for the
            # negative numbers (but NaN): the floats' order, as integers.
            mag = v & mask
            if mag > inf:
                mag = inf + 1
            return -mag if v < 0 and mag <= inf else mag

    return njit(inline="always")(key), njit(inline="always")(keys)


# Bound by ``PortableKernels`` to the functions of one key kind (``_key_functions``).
key = keys = None


def reduce_rows(x, out, last):
    outer, n = x.shape
    for o in prange(outer):
        best = key(x[o, 0])
        at = 0
        for c0 in range(0, n, CHUNK):
            c1 = min(c0 + CHUNK, n)
            top = key(x[o, c0])
            for i in range(c0 + 1, c1):
                top = max(top, key(x[o, i]))
            if c0 == 0 or top > best or (last and top == best):
                # The chunk holds the best so far: find its first (or last) place.
                if last:
                    for i in range(c1 - 1, c0 - 1, -1):
                        if key(x[o, i]) == top:
                            at = i
                            break
                else:
                    for i in range(c0, c1):
                        if key(x[o, i]) == top:
                            at = i
                            break
                best = top
        out[o] = at


def reduce_middle(x, out, last):
    outer, n, inner = x.shape
    stretches = (inner + STRETCH - 1) // STRETCH
    for t in prange(outer * stretches):
        o = t // stretches
        j0 = (t - o * stretches) * STRETCH
        width = min(j0 + STRETCH, inner) - j0
        best = keys(width, x)
        at = np.zeros(width, np.int64)
        for j in range(width):
            best[j] = key(x[o, 0, j0 + j])
        for i in range(1, n):
            for j in range(width):
                k = key(x[o, i, j0 + j])
                if k > best[j] or (last and k == best[j]):
                    best[j] = k
                    at[j] = i
        for j in range(width):
            out[o, j0 + j] = at[j]


def _compile(fn, name: str, functions: tuple, parallel: bool):
    """``fn`` with the key ``functions`` bound as its globals, compiled lazily under
    ``name`` and kept in numba's disk cache (``cache=True``). Under ``NUMBA_DISABLE_JIT``
    numba returns it as it is, a Python function in which ``prange`` is ``range``."""
    key, keys = functions
    bound_globals = {**fn.__globals__, "key": key, "keys": keys}
    bound = FunctionType(fn.__code__, bound_globals, name, fn.__defaults__)
    bound.__qualname__ = name
    return njit(parallel=parallel, nogil=True, cache=True)(bound)


class PortableKernels:
    """The portable loops for one key kind, serial and parallel (compiled by numba on
    first use, per dtype)."""

    def __init__(self, kind: int):
        key = _key_functions(kind)
        self.rows = {
            p: _compile(reduce_rows, f"portable_rows_k{kind}_{'par' if p else 'ser'}", key, p)
            for p in (False, True)
        }
        self.middle = {
            p: _compile(reduce_middle, f"portable_middle_k{kind}_{'par' if p else 'ser'}", key, p)
            for p in (False, True)
        }

    def run(
        self,
        view: np.ndarray,
        out: np.ndarray,
        outer: int,
        n: int,
        inner: int,
        last: int,
        parallel: bool,
    ) -> None:
        """Reduce the middle axis of the C-contiguous ``view`` seen as ``(outer, n,
        inner)`` into the flat int64 ``out``, on numba's threads where ``parallel``."""
        if inner == 1:
            self.rows[parallel](view.reshape(outer, n), out, bool(last))
        else:
            x, out2 = view.reshape(outer, n, inner), out.reshape(outer, inner)
            self.middle[parallel](x, out2, bool(last))


@functools.cache
def portable_kernels(kind: int) -> PortableKernels:
    """The portable kernels of key kind ``kind``."""
    return PortableKernels(int(kind))

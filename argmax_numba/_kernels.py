"""The ArgMax loop kernels, written once and compiled per key kind and dtype.

Every input reaches a kernel in a canonical C-contiguous layout:

* ``rows(x, out, last, nchunks)`` reduces the last axis of ``x[outer, n]``. Each task
  scans one row (or one of ``nchunks`` pieces of it, when there are too few rows to
  keep every core busy) block by block: a vectorisable pass takes the block's maximum
  key, and only a block that beats the running maximum is scanned again, from cache,
  for the position.
* ``cols(x, out, last, block)`` reduces the middle axis of ``x[outer, n, inner]``. Each
  task owns ``block`` consecutive inner positions and streams the ``n`` rows through a
  running maximum and index held in cache, so every byte of the input is read once, in
  memory order.

``last`` selects the last occurrence of the maximum instead of the first. The same
source is compiled with ``parallel=True`` for large inputs and serially for small ones
(and for processes where the parallel runtime cannot be used).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._dtypes import KIND_BF16, KIND_F16, KIND_F32, KIND_F64, KIND_INT
from ._keys import key, key_vector, narrow_index, narrow_span

__all__ = ["KERNELS", "ROW_BLOCK"]

ROW_BLOCK = 2048
# Rows up to this long are scanned element by element.
SHORT_ROW = 32


def _make_rows(kind: int):
    def rows(x, out, last, nchunks):
        outer, n = x.shape
        if n <= SHORT_ROW:  # rows too short for blocks to pay: one plain pass each
            for o in prange(outer):
                best = key(x[o, 0], kind)
                at = 0
                for j in range(1, n):
                    v = key(x[o, j], kind)
                    if v > best or (last and v == best):
                        best = v
                        at = j
                out[o] = at
            return
        chunk = (n + nchunks - 1) // nchunks
        nchunks = (n + chunk - 1) // chunk
        ntasks = outer * nchunks
        npart = ntasks if nchunks > 1 else 0
        part_key = key_vector(npart, x, kind)
        part_at = np.empty(npart, np.int64)
        for t in prange(ntasks):
            o = t // nchunks
            start = (t - o * nchunks) * chunk
            stop = min(start + chunk, n)
            row = x[o]
            best = key(row[start], kind)
            at = start
            i = start
            while i < stop:
                blk = row[i : min(i + ROW_BLOCK, stop)]
                top = key(blk[0], kind)
                for j in range(1, blk.size):
                    top = max(top, key(blk[j], kind))
                if i == start or top > best or (last and top == best):
                    best = top
                    # Locate it with a branch-free (vectorisable) pass over the cached block.
                    if last:
                        pos = -1
                        for j in range(blk.size):
                            pos = max(pos, j if key(blk[j], kind) == top else -1)
                    else:
                        pos = blk.size
                        for j in range(blk.size):
                            pos = min(pos, j if key(blk[j], kind) == top else blk.size)
                    at = i + pos
                i += blk.size
            if nchunks > 1:
                part_key[t] = best
                part_at[t] = at
            else:
                out[o] = at
        if nchunks > 1:
            for o in range(outer):
                best = part_key[o * nchunks]
                at = part_at[o * nchunks]
                for c in range(o * nchunks + 1, (o + 1) * nchunks):
                    k = part_key[c]
                    if k > best or (last and k == best):
                        best = k
                        at = part_at[c]
                out[o] = at

    return rows


def _make_cols(kind: int):
    def cols(x, out, last, block):
        outer, n, inner = x.shape
        nblocks = (inner + block - 1) // block
        # Row numbers within a stretch of ``span`` rows fit the key's own width, so the
        # index update runs on vectors as wide as the data's.
        span = narrow_span(x)
        for t in prange(outer * nblocks):
            o = t // nblocks
            j0 = (t - o * nblocks) * block
            w = min(block, inner - j0)
            best = key_vector(w, x, kind)
            hit = narrow_index(w, x)
            itype = hit.dtype.type
            at = out[o, j0 : j0 + w]
            src = x[o, 0, j0 : j0 + w]
            for j in range(w):
                best[j] = key(src[j], kind)
                hit[j] = -1
                at[j] = 0
            for k0 in range(1, n, span):
                for k in range(k0, min(k0 + span, n)):
                    src = x[o, k, j0 : j0 + w]
                    r = itype(k - k0)
                    # Masks, not selects: numba's selects do not vectorise here.
                    if last:
                        for j in range(w):
                            v = key(src[j], kind)
                            b = best[j]
                            m = itype(-(v >= b))
                            hit[j] = (hit[j] & ~m) | (r & m)
                            best[j] = max(b, v)
                    else:
                        for j in range(w):
                            v = key(src[j], kind)
                            b = best[j]
                            m = itype(-(v > b))
                            hit[j] = (hit[j] & ~m) | (r & m)
                            best[j] = max(b, v)
                for j in range(w):
                    if hit[j] >= 0:
                        at[j] = k0 + hit[j]
                        hit[j] = -1

    return cols


def _jit(fn, kind: int, parallel: bool):
    """Compile ``fn`` lazily under a name unique to its kind and mode.

    The name keeps numba's on-disk cache entries of the different instances apart.
    """
    name = f"{fn.__name__}_k{kind}_{'par' if parallel else 'ser'}"
    fn.__name__ = fn.__qualname__ = name
    return njit(parallel=parallel, cache=True, error_model="numpy", nogil=True)(fn)


# KERNELS[(kind, parallel)] = (rows, cols)
KERNELS = {
    (kind, parallel): (
        _jit(_make_rows(kind), kind, parallel),
        _jit(_make_cols(kind), kind, parallel),
    )
    for kind in (KIND_INT, KIND_F16, KIND_BF16, KIND_F32, KIND_F64)
    for parallel in (True, False)
}

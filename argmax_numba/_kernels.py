"""The ArgMax loop kernels, written once and compiled per key kind and dtype.

Every input reaches a kernel in a canonical C-contiguous layout:

* ``rows(x, out, last, nchunks)`` reduces the last axis of ``x[outer, n]``. Each task
  scans one row (or one of ``nchunks`` pieces of it, when there are too few rows to
  keep every core busy) in small blocks: a vectorised reduction takes each block's
  maximum key, and only the block that holds the result is searched again, from cache,
  for the position. Rows of at most ``SHORT_ROW`` elements are scanned plainly, many per task.
* ``cols(x, out, last, block)`` reduces the middle axis of ``x[outer, n, inner]``. Each
  task owns ``block`` consecutive inner positions and streams the ``n`` rows through a
  running maximum and index held in cache, so every byte of the input is read once, in
  memory order.
* ``narrow(x, out, last, m, nsplit)`` is ``cols`` for a few columns (small ``inner``) and
  many rows, such as ``(n, 4)`` reduced along axis 0: ``m`` consecutive rows read as one
  wide row give ``cols`` enough lanes to vectorise, and the rows are split into
  ``nsplit`` ranges per outer index so that every core has work.

``last`` selects the last occurrence of the maximum instead of the first.

The work of one task is a serial function, compiled once per dtype; a driver runs the
tasks, with ``prange`` for large inputs or a plain loop for small ones (and in processes
where the parallel runtime cannot be used). Keeping the loop bodies out of the parallel
drivers keeps numba's parallel compilation, the slow part of a first call, small.
"""

from __future__ import annotations

import types

import numpy as np
from numba import njit, prange

from ._dtypes import KIND_BF16, KIND_F16, KIND_F32, KIND_F64, KIND_INT
from ._keys import key, key_vector, narrow_index, narrow_span
from ._lanes import lane_argmax, lane_count, lane_span

__all__ = ["KERNELS", "ROW_TASK_ELEMENTS"]

# Whole rows of about this many elements in all make one task of ``rows``.
ROW_TASK_ELEMENTS = 1 << 16

_OPTIONS = {"cache": True, "error_model": "numpy", "nogil": True}


# --- merging a candidate (value, index) into a running (maximum, index) ---------------------
# Masks, not selects: numba's selects do not vectorise in these loops.


@njit(**_OPTIONS)
def _take_first(best, at, value, index):
    """The running maximum and index after ``value``: a strictly greater value wins."""
    m = -(value > best)
    return max(best, value), (at & ~m) | (index & m)


@njit(**_OPTIONS)
def _take_last(best, at, value, index):
    """The running maximum and index after ``value``: a greater or equal value wins."""
    m = -(value >= best)
    return max(best, value), (at & ~m) | (index & m)


# --- the work of one task, per key kind --------------------------------------------------


def _make_tasks(kind: int):
    def row_search(x, o, start, stop, last):
        # The maximum key of ``x[o, start:stop]`` and its position: whole chunks of lanes
        # with vectors, at most ``span`` chunks per call, then the elements after them.
        best = key(x[o, start], kind)
        at = start
        lanes = lane_count(x)
        span = lane_span(x)
        full = (stop - start) // lanes
        for c in range(0, full, span):
            count = min(span, full - c)
            s = start + c * lanes
            flat = o * x.shape[1] + s
            if last:
                k, p = lane_argmax(x, flat, count, kind, 1)
            else:
                k, p = lane_argmax(x, flat, count, kind, 0)
            if k > best or (last and k == best):
                best = k
                at = s + p
        for j in range(start + full * lanes, stop):
            if last:
                best, at = _take_last(best, at, key(x[o, j], kind), j)
            else:
                best, at = _take_first(best, at, key(x[o, j], kind), j)
        return best, at

    def rows_task(x, out, t, per, last):
        outer, n = x.shape
        for o in range(t * per, min((t + 1) * per, outer)):
            out[o] = search(x, o, 0, n, last)[1]

    def row_piece_task(x, part_key, part_at, t, nchunks, chunk, last):
        o = t // nchunks
        start = (t - o * nchunks) * chunk
        part_key[t], part_at[t] = search(x, o, start, min(start + chunk, x.shape[1]), last)

    def row_parts(x, nparts):
        return key_vector(nparts, x, kind), np.empty(nparts, np.int64)

    def col_task(x, out, t, nblocks, block, last):
        n, inner = x.shape[1], x.shape[2]
        o = t // nblocks
        j0 = (t - o * nblocks) * block
        w = min(block, inner - j0)
        best = key_vector(w, x, kind)
        # Row numbers within a stretch of ``span`` rows fit the key's own width, so the
        # index update runs on vectors as wide as the data's.
        span = narrow_span(x)
        hit = narrow_index(w, x)
        itype = hit.dtype.type
        at = out[o, j0 : j0 + w]
        src = x[o, 0, j0 : j0 + w]
        for j in range(w):
            best[j] = key(src[j], kind)
            hit[j] = -1
            at[j] = 0
        for k0 in range(1, n, span):
            k1 = min(k0 + span, n)
            # For 4-byte types, two rows at a time: merged first, they read and write the
            # running maximum and index once per pair (measured: up to 2x faster there,
            # slower for the other widths).
            kp = k0 + (k1 - k0) // 2 * 2 if x.itemsize == 4 else k0
            # The two copies differ in the merge only: testing ``last`` inside the loop
            # was measured 1.5x slower for 4-byte types.
            if last:
                for k in range(k0, kp, 2):
                    src, src2 = x[o, k, j0 : j0 + w], x[o, k + 1, j0 : j0 + w]
                    r, r2 = itype(k - k0), itype(k + 1 - k0)
                    for j in range(w):
                        v, rr = _take_last(key(src[j], kind), r, key(src2[j], kind), r2)
                        best[j], hit[j] = _take_last(best[j], hit[j], v, rr)
                for k in range(kp, k1):
                    src, r = x[o, k, j0 : j0 + w], itype(k - k0)
                    for j in range(w):
                        best[j], hit[j] = _take_last(best[j], hit[j], key(src[j], kind), r)
            else:
                for k in range(k0, kp, 2):
                    src, src2 = x[o, k, j0 : j0 + w], x[o, k + 1, j0 : j0 + w]
                    r, r2 = itype(k - k0), itype(k + 1 - k0)
                    for j in range(w):
                        v, rr = _take_first(key(src[j], kind), r, key(src2[j], kind), r2)
                        best[j], hit[j] = _take_first(best[j], hit[j], v, rr)
                for k in range(kp, k1):
                    src, r = x[o, k, j0 : j0 + w], itype(k - k0)
                    for j in range(w):
                        best[j], hit[j] = _take_first(best[j], hit[j], key(src[j], kind), r)
            for j in range(w):
                if hit[j] >= 0:
                    at[j] = k0 + hit[j]
                    hit[j] = -1

    def narrow_task(x, part_key, part_at, t, nsplit, per, m, last):
        # Rows r0..r1 of ``x[o]``, a few columns wide: ``m`` consecutive rows side by side
        # form one wide row of lanes for ``col_task``; then the m lanes of each column
        # are merged, and the rows left over are scanned one by one.
        n, inner = x.shape[1], x.shape[2]
        o = t // nsplit
        r0 = (t - o * nsplit) * per
        r1 = min(r0 + per, n)
        flat = x[o].reshape(n * inner)
        best_key = part_key[t * inner : (t + 1) * inner]
        best_row = part_at[t * inner : (t + 1) * inner]
        for c in range(inner):
            best_key[c] = key(flat[r0 * inner + c], kind)
            best_row[c] = r0
        groups = (r1 - r0) // m
        if groups > 0:
            lanes = m * inner
            wide = flat[r0 * inner : (r0 + groups * m) * inner].reshape((1, groups, lanes))
            group_of = np.empty((1, lanes), np.int64)
            lane_task(wide, group_of, 0, 1, lanes, last)  # ``col_task``, bound below
            for q in range(lanes):
                c = q % inner
                r = r0 + group_of[0, q] * m + q // inner
                k = key(flat[r * inner + c], kind)
                b = best_key[c]
                if k > b or (k == b and (r > best_row[c] if last else r < best_row[c])):
                    best_key[c] = k
                    best_row[c] = r
        for r in range(r0 + groups * m, r1):
            for c in range(inner):
                k = key(flat[r * inner + c], kind)
                if k > best_key[c] or (last and k == best_key[c]):
                    best_key[c] = k
                    best_row[c] = r

    def merge_parts(out, part_key, part_at, nsplit, last):
        # Task results in (outer, nsplit, inner) order: each output takes the best of its
        # nsplit candidates, earlier pieces first, so ties keep the first (or last) one.
        outer, inner = out.shape
        for o in range(outer):
            for c in range(inner):
                first = o * nsplit * inner + c
                best = part_key[first]
                at = part_at[first]
                for s in range(1, nsplit):
                    k = part_key[first + s * inner]
                    if k > best or (last and k == best):
                        best = k
                        at = part_at[first + s * inner]
                out[o, c] = at

    tasks = {}
    for fn in (row_search, row_parts, merge_parts, col_task):
        tasks[fn.__name__] = _compile(fn, f"{fn.__name__}_k{kind}", {})
    # Tasks that call other tasks reach them as globals bound here.
    bound = {"search": tasks["row_search"], "lane_task": tasks["col_task"]}
    for fn in (rows_task, row_piece_task, narrow_task):
        tasks[fn.__name__] = _compile(fn, f"{fn.__name__}_k{kind}", bound)
    return tasks


def _compile(fn, name: str, bound: dict, parallel: bool = False):
    """``fn`` compiled lazily under ``name``, with ``bound`` as extra globals.

    Compiled functions reach each other as globals, never as closure cells (only the
    integer kind is one), so that numba can cache them; the unique name keeps the cache
    entries of the different instances apart.
    """
    bound_fn = types.FunctionType(
        fn.__code__, {**fn.__globals__, **bound}, name, fn.__defaults__, fn.__closure__
    )
    bound_fn.__qualname__ = name
    return njit(parallel=parallel, **_OPTIONS)(bound_fn)


# --- drivers: run the tasks serially or in parallel --------------------------------------

# The drivers' task names are bound to one key kind's compiled tasks by ``_driver``.
rows_task = row_piece_task = row_parts = merge_parts = col_task = None
narrow_task = search = lane_task = None


def rows(x, out, last, nchunks):
    outer, n = x.shape
    if nchunks == 1:  # whole rows, ``per`` of them per task
        per = max(1, ROW_TASK_ELEMENTS // n)
        ntasks = (outer + per - 1) // per
    else:  # ``nchunks`` pieces of every row, merged after
        per = (n + nchunks - 1) // nchunks
        nchunks = (n + per - 1) // per
        ntasks = outer * nchunks
    part_key, part_at = row_parts(x, ntasks if nchunks > 1 else 0)
    # One parallel loop per driver (each costs seconds to compile); ``np.int64(t)`` keeps
    # the tasks' signatures the same as under the serial driver (prange counts unsigned).
    for t in prange(ntasks):
        if nchunks == 1:
            rows_task(x, out, np.int64(t), per, last)
        else:
            row_piece_task(x, part_key, part_at, np.int64(t), nchunks, per, last)
    if nchunks > 1:
        merge_parts(out.reshape((outer, 1)), part_key, part_at, nchunks, last)


def cols(x, out, last, block):
    outer, inner = x.shape[0], x.shape[2]
    nblocks = (inner + block - 1) // block
    for t in prange(outer * nblocks):
        col_task(x, out, np.int64(t), nblocks, block, last)


def narrow(x, out, last, m, nsplit):
    outer, n, inner = x.shape
    per = (n + nsplit - 1) // nsplit
    per = (per + m - 1) // m * m  # rows per task, a multiple of m
    nsplit = (n + per - 1) // per
    ntasks = outer * nsplit
    part_key, part_at = row_parts(x, ntasks * inner)
    for t in prange(ntasks):
        narrow_task(x, part_key, part_at, np.int64(t), nsplit, per, m, last)
    merge_parts(out, part_key, part_at, nsplit, last)


def _build():
    kernels = {}
    for kind in (KIND_INT, KIND_F16, KIND_BF16, KIND_F32, KIND_F64):
        tasks = _make_tasks(kind)
        for parallel in (True, False):
            mode = "par" if parallel else "ser"
            kernels[(kind, parallel)] = tuple(
                _compile(fn, f"{fn.__name__}_k{kind}_{mode}", tasks, parallel)
                for fn in (rows, cols, narrow)
            )
    return kernels


# KERNELS[(kind, parallel)] = (rows, cols, narrow)
KERNELS = _build()

"""The ArgMax loop kernels, written once and compiled per key kind and dtype.

Every input reaches a kernel in a canonical C-contiguous layout:

* ``rows(x, out, last, where)`` reduces the last axis of ``x[outer, n]``, many whole rows per
  task. Each row is read as vectors, a run of ``RUN_BYTES`` at a time: the run's
  maximum first, then, from cache, where it is (``_lanes``), so the search reads the
  row from memory once. Rows of up to ``CHUNK_ROW_BYTES``, where every task holds a
  group of them, have a task of their own, ``chunk_rows``, which searches them a group
  at a time (the task's last group may have fewer rows): that shares the work of turning
  vectors of lanes into one maximum per row and leaves no step between rows that waits
  on the data. Rows of up to ``GROUP_ROW_BYTES`` (and longer than ``short_rows`` take)
  have one too, ``group_rows``. Neither has the vector search of long rows in it, so a
  first call compiles one search only.
* ``row_pieces(x, out, last, nchunks, where)`` does the same for a few long rows, each split
  into ``nchunks`` pieces so that every core has work; the pieces' results are merged.
* ``short_rows`` is ``rows`` for rows of 2 to ``SHORT_ROW`` elements (``BYTE_ROW`` of
  8-bit ones and of 16-bit ones of an even length), with one task per length, which
  reads a vector's worth of rows at a time and deals their elements out into a vector
  per column (``_short_rows``; ``short_any``: one task for every length, for compiled
  callers).
* ``cols(x, out, last, block, where)`` reduces the middle axis of ``x[outer, n, inner]``. Each
  task owns ``block`` consecutive inner positions and folds the ``n`` rows into a
  running maximum and row number per position, ``FOLD_ROWS`` rows at a time in vector
  registers (``_col_blocks``, ``_lanes``; fewer where rows are far apart, and one where
  a vector takes several registers and rows are long: ``fold_rows``), so every byte of
  the input is read once.
  Whole blocks ``x[o]`` narrower than a vector go to ``side_task`` instead, which
  reads ``m`` consecutive rows side by side as one row of whole vectors (a block whose
  wide row is one vector, in registers from its first row to its last, to
  ``block_task``: ``_side_blocks``), or, where that would make too few such rows, to
  ``each_task``,
  which gathers the same row of several blocks into one vector.
* ``narrow(x, out, last, m, nsplit, where)`` is ``cols`` for a few columns (small
  ``inner``) and many rows, such as ``(n, 4)`` reduced along axis 0: ``m`` consecutive
  rows read as one wide row give the fold of ``cols`` enough lanes to vectorise, and
  the rows are split into ``nsplit`` ranges per outer index so that every core has
  work.

``last`` selects the last occurrence of the maximum instead of the first. Each task is
compiled for one value of it, a constant of its code (the drivers take it at run time
and call the task compiled for it): a first call compiles half the searches.

The work of one task is a serial function, compiled once per dtype; a driver runs the
tasks, split between numba's threads for large inputs or in a plain loop for small ones
(and in processes where the parallel runtime cannot be used). The parallel loop is not
``prange``, whose compile took longer than the rest of a driver's (``_task_loops``).
``where`` is the address of the compiled task: a driver that called its task by name
would carry and re-optimise its own copy of it, and so would every user's function that
calls ``argmax`` (``_calls``). One driver serves every kernel that runs its tasks the
same way (``rows`` those of ``group_rows`` and ``short_rows`` too, ``cols`` those of
``side_task`` and ``each_task``), so a layout whose driver another has compiled compiles
only its task. With one task per ``last`` and ``group_rows`` apart, a first call of
512 x 512 float32 along axis 1 (rows of 2 KiB), with an empty cache, on an Intel Xeon
(Emerald Rapids), went from 2.77 to 1.97 s (its task 1.80 -> 0.99 s), of rows of 20
float32 from 2.50 to 1.27 s; with ``chunk_rows`` apart too, the same 512 x 512 from 1.19
to 0.85 s (its task 0.65 -> 0.21 s, medians of 4).
"""

from __future__ import annotations

import functools
from types import FunctionType
from typing import Any, NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import register_jitable
from numba.np.numpy_support import from_dtype

from ._arrays import c_view, empty
from ._calls import task_address, thread_count
from ._candidates import choose, merge_candidates, take_first, take_last
from ._col_blocks import fold_block
from ._disk_cache import enable as _enable_disk_cache
from ._dtypes import KIND_BF16, KIND_F16, KIND_F32, KIND_F64, KIND_INT
from ._ir import VECTOR_BYTES
from ._keys import key, key_vector, narrow_index
from ._lanes import (
    lane_argmax,
    lane_count,
    lane_slots,
    lane_span,
)
from ._row_groups import CHUNK_ROW_BYTES, chunk_group_argmax, group_argmax, group_size
from ._short_rows import BYTE_ROW, SHORT_ROW, short_group_argmax, short_group_rows
from ._side_blocks import (
    GATHER_BYTES,
    GATHER_ROWS,
    SHORT_GATHER_BYTES,
    WIDE_GATHER_BYTES,
    gather_blocks,
    side_block,
)
from ._task_loops import parallel_tasks, serial_tasks

__all__ = [
    "GROUP_TASKS",
    "KERNELS",
    "KERNEL_SETS",
    "ROW_TASK_ELEMENTS",
    "SHORT_ROW",
    "Kernel",
    "Kernels",
    "rows_per_task",
    "tasks_of",
]

# Whole rows of about this many elements in all make one task of ``rows`` ...
ROW_TASK_ELEMENTS = 1 << 16
# ... or of a group of rows, where ``rows_task`` searches them so and that makes at least
# this many tasks a thread (each takes an equal count of tasks).
GROUP_TASKS = 4

_OPTIONS = {"error_model": "numpy", "nogil": True}


# --- the work of one task, per key kind and ``last`` ------------------------------------


def _make_tasks(kind: int, last: int):
    def row_search(x, o, start, stop):
        # The maximum key of ``x[o, start:stop]`` and its position, searched with
        # vectors a run at a time (inlined into the tasks: a call per row of a few
        # hundred bytes cost 3 ns of 5-15).
        step = lane_span(x)
        flat = o * x.shape[1]
        best = key(x[o, start], kind)
        at = start
        for s in range(start, stop, step):
            k, p = lane_argmax(x, flat + s, min(step, stop - s), kind, last, best)
            if p >= 0:
                best = k
                at = s + p
        return best, at

    def element_rows(x, out, lo, hi, n):
        # Rows lo..hi of ``n`` elements, one element at a time (the last rows of
        # ``group_rows``, where a group's vector loads would leave the array, and inputs
        # of fewer rows than a group). Views that start at row lo, so that indices are
        # known not to be negative (numba would otherwise wrap them, per element).
        flat = c_view(x, lo * n, (hi - lo) * n)
        dst = out[lo:hi]
        if last:
            for o in range(hi - lo):
                best, at = key(flat[o * n], kind), 0
                for j in range(1, n):
                    best, at = take_last(best, at, key(flat[o * n + j], kind), j)
                dst[o] = at
        else:
            for o in range(hi - lo):
                best, at = key(flat[o * n], kind), 0
                for j in range(1, n):
                    best, at = take_first(best, at, key(flat[o * n + j], kind), j)
                dst[o] = at

    def short_rows(x, out, lo, hi, n):
        # Rows lo..hi of a constant length ``n``, a vector of rows at a time, from the
        # first row whose output starts a 64-byte line (the rows before it first): a
        # store across two lines costs two (8M rows of 2 int8, the output mapped, 7.6 ->
        # 4.5 ms on an Intel Xeon; of 4, 6.3 -> 5.3 ms).
        group = short_group_rows(x, n)
        head = min(hi - lo, (-(out.ctypes.data >> 3) - lo) & 7)
        if head > 0:
            short_group_argmax(x, lo, head, out, kind, last, n)
        for o in range(lo + head, hi, group):
            short_group_argmax(x, o, min(group, hi - o), out, kind, last, n)

    def rows_task(x, out, t, per):
        # Rows longer than CHUNK_ROW_BYTES, and shorter ones too few for groups, one at a
        # time.
        n = x.shape[1]
        for o in range(t * per, min((t + 1) * per, x.shape[0])):
            out[o] = search(x, o, 0, n)[1]

    def chunk_rows_task(x, out, t, per):
        # Rows longer than GROUP_ROW_BYTES, up to CHUNK_ROW_BYTES, a group at a time, their
        # vectors folded first (the task's last group may have fewer rows).
        lo, hi = t * per, min((t + 1) * per, x.shape[0])
        group = lane_count(x)
        for o in range(lo, hi, group):
            chunk_group_argmax(x, o, min(group, hi - o), out, kind, last)

    def group_rows_task(x, out, t, per):
        # Rows of up to GROUP_ROW_BYTES, a group at a time, each as one vector (of two
        # registers for rows longer than one), where every row's last vector load stays in
        # the array: up to ``stop``, a row or two before the array's end. The rows left
        # over in a task that holds a group make a group that ends at ``stop`` (some rows
        # are searched twice); the rows after it, and those of a task that holds no
        # group, are searched one element at a time (all the last task's rows after its
        # last whole group were before; now (1000, 100) int8 takes 0.61 of the time,
        # (300, 100) int8 0.65). (A task of its own, without the vector search of long
        # rows: in one task with it, the first call compiled both; float32, 0.61 s for
        # this task against 1.03 s for both.)
        outer, n = x.shape
        lo, hi = t * per, min((t + 1) * per, outer)
        wide = n * x.itemsize > VECTOR_BYTES
        reach = lane_count(x) * (2 if wide else 1)  # elements of a row's vector
        group = group_size(x, kind, 2) if wide else group_size(x, kind, 1)
        stop = min(hi, outer - (reach + n - 1) // n)  # groups that end here read inside x
        groups = max(0, stop - lo) // group
        tail = groups > 0 and (stop - lo) % group > 0
        for g in range(groups + tail):
            start = min(lo + g * group, stop - group)
            if wide:
                group_argmax(x, start, out, kind, last, 2)
            else:
                group_argmax(x, start, out, kind, last, 1)
        by_element(x, out, stop if groups > 0 else lo, hi, n)

    def short_rows_task(x, out, t, per):
        # Rows of ROW_LENGTH elements, a constant per task, so that a first call compiles
        # only its length.
        lo, hi = t * per, min((t + 1) * per, x.shape[0])
        short(x, out, lo, hi, ROW_LENGTH)

    def short_any_task(x, out, t, per):
        # Every short length in one task, for compiled callers: a compiled caller must
        # have every length ready before it runs (``_task_table``), and one task with a
        # branch per length compiles faster than eleven, and than a ``literal_unroll``
        # over the lengths (0.3-0.4 s more). (``lane_count`` is a constant: LLVM drops
        # the branches for the rows of 8- and 16-bit elements from other dtypes' code;
        # 16-bit rows longer than SHORT_ROW are only of an even length.)
        lo, hi = t * per, min((t + 1) * per, x.shape[0])
        n = x.shape[1]
        if n == 2:
            short(x, out, lo, hi, 2)
        elif n == 3:
            short(x, out, lo, hi, 3)
        elif n == 4:
            short(x, out, lo, hi, 4)
        elif n == 5:
            short(x, out, lo, hi, 5)
        elif n == 6:
            short(x, out, lo, hi, 6)
        elif n == 7:
            short(x, out, lo, hi, 7)
        elif n == 8 or lane_count(x) < VECTOR_BYTES // 2:
            short(x, out, lo, hi, SHORT_ROW)
        elif n == 10:
            short(x, out, lo, hi, 10)
        elif n == 12 or lane_count(x) < VECTOR_BYTES:
            short(x, out, lo, hi, BYTE_ROW)
        elif n == 9:
            short(x, out, lo, hi, 9)
        else:
            short(x, out, lo, hi, 11)

    def row_piece_task(x, part_key, part_at, t, nchunks, chunk):
        o = t // nchunks
        start = (t - o * nchunks) * chunk
        part_key[t], part_at[t] = search(x, o, start, min(start + chunk, x.shape[1]))

    def col_task(x, out, t, nblocks, block):
        # ``block`` columns of x[o] (whole blocks x[o], ``block // inner`` of them, where
        # there is one block), each folded over its rows by ``fold_block``; rows of x are
        # at least a vector wide (``plan``), as that needs.
        outer, n, inner = x.shape
        per = block // inner if nblocks == 1 else 1
        o0 = t // nblocks * per
        j0 = (t - t // nblocks * nblocks) * block
        w = min(block, inner - j0)
        slots = lane_slots(w, lane_count(x))
        best = key_vector(slots, x, kind)
        hit = narrow_index(slots, x)
        for o in range(o0, min(o0 + per, outer)):
            at = o * inner + j0
            fold_block(x, o * n * inner + j0, n, inner, w, best, hit, out, at, kind, last)

    def rows_across(blk, best, at, r0, r1, inner):
        # Rows r0..r1 of the block ``blk`` (rows of ``inner`` elements) taken into the
        # running maxima ``best`` and row numbers ``at`` of its columns, a row at a time:
        # loops across the columns, which LLVM vectorises.
        for r in range(r0, r1):
            src = c_view(blk, r * inner, inner)
            if last:
                for c in range(inner):
                    best[c], at[c] = take_last(best[c], at[c], key(src[c], kind), r)
            else:
                for c in range(inner):
                    best[c], at[c] = take_first(best[c], at[c], key(src[c], kind), r)

    def each_task(x, out, t, nblocks, block):
        # ``col_task`` for whole blocks x[o] narrower than a vector (``nblocks`` is 1), too
        # short for ``side_task``: gathered, or, for the blocks left over, each column of
        # each block on its own, with no scratch but a row of keys. (A task of its own: in
        # ``col_task`` these loops added 0.3-0.5 s to the first compile of every column
        # layout.) Compiled once for each SLOT (below).
        outer, n, inner = x.shape
        per = block // inner
        best = key_vector(inner, x, kind)
        lo, hi = t * per, min(t * per + per, outer)
        # A few blocks at a time, SLOT bytes of a row of each (GATHER_BYTES, or
        # SHORT_GATHER_BYTES or WIDE_GATHER_BYTES where ``plan`` finds rows that short or
        # that long) in one vector
        # (``gather_blocks``; in cache, against one column at a time: (65536, 8, 5) int16
        # 24.6 -> 5.3 of the read bound, (21845, 8, 48) int8 11.0 -> 4.4), but not the
        # last block of x, past whose end such a vector could reach.
        piece, group = SLOT // x.itemsize, VECTOR_BYTES // SLOT
        if n <= GATHER_ROWS:
            end = hi - 1 if hi == outer and inner % piece else hi
            while lo + group <= end:
                for c0 in range(0, inner, piece):
                    gather_blocks(x, lo, c0, out, kind, last, SLOT)
                lo += group
        for o in range(lo, hi):
            # Views that start at the block (indexed from 0, the indices are known not to
            # be negative; numba would otherwise wrap them, and LLVM gather them lane by
            # lane).
            blk = c_view(x, o * n * inner, n * inner)
            at = c_view(out, o * inner, inner)
            if inner >= 8:
                # Row by row, so that LLVM vectorises across the columns (32 MiB, against
                # column by column: (k, 3, 8) float32 5.5 -> 2.8 ms, (k, 3, 16) int8 20
                # -> 8.7 ms) ...
                for j in range(inner):
                    best[j] = key(blk[j], kind)
                    at[j] = 0
                across(blk, best, at, 1, n, inner)
            else:
                # ... but column by column where there are too few columns for a vector
                # ((k, 3, 4) float32 5.5 against 14 ms row by row).
                for j in range(inner):
                    b, a = key(blk[j], kind), 0
                    for k in range(1, n):
                        v = key(blk[k * inner + j], kind)
                        if last:
                            b, a = take_last(b, a, v, k)
                        else:
                            b, a = take_first(b, a, v, k)
                    at[j] = a

    def side_task(x, out, t, nblocks, block):
        # ``col_task`` for whole blocks x[o] narrower than a vector (``nblocks`` is 1):
        # ``m`` consecutive rows side by side make one wide row of whole vectors, folded
        # as ``col_task`` folds rows; then the m lanes of each column are merged, and the
        # rows after the last whole wide row scanned. ``plan`` computes m the same way and
        # sends only blocks of at least SIDE_GROUPS (4) wide rows.
        outer, n, inner = x.shape
        per = block // inner
        lanes = lane_count(x)
        m = lanes // min(inner & -inner, lanes)  # lanes // gcd(inner, lanes): a power of two
        width = m * inner  # lanes of a wide row, a whole number of vectors
        rows = n // m
        best = key_vector(width, x, kind)
        hit = narrow_index(width, x)
        at = empty(width, np.int64)  # each lane's wide row
        for o in range(t * per, min(t * per + per, outer)):
            first = o * n * inner  # flat index of x[o, 0, 0]
            blk = c_view(x, first, n * inner)  # (as in ``each_task``)
            fold_block(x, first, rows, width, width, best, hit, at, 0, kind, last)
            # Each column's m lanes merged into its first, earlier rows first on ties, then
            # the rows left over: loops across the columns, which LLVM vectorises.
            for c in range(inner):
                at[c] = at[c] * m
            for i in range(1, m):
                if last:
                    for c in range(inner):
                        k, top, row = best[i * inner + c], best[c], at[c]
                        r = at[i * inner + c] * m + i
                        wins = (k > top) | ((k == top) & (r > row))
                        best[c], at[c] = choose(wins, k, top), choose(wins, r, row)
                else:
                    for c in range(inner):
                        k, top, row = best[i * inner + c], best[c], at[c]
                        r = at[i * inner + c] * m + i
                        wins = (k > top) | ((k == top) & (r < row))
                        best[c], at[c] = choose(wins, k, top), choose(wins, r, row)
            across(blk, best, at, rows * m, n, inner)
            for c in range(inner):
                out[o, c] = at[c]

    def block_task(x, out, t, nblocks, block):
        # ``side_task`` for blocks whose wide row is one vector (``inner`` divides the
        # lanes) and whose wide rows are numbered in the data's width: the whole block in
        # registers (``side_block``). (A task of its own: in one with ``side_task``'s
        # loops, a first call compiled both, 0.90 s against 0.37-0.51 s for this one.)
        outer, n, inner = x.shape
        per = block // inner
        lanes = lane_count(x)
        m = lanes // inner
        rows = n // m  # (counted here: divided in the loop, (k, 16, 4) float32 took 1.14x)
        best = key_vector(lanes, x, kind)
        at = empty(lanes, np.int64)  # each lane's wide row
        for o in range(t * per, min(t * per + per, outer)):
            first = o * n * inner
            blk = c_view(x, first, n * inner)
            side_block(x, first, rows, inner, best, at, kind, last)
            across(blk, best, at, rows * m, n, inner)
            for c in range(inner):
                out[o, c] = at[c]

    def narrow_task(x, part_key, part_at, t, nsplit, per, m):
        # Rows r0..r1 of ``x[o]``, a few columns wide: ``m`` consecutive rows side by side
        # form one wide row of lanes, folded as ``col_task`` folds a block; then, in one
        # loop, the m lanes of each column are merged and the rows left over scanned.
        # (A loop of their own over the columns of the rows left over, which LLVM
        # vectorised, took 0.2 s of the task's 0.75 s first compile.)
        n, inner = x.shape[1], x.shape[2]
        o = t // nsplit
        r0 = (t - o * nsplit) * per
        r1 = min(r0 + per, n)
        flat = c_view(x, o * n * inner, n * inner)
        best_key = part_key[t * inner : (t + 1) * inner]
        best_row = part_at[t * inner : (t + 1) * inner]
        for c in range(inner):
            best_key[c] = key(flat[r0 * inner + c], kind)
            best_row[c] = r0
        groups = (r1 - r0) // m
        lanes = m * inner if groups > 0 else 0
        group_of = empty(lanes, np.int64)
        if groups > 0:
            slots = lane_slots(lanes, lane_count(x))
            best, hit = key_vector(slots, x, kind), narrow_index(slots, x)
            first = (o * n + r0) * inner
            fold_block(x, first, groups, lanes, lanes, best, hit, group_of, 0, kind, last)
        # Lane q < lanes holds column q % inner of row q // inner of a wide row; after
        # them, the rows left over, element by element (``lanes`` is a multiple of inner).
        rest = r0 + groups * m
        for q in range(lanes + (r1 - rest) * inner):
            c = q % inner
            if q < lanes:
                r = r0 + group_of[q] * m + q // inner
            else:
                r = rest + (q - lanes) // inner
            k = key(flat[r * inner + c], kind)
            b = best_key[c]
            if k > b or (k == b and (r > best_row[c] if last else r < best_row[c])):
                best_key[c] = k
                best_row[c] = r

    # What each task is made of: (its function, its name, the inline helpers it calls,
    # and constants), both bound as globals. (No local variable of this function may
    # share a global's name: the tasks would hold it as a closure cell, which numba's
    # cache key pickles, and they would never be found in the cache.)
    by_column = {"across": rows_across}
    by_row = {"search": row_search, "by_element": element_rows, "short": short_rows}
    by_length = {"short": short_rows}
    specs = {
        fn.__name__: (fn, fn.__name__, by_column, {}) for fn in (col_task, side_task, block_task)
    }
    # One task per gather width: a first call compiles one of them (0.3 s each).
    for name, slot in (
        ("each_task", GATHER_BYTES),
        ("each_short_task", SHORT_GATHER_BYTES),
        ("each_wide_task", WIDE_GATHER_BYTES),
    ):
        specs[name] = (each_task, name, by_column, {"SLOT": slot})
    for fn in (
        *(rows_task, chunk_rows_task, group_rows_task, short_any_task),
        *(row_piece_task, narrow_task),
    ):
        specs[fn.__name__] = (fn, fn.__name__, by_row, {})
    for m in range(2, BYTE_ROW + 1):
        length = {"ROW_LENGTH": m}
        specs[f"short_rows_task{m}"] = (short_rows_task, f"short_rows{m}_task", by_length, length)
    tag = f"k{kind}_l{last}"

    @functools.cache
    def inlined(fn):
        return _compile(fn, f"{fn.__name__}_{tag}", {}, inline="always")

    def make(name: str):
        fn, compiled_name, helpers, constants = specs[name]
        bound = {g: inlined(h) for g, h in helpers.items()} | constants
        return _compile(fn, f"{compiled_name}_{tag}", bound)

    return _Tasks(make, tuple(specs))


class _Tasks(dict):
    """The tasks of one key kind and ``last``, by name, each made on first use: a first
    call needs one of 27, and made all at once they took 4-9 ms of it (numba's
    dispatchers)."""

    def __init__(self, make, names: tuple[str, ...]):
        super().__init__()
        self._make = make
        self.names = names
        """The names of all the tasks (those made so far are the keys)."""

    def __missing__(self, name: str):
        if name not in self.names:
            raise KeyError(name)
        self[name] = task = self._make(name)
        return task


def _compile(fn, name: str, bound: dict, inline: str = "never", driver: bool = False):
    """``fn`` compiled lazily under ``name``, with ``bound`` as extra globals, and cached
    on disk (``_disk_cache``).

    Compiled functions reach each other as globals, never as closure cells (only the
    integer kind is one), so that numba can cache them; the unique name keeps the cache
    entries of the different instances apart.
    """
    bound_fn = FunctionType(
        fn.__code__, {**fn.__globals__, **bound}, name, fn.__defaults__, fn.__closure__
    )
    bound_fn.__qualname__ = name
    # Only drivers are called from Python; nothing calls a C function pointer of either.
    wrappers = {"no_cpython_wrapper": not driver, "no_cfunc_wrapper": True}
    compiled = njit(inline=inline, **wrappers, **_OPTIONS)(bound_fn)
    _enable_disk_cache(compiled)
    return compiled


# --- drivers: run the tasks serially or in parallel --------------------------------------


@register_jitable
def rows_per_task(outer: int, n: int, itemsize: int, threads: int) -> int:
    """Whole rows of ``n`` elements per task of ``rows``, for ``outer`` rows on
    ``threads`` threads: about ROW_TASK_ELEMENTS elements; rows of up to CHUNK_ROW_BYTES,
    searched a group at a time, need a group in a task, and where that still leaves every
    thread GROUP_TASKS tasks, a task takes one (``plan`` sends them to ``chunk_rows``
    only where every task then holds a group)."""
    per = max(1, ROW_TASK_ELEMENTS // n)
    group = VECTOR_BYTES // itemsize
    if per < group and n * itemsize <= CHUNK_ROW_BYTES:
        if outer >= GROUP_TASKS * threads * group:
            per = group
    return per


# Every driver runs its tasks as ``run_tasks(ntasks, where, head, tail)``, which calls
# ``task(*head, t, *tail)`` for each task number t: ``where`` is the task's address,
# ``run_tasks`` the serial or the parallel loop (``_task_loops``). ``PARALLEL`` is whether
# the driver is the parallel one; ``per_task`` is ``rows_per_task``, inlined (called as a
# function of its own, it took 0.14-0.20 s more of a first call). ``KIND`` is the key
# kind of the driver's tasks; the other names are bound to one key kind's compiled tasks.
KIND = PARALLEL = per_task = run_tasks = None
search = by_element = short = across = ROW_LENGTH = SLOT = None


def rows(x, out, last, where):
    outer, n = x.shape
    per = per_task(outer, n, x.itemsize, thread_count() if PARALLEL else 1)
    run_tasks((outer + per - 1) // per, where, (x, out), (per,))


def row_pieces(x, out, last, nchunks, where):
    outer, n = x.shape
    chunk = (n + nchunks - 1) // nchunks
    nchunks = (n + chunk - 1) // chunk
    part_key, part_at = key_vector(outer * nchunks, x, KIND), empty(outer * nchunks, np.int64)
    run_tasks(outer * nchunks, where, (x, part_key, part_at), (nchunks, chunk))
    merge_candidates(c_view(out, 0, (outer, 1)), part_key, part_at, nchunks, last)


def cols(x, out, last, block, where):
    outer, inner = x.shape[0], x.shape[2]
    nblocks = (inner + block - 1) // block
    per = block // inner if nblocks == 1 else 1  # whole blocks x[o] to a task
    run_tasks((outer + per - 1) // per * nblocks, where, (x, out), (nblocks, block))


def narrow(x, out, last, m, nsplit, where):
    outer, n, inner = x.shape
    per = (n + nsplit - 1) // nsplit
    per = (per + m - 1) // m * m  # rows per task, a multiple of m
    nsplit = (n + per - 1) // per
    ntasks = outer * nsplit
    part_key, part_at = key_vector(ntasks * inner, x, KIND), empty(ntasks * inner, np.int64)
    run_tasks(ntasks, where, (x, part_key, part_at), (nsplit, per, m))
    merge_candidates(out, part_key, part_at, nsplit, last)


class Kernel(NamedTuple):
    """A driver, ``driver(x, out, last, *extra, where)``, and the task it runs, one for
    each ``last`` (0 or 1)."""

    driver: Any
    task: str  # the name of its tasks in ``tasks_of``
    kind: int
    ndim: int  # of ``x``: 2 (rows) or 3 (columns); ``out`` has one less
    parts: bool  # whether the task writes per-task candidates (``merge_candidates``)
    ints: int  # the task's integer arguments, after its arrays
    extra: int  # the driver's integer arguments between ``last`` and ``where``
    addresses: dict  # (dtype, writeable, last) -> the task's address, once compiled
    entries: dict  # (dtype, writeable) -> the driver's ``entry``, once compiled

    @property
    def tasks(self) -> tuple[Any, Any]:
        """The task for ``last`` 0 and for ``last`` 1."""
        return self.task_of(0), self.task_of(1)

    def task_of(self, last: int) -> Any:
        """The task for ``last`` (only its key kind's tasks for that ``last`` are made)."""
        return tasks_of(self.kind, last)[self.task]

    def task_types(self, dtype: np.dtype, writeable: bool) -> tuple:
        """The types the driver calls its task with, for inputs of ``dtype``."""
        x_type = types.Array(from_dtype(dtype), self.ndim, "C", readonly=not writeable)
        if self.parts:
            bits = x_type.dtype.bitwidth
            key_type = x_type.dtype if self.kind == KIND_INT else getattr(types, f"int{bits}")
            arrays = (x_type, types.Array(key_type, 1, "C"), types.Array(types.int64, 1, "C"))
        else:
            arrays = (x_type, types.Array(types.int64, self.ndim - 1, "C"))
        return arrays + (types.int64,) * self.ints

    def driver_types(self, dtype: np.dtype, writeable: bool) -> tuple:
        """The types of the driver's arguments (as from Python), for inputs of ``dtype``."""
        x_type = types.Array(from_dtype(dtype), self.ndim, "C", readonly=not writeable)
        out_type = types.Array(types.int64, self.ndim - 1, "C")
        return (x_type, out_type) + (types.int64,) * (self.extra + 2)

    def address(self, dtype: np.dtype, writeable: bool, last: int) -> int:
        """``where`` for inputs of ``dtype``: the address of the task compiled for them
        and ``last``."""
        where = self.addresses.get((dtype, writeable, last))
        if where is None:
            where = task_address(self.task_of(last), self.task_types(dtype, writeable))
            self.addresses[(dtype, writeable, last)] = where
        return where

    def entry(self, dtype: np.dtype, writeable: bool) -> Any:
        """The driver compiled for inputs of ``dtype``, as Python calls it without numba's
        dispatch on the arguments' types, which the caller must make ``driver_types``.
        (Dispatch types an array of a new kind in Python, and numba's typing of arrays
        imports ``numpy.ma``: 14 ms of a first call.)"""
        found = self.entries.get((dtype, writeable))
        if found is None:
            types_ = self.driver_types(dtype, writeable)
            self.driver.compile(types_)
            found = self.entries[(dtype, writeable)] = self.driver.overloads[types_].entry_point
        return found

    def driver_address(self, dtype: np.dtype, writeable: bool) -> int:
        """The address of the driver compiled for inputs of ``dtype`` (compiled code
        calls it there, with ``driver_types``; only looked up while compiling)."""
        return task_address(self.driver, self.driver_types(dtype, writeable))


class Kernels(NamedTuple):
    """The drivers of one key kind, serial or parallel (compiled on first use)."""

    rows: Kernel  # rows longer than CHUNK_ROW_BYTES, or too few to search in groups
    chunk_rows: Kernel  # rows longer than GROUP_ROW_BYTES, up to CHUNK_ROW_BYTES
    group_rows: Kernel  # rows longer than short_rows take, up to GROUP_ROW_BYTES
    row_pieces: Kernel
    short_rows: tuple[Kernel, ...]  # for rows of 2, 3, ..., BYTE_ROW elements
    short_any: Kernel  # every short length in one task, for compiled callers
    cols: Kernel
    narrow: Kernel
    side_cols: Kernel  # ``cols`` for whole blocks narrower than a vector
    block_cols: Kernel  # ``side_cols`` for blocks it holds in registers (``REGISTERS``)
    each_cols: Kernel  # ``cols`` for such blocks too short for ``side_cols``
    each_short_cols: Kernel  # ``each_cols`` for blocks of rows of SHORT_GATHER_BYTES
    each_wide_cols: Kernel  # ``each_cols`` for blocks of rows of WIDE_GATHER_BYTES


def _build(kind: int, parallel: bool) -> Kernels:
    mode = "par" if parallel else "ser"
    loop = parallel_tasks if parallel else serial_tasks
    # One driver for every kernel that runs its tasks the same way: it takes the task's
    # address, so a layout whose driver another layout compiled compiles only its task.
    drivers = {
        fn: _compile(
            fn,
            f"{fn.__name__}_k{kind}_{mode}",
            {"KIND": kind, "PARALLEL": parallel, "per_task": _PER_TASK, "run_tasks": loop},
            driver=True,
        )
        for fn in (rows, row_pieces, cols, narrow)
    }

    def kernel(fn, task: str, ndim, parts, ints, extra) -> Kernel:
        return Kernel(drivers[fn], task, kind, ndim, parts, ints, extra, {}, {})

    return Kernels(
        kernel(rows, "rows_task", 2, False, 2, 0),
        kernel(rows, "chunk_rows_task", 2, False, 2, 0),
        kernel(rows, "group_rows_task", 2, False, 2, 0),
        kernel(row_pieces, "row_piece_task", 2, True, 3, 1),
        tuple(kernel(rows, f"short_rows_task{m}", 2, False, 2, 0) for m in range(2, BYTE_ROW + 1)),
        kernel(rows, "short_any_task", 2, False, 2, 0),
        kernel(cols, "col_task", 3, False, 3, 1),
        kernel(narrow, "narrow_task", 3, True, 4, 2),
        kernel(cols, "side_task", 3, False, 3, 1),
        kernel(cols, "block_task", 3, False, 3, 1),
        kernel(cols, "each_task", 3, False, 3, 1),
        kernel(cols, "each_short_task", 3, False, 3, 1),
        kernel(cols, "each_wide_task", 3, False, 3, 1),
    )


@functools.cache
def tasks_of(kind: int, last: int) -> dict:
    """The tasks of key kind ``kind`` for ``last`` (a constant of their code, so a first
    call compiles the search for the first occurrence only, or for the last only), each
    made on first use: all ten sets at import took ``argmax_numba._kernels`` from 21-30
    to 60-108 ms (``python -X importtime``, an Intel Xeon)."""
    return _make_tasks(kind, last)


_KINDS = (KIND_INT, KIND_F16, KIND_BF16, KIND_F32, KIND_F64)
_PER_TASK = _compile(rows_per_task, "rows_per_task_inline", {}, inline="always")


class _KernelSets(dict):
    """The kernels of each (key kind, parallel), created on first use: all ten sets at
    import took 15-20 ms of ``import argmax_numba`` (numba's dispatchers, about 0.5 ms
    each). A dict, so that a lookup costs what a dict's does (a ``Mapping`` with a
    method of its own took 0.37 us, a tenth of a small call)."""

    def __missing__(self, key: tuple[int, bool]) -> Kernels:
        if key not in KERNEL_SETS:
            raise KeyError(key)
        self[key] = kernels = _build(*key)
        return kernels


KERNEL_SETS = tuple((k, p) for k in _KINDS for p in (True, False))
"""The keys of ``KERNELS``, which holds only the sets created so far."""
KERNELS: dict[tuple[int, bool], Kernels] = _KernelSets()
"""The kernels of ``argmax``, keyed by (key kind, parallel)."""

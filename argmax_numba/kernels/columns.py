"""Task bodies of the column kernels: the middle axis of a C-contiguous
``x[outer, n, inner]``.

``col_task`` folds ``n`` rows of a stretch of columns into running maxima and row
numbers in vector registers (``vector.col_blocks``). Whole blocks ``x[o]`` narrower than
a vector go to ``side_task`` (consecutive rows read side by side as one wide row),
``block_task`` (the same, the whole block in registers: ``vector.side_blocks``) or
``each_task`` (the same row of several blocks gathered into one vector). ``narrow_task``
folds a range of the rows of a few narrow blocks; the driver merges the ranges.
"""

from __future__ import annotations

import numpy as np

from ..runtime.arrays import c_view, empty
from ..vector.candidates import choose, take_first, take_last
from ..vector.col_blocks import float_fold, fold_block, fold_float_block
from ..vector.ir import VECTOR_BYTES
from ..vector.keys import key, key_vector, narrow_index
from ..vector.lanes import lane_count, lane_slots
from ..vector.side_blocks import (
    GATHER_BYTES,
    GATHER_ROWS,
    SHORT_GATHER_BYTES,
    WIDE_GATHER_BYTES,
    gather_blocks,
    side_block,
)
from .compiling import TaskSpec

__all__ = ["column_tasks"]

# Each task is a closure over the key kind ``kind`` and ``last`` (constants of its code),
# compiled for one pair of them (``registry.tasks_of``, ``compiling.TaskSet``). The
# helper a task calls (``across``) and its constant (``SLOT``) reach it as globals bound
# when the task is compiled; the names below only stand for them. (No
# local variable of the factories may share a global's name: the tasks would hold it as a
# closure cell, which numba's cache key pickles, and they would never be found in the
# cache.)
across = SLOT = None


def column_tasks(kind: int, last: int) -> dict[str, TaskSpec]:
    """The column tasks of key kind ``kind`` for ``last``, by name (not yet compiled)."""

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
        if float_fold(x, w, kind):  # (a loop of its own: see ``fold_float_block``)
            for o in range(o0, min(o0 + per, outer)):
                at = o * inner + j0
                fold_float_block(x, o * n * inner + j0, n, inner, w, best, hit, out, at, kind, last)
        else:
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
        # each block on its own, with no scratch but a row of keys. A task of its own, so
        # that these loops do not add to the first compile of every column layout, and
        # compiled once for each SLOT, below (docs/performance.md, "One task per gather
        # width").
        outer, n, inner = x.shape
        per = block // inner
        best = key_vector(inner, x, kind)
        lo, hi = t * per, min(t * per + per, outer)
        # A few blocks at a time, SLOT bytes of a row of each (GATHER_BYTES, or
        # SHORT_GATHER_BYTES or WIDE_GATHER_BYTES where ``plan`` finds rows that short or
        # that long) in one vector (``gather_blocks``), much faster than one column at a
        # time (docs/performance.md, GATHER_BYTES), but not the last block of x, past
        # whose end such a vector could reach.
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
                # Row by row, so that LLVM vectorises across the columns, faster than
                # column by column where there are enough columns (docs/performance.md,
                # "Blocks left over: row by row or column by column") ...
                for j in range(inner):
                    best[j] = key(blk[j], kind)
                    at[j] = 0
                across(blk, best, at, 1, n, inner)
            else:
                # ... but column by column where there are too few columns for a vector,
                # where row by row is the slower.
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
        # registers (``side_block``). A task of its own: in one with ``side_task``'s
        # loops, a first call would compile both (docs/performance.md, "Blocks folded
        # whole in registers").
        outer, n, inner = x.shape
        per = block // inner
        lanes = lane_count(x)
        m = lanes // inner
        rows = n // m  # (counted here: a division inside the loop is slower)
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
        # vectorised, took a good part of the task's first compile: docs/performance.md,
        # "The narrow task's merge and leftover rows in one loop".)
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
    specs = {
        fn.__name__: TaskSpec(fn, fn.__name__, by_column, {})
        for fn in (col_task, side_task, block_task)
    }
    specs["narrow_task"] = TaskSpec(narrow_task, "narrow_task", {}, {})
    # One task per gather width: a first call compiles only the one it runs
    # (docs/performance.md, "One task per gather width").
    for name, slot in (
        ("each_task", GATHER_BYTES),
        ("each_short_task", SHORT_GATHER_BYTES),
        ("each_wide_task", WIDE_GATHER_BYTES),
    ):
        specs[name] = TaskSpec(each_task, name, by_column, {"SLOT": slot})
    return specs

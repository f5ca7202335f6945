"""The portable loops of every other axis, over ``(outer, n, inner)`` views.

* ``reduce_middle``: each task owns a stretch of inner positions of one block ``x[o]``
  (STRETCH of them to STRETCH_BYTES' worth) and folds the ``n`` rows into a best key and
  row number per position, a row at a time (two at a time where a task's running keys
  and rows no longer fit in the first-level cache), so that the input is read once, in
  memory order, in loops across the positions that LLVM vectorises. Row numbers are
  kept as narrow as the keys (at least 16 bits, at most 32) within a group of rows they
  can count, and merged into the whole block's after each group.
* ``reduce_middle_parts``: fewer than PIECES blocks of at most PART_WIDTH inner
  positions, on numba's threads: each block's rows are cut into parts of consecutive
  rows, each folded over the whole width by one task, which so reads one run of memory
  in order; then each position's parts are merged in order.
* ``reduce_narrow``: blocks ``x[o]`` narrower than NARROW_WIDTH: consecutive rows are
  read side by side as one wide row, folded the same way, and each column's lanes merged
  at the end, so that the vectorised loops are wide however narrow the block.
* ``reduce_tiles``: narrow blocks of few rows (``choice.tiled``), too few for wide rows:
  the blocks of a tile are copied side by side, row ``r`` of every block into row ``r``
  of the tile, whose rows are then folded as ``reduce_middle`` folds a block's. On
  numba's threads, blocks of 2 to FIXED_COLUMNS columns in inputs of more than
  TASK_ELEMENTS elements take it compiled for their width, so that LLVM unrolls the copy
  of a block's row.

Each loop takes ``(x, out, last, flip)``, as the loops of ``rows`` do. The names below
that are None here are bound by ``choice.PortableKernels`` for one element format and
item size (``compiling.bind``).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .tuning import (
    NARROW_WIDTH,
    PART_ROWS,
    PIECES,
    STRETCH,
    STRETCH_BYTES,
    TASK_ELEMENTS,
    TILE_LANES,
)

__all__ = [
    "fold_row",
    "fold_row_pair",
    "fold_rows",
    "reduce_middle",
    "reduce_middle_parts",
    "reduce_narrow",
    "reduce_tiles",
    "take_run",
]

# Bound for one element format and item size: the key of an element (``key``); the
# type of row numbers within a group (``row_number``: ``tuning.ROW_NUMBERS``) and the
# rows a group holds (GROUP: as many as those count); ``fold_row`` compiled with them and
# with BLEND (whether it stores row numbers of 16 bits chosen by a mask), as ``fold``;
# ``take_run``, as ``take``; ``fold_row_pair`` likewise, as ``pair``; the least width
# folded two rows at a time (PAIRED_WIDTH: ``tuning.paired_width``); ``fold_rows``
# compiled with all these (under its own name), as ``fold_rows``; for ``reduce_tiles``,
# the width of its blocks (INNER, 0: any); for ``reduce_narrow``, whether its wide rows
# are numbered in 64 bits (WIDE).
key = row_number = GROUP = BLEND = fold = take = pair = PAIRED_WIDTH = INNER = WIDE = None


def fold_row(row, best, at, r, last, flip):
    # Row ``r`` taken into the best keys ``best`` and their rows ``at``, lane by lane:
    # a loop across the lanes, with one comparison per value of ``last``, which LLVM
    # vectorises. The best key is the maximum of the two, stored in every lane: written
    # as a choice between them, it became a store of only the changed lanes, much slower
    # on 8-bit data (docs/performance.md, "The portable tier's running keys stored whole").
    # Where BLEND (rows numbered in 16 bits, ``row_number``), the row numbers are stored
    # whole too, chosen by a mask of all ones or all zeros: written as a choice, they
    # became a store of only the changed lanes, which a CPU without AVX-512 cannot make
    # of 8- or 16-bit lanes, so that LLVM left the loop unvectorised and it took 10 to 23
    # times as long (docs/performance.md, "The portable tier's row numbers stored whole").
    if BLEND:
        if last:
            for j in range(row.size):
                k, b = key(row[j], flip), best[j]
                m = row_number(0) - row_number(k >= b)
                at[j] = (r & m) | (at[j] & ~m)
                best[j] = max(k, b)
        else:
            for j in range(row.size):
                k, b = key(row[j], flip), best[j]
                m = row_number(0) - row_number(k > b)
                at[j] = (r & m) | (at[j] & ~m)
                best[j] = max(k, b)
    elif last:
        for j in range(row.size):
            k, b = key(row[j], flip), best[j]
            at[j] = r if k >= b else at[j]
            best[j] = max(k, b)
    else:
        for j in range(row.size):
            k, b = key(row[j], flip), best[j]
            at[j] = r if k > b else at[j]
            best[j] = max(k, b)


def fold_row_pair(row, next_row, best, at, r, last, flip):
    # Rows ``r`` and ``r + 1`` taken into ``best`` and ``at`` as ``fold_row`` takes one:
    # each lane's better key of the two (the later row's on a tie only where ``last``),
    # then that key against the best so far. A pair of rows loads and stores the running
    # keys and rows once, where ``fold_row`` does it for each row: the gain where they
    # no longer fit in the first-level cache (``fold_rows``). The same four loops as
    # ``fold_row``'s, for the same reasons: written with fewer branches, as one loop of
    # masks, the pairs took up to twice as long as single rows on 8-bit data
    # (docs/performance.md, "The portable tier's wide rows folded two at a time").
    later = r + row_number(1)
    if BLEND:
        if last:
            for j in range(row.size):
                a, b, c = key(row[j], flip), key(next_row[j], flip), best[j]
                k, s = max(a, b), later if b >= a else r
                m = row_number(0) - row_number(k >= c)
                at[j] = (s & m) | (at[j] & ~m)
                best[j] = max(k, c)
        else:
            for j in range(row.size):
                a, b, c = key(row[j], flip), key(next_row[j], flip), best[j]
                k, s = max(a, b), later if b > a else r
                m = row_number(0) - row_number(k > c)
                at[j] = (s & m) | (at[j] & ~m)
                best[j] = max(k, c)
    elif last:
        for j in range(row.size):
            a, b, c = key(row[j], flip), key(next_row[j], flip), best[j]
            k, s = max(a, b), later if b >= a else r
            at[j] = s if k >= c else at[j]
            best[j] = max(k, c)
    else:
        for j in range(row.size):
            a, b, c = key(row[j], flip), key(next_row[j], flip), best[j]
            k, s = max(a, b), later if b > a else r
            at[j] = s if k > c else at[j]
            best[j] = max(k, c)


def take_run(best, at, keys, rows, first, last):
    # The best keys ``keys`` of a run of rows that starts at row ``first``, and their
    # rows within it ``rows``, taken into the best keys ``best`` and their rows ``at``
    # of the rows before it, lane by lane: a later run wins a tie only where ``last``.
    for j in range(best.size):
        k, b = keys[j], best[j]
        if k > b or (last and k == b):
            best[j] = k
            at[j] = first + rows[j]


def fold_rows(x, o, r0, r1, j0, width, last, flip):
    # Rows ``r0`` to ``r1 - 1`` of block ``x[o]``, at ``width`` inner positions from
    # ``j0`` on, folded a row at a time, or from PAIRED_WIDTH positions on, whose running
    # keys and rows leave the first-level cache, two rows at a time (``pair``; a row left
    # over alone): in groups of GROUP rows, numbered within the group in ``row_number``,
    # whose best keys and rows are merged into the whole run's after each group. Returns
    # the best keys and their rows.
    best = np.empty(width, x.dtype)  # (floats': their bits')
    at = np.empty(width, np.int64)
    group_best = np.empty(width, x.dtype)
    group_at = np.empty(width, row_number)
    first = x[o, r0, j0 : j0 + width]
    for j in range(width):
        best[j] = key(first[j], flip)
        at[j] = r0
    for g0 in range(r0 + 1, r1, GROUP):
        g1 = g0 + min(GROUP, r1 - g0)  # (g0 + GROUP could overflow)
        row = x[o, g0, j0 : j0 + width]
        for j in range(width):
            group_best[j] = key(row[j], flip)
            group_at[j] = 0
        single = g0 + 1  # the first row folded alone
        if width >= PAIRED_WIDTH:
            for i in range(g0 + 1, g1 - 1, 2):
                row, next_row = x[o, i, j0 : j0 + width], x[o, i + 1, j0 : j0 + width]
                pair(row, next_row, group_best, group_at, row_number(i - g0), last, flip)
            single = g1 - (g1 - g0 - 1) % 2
        for i in range(single, g1):
            row = x[o, i, j0 : j0 + width]
            fold(row, group_best, group_at, row_number(i - g0), last, flip)
        take(best, at, group_best, group_at, g0, last)
    return best, at


def reduce_middle(x, out, last, flip):
    # A task's stretch: as many positions as make PIECES tasks of the input, rounded up
    # to a multiple of 64, at least STRETCH and at most STRETCH_BYTES' worth (the longer
    # a row's run of memory, the faster it was read).
    outer, n, inner = x.shape
    share = (outer * inner + PIECES - 1) // PIECES
    stretch = min(STRETCH_BYTES // x.itemsize, max(STRETCH, (share + 63) // 64 * 64))
    stretches = (inner + stretch - 1) // stretch
    for t in prange(outer * stretches):
        o = t // stretches
        j0 = (t - o * stretches) * stretch
        width = min(j0 + stretch, inner) - j0
        out[o, j0 : j0 + width] = fold_rows(x, o, 0, n, j0, width, last, flip)[1]


def reduce_middle_parts(x, out, last, flip):
    # Fewer than PIECES blocks of at most PART_WIDTH inner positions, on numba's threads
    # (``PortableKernels.choose``): each block's rows are cut into parts of at least
    # PART_ROWS consecutive rows, about PIECES parts in all, each folded over the whole
    # width by one task; then each position's parts are merged in order.
    outer, n, inner = x.shape
    wanted = max(1, min(n // PART_ROWS, (PIECES + outer - 1) // outer))  # parts of a block
    size = (n + wanted - 1) // wanted
    parts = (n + size - 1) // size  # as many as hold rows
    tops = np.empty((outer * parts, inner), x.dtype)
    places = np.empty((outer * parts, inner), np.int64)
    for t in prange(outer * parts):
        o, p = t // parts, t % parts
        r0, r1 = p * size, min(p * size + size, n)
        tops[t], places[t] = fold_rows(x, o, r0, r1, 0, inner, last, flip)
    for o in prange(outer):
        best, at = tops[o * parts], places[o * parts]
        for t in range(o * parts + 1, o * parts + parts):
            take(best, at, tops[t], places[t], 0, last)  # (rows counted from the block's)
        out[o] = at


def reduce_narrow(x, out, last, flip):
    # Blocks x[o] narrower than NARROW_WIDTH elements: ``m`` consecutive rows side by
    # side make one wide row of ``m * inner`` lanes, folded as ``reduce_middle`` folds
    # rows; then each column's ``m`` lanes are merged, and the rows after the last whole
    # wide row taken in. Many blocks to a task. A fold reads NARROW_WIDTH lanes (fewer
    # only at the block's end) also where the wide row is narrower: the lanes past it,
    # the next wide row's first elements, are never merged, and a loop of NARROW_WIDTH
    # lanes leaves none over for LLVM to take one at a time after its widest vectors.
    # The wide rows are numbered in ``row_number`` within groups of GROUP, as in
    # ``fold_rows``; where WIDE (8-byte elements), in 64 bits, as wide as the keys
    # (docs/performance.md, "The portable tier's narrow blocks folded NARROW_WIDTH lanes
    # at a time").
    outer, n, inner = x.shape
    m = max(1, NARROW_WIDTH // inner)
    width = m * inner
    wide_rows = n // m
    per = max(1, TASK_ELEMENTS // (n * inner))
    for t in prange((outer + per - 1) // per):
        best = np.empty(NARROW_WIDTH, x.dtype)
        at = np.empty(NARROW_WIDTH, np.int64)  # each lane's wide row
        if not WIDE:
            group_best = np.empty(NARROW_WIDTH, x.dtype)
            group_at = np.empty(NARROW_WIDTH, row_number)
        for o in range(t * per, min(t * per + per, outer)):
            flat = x[o].reshape(n * inner)
            if WIDE:
                if wide_rows > 0:
                    lanes = flat[:NARROW_WIDTH]
                    for q in range(lanes.size):
                        best[q] = key(lanes[q], flip)
                        at[q] = 0
                for r in range(1, wide_rows):
                    fold(flat[r * width : r * width + NARROW_WIDTH], best, at, r, last, flip)
            elif wide_rows > 0:
                # The first group, from wide row 0, folded into the block's best keys;
                # each later one (a block of more than GROUP wide rows) into keys of its
                # own, then merged into them.
                for g0 in range(0, wide_rows, GROUP):
                    g1 = g0 + min(GROUP, wide_rows - g0)
                    keys = best if g0 == 0 else group_best
                    lanes = flat[g0 * width : g0 * width + NARROW_WIDTH]
                    for q in range(lanes.size):
                        keys[q] = key(lanes[q], flip)
                        group_at[q] = 0
                    for r in range(g0 + 1, g1):
                        lanes = flat[r * width : r * width + NARROW_WIDTH]
                        fold(lanes, keys, group_at, row_number(r - g0), last, flip)
                    if g0 == 0:
                        for q in range(NARROW_WIDTH):
                            at[q] = group_at[q]
                    else:
                        take(best, at, group_best, group_at, g0, last)
            if wide_rows > 0:
                # Each column's m lanes merged into its first lane, in loops across the
                # columns (which LLVM vectorises); lane s of wide row w stands for row
                # w * m + s, which ``at`` holds from here on.
                for c in range(inner):
                    at[c] = at[c] * m
                for s in range(1, m):
                    for c in range(inner):
                        k, r = best[s * inner + c], at[s * inner + c] * m + s
                        b, a = best[c], at[c]
                        wins = k > b or (k == b and (r > a if last else r < a))
                        at[c] = r if wins else a
                        best[c] = max(k, b)
            for c in range(inner):
                if wide_rows > 0:
                    top, row = best[c], at[c]
                    first = wide_rows * m
                else:
                    top, row = key(flat[c], flip), 0
                    first = 1
                for r in range(first, n):
                    k = key(flat[r * inner + c], flip)
                    if k > top or (last and k == top):
                        top, row = k, r
                out[o, c] = row


def reduce_tiles(x, out, last, flip):
    # Narrow blocks x[o] of few rows (``tiled``): a tile of ``g`` blocks is copied into
    # ``tile``, row ``r`` of block ``g`` into row ``r`` at lanes ``g * inner`` on, in
    # memory order of the input; then the tile's rows are folded as ``reduce_middle``
    # folds a block's. Many tiles to a task. Compiled with INNER 0, it takes blocks of
    # any width; with INNER the blocks' width (``PortableKernels.fixed_tiles``), LLVM
    # unrolls the copy of a block's row, which otherwise is a loop of a few elements.
    outer, n, columns = x.shape
    inner = INNER if INNER > 0 else columns
    blocks = max(1, TILE_LANES // inner)  # a tile's
    width = blocks * inner
    tiles = (outer + blocks - 1) // blocks
    per = max(1, TASK_ELEMENTS // (width * n))
    for t in prange((tiles + per - 1) // per):
        tile = np.empty((n, width), x.dtype)
        best = np.empty(width, x.dtype)
        at = np.empty(width, row_number)
        for q in range(t * per, min(t * per + per, tiles)):
            o0 = q * blocks
            g1 = min(blocks, outer - o0)
            w = g1 * inner
            for g in range(g1):
                for r in range(n):
                    for c in range(inner):
                        tile[r, g * inner + c] = x[o0 + g, r, c]
            for j in range(w):
                best[j] = key(tile[0, j], flip)
                at[j] = 0
            for r in range(1, n):
                fold(tile[r, :w], best[:w], at[:w], row_number(r), last, flip)
            for g in range(g1):
                for c in range(inner):
                    out[o0 + g, c] = at[g * inner + c]

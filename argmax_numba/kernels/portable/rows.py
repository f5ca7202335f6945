"""The portable loops of the last axis (``inner == 1``), over ``(outer, n)`` views.

* ``reduce_rows``: a short row (``ShortRows``: of integers, INTEGER_ROWS; of floats,
  FLOAT_ROWS) in one plain pass, many rows to a task; a row of at most BLOCK_BYTES in
  two plain passes: its largest key (a reduction that LLVM vectorises), then that key's
  place (the least or greatest place that holds it: a vectorised reduction too, not a
  loop that stops at the first hit, in integers as wide as the keys); a longer row a
  block of BLOCK_BYTES at a time: each block's largest key is compared with the best so
  far, and the block that holds the best is remembered; then the place in that block is
  looked for, read again from cache. A search for the first place stops, at the end of a
  chunk of CHUNK elements, once it has found the greatest key there is (the type's
  greatest integer, or a NaN).
* ``reduce_fixed_rows``: rows of 2 to FIXED_ROWS elements (by item size and CPU) on
  numba's threads, in inputs of more than TASK_ELEMENTS elements, compiled for each
  length, so that LLVM unrolls the loop along a row and vectorises the loop across the
  rows, each lane a row.
* ``reduce_fixed_halves``: rows of floats too long for ``reduce_fixed_rows`` on the CPU
  numba compiles for, but of an even length up to twice its limit (``choice.halved``),
  searched as two rows of half their length each, as ``reduce_fixed_rows`` searches
  rows, then each row's halves compared.
* ``reduce_rows_across``: short rows of floats (FLOAT_ROWS) on numba's threads,
  ACROSS_ROWS rows to a task, folded a column at a time across the rows, so that the
  keys of many rows are computed side by side in vector lanes rather than one after
  another behind the branch of a row's search.
* ``reduce_row_pieces``: fewer than PIECES rows of at least 2 * PIECE elements, each
  cut into pieces searched as above on all threads, then merged.

Each loop takes ``(x, out, last, flip)``: the input, read as signed integers, its int64
result, ``select_last_index`` and ``flip`` (``keys.flip_argument``). The names below
that are None here are bound by ``choice.PortableKernels`` for one element format and
item size (``compiling.bind``).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .keys import flipped
from .tuning import ACROSS_ROWS, CHUNK, FEW_ELEMENTS, PIECE, PIECES, TASK_ELEMENTS

__all__ = [
    "find_key",
    "reduce_fixed_halves",
    "reduce_fixed_rows",
    "reduce_row_pieces",
    "reduce_rows",
    "reduce_rows_across",
    "search_fixed_row",
    "search_row",
    "search_short_row",
]

# Bound for one element format and item size: the key of an element (``key``) and the
# greatest there is (``greatest``); for ``search_row``, the elements of a block (BLOCK:
# BLOCK_BYTES of them) and ``find_key`` compiled with the key and the type of places in a
# block (``place``: ``tuning.PLACES``), as ``find``; ``search_row`` and
# ``search_short_row`` compiled with them, as ``search`` and ``short_row``, and
# ``search_fixed_row`` with ``key``, as ``fixed_row``; for
# ``reduce_rows``, its short rows' limit (SHORT: ``ShortRows``) and whether the keys are
# integers (INTEGERS); for ``reduce_fixed_rows``, the length of its rows (LENGTH); for
# ``reduce_fixed_halves``, the length of half a row (HALF).
key = greatest = find = place = BLOCK = search = short_row = fixed_row = None
SHORT = INTEGERS = LENGTH = HALF = None


def search_row(row, last, flip):
    # The best key of a row longer than a short one and its place. A row of at most BLOCK
    # elements in two plain passes: its largest key (a reduction that LLVM vectorises),
    # then that key's place (``find_key``, bound as ``find``); taken through the loop of
    # blocks below, as one block, it took up to 2.4 times as long. A longer row a block of
    # BLOCK elements at a time: the largest key of each block, the block that holds the
    # best so far remembered; then the place in that block, read again from cache. A
    # search for the first place stops at the end of a chunk of CHUNK elements that has
    # found the greatest key there is (stopping at the block itself, rows read from memory
    # took up to 2.5 times as long: docs/performance.md, "The portable tier's rows
    # searched a block at a time").
    n = row.size
    best = key(row[0], flip)
    if n <= BLOCK:
        for i in range(n):
            best = max(best, key(row[i], flip))
        return best, find(row, best, last, flip)
    b_best = 0
    for b0 in range(0, n, BLOCK):
        block = row[b0 : min(b0 + BLOCK, n)]
        top = key(block[0], flip)
        for i in range(block.size):
            top = max(top, key(block[i], flip))
        if top > best or (last and top == best):
            best, b_best = top, b0
        if not last and (b0 + BLOCK) % CHUNK == 0 and best == greatest(row):
            break
    return best, b_best + find(row[b_best : min(b_best + BLOCK, n)], best, last, flip)


def find_key(block, best, last, flip):
    # The least place of key ``best`` in ``block`` of at most BLOCK elements, or the
    # greatest where ``last``: the greatest of the places negated (``(i ^ m) - m`` is
    # ``-i`` where ``m`` is -1), so that one loop serves both and is compiled once. A
    # reduction, which LLVM vectorises, in integers of ``place`` (as wide as the keys, at
    # least 16 bits), so that a vector holds as many places as keys (docs/performance.md,
    # "The portable tier's places found in integers as wide as the keys").
    size = block.size
    m = 0 if last else -1
    no_place = place(-size)
    found = no_place
    for i in range(size):
        found = max(found, place((i ^ m) - m) if key(block[i], flip) == best else no_place)
    return (np.int64(found) ^ m) - m


def search_short_row(row, last, flip):
    # The place of the best key of a short row, in one plain pass.
    best = key(row[0], flip)
    at = 0
    for i in range(1, row.size):
        k = key(row[i], flip)
        if k > best or (last and k == best):
            best = k
            at = i
    return at


def search_fixed_row(flat, first, length, last, flip):
    # The best key of the ``length`` elements of ``flat`` from ``first`` on, and its
    # place, in one plain pass without a branch: for ``reduce_fixed_rows`` and
    # ``reduce_fixed_halves``, in which ``length`` is a constant (LLVM unrolls the pass)
    # and ``first`` an unsigned integer (no test for a negative index).
    best = key(flat[first], flip)
    at = 0
    for i in range(1, length):
        k = key(flat[first + np.uint64(i)], flip)
        at = i if (k >= best if last else k > best) else at
        best = max(k, best)
    return best, at


def reduce_rows(x, out, last, flip):
    outer, n = x.shape
    if n <= SHORT:
        # Short rows (``ShortRows``): one plain pass each, many rows to a task.
        per = max(1, TASK_ELEMENTS // n)
        for t in prange((outer + per - 1) // per):
            o0, o1 = t * per, min(t * per + per, outer)
            if INTEGERS and flip == 0:
                for o in range(o0, o1):
                    out[o] = short_row(x[o], last, 0)
            elif INTEGERS and (o1 - o0) * n > FEW_ELEMENTS:
                # A row's search is a chain of scalar compares, which one xor more
                # made up to 1.4 times as long for 8-bit elements: the task's rows are
                # flipped first, in a loop that LLVM vectorises, and searched with a
                # flip of 0 the compiler knows (docs/performance.md, "The portable
                # tier's unsigned integers read as signed").
                rows = np.empty((o1 - o0, n), x.dtype)
                flat, given = rows.reshape(rows.size), x[o0:o1].reshape(rows.size)
                for i in range(rows.size):
                    flat[i] = flipped(given[i], flip)
                for o in range(o0, o1):
                    out[o] = short_row(rows[o - o0], last, 0)
            else:
                # Floats, and a task of at most FEW_ELEMENTS integers (a small call's),
                # whose buffer would cost more than the xor (docs/performance.md, "The
                # portable tier's unsigned integers read as signed").
                for o in range(o0, o1):
                    out[o] = short_row(x[o], last, flip)
        return
    for o in prange(outer):
        out[o] = search(x[o], last, flip)[1]


def reduce_fixed_rows(x, out, last, flip):
    # Rows of LENGTH elements (at most FIXED_ROWS of their item size), LENGTH fixed when the
    # loop is compiled (``PortableKernels.fixed_rows``), on numba's threads, many rows to
    # a task. With it known, LLVM unrolls the loop along a row and vectorises the loop
    # across the rows, each lane a row whose elements it loads interleaved; for a row of
    # any length (``reduce_rows``) it searches one row after another. The flat view makes
    # the distance between rows LENGTH elements for LLVM too, not the array's stride.
    # The rows are numbered in unsigned integers: numba reads ``a[i]`` at a signed ``i``
    # through a test for a negative index (counted from the end), which LLVM cannot drop
    # where it does not know ``i`` to be positive, as for a task's rows, and which made it
    # load and store each lane on its own; an unsigned index has no such test
    # (docs/performance.md, "The portable tier's short rows indexed by unsigned integers").
    outer = x.shape[0]
    flat = x.reshape(outer * LENGTH)
    per = max(1, TASK_ELEMENTS // LENGTH)
    for t in prange((outer + per - 1) // per):
        for o in range(np.uint64(t * per), np.uint64(min(t * per + per, outer))):
            out[o] = fixed_row(flat, o * np.uint64(LENGTH), LENGTH, last, flip)[1]


def reduce_fixed_halves(x, out, last, flip):
    # Rows of 2 * HALF floats, HALF fixed when the loop is compiled
    # (``PortableKernels.fixed_halves``), on numba's threads, many rows to a task: rows
    # too long for ``reduce_fixed_rows`` where LLVM would gather them (``choice.halved``).
    # Each task searches its rows' halves as rows of HALF elements, as
    # ``reduce_fixed_rows`` does (LLVM loads their lanes interleaved, HALF apart), and
    # keeps each half's best key and place; then it takes, for each row, the better of
    # its two halves, the second where the keys tie and ``last`` (docs/performance.md,
    # "The portable tier's rows of floats searched as halves"). The rows are numbered in
    # unsigned integers, as in ``reduce_fixed_rows``.
    outer = x.shape[0]
    flat = x.reshape(outer * 2 * HALF)
    per = max(1, TASK_ELEMENTS // (2 * HALF))
    for t in prange((outer + per - 1) // per):
        o0 = t * per
        w = min(per, outer - o0)
        tops = np.empty(2 * w, x.dtype)
        places = np.empty(2 * w, np.int32)
        start = np.uint64(o0) * np.uint64(2 * HALF)
        for h in range(np.uint64(0), np.uint64(2 * w)):
            tops[h], places[h] = fixed_row(flat, start + h * np.uint64(HALF), HALF, last, flip)
        # (The constants written out in the loops: a name bound outside them is passed
        # to numba's parallel loop as an argument, unknown to LLVM, and the loop ran up
        # to 1.5 times as long.)
        for r in range(np.uint64(0), np.uint64(w)):
            a, b = tops[2 * r], tops[2 * r + np.uint64(1)]
            second = b >= a if last else b > a
            out[np.uint64(o0) + r] = (
                places[2 * r + np.uint64(1)] + HALF if second else places[2 * r]
            )


def reduce_rows_across(x, out, last, flip):
    # Short rows of a float format (FLOAT_ROWS), on numba's threads
    # (``PortableKernels.choose``): each task takes ACROSS_ROWS rows and folds them a
    # column at a time, each row's best key and place in a lane of ``best`` and ``at``,
    # as ``fold_row`` folds a block's rows. (Written out with two indices: taken as a
    # strided view of each column, as ``fold_row`` would take it, the loop ran slower.)
    outer, n = x.shape
    for t in prange((outer + ACROSS_ROWS - 1) // ACROSS_ROWS):
        r0 = t * ACROSS_ROWS
        w = min(ACROSS_ROWS, outer - r0)
        best = np.empty(w, x.dtype)
        at = np.empty(w, np.int32)
        for r in range(w):
            best[r] = key(x[r0 + r, 0], flip)
            at[r] = 0
        for i in range(1, n):
            if last:
                for r in range(w):
                    k, b = key(x[r0 + r, i], flip), best[r]
                    at[r] = i if k >= b else at[r]
                    best[r] = max(k, b)
            else:
                for r in range(w):
                    k, b = key(x[r0 + r, i], flip), best[r]
                    at[r] = i if k > b else at[r]
                    best[r] = max(k, b)
        for r in range(w):  # (as a slice assignment, the whole loop took 4 times as long)
            out[r0 + r] = at[r]


def reduce_row_pieces(x, out, last, flip):
    # Fewer than PIECES rows of at least 2 * PIECE elements (``PortableKernels.choose``):
    # each row is cut into pieces of at least PIECE elements, about PIECES in all,
    # searched in parallel; then each row's pieces are merged in order.
    outer, n = x.shape
    pieces = min(n // PIECE, (PIECES + outer - 1) // outer)
    size = (n + pieces - 1) // pieces
    tops = np.empty(outer * pieces, x.dtype)
    places = np.empty(outer * pieces, np.int64)
    for t in prange(outer * pieces):
        o, p = t // pieces, t % pieces
        tops[t], places[t] = search(x[o, p * size : min(p * size + size, n)], last, flip)
    for o in range(outer):
        best, at = tops[o * pieces], places[o * pieces]
        for p in range(1, pieces):
            t = o * pieces + p
            if tops[t] > best or (last and tops[t] == best):
                best, at = tops[t], p * size + places[t]
        out[o] = at

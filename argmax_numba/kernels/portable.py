"""The portable kernels: plain ``@njit(parallel=True)`` loops over the canonical layout.

They use only numba's public API (``numba.njit``, ``numba.prange``), so they work on any
numba, CPU and Python that numba supports, and under ``NUMBA_DISABLE_JIT=1`` they run as
plain Python. They are also the slow, obvious twin that the fast kernels are tested
against.

Eight loops serve every layout of the canonical C-contiguous ``(outer, n, inner)`` view:

* ``reduce_rows`` for the last axis (``inner == 1``): a short row (``ShortRows``: of
  integers, INTEGER_ROWS; of floats, FLOAT_ROWS) in one plain pass, many rows to a
  task; a row of at most BLOCK_BYTES in two plain passes: its largest key (a reduction
  that LLVM vectorises), then that key's place (the least or greatest place that holds
  it: a vectorised reduction too, not a loop that stops at the first hit, in integers as
  wide as the keys); a longer row a block of BLOCK_BYTES at a time: each block's largest
  key is compared with the best so far, and the block that holds the best is
  remembered; then the place in that block is looked for, read again from cache. A
  search for the first place stops, at the end of a chunk of CHUNK elements, once it has
  found the greatest key there is (the type's greatest integer, or a NaN).
* ``reduce_fixed_rows`` for rows of 2 to FIXED_ROWS elements of 1 or 2 bytes on numba's
  threads, in inputs of more than TASK_ELEMENTS elements: compiled for each length, so
  that LLVM unrolls the loop along a row and vectorises the loop across the rows, each
  lane a row.
* ``reduce_rows_across`` for short rows of floats (FLOAT_ROWS) on numba's threads:
  ACROSS_ROWS rows to a task, folded a column at a time across the rows, so that the
  keys of many rows are computed side by side in vector lanes rather than one after
  another behind the branch of a row's search.
* ``reduce_row_pieces`` for fewer than PIECES rows of at least 2 * PIECE elements: each
  row is cut into pieces searched as above on all threads, then merged.
* ``reduce_middle`` for every other axis: each task owns a stretch of up to STRETCH
  inner positions of one block ``x[o]`` and folds the ``n`` rows into a best key and row
  number per position, a row at a time, so that the input is read once, in memory order,
  in loops across the positions that LLVM vectorises. Row numbers are kept as narrow as
  the keys (at least 16 bits, at most 32) within a group of rows they can count, and
  merged into the whole block's after each group.
* ``reduce_middle_parts`` for fewer than PIECES blocks of at most PART_WIDTH inner
  positions, on numba's threads: each block's rows are cut into parts of consecutive
  rows, each folded over the whole width by one task, which so reads one run of memory
  in order; then each position's parts are merged in order.
* ``reduce_narrow`` for blocks ``x[o]`` narrower than NARROW_WIDTH: consecutive rows are
  read side by side as one wide row, folded the same way, and each column's lanes
  merged at the end, so that the vectorised loops are wide however narrow the block.
* ``reduce_tiles`` for narrow blocks of few rows (``tiled``), too few for wide rows:
  the blocks of a tile are copied side by side, row ``r`` of every block into row ``r``
  of the tile, whose rows are then folded as ``reduce_middle`` folds a block's. On
  numba's threads, blocks of 2 to FIXED_COLUMNS columns in inputs of more than
  TASK_ELEMENTS elements take it compiled for their width, so that LLVM unrolls the copy
  of a block's row.

Calls from Python take the loop that ``PortableKernels.choose`` chooses; users' compiled
functions call ``reduce_rows`` and ``reduce_middle`` only, as every loop they call is
compiled with them (``jit.py``). A serial call from Python passes a 1-D input as it
is: the loop's leading axis of 1 is added in compiled code (``add_leading_axis``).

Elements are compared through integer keys, exactly as the fast kernels compare them:
signed integers are their own keys; a float's key is computed from its bits, ordered as
the floats are, with every NaN above +inf and ``-0.0 == +0.0``. The loops take floats and
unsigned integers as the signed integers of their width: serial calls from Python pass
them through a small compiled function that makes that view, ``read_signed``; calls on
numba's threads pass a view made in Python (``api``). Keys are computed at the elements'
own width, so that the vectorised loops take as many elements at once as the data
allows.

Before it is keyed, an element's bits are xor-ed with ``flip``, the loops' last argument
(``flip_argument``), not a constant of their code. ArgMin's keys are ArgMax's of the
element's bits flipped (``dtypes.KeyKind``), and an unsigned integer's bits have their
top bit flipped too, which orders them as signed integers. So one compiled loop serves
both operators and both signs of an integer width: a process or a user's function that
calls more than one compiles it once (docs/performance.md, "The portable tier's ArgMax
and ArgMin in one compiled loop" and "The portable tier's unsigned integers read as
signed").
"""

from __future__ import annotations

import functools
from types import FunctionType
from typing import Any, NamedTuple

import numba
import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from ..dtypes import FLOAT_BITS, KeyKind, flip_mask, highest_key

__all__ = [
    "ACROSS_ROWS",
    "BLOCK_BYTES",
    "CHUNK",
    "FIXED_COLUMNS",
    "FIXED_ROWS",
    "FLOAT_ROWS",
    "INTEGER_ROWS",
    "NARROW_WIDTH",
    "PART_ROWS",
    "PART_WIDTH",
    "PIECE",
    "PIECES",
    "STRETCH",
    "TASK_ELEMENTS",
    "TILE_BYTES",
    "TILE_LANES",
    "TILE_ROWS",
    "Loop",
    "PortableCall",
    "PortableKernels",
    "ShortRows",
    "portable_kernels",
    "tiled",
]

# Bytes of a block of a long row, whose largest key is found before its place is looked
# for (docs/performance.md, "The portable tier's rows searched a block at a time") ...
BLOCK_BYTES = 512
# ... and elements of a chunk of blocks, after which a search may stop (a multiple of a
# block's elements, whatever their size).
CHUNK = 4096


class ShortRows(NamedTuple):
    """The longest rows, by item size, that ``reduce_rows`` searches in one plain pass
    each (on numba's threads, rows of floats: ``reduce_rows_across``, across the rows);
    longer ones go to ``search_row``, a block at a time."""

    serial: dict[int, int]  # on one thread (inputs in cache)
    threads: dict[int, int]  # on numba's threads (inputs from memory)


# docs/performance.md, "The portable tier's rows searched a block at a time" and "The
# portable tier's places found in integers as wide as the keys".
INTEGER_ROWS = ShortRows(serial={1: 31, 2: 15, 4: 15, 8: 15}, threads={1: 31, 2: 31, 4: 15, 8: 16})
FLOAT_ROWS = ShortRows(serial={2: 15, 4: 15, 8: 7}, threads={2: 31, 4: 23, 8: 7})
# The longest rows of elements of 1 or 2 bytes that go, on numba's threads, to
# ``reduce_fixed_rows``, compiled for their length: LLVM unrolls the loop along rows of up
# to 20 to 31 such elements, by type, and vectorises the loop across them; for longer
# rows, and for elements of 4 and 8 bytes (gathered), it took longer than the loops for
# rows of any length (docs/performance.md, "The portable tier's short rows of narrow
# elements compiled for their length").
FIXED_ROWS = 16
# Rows that a task of ``reduce_rows_across`` folds side by side (docs/performance.md,
# "The portable tier's short rows of floats folded across the rows").
ACROSS_ROWS = 256
# Elements of a piece of a row at least, where long rows are too few to share out ...
PIECE = 1 << 16
# ... whole: fewer than this many, which is also about how many pieces they are cut into
# (enough for 16 threads; the loop cannot ask numba for the number of threads and stay
# in the disk cache).
PIECES = 16
# Inner positions a task of ``reduce_middle`` owns (its running keys stay in L1).
STRETCH = 1024
# Fewer than PIECES blocks of at most PART_WIDTH inner positions, and at least
# 2 * PART_ROWS rows, go to ``reduce_middle_parts`` where they are shared out among
# numba's threads (serial calls, on inputs in cache, gain nothing by it); its parts have
# at least PART_ROWS rows (docs/performance.md, "The portable tier's few blocks cut into
# parts of rows").
PART_WIDTH = 1 << 14
PART_ROWS = 16
# Blocks of fewer inner positions than this go to ``reduce_narrow`` ...
NARROW_WIDTH = 64
# ... which, like the short rows of ``reduce_rows``, takes about this many elements a task.
TASK_ELEMENTS = 1 << 14

# Narrow blocks of at most TILE_ROWS rows (by the elements' item size) and TILE_BYTES
# bytes go to ``reduce_tiles``, whose tiles are TILE_LANES elements wide
# (docs/performance.md, "Narrow blocks of few rows copied into tiles").
TILE_ROWS = {1: 64, 2: 64, 4: 32, 8: 16}
TILE_BYTES = 2048
TILE_LANES = 512
# On numba's threads, tiled blocks of 2 to FIXED_COLUMNS[itemsize] columns go to
# ``reduce_tiles`` compiled for their width, whose copy LLVM unrolls; for wider blocks
# the loop of any width, whose copy of a row LLVM vectorises, took less time
# (docs/performance.md, "The portable tier's tiles compiled for their blocks' width").
FIXED_COLUMNS = {1: 15, 2: 7, 4: 4, 8: 4}

# Row numbers within a group of ``reduce_middle`` (and of ``reduce_narrow``'s wide rows,
# but beside 8-byte elements), by the elements' item size.
# 32 bits for 64-bit elements too: fewer bytes to carry, and a group of 2**31 - 1 rows
# (docs/performance.md, "Narrow blocks of few rows copied into tiles").
_ROW_NUMBERS = {1: np.int16, 2: np.int16, 4: np.int32, 8: np.int32}
# Places within a block of BLOCK_BYTES (``find_key``), by the elements' item size: as wide
# as the keys, so that a vector holds as many places as keys, and at least 16 bits, which
# count a block of BLOCK_BYTES one-byte elements.
_PLACES = {1: np.int16, 2: np.int16, 4: np.int32, 8: np.int64}


def flipped(v, flip):
    """``v ^ flip``, as an integer of the type of ``v``: ``flip`` (a Python or numpy
    integer, wrapped to that type) is 0, or -1 for every bit, or a float format's sign
    bit. Plain Python, with numpy's scalars: used where numba's JIT is disabled."""
    return v ^ np.asarray(flip).astype(v.dtype)[()]


@overload(flipped, inline="always")
def _flipped_typed(v, flip):
    # numba types ``^`` of narrow integers as a 64-bit one: cast back to the type of v.
    cast = np.dtype(str(v)).type
    return lambda v, flip: cast(v ^ cast(flip))


@functools.cache
def flip_argument(kind: int, itemsize: int, unsigned: bool = False) -> int:
    """What the portable loops are passed as ``flip`` for key kind ``kind`` and elements
    of ``itemsize`` bytes, as a signed integer of their width: ``dtypes.flip_mask`` (0
    for ArgMax; -1 or the sign bit for ArgMin), with the top bit flipped too for
    ``unsigned`` integers, which the loops read as signed ones (``v ^ 0x80`` orders the
    bytes 0 to 255 as -128 to 127). So one compiled loop serves both operators and both
    signs. (Kept once computed: calls that are not remembered look it up each time.)"""
    bits = 8 * itemsize
    mask = flip_mask(kind, bits) ^ (1 << (bits - 1) if unsigned else 0)
    return mask - (1 << bits) if mask >> (bits - 1) else mask


def _key_function(fmt: int, itemsize: int):
    """The key of one element of format ``fmt`` (``KeyKind.INT`` or a float's) and
    ``itemsize`` bytes, as an inlined numba function of the element and ``flip``
    (``flip_argument``): the element's bits are xor-ed with ``flip`` first, which for
    ArgMin reverses the order (every bit of an integer, a float's sign bit), so that the
    largest key is the smallest element's, NaN's still the largest."""
    fmt = KeyKind(fmt).format
    if fmt == KeyKind.INT:

        def key(v, flip):
            return flipped(v, flip)

        return njit(inline="always")(key)
    width = np.dtype(f"i{itemsize}").type  # the bits' signed integer type
    inf, mask = FLOAT_BITS[fmt]
    magnitude, zero = width(mask), width(0)
    above_inf = width(highest_key(fmt, 8 * itemsize, False))  # every NaN's key
    negative_inf = width(inf - (1 << (8 * itemsize - 1)))  # -inf's bits, as signed

    def key(v, flip):
        # The magnitude, every NaN's made the one above +inf's, negated for the negative
        # numbers but NaN (whose bits, as signed integers, are -inf's or below): the
        # floats' order, as integers. (Cast back to the width at each step: numba would
        # widen it.)
        v = width(v ^ width(flip))
        mag = width(min(width(v & magnitude), above_inf))
        return width(zero - mag) if v <= negative_inf else mag

    return njit(inline="always")(key)


def _greatest_key_function(fmt: int, itemsize: int):
    """The greatest key that an element of an array searched with ``_key_function(fmt,
    itemsize)`` can have, as an inlined numba function of the array: every NaN's for the
    floats (``dtypes.highest_key``), the greatest integer of the array's type for the
    integers (ArgMin's flipped integers span the same range). No element beats it, so a
    search for its first occurrence is done once it finds it, as the fast kernels' is."""
    fmt = KeyKind(fmt).format
    if fmt == KeyKind.INT:

        def greatest(x):
            return np.iinfo(x.dtype).max

    else:
        nan = np.dtype(f"i{itemsize}").type(highest_key(fmt, 8 * itemsize, False))

        def greatest(x):
            return nan

    return njit(inline="always")(greatest)


# Bound by ``PortableKernels`` for one element format and item size: the key of an
# element and the greatest there is, ``fold_row``, ``search_row`` and ``search_short_row``
# compiled with them (``fold_row`` also with BLEND: whether it stores row numbers of 16
# bits chosen by a mask), the type of row numbers within a group (``_ROW_NUMBERS``) and
# the rows a group holds (as many as those count), and ``fold_rows`` compiled with all
# these (under its own name), ``take_run``; for ``search_row``, the elements of a block
# (BLOCK_BYTES) and ``find_key`` compiled with the key and the type of places in a block
# (``_PLACES``); for ``reduce_rows``, its short rows' limit (``ShortRows``) and whether
# the keys are integers (INTEGERS); for ``read_signed`` and ``add_leading_axis`` (and the
# two in one), the loop they call, and the signed integer type that float32, float64 and
# unsigned integers are viewed as; for ``reduce_fixed_rows``, the length of its rows; for
# ``reduce_tiles``, the width of its blocks (0: any); for ``reduce_narrow``, whether its
# wide rows are numbered in 64 bits (WIDE).
key = greatest = fold = search = take = row_number = GROUP = loop = bits = SHORT = BLOCK = None
find = place = LENGTH = INNER = BLEND = INTEGERS = WIDE = short_row = None


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


def take_run(best, at, keys, rows, first, last):
    # The best keys ``keys`` of a run of rows that starts at row ``first``, and their
    # rows within it ``rows``, taken into the best keys ``best`` and their rows ``at``
    # of the rows before it, lane by lane: a later run wins a tie only where ``last``.
    for j in range(best.size):
        k, b = keys[j], best[j]
        if k > b or (last and k == b):
            best[j] = k
            at[j] = first + rows[j]


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
            elif INTEGERS:
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
                for o in range(o0, o1):
                    out[o] = short_row(x[o], last, flip)
        return
    for o in prange(outer):
        out[o] = search(x[o], last, flip)[1]


def reduce_fixed_rows(x, out, last, flip):
    # Rows of LENGTH elements of 1 or 2 bytes, LENGTH fixed when the loop is compiled
    # (``PortableKernels.fixed_rows``), on numba's threads, many rows to a task. With it
    # known, LLVM unrolls the loop along a row and vectorises the loop across the rows,
    # each lane a row whose elements it loads interleaved; for a row of any length
    # (``reduce_rows``) it searches one row after another. The flat view makes the
    # distance between rows LENGTH elements for LLVM too, not the array's stride.
    outer = x.shape[0]
    flat = x.reshape(outer * LENGTH)
    per = max(1, TASK_ELEMENTS // LENGTH)
    for t in prange((outer + per - 1) // per):
        for o in range(t * per, min(t * per + per, outer)):
            best = key(flat[o * LENGTH], flip)
            at = 0
            for i in range(1, LENGTH):
                k = key(flat[o * LENGTH + i], flip)
                at = i if (k >= best if last else k > best) else at
                best = max(k, best)
            out[o] = at


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


def fold_rows(x, o, r0, r1, j0, width, last, flip):
    # Rows ``r0`` to ``r1 - 1`` of block ``x[o]``, at ``width`` inner positions from
    # ``j0`` on, folded a row at a time: in groups of GROUP rows, numbered within the
    # group in ``row_number``, whose best keys and rows are merged into the whole run's
    # after each group. Returns the best keys and their rows.
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
        for i in range(g0 + 1, g1):
            row = x[o, i, j0 : j0 + width]
            fold(row, group_best, group_at, row_number(i - g0), last, flip)
        take(best, at, group_best, group_at, g0, last)
    return best, at


def reduce_middle(x, out, last, flip):
    outer, n, inner = x.shape
    stretches = (inner + STRETCH - 1) // STRETCH
    for t in prange(outer * stretches):
        o = t // stretches
        j0 = (t - o * stretches) * STRETCH
        width = min(j0 + STRETCH, inner) - j0
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
            for c in range(inner):
                if wide_rows > 0:
                    top, row = best[c], at[c] * m
                    for s in range(1, m):
                        k, r = best[s * inner + c], at[s * inner + c] * m + s
                        if k > top or (k == top and (r > row if last else r < row)):
                            top, row = k, r
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


def read_signed(x, out, last, flip):
    # A float32, float64 or unsigned integer input passed to ``loop`` as the signed
    # integers of its width: made in compiled code, the view costs a small call from
    # Python less than numpy's (about 0.15 us), and the loops keep the one compiled version
    # that compiled callers use (docs/performance.md, "The portable tier's floats viewed
    # as integers in compiled code").
    loop(x.view(bits), out, last, flip)


def add_leading_axis(x, out, last, flip):
    # A 1-D input given without the leading axis of 1 that ``loop`` takes (one row), its
    # result in the shape the loop writes: made in compiled code, that view costs a small
    # call from Python less than ``x[None]`` there (docs/performance.md, "The portable
    # tier's leading axis added in compiled code"). (A reshape: ``x[None]`` compiles only
    # from numba 0.64 on.)
    loop(x.reshape((1, *x.shape)), out, last, flip)


def read_signed_add_leading_axis(x, out, last, flip):
    # ``read_signed`` and ``add_leading_axis`` in one function: each compiled function
    # between Python and the loop has LLVM optimise the loop again at its first compile.
    loop(x.view(bits).reshape((1, *x.shape)), out, last, flip)


def tiled(n: int, inner: int, itemsize: int) -> bool:
    """Whether blocks ``x[o]`` of ``n`` rows of ``inner`` elements of ``itemsize`` bytes go
    to ``reduce_tiles``: narrow ones of so few rows that ``reduce_narrow`` would fold few
    wide rows, if any, and merge the rest one element at a time."""
    return inner < NARROW_WIDTH and n <= TILE_ROWS[itemsize] and n * inner * itemsize <= TILE_BYTES


def _bind(fn, name: str, bound: dict):
    """``fn`` with ``bound`` as extra globals, under ``name``."""
    bound_fn = FunctionType(fn.__code__, {**fn.__globals__, **bound}, name, fn.__defaults__)
    bound_fn.__qualname__ = name
    return bound_fn


def _signature(element: np.dtype, ndim: int) -> tuple:
    """The argument types of a portable loop, or of a function bound to one, for a
    C-contiguous input of ``element`` and ``ndim`` axes, typed read-only, and its int64
    result of one axis fewer (at least one): ``(x, out, last, flip)``."""
    return (
        types.Array(numba.from_dtype(element), ndim, "C", readonly=True),
        types.Array(types.int64, max(ndim - 1, 1), "C"),
        types.int64,
        types.int64,
    )


class Loop:
    """A portable loop (or a small function bound to one), serial or on numba's threads,
    compiled on first use for each type of element it is given.

    Each element type gets a dispatcher made with its signature (numba's eager
    compilation), whose input is typed read-only. A writeable input converts to that
    type, so writeable and read-only inputs run one compiled version: a dispatcher that
    compiles on demand would compile the loop again for an input that differs only in
    that flag (docs/performance.md, "The portable loops compiled once for writeable and
    read-only inputs"). Under ``NUMBA_DISABLE_JIT`` the loop is the Python function
    itself, in which ``prange`` is ``range``."""

    def __init__(self, fn, name: str, bound: dict, parallel: bool, ndim: int):
        self.py_func = _bind(fn, name, bound)
        self.parallel = parallel
        self.ndim = ndim  # the input's axes
        self._versions: dict[np.dtype, Any] = {}  # a dispatcher for each element type

    def compiled(self, element: np.dtype):
        """What runs the loop for inputs of ``element``: a dispatcher compiled for them,
        or loaded from numba's disk cache, the first time."""
        if numba.config.DISABLE_JIT:
            return self.py_func
        version = self._versions.get(element)
        if version is None:
            options = {"parallel": self.parallel, "nogil": True, "cache": True}
            signature = _signature(element, self.ndim)
            version = self._versions[element] = njit(signature, **options)(self.py_func)
        return version


class PortableCall(NamedTuple):
    """A portable loop chosen for an input (``PortableKernels.choose``) and the shapes
    it takes the input and the result in. ``PortableKernels.entry`` gives what a call
    from Python runs, ``entry(x, out, last, flip)``, ``last`` an int (0 or 1) and
    ``flip`` one too (``flip_argument``): one compiled version for every caller and
    both operators."""

    loop: Loop
    leading: bool  # whether the loop takes the input with a leading axis of 1 it lacks
    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]


class PortableKernels:
    """The portable loops for one element format (``KeyKind.INT`` or a float's: ArgMax's
    and ArgMin's kinds of it share them, told apart by ``flip``) and item size, serial
    and parallel (compiled by numba on first use)."""

    def __init__(self, fmt: int, itemsize: int):
        self.itemsize = itemsize
        # The element type the loops are compiled for: floats and unsigned integers are
        # read as these signed integers of their width.
        self.signed = np.dtype(f"i{itemsize}")
        self.float_keys = fmt != KeyKind.INT
        # The longest rows searched in one pass (or, floats on numba's threads, across
        # the rows), serially and on numba's threads.
        limits = FLOAT_ROWS if self.float_keys else INTEGER_ROWS
        self.short_row = {False: limits.serial[itemsize], True: limits.threads[itemsize]}
        numbers = _ROW_NUMBERS[itemsize]
        key_fn = _key_function(fmt, itemsize)
        greatest_fn = _greatest_key_function(fmt, itemsize)
        tag = self._tag = f"k{fmt}_b{itemsize}"
        # The loops fold rows with ``fold_fn``, numbered in ``numbers`` (or, in
        # ``reduce_narrow`` beside 8-byte keys, in 64 bits: then BLEND is False).
        blend = {"key": key_fn, "row_number": numbers, "BLEND": numbers is np.int16}
        fold_fn = njit(inline="always")(_bind(fold_row, f"portable_fold_{tag}", blend))
        find_fn = njit(inline="always")(
            _bind(find_key, f"portable_find_{tag}", {"key": key_fn, "place": _PLACES[itemsize]})
        )
        short_fn = njit(inline="always")(
            _bind(search_short_row, f"portable_short_{tag}", {"key": key_fn})
        )
        search_fn = njit(inline="always")(
            _bind(
                search_row,
                f"portable_search_{tag}",
                {
                    "key": key_fn,
                    "greatest": greatest_fn,
                    "find": find_fn,
                    "BLOCK": BLOCK_BYTES // itemsize,
                },
            )
        )
        bound = {
            "key": key_fn,
            "fold": fold_fn,
            "search": search_fn,
            "short_row": short_fn,
            "take": njit(inline="always")(take_run),
            "row_number": numbers,
            "GROUP": int(np.iinfo(numbers).max),
        }
        bound["fold_rows"] = njit(nogil=True)(_bind(fold_rows, f"portable_fold_rows_{tag}", bound))
        self._bound = bound
        rows_bound = {"INTEGERS": not self.float_keys}
        self.rows = {
            p: self._loop("rows", reduce_rows, {**rows_bound, "SHORT": self.short_row[p]}, p, 2)
            for p in (False, True)
        }
        self.row_pieces = {
            p: self._loop("pieces", reduce_row_pieces, {}, p, 2) for p in (False, True)
        }
        # Loops compiled for a length of rows or a width of blocks (``_compiled_for``).
        self._fixed: dict[tuple[Any, int], Loop] = {}
        # (on numba's threads only: serial calls keep ``reduce_rows``)
        self.rows_across = self._loop("across", reduce_rows_across, {}, True, 2)
        self.middle = {p: self._loop("middle", reduce_middle, {}, p, 3) for p in (False, True)}
        # (on numba's threads only: serial calls keep ``reduce_middle``)
        self.middle_parts = self._loop("parts", reduce_middle_parts, {}, True, 3)
        narrow = {"WIDE": itemsize == 8}
        self.narrow = {p: self._loop("narrow", reduce_narrow, narrow, p, 3) for p in (False, True)}
        self.tiles = {
            p: self._loop("tiles", reduce_tiles, {"INNER": 0}, p, 3) for p in (False, True)
        }
        # What calls from Python run for a chosen loop and element type (``entry``).
        self._entries: dict[tuple[Loop, bool, np.dtype], Any] = {}

    def _loop(self, kind: str, fn, extra: dict, parallel: bool, ndim: int) -> Loop:
        """``fn`` bound to this format's functions and ``extra``, as a ``Loop`` named for
        ``kind``, the format and ``parallel``, taking inputs of ``ndim`` axes."""
        name = f"portable_{kind}_{self._tag}_{'par' if parallel else 'ser'}"
        return Loop(fn, name, {**self._bound, **extra}, parallel, ndim)

    def choose(
        self, outer: int, n: int, inner: int, parallel: bool, shape: tuple[int, ...] = ()
    ) -> PortableCall:
        """The loop for a C-contiguous input (float16 and bfloat16 as int16) seen as
        ``(outer, n, inner)``, serial or on numba's threads, and how to call it. A 1-D
        input of ``shape`` (its own), which the serial loop of rows takes with a leading
        axis of 1, the call takes as it is."""
        # Loops compiled for a length of rows or a width of blocks only for inputs of more
        # than one task's elements: a smaller one (on numba's threads only where a caller's
        # thresholds send it there) would spend more on compiling the loop than it saves.
        fixed = parallel and outer * n * inner > TASK_ELEMENTS
        if inner == 1:
            if fixed and self.itemsize <= 2 and 2 <= n <= FIXED_ROWS:
                loop = self.fixed_rows(n)
            elif parallel and self.float_keys and n <= self.short_row[True]:
                # (floats only: an integer is its own key, and ``reduce_rows`` is as fast)
                loop = self.rows_across
            elif outer < PIECES and n >= 2 * PIECE:
                loop = self.row_pieces[parallel]
            else:
                loop = self.rows[parallel]
            if not parallel and shape == (n,):
                # (serial calls of 1-D inputs only: on small inputs the view in Python is
                # a share of the call worth saving, but each function bound to a loop makes
                # LLVM optimise the loop again when first compiled)
                return PortableCall(loop, True, shape, (outer,))
            in_shape, out_shape = (outer, n), (outer,)
        else:
            if tiled(n, inner, self.itemsize):
                if fixed and inner <= FIXED_COLUMNS[self.itemsize]:
                    loop = self.fixed_tiles(inner)
                else:
                    loop = self.tiles[parallel]
            elif inner < NARROW_WIDTH:
                loop = self.narrow[parallel]
            elif parallel and outer < PIECES and inner <= PART_WIDTH and n >= 2 * PART_ROWS:
                loop = self.middle_parts
            else:
                loop = self.middle[parallel]
            in_shape, out_shape = (outer, n, inner), (outer, inner)
        return PortableCall(loop, False, in_shape, out_shape)

    def fixed_rows(self, n: int) -> Loop:
        """``reduce_fixed_rows`` compiled for rows of ``n`` elements."""
        return self._compiled_for(reduce_fixed_rows, "LENGTH", n, 2)

    def fixed_tiles(self, inner: int) -> Loop:
        """``reduce_tiles`` compiled for blocks of ``inner`` columns."""
        return self._compiled_for(reduce_tiles, "INNER", inner, 3)

    def _compiled_for(self, fn, constant: str, value: int, ndim: int) -> Loop:
        """``fn`` with its global ``constant`` set to ``value``, on numba's threads,
        taking inputs of ``ndim`` axes: made on first use, one for each pair."""
        loop = self._fixed.get((fn, value))
        if loop is None:
            kind = f"{fn.__name__}_{constant.lower()}{value}"
            loop = self._fixed[fn, value] = self._loop(kind, fn, {constant: value}, True, ndim)
        return loop

    def entry(self, call: PortableCall, element: np.dtype):
        """What a call from Python runs for ``call`` on an input of ``element`` (float16
        and bfloat16 as int16): the loop itself, or a small compiled function bound to it
        that views float32, float64 and unsigned integers as the signed integers of their
        width (``read_signed``), adds the leading axis of 1 that the input lacks
        (``add_leading_axis``), or both (``read_signed_add_leading_axis``); compiled for
        ``element`` the first time. The loop is compiled for signed integers only, so
        that an unsigned type runs the signed one's (passed its ``flip_argument``)."""
        key = (call.loop, call.leading, element)
        entry = self._entries.get(key)
        if entry is None:
            if element != self.signed:
                fn = read_signed_add_leading_axis if call.leading else read_signed
            else:
                fn = add_leading_axis if call.leading else None
            entry = call.loop.compiled(self.signed)
            if fn is not None:
                entry = self._adapter(fn, call, entry).compiled(element)
            self._entries[key] = entry
        return entry

    def _adapter(self, fn, call: PortableCall, compiled) -> Loop:
        """``fn`` (``read_signed``, ``add_leading_axis`` or both) bound to ``compiled``,
        what runs ``call.loop`` for one element type. (Made once for each: ``entry``
        keeps what it compiles.)"""
        name = f"portable_{fn.__name__}_{call.loop.py_func.__name__}"
        bound = {"loop": compiled, "bits": self.signed.type}
        return Loop(fn, name, bound, False, call.loop.ndim - call.leading)


@functools.cache
def portable_kernels(kind: int, itemsize: int) -> PortableKernels:
    """The portable kernels of key kind ``kind`` for elements of ``itemsize`` bytes: the
    same for ArgMax's and ArgMin's kinds of a format, which pass ``flip_argument``."""
    return _kernels_of_format(KeyKind(kind).format, itemsize)


@functools.cache
def _kernels_of_format(fmt: KeyKind, itemsize: int) -> PortableKernels:
    return PortableKernels(fmt, itemsize)

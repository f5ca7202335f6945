"""Inputs large enough for the vector searches.

Along the last axis a row is searched in chunks of one vector (8 to 64 lanes, by
width), the last chunk masked; split rows start pieces at any offset; a row longer than
one search call (RUN_BYTES) is searched in several calls whose results are merged, and
within a call only the block of vectors that holds the maximum is searched; short rows
are searched many at a time, one vector each. Along other axes, vectors of columns fold
eight rows at a time into running maxima (four, for rows far apart in memory; one, for
rows of 192 bytes to 4 KiB where a vector's instructions run in pieces), a run of
columns that ends inside a vector ends with a vector overlapping the one before it, its
running maxima kept apart, and row numbers restart every stretch of rows that the
elements' width (at most 16 bits) holds.
"""

from __future__ import annotations

import itertools

import ml_dtypes
import numba
import numpy as np
import pytest
from conftest import (
    DTYPES,
    FLOATS,
    onnx_argmax,
    random_tensor,
    reversed_order,
    special_values,
    use_thresholds,
)

import argmax_numba.planning as planning
from argmax_numba import argmax
from argmax_numba.dtypes import Extreme, kernel_view
from argmax_numba.kernels.registry import KERNELS
from argmax_numba.planning import GROUP_TASKS, ROW_TASK_ELEMENTS, Kernel, is_short
from argmax_numba.vector.col_blocks import FLOAT_FOLD_BYTES, FLOAT_FOLD_VECTORS, fold_block
from argmax_numba.vector.ir import VECTOR_BYTES
from argmax_numba.vector.keys import INDEX_BITS, key_vector, narrow_index
from argmax_numba.vector.lanes import (
    BLOCK_CHUNKS,
    FAR_FOLD_ROWS,
    FAR_ROW_BYTES,
    FOLD_ROWS,
    RUN_BYTES,
    lane_count,
    lane_slots,
)
from argmax_numba.vector.row_groups import GROUP_ROW_BYTES, rows_of_group
from argmax_numba.vector.short_rows import SHORT_ROW
from argmax_numba.vector.side_blocks import GATHER_BYTES, SHORT_GATHER_BYTES, WIDE_GATHER_BYTES

# These tests check the fast kernels: they run on them whatever tier the process chose.
# Those that take ``searched_by`` run twice: on ArgMax's kernels, and on ArgMin's (the
# ArgMax of each input found as the ArgMin of its values in reverse order).
pytestmark = pytest.mark.usefixtures("fast_tier")

# Every length with a task of its own (2 to 8, to 12 for 8-bit elements and for 16-bit
# ones of an even length), around every lane count (8, 16, 32 and 64 elements per 64-byte
# vector) and beyond.
ROW_LENGTHS = [*range(1, 14), 15, 16, 17, 31, 32, 33, 63, 64, 65, 129, 200, 1000, 4099]


# The operator each value of the ``searched_by`` fixture runs.
EXTREMES = {"argmax": Extreme.MAX, "argmin": Extreme.MIN}
# ArgMin's kernels are checked on every width of integer, signed and unsigned, and every
# float format: the semantic tests run ArgMin on all twelve dtypes, and each dtype here
# compiles every kernel again.
ARGMIN_DTYPES = [np.dtype(t) for t in ("int8", "uint16", "int32", "uint64")] + FLOATS
SEARCHES = [(d, "argmax") for d in DTYPES] + [(d, "argmin") for d in ARGMIN_DTYPES]


def searched(x: np.ndarray, searched_by: str) -> np.ndarray:
    """What a kernel of ``searched_by`` reads to find the ArgMax of ``x``: ``x``, or for
    ArgMin's kernels the values in reverse order (``reversed_order``)."""
    return reversed_order(x) if searched_by == "argmin" else x


def _rows_match_onnx(x: np.ndarray, message: str) -> None:
    """``argmax`` of ``x`` along axis 1 equals onnx's reference, for the first and the
    last occurrence of the maximum."""
    for last in (0, 1):
        np.testing.assert_array_equal(
            argmax(x, 1, 1, last), onnx_argmax(x, 1, 1, last), err_msg=message
        )


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_rows_of_every_length(dtype, kernel_path, searched_by):
    rng = np.random.default_rng(7)
    for n in ROW_LENGTHS:
        for special in (0.0, 0.02, 0.3):  # ties among small integers; rare or common maxima
            x = random_tensor(dtype, (3, n), rng, special=special)
            _rows_match_onnx(x, f"n={n} {special}")


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_row_longer_than_one_run(dtype, monkeypatch, searched_by):
    # One call searches RUN_BYTES of a row; the next call searches its run only where
    # the run's maximum beats the best so far (or ties it, for the last occurrence).
    # The serial path searches a whole row in one task.
    use_thresholds(monkeypatch, SERIAL_BELOW_BYTES=1 << 62)
    lanes = 64 // dtype.itemsize
    run = RUN_BYTES // dtype.itemsize
    n = 2 * run + lanes + 3
    rng = np.random.default_rng(8)
    base = rng.integers(0, 4, size=n).astype(dtype)
    tops = [np.iinfo(dtype).max] if dtype.kind in "iu" else [np.inf, np.nan]
    places = ([run - 1, run], [run, 2 * run + 1], [n - 1], [0, 2 * run], [3, run + 3, 2 * run + 3])
    for top in np.array(tops).astype(dtype):
        for where in places:
            x = base.copy()
            x[where] = top
            for last in (0, 1):
                got = argmax(x, 0, 0, last)
                assert got == (where[-1] if last else where[0]), (top, where, last)
                assert got == onnx_argmax(x, 0, 0, last)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_runs_after_a_best_above_zero(dtype, monkeypatch, searched_by):
    # Once the best so far is above zero (or is zero, for the first occurrence), a
    # search call keeps no signed minimum of the bits: only a NaN of either sign, or a
    # -0.0 tying a best of zero, can still matter in a run of negative numbers.
    use_thresholds(monkeypatch, SERIAL_BELOW_BYTES=1 << 62)
    run = RUN_BYTES // dtype.itemsize
    lanes = 64 // dtype.itemsize
    n = 3 * run + 5
    bits = 8 * dtype.itemsize
    inf = int(np.array(np.inf, dtype).view(f"u{dtype.itemsize}"))
    negative_nan = _bits(dtype, [(1 << (bits - 1)) | inf + 1])[0]
    base = (-np.abs(np.random.default_rng(9).standard_normal(n)) - 1.0).astype(dtype)
    cases = [
        (1.0, {}),
        (1.0, {run + 7: negative_nan, 2 * run + 1: negative_nan}),
        # A NaN in the same lane as a positive number below the best.
        (1.0, {run + 7: 0.5, run + 7 + lanes: negative_nan, 2 * run + 1: negative_nan}),
        (0.5, {run + 2: 2.0, 2 * run + 3: negative_nan}),
        (0.0, {run + 3: -0.0, 2 * run + 9: -0.0}),
        (-0.0, {run + 3: 0.0, 3 * run + 4: -0.0}),
        (0.0, {run: -1e-3, 2 * run: -0.0}),
    ]
    for first, elsewhere in cases:
        x = base.copy()
        x[0] = first
        for at, value in elsewhere.items():
            x[at] = value
        for last in (0, 1):
            assert argmax(x, 0, 0, last) == onnx_argmax(x, 0, 0, last), (first, elsewhere, last)


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_maxima_on_block_borders(dtype, kernel_path, searched_by):
    # A search call keeps the running maxima of each block of BLOCK_CHUNKS vectors apart,
    # and looks for the maximum only in the first (or last) block that holds it: maxima
    # and ties on the borders of blocks, within one block, and in the masked last chunk;
    # for floats also the cases that compare keys, not bits (+0.0 and -0.0, NaNs of
    # either sign) and rows with no positive number.
    lanes = 64 // dtype.itemsize
    block = BLOCK_CHUNKS * lanes
    # Three whole blocks and a fourth with a masked chunk; two and a masked chunk alone.
    for n in (3 * block + lanes + 3, 2 * block + 3):
        places = (
            [block - 1, block],
            [block, 2 * block + 1],
            [n - 1],
            [0, 2 * block],
            [block - 1, n - 1],
            [2 * block - 1, 2 * block],
            [block + 5, block + lanes + 5],
            [n - 3, n - 2],
        )
        _check_block_borders(dtype, n, places)


def _check_block_borders(dtype: np.dtype, n: int, places) -> None:
    rng = np.random.default_rng(13)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        bases = {"small": rng.integers(0, 4, size=(2, n)).astype(dtype)}
        tops = {"small": np.array([info.max, 4], dtype=dtype)}
    else:
        bits = 8 * dtype.itemsize
        inf = int(np.array(np.inf, dtype).view(f"u{dtype.itemsize}"))
        nans = _bits(dtype, [inf + 1, (1 << (bits - 1)) | inf + 1])  # of either sign
        negative = -np.abs(rng.standard_normal((2, n))) - 1.0
        bases = {"mixed": rng.standard_normal((2, n)), "negative": negative}
        tops = {
            "mixed": np.concatenate([np.array([np.inf], dtype=dtype), nans]),
            "negative": np.array([-1e-3, -0.0, 0.0]).astype(dtype),
        }
    for name, base in bases.items():
        base = base.astype(dtype)
        for top in tops[name]:
            for where in places:
                x = base.copy()
                x[:, where] = top
                if dtype.kind == "f" and top == 0:  # a -0.0 and a +0.0 tie
                    x[0, where[-1]] = -top
                for last in (0, 1):
                    np.testing.assert_array_equal(
                        argmax(x, 1, 1, last),
                        onnx_argmax(x, 1, 1, last),
                        err_msg=f"{name} {top!r} at {where}, last={last}",
                    )


def _shortest_grouped(dtype: np.dtype) -> int:
    """The shortest rows of ``dtype`` longer than SHORT_ROW searched in groups."""
    return next(m for m in range(SHORT_ROW + 1, 99) if not is_short(m, dtype.itemsize))


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_short_rows_in_groups(dtype, kernel_path, searched_by):
    # Rows longer than ``is_short`` takes (or of one whole vector) to GROUP_ROW_BYTES are
    # searched a group at a time (a vector's lanes of rows, 64 bytes / item size, at most
    # INT_GROUP_ROWS of integer ones: ``rows_of_group``), in one chunk or
    # several; the rows after a task's last whole group in one more group, and the last
    # rows of the array (where a vector's load would leave it) and those of arrays of
    # fewer rows than a group, one by one. Rows of one value test the lanes past a row's
    # end.
    lanes = 64 // dtype.itemsize
    longest = GROUP_ROW_BYTES // dtype.itemsize
    shortest = _shortest_grouped(dtype)
    lengths = {shortest, lanes - 1, lanes, lanes + 1, longest - 1, longest}
    rng = np.random.default_rng(13)
    grouped = [m for m in lengths if not is_short(m, dtype.itemsize) and m <= longest]
    for n in sorted(grouped):
        for rows in (lanes, 3 * lanes + 5):
            tensors = [random_tensor(dtype, (rows, n), rng, special=p) for p in (0.0, 0.3)]
            tensors += [np.full((rows, n), v, dtype) for v in special_values(dtype)]
            for x in tensors:
                _rows_match_onnx(x, f"{n} {rows}")


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_rows_of_a_few_elements_a_vector_of_rows_at_a_time(dtype, kernel_path, searched_by):
    # Rows of 2 to SHORT_ROW elements (BYTE_ROW of 8-bit ones and of 16-bit ones of an
    # even length) are searched a vector's worth of rows at a time (64 bytes / item size;
    # half as many rows of 16-bit elements dealt out in pairs), their elements dealt out
    # into a vector per column; the rows after a task's last whole group
    # (ROW_TASK_ELEMENTS // n rows a task), fewer than a vector's lanes, are copied out and
    # searched the same way. Maxima in every column, in each task's first and last rows;
    # ties; rows of one value.
    lanes = 64 // dtype.itemsize
    top = special_values(dtype)[1] if dtype.kind in "iu" else np.array(np.nan, dtype)
    rng = np.random.default_rng(19)
    for n in (m for m in range(2, 17) if is_short(m, dtype.itemsize)):
        per = ROW_TASK_ELEMENTS // n
        x = random_tensor(dtype, (2 * per + lanes + 3, n), rng, special=0.1)
        for end in (0, per - 1, per, 2 * per - 1, 2 * per, x.shape[0] - 1):
            x[end, end % n] = top
        tensors = [x, x[: lanes - 1], np.full((3 * lanes + 1, n), special_values(dtype)[4])]
        for y in tensors:
            _rows_match_onnx(y, f"{n} {len(y)}")


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_short_rows_left_over_in_a_task(dtype, kernel_path, searched_by):
    # A task of rows of up to GROUP_ROW_BYTES (ROW_TASK_ELEMENTS // n rows, not a whole
    # number of groups) ends with a group that overlaps the one before it; so does the
    # array's last task, where it holds a group, but that group ends a row or two
    # before the array (its rows' last vector loads stay in the array), and the rows
    # after it go one at a time, as do those of a last task too short for a group.
    # Maxima sit in each task's last rows, in the overlap and after it, and in the
    # array's last rows.
    lanes = 64 // dtype.itemsize
    top = np.iinfo(dtype).max if dtype.kind in "iu" else np.array(np.inf, dtype)
    rng = np.random.default_rng(17)
    kind = int(kernel_view(dtype)[0])
    longest = GROUP_ROW_BYTES // dtype.itemsize

    def group_of(m: int) -> int:  # rows of a group of rows of m elements
        return rows_of_group(kind, 2 if m * dtype.itemsize > 64 else 1, lanes)

    # The shortest rows in groups, rows just over a vector and the longest, or the nearest
    # lengths whose tasks are not a whole number of groups.
    shortest = _shortest_grouped(dtype)
    near = (range(shortest, longest), range(lanes + 1, longest), range(longest - 1, shortest, -1))
    lengths = {next(m for m in ms if ROW_TASK_ELEMENTS // m % group_of(m)) for ms in near}
    for n in sorted(lengths):
        group, per = group_of(n), ROW_TASK_ELEMENTS // n
        # The last task: 5 rows (no group), or a group and 5 rows more.
        for rows in (3 * per + 5, 3 * per + group + 5):
            x = rng.integers(0, 4, size=(rows, n)).astype(dtype)
            for end in (per, 2 * per, 3 * per, rows):
                for back, col in ((1, n - 1), (2, 0), (3, 1), (group - 1, n // 2)):
                    x[end - back, col] = top
                x[end - (per % group + 1), 1] = top
            if rows > 3 * per + group:
                x[3 * per + group, n - 2] = top  # in the last task's two groups
            for last in (0, 1):
                np.testing.assert_array_equal(
                    argmax(x, 1, 1, last),
                    onnx_argmax(x, 1, 1, last),
                    err_msg=f"{n} {rows} {last}",
                )


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_rows_of_a_few_vectors_in_groups(dtype, kernel_path, searched_by):
    # Rows longer than GROUP_ROW_BYTES are searched a vector's worth of rows at a time
    # (up to ``chunk_row_bytes``; in many tasks in ``test_long_rows_in_groups``): each row's vectors
    # folded lane by lane (a later vector wins a tie only for the last occurrence), then
    # the lanes of all the rows reduced together (the earlier position wins a tie, or
    # the later one). Ties within a lane, between lanes and in the masked last vector;
    # rows of one value (the lanes past a row's end); in parallel, the shortest rows in
    # two tasks (ROW_TASK_ELEMENTS // n rows, not a whole number of groups, to the
    # first), and the rows after a task's last group.
    lanes = 64 // dtype.itemsize
    shortest = GROUP_ROW_BYTES // dtype.itemsize + 1
    longest = planning.chunk_row_bytes(dtype.itemsize) // dtype.itemsize
    rng = np.random.default_rng(18)
    for n in sorted({shortest, 3 * lanes, 3 * lanes + 1, 5 * lanes - 1, longest - 1, longest}):
        rows = 5 * lanes + 7
        if kernel_path == "parallel" and n == shortest:
            assert ROW_TASK_ELEMENTS // n % lanes
            rows = ROW_TASK_ELEMENTS // n + lanes + 3
        tensors = [random_tensor(dtype, (rows, n), rng, special=p) for p in (0.0, 0.3)]
        tensors += [np.full((rows, n), v, dtype) for v in special_values(dtype)]
        if dtype.kind in "iu":
            pairs = [(rng.integers(0, 4, size=(rows, n)), np.iinfo(dtype).max, None)]
        else:
            negative = -np.abs(rng.standard_normal((rows, n))) - 1.0
            pairs = [(rng.standard_normal((rows, n)), np.inf, None), (negative, 0.0, -0.0)]
            pairs += [(rng.standard_normal((rows, n)), np.nan, None)]
        for base, top, other in pairs:
            # Two tied maxima a row: the second a vector on (the same lane), a lane on, or
            # in the last (masked) vector.
            x = base.astype(dtype)
            first = rng.integers(0, n - lanes - 1, size=rows)
            second = np.choose(rng.integers(0, 3, size=rows), [first + lanes, first + 1, n - 1])
            x[np.arange(rows), first] = top
            x[np.arange(rows), second] = top if other is None else other
            tensors.append(x)
        for x in tensors:
            _rows_match_onnx(x, f"n={n}")


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_long_rows_in_groups(dtype, kernel_path, searched_by):
    # Rows of up to ``chunk_row_bytes`` are searched in groups too, where the input gives
    # every thread GROUP_TASKS tasks of a group each (on one thread here, to keep the
    # input small), and the rows after the last whole group as a group of fewer rows;
    # rows one element longer, as many, one at a time. Positions up to the last of a
    # row of ``chunk_row_bytes``; ties at a row's two ends and between the middle and the end.
    lanes = 64 // dtype.itemsize
    rows = GROUP_TASKS * lanes + 5
    top = np.iinfo(dtype).max if dtype.kind in "iu" else np.array(np.inf).astype(dtype)
    rng = np.random.default_rng(19)
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        longest = planning.chunk_row_bytes(dtype.itemsize) // dtype.itemsize
        for n in (longest // 2 + 1, longest, longest + 1):
            chosen = planning.plan(rows, n, 1, dtype.itemsize, 1).kernel
            assert chosen == (Kernel.CHUNK_ROWS if n <= longest else Kernel.ROWS), n
            x = random_tensor(dtype, (rows, n), rng, special=0.0)
            x[0::4, n - 1] = top
            x[1::4, [0, n - 1]] = top
            x[2::4, [n // 2, n - 1]] = top
            x[3::4, n // 2 + 1] = top
            _rows_match_onnx(x, f"n={n}")
    finally:
        numba.set_num_threads(threads)


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_long_rows_in_groups_that_end_early(dtype, kernel_path, searched_by):
    # Tasks of rows of up to ``chunk_row_bytes`` whose rows are not a whole number of groups
    # end with a group of fewer rows, whose positions are copied out; the last vector of
    # the array's last row, which would run past the array, is read from a copy. Maxima
    # in a row's last, partial vector, ties at a row's two ends.
    n = 255  # of at most ``chunk_row_bytes`` for every dtype
    group = VECTOR_BYTES // dtype.itemsize
    per = ROW_TASK_ELEMENTS // n  # rows a task
    assert per % group and n % group
    rows = 2 * per + group // 2 + 1
    threads = numba.get_num_threads() if kernel_path == "parallel" else 1
    assert planning.plan(rows, n, 1, dtype.itemsize, threads).kernel == Kernel.CHUNK_ROWS
    top = np.iinfo(dtype).max if dtype.kind in "iu" else np.array(np.inf).astype(dtype)
    rng = np.random.default_rng(23)
    x = random_tensor(dtype, (rows, n), rng, special=0.0)
    x[0::3, n - 1] = top
    x[1::3, [0, n - 1]] = top
    x[2::3, [n - 2, n - 1]] = top
    x[-1, [1, n - 1]] = top
    _rows_match_onnx(x, f"n={n}")


def _bits(dtype: np.dtype, patterns: list[int]) -> np.ndarray:
    """Floats of ``dtype`` with the given bit patterns."""
    return np.array(patterns, dtype=f"u{dtype.itemsize}").view(dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_float_rows_without_a_positive_number(dtype, kernel_path, searched_by):
    # The largest float of a row is found from the signed maximum and minimum of its
    # bits (no positive number: the negative one nearest zero), NaN from bits above
    # those of +inf or -inf, whatever their sign and payload; ties between +0.0 and
    # -0.0 and between NaNs of different bits are searched by key.
    bits = 8 * dtype.itemsize
    sign = 1 << (bits - 1)
    inf = int(np.array(np.inf, dtype).view(f"u{dtype.itemsize}"))
    nans = _bits(dtype, [inf + 1, sign | inf + 1, sign - 1, 2 * sign - 1])
    negatives = np.array([-1.0, -2.5, -np.inf, -0.0, -1e-3], dtype=np.float64).astype(dtype)
    pools = {
        "negative": negatives,
        "negative and -inf": np.array([-np.inf, -np.inf, -3.0], dtype=np.float64).astype(dtype),
        "only -inf": np.array([-np.inf], dtype=np.float64).astype(dtype),
        "signed zeros": np.array([0.0, -0.0], dtype=np.float64).astype(dtype),
        "zeros and negative": np.array([-0.0, -0.0, 0.0, -1.0, -5.0], dtype=np.float64).astype(
            dtype
        ),
        "NaNs and negative": np.concatenate([negatives, nans[1:2], nans[3:]]),
        "NaNs of every sign": np.concatenate([nans, negatives, np.array([np.inf]).astype(dtype)]),
    }
    rng = np.random.default_rng(12)
    for name, pool in pools.items():
        for n in ROW_LENGTHS:
            x = pool[rng.integers(0, len(pool), size=(4, n))]
            _rows_match_onnx(x, f"{name} n={n}")


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_every_bit_pattern_against_others(dtype, searched_by):
    # Every 16-bit float (and for wider ones, random bits and those around the zeros,
    # the infinities and NaN) beside others drawn at random: the keys' order is the
    # floats' order, NaN above all, -0.0 equal to +0.0, in short rows, in columns and
    # in rows of vectors.
    width = 8 * dtype.itemsize
    utype = np.dtype(f"u{dtype.itemsize}")
    rng = np.random.default_rng(31)
    if width == 16:
        patterns = np.arange(1 << 16, dtype=utype)
    else:
        sign = 1 << (width - 1)
        inf = int(np.array(np.inf, dtype).view(utype))
        edges = [0, 1, inf - 1, inf, inf + 1, sign - 1]
        edges += [sign | e for e in edges]
        random = rng.integers(0, 1 << width, size=1 << 16, dtype=utype, endpoint=False)
        patterns = np.concatenate([np.array(edges, dtype=utype), random])
    values = patterns.view(dtype)
    for _ in range(2):
        pairs = np.stack([values, rng.permutation(values)], axis=1)
        for last in (0, 1):
            np.testing.assert_array_equal(argmax(pairs, 1, 0, last), onnx_argmax(pairs, 1, 0, last))
            np.testing.assert_array_equal(
                argmax(pairs.T, 0, 0, last), onnx_argmax(pairs.T, 0, 0, last)
            )
    rows = rng.permutation(values)[: values.size // 32 * 32].reshape(-1, 32)
    _rows_match_onnx(rows, "rows of 32")


# (shape, axis): blocks of columns with and without a partial vector, or with none (one
# column at a time); rows in groups of eight and not; the side-by-side rows of the
# narrow kernel.
COLUMN_CASES = [
    ((2, 9, 70), 0),
    ((2, 9, 70), 1),
    ((3, 17, 64), 1),
    ((1, 8, 130), 1),
    ((4, 33, 129), 0),
    ((300, 5), 0),
    ((2, 100, 3), 1),
    ((7, 195), 0),
]


@pytest.fixture(params=["serial", "parallel"])
def column_path(request, monkeypatch):
    """The serial column kernels, or the parallel ones on blocks of 72 bytes (a vector and
    an eighth), so that blocks end inside a vector too."""
    use_thresholds(monkeypatch, SERIAL_BELOW_BYTES=1 << 62 if request.param == "serial" else 0)
    if request.param == "parallel":
        use_thresholds(monkeypatch, COL_BLOCK_BYTES=72)
    return request.param


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_columns(dtype, column_path, searched_by):
    rng = np.random.default_rng(9)
    # A block of rows of 224 bytes: on one thread too, as wide as the narrow kernel takes.
    narrow = (1, 48, 224 // dtype.itemsize)
    assert planning.plan(*narrow, dtype.itemsize, 1).kernel == Kernel.NARROW
    for shape, axis in [*COLUMN_CASES, (narrow, 1)]:
        for special in (0.0, 0.3):
            x = random_tensor(dtype, shape, rng, special=special)
            for last in (0, 1):
                np.testing.assert_array_equal(
                    argmax(x, axis, 1, last), onnx_argmax(x, axis, 1, last), err_msg=str(shape)
                )


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_columns_of_the_lowest_value(dtype, column_path, searched_by):
    # The running maxima of a column start below every key, and row 0 is folded with the
    # others: columns that hold only the lowest value (or it and the next one up) must
    # still give row 0 (last: the last row), rows side by side and far apart included.
    if dtype.kind in "iu":
        low, next_up = np.iinfo(dtype).min, np.iinfo(dtype).min + 1
    else:
        low, next_up = -np.inf, ml_dtypes.finfo(dtype).min  # the lowest finite value
    far = FAR_ROW_BYTES // dtype.itemsize + 3
    cases = [*COLUMN_CASES, ((5, 16, 4), 1), ((3, 513, 2), 1), ((9, far), 0)]
    cases += [((2 * FAR_FOLD_ROWS, far), 0)]
    rng = np.random.default_rng(12)
    for shape, axis in cases:
        lowest = np.full(shape, low, dtype=np.float64).astype(dtype)
        mixed = np.where(rng.random(shape) < 0.5, lowest, np.array(next_up, dtype))
        for x in (lowest, mixed):
            for last in (0, 1):
                got = argmax(x, axis, 1, last)
                np.testing.assert_array_equal(got, onnx_argmax(x, axis, 1, last), str(shape))
        want = np.full(got.shape, shape[axis] - 1)  # the last flag, on the lowest only
        np.testing.assert_array_equal(argmax(lowest, axis, 1, 1), want, str(shape))
        np.testing.assert_array_equal(argmax(lowest, axis, 1, 0), 0 * want, str(shape))


@pytest.mark.parametrize("dtype", FLOATS[:2], ids=str)
def test_float_columns_in_cache(dtype, searched_by):
    # Inputs of float32 and float64 up to FLOAT_FOLD_BYTES: on AMD Zen 4 with AVX-512
    # (``HALVED_REGISTER``), blocks of a chunk of FLOAT_FOLD_VECTORS whole vectors or more
    # are folded a chunk at a time in registers, the vectors left over and the partial one
    # in one chunk more, and a chunk whose rows hold a NaN again comparing keys. Blocks of
    # 1 to 9 whole vectors, with and without a partial one; a NaN in the first vector, in
    # the last, or none; ties of -0.0 and +0.0, infinities; at the size limit and just
    # above it. (Elsewhere the same inputs check the fold in memory.)
    assert dtype in (np.float32, np.float64)
    lanes = VECTOR_BYTES // dtype.itemsize
    rng = np.random.default_rng(14)
    widths = [v * lanes + extra for v in range(1, 2 * FLOAT_FOLD_VECTORS + 2) for extra in (0, 3)]
    for width in [3, *widths]:
        x = rng.choice(np.array([-np.inf, -1.0, -0.0, 0.0, 2.0, np.inf], dtype), (37, width))
        for nan_at in (None, 0, width - 1):
            y = x.copy()
            if nan_at is not None:
                y[20, nan_at] = np.nan
            for last in (0, 1):
                np.testing.assert_array_equal(
                    argmax(y, 0, 1, last), onnx_argmax(y, 0, 1, last), err_msg=f"{width}"
                )
    for rows in (
        FLOAT_FOLD_BYTES // (100 * dtype.itemsize),
        FLOAT_FOLD_BYTES // (100 * dtype.itemsize) + 1,
    ):
        x = random_tensor(dtype, (rows, 100), rng)
        for last in (0, 1):
            np.testing.assert_array_equal(
                argmax(x, 0, 1, last), onnx_argmax(x, 0, 1, last), err_msg=f"{rows} rows"
            )


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_columns_far_apart(dtype, column_path, searched_by):
    # Rows at least FAR_ROW_BYTES apart are folded FAR_FOLD_ROWS at a time: groups of
    # that size, fewer rows, and blocks that end inside a vector.
    inner = FAR_ROW_BYTES // dtype.itemsize + 3
    rng = np.random.default_rng(11)
    for n in (2, FAR_FOLD_ROWS, FAR_FOLD_ROWS + 1, 3 * FAR_FOLD_ROWS + 2, FOLD_ROWS + 1):
        for special in (0.0, 0.3):
            x = random_tensor(dtype, (n, inner), rng, special=special)
            for last in (0, 1):
                np.testing.assert_array_equal(
                    argmax(x, 0, 1, last), onnx_argmax(x, 0, 1, last), err_msg=f"{n} rows"
                )


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_columns_ending_inside_a_vector(dtype, column_path, searched_by):
    # Runs of columns one lane past a vector, a few lanes short of two, and rows of 192
    # bytes or more (folded one at a time where a vector's instructions run in pieces).
    # The last vector overlaps the one before it and keeps its running maxima apart: the
    # maximum in the overlap, in the columns only it holds, and in the second stretch of
    # row numbers (130 rows: 8-bit row numbers restart after 120).
    lanes = VECTOR_BYTES // dtype.itemsize
    top = np.iinfo(dtype).max if dtype.kind in "iu" else np.array(np.inf, dtype)
    rng = np.random.default_rng(13)
    for width in (lanes + 1, 2 * lanes - 3, max(3 * lanes + 7, 192 // dtype.itemsize + 1)):
        x = rng.integers(0, 4, size=(2, 130, width)).astype(dtype)
        x[0, 5, width - lanes] = top  # the first column of the last vector
        x[0, 125, width - 1] = top  # only the last vector holds it
        x[1, 121, width - lanes - 1] = top  # just before the last vector
        x[1, 7, width - 2] = top
        x[1, 128, width - 2] = top  # the same column, a later stretch
        for last in (0, 1):
            got = argmax(x, 1, 1, last)
            np.testing.assert_array_equal(got, onnx_argmax(x, 1, 1, last), err_msg=str(width))
            assert got[0, 0, width - 1] == 125 and got[1, 0, width - 2] == (128 if last else 7)


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_column_blocks_narrower_than_a_vector(dtype, searched_by):
    # A block of columns is read as whole vectors: the last block of a row, narrower than
    # a vector, as the vector that ends at its last column, overlapping the block before
    # it. The column kernel is called directly, on blocks of one vector (ArgMin's: on the
    # values in reverse order, the same answer).
    kind, view = kernel_view(dtype, EXTREMES[searched_by])
    kind = int(kind)
    lanes = VECTOR_BYTES // dtype.itemsize
    cols = KERNELS[(kind, False)][Kernel.COLS]
    top = np.iinfo(dtype).max if dtype.kind in "iu" else np.array(np.inf, dtype)
    rng = np.random.default_rng(19)
    for rest in (1, lanes // 2 + 1, lanes - 1):
        inner = 2 * lanes + rest
        x = random_tensor(dtype, (3, 130, inner), rng, special=0.3)
        x[1, 129, inner - 1] = x[1, 126, inner - lanes] = top  # the last block; overlapped
        for last in (0, 1):
            out = np.full((3, inner), -1, np.int64)
            where = cols.address(view, last)
            x_view = searched(x, searched_by).view(view)
            x_view.flags.writeable = False  # (typed as the drivers take it, read-only)
            cols.driver(x_view, out, last, lanes, where)
            want = onnx_argmax(x, 1, 0, last)
            np.testing.assert_array_equal(out, want, err_msg=f"{rest} columns")


def _block_fold(kind: int, last: int):
    """A compiled ``fold_block`` of the block of ``w`` columns from column ``j0`` of
    ``x`` into the same columns of ``out``."""

    @numba.njit
    def fold(x, j0, w, out):
        n, inner = x.shape
        slots = lane_slots(w, lane_count(x))
        best, hit = key_vector(slots, x, kind), narrow_index(slots, x)
        fold_block(x, j0, n, inner, w, best, hit, out, j0, kind, last)

    return fold


@pytest.mark.parametrize(
    "dtype", [np.dtype(t) for t in ("int8", "float16", "float32", "uint64")], ids=str
)
def test_block_fold_writes_its_columns_only(dtype, searched_by):
    # ``fold_block`` reads a block's partial vector, or a block narrower than a vector,
    # as the vector that ends at its last column, and writes the output of the block's
    # columns only (130 rows: 8-bit row numbers restart after 120).
    kind, view = kernel_view(dtype, EXTREMES[searched_by])
    kind = int(kind)
    lanes = VECTOR_BYTES // dtype.itemsize
    rng = np.random.default_rng(23)
    for last in (0, 1):
        fold = _block_fold(kind, last)
        for j0, w in ((lanes, 1), (lanes + 3, lanes - 3), (lanes // 2, lanes + 5), (0, lanes)):
            x = random_tensor(dtype, (130, j0 + w + 7), rng, special=0.3)
            out = np.full(x.shape[1], -1, np.int64)
            fold(searched(x, searched_by).view(view), j0, w, out)
            want = onnx_argmax(x[:, j0 : j0 + w], 0, 0, last)
            np.testing.assert_array_equal(out[j0 : j0 + w], want, err_msg=f"{j0}, {w}")
            assert (out[:j0] == -1).all() and (out[j0 + w :] == -1).all(), (j0, w)


@pytest.mark.parametrize("small", [False, True], ids=["planned", "small"])
def test_column_blocks_of_whole_vectors(small, monkeypatch):
    # ``COLS`` blocks are at least a vector wide, in rows at least as wide; rows
    # narrower than a vector go to ``SIDE_COLS`` or ``EACH_COLS``, or ``NARROW``, whose
    # rows side by side make at least a vector. So too where blocks and rows side by side
    # are set smaller than a vector (as ``kernel_path`` sets them).
    if small:
        use_thresholds(monkeypatch, COL_BLOCK_BYTES=40, LANE_BYTES=16)
    for outer, n, inner, size, threads in itertools.product(
        (1, 2, 3, 8, 100),
        (2, 100, 5000, 1 << 20),
        (1, 3, 15, 33, 65, 129, 256, 4097),
        (1, 2, 4, 8),
        (1, 2, 3, 16, 64),
    ):
        chosen = planning.plan(outer, n, inner, size, threads)
        lanes = VECTOR_BYTES // size
        case = (outer, n, inner, size, threads)
        if chosen.kernel == Kernel.COLS:
            assert inner >= lanes and chosen.block >= lanes, case
        if chosen.kernel == Kernel.NARROW:
            assert chosen.side_rows * inner >= lanes, case


def _gathered(row_bytes: int, size: int) -> tuple[Kernel, int]:
    """How blocks of rows of ``row_bytes`` bytes of elements of ``size`` bytes are
    gathered, and the bytes of a row of each block in one vector: rows of up to 4 bytes
    4 at a time; of 9 to 16 bytes of elements of 2 bytes or more, 16 bytes loaded at a
    time; all others 8 at a time."""
    if row_bytes <= 4:
        return Kernel.EACH_SHORT_COLS, 4
    if 8 < row_bytes <= 16 and size > 1:
        return Kernel.EACH_WIDE_COLS, 16
    return Kernel.EACH_COLS, 8


# The kernels of the middle axis that take whole stretches of columns (not ``NARROW``).
COLUMN_KERNELS = {
    Kernel.COLS,
    Kernel.SIDE_COLS,
    Kernel.BLOCK_COLS,
    Kernel.EACH_COLS,
    Kernel.EACH_SHORT_COLS,
    Kernel.EACH_WIDE_COLS,
}


def _wide_row_span(dtype: np.dtype) -> int:
    """Wide rows of a block that its lanes number: as many as the elements' signed
    integers hold, minus a sentinel, at most 2**31 - 1."""
    return min(2 ** (8 * dtype.itemsize - 1) - 1, 2**31 - 1)


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_many_small_blocks_to_a_task(dtype, column_path, searched_by):
    # Blocks x[o] of a few bytes are reduced many to a task (block // inner of them, the
    # last task's fewer), with their columns in a partial vector or in none; blocks
    # narrower than a vector with rows side by side (m rows, lanes // gcd(inner, lanes)),
    # with rows left over after the last whole wide row or none, or gathered where there
    # would be fewer than SIDE_GROUPS wide rows (or, where a wide row takes several
    # vectors, where the wide rows times the gathers of 8 bytes a row takes are at most
    # GATHERED_ROWS).
    rng = np.random.default_rng(15)
    lanes = 64 // dtype.itemsize
    shapes = [(1000, 7, 3), (257, 2, 5), (64, 16, 17), (90, 40, 2), (100, 5, 9)]
    shapes += [(70, 2 * lanes + 1, 3), (12, 8 * lanes + 1, 3), (33, 4 * lanes, 2)]
    shapes += [(50, lanes // 2 + 3, 2), (40, 4 * lanes + 3, 3), (40, 3 * lanes + 2, 3)]
    shapes += [(6, 12 * lanes + 5, 3), (5, 13 * lanes, 3), (4, 800, 3), (4, 800 // lanes, 3)]
    for shape in shapes:
        outer, n, inner = shape
        if column_path == "serial":
            chosen = planning.plan(outer, n, inner, dtype.itemsize, 1)
            how, block = chosen.kernel, chosen.block
            assert how in COLUMN_KERNELS and block % inner == 0 and block // inner > 1
            m = lanes // np.gcd(inner, lanes)
            if inner >= lanes:
                assert how == Kernel.COLS
            else:
                gathers = n // m * -(-inner * dtype.itemsize // GATHER_BYTES)
                side = m * inner == lanes or gathers > planning.GATHERED_ROWS
                held = m * inner == lanes and n // m <= _wide_row_span(dtype)  # in registers
                side_by = Kernel.BLOCK_COLS if held else Kernel.SIDE_COLS
                gathered = _gathered(inner * dtype.itemsize, dtype.itemsize)[0]
                assert how == (side_by if n // m >= planning.SIDE_GROUPS and side else gathered)
        for special in (0.0, 0.3):
            x = random_tensor(dtype, shape, rng, special=special)
            _rows_match_onnx(x, str(shape))


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_side_blocks_in_registers(dtype, column_path, searched_by):
    # Blocks whose ``inner`` divides a vector's lanes (a wide row of m rows is one
    # vector) are folded whole in registers where their wide rows are numbered in the
    # elements' width (at most 2**(bits - 1) - 1 of them), then each column's m lanes
    # are merged; rows left over after the last wide row, or none. One more wide row
    # than that takes the general path.
    lanes = 64 // dtype.itemsize
    span = _wide_row_span(dtype)
    rng = np.random.default_rng(17)
    cases = []
    inner = 2
    while inner < lanes:
        m = lanes // inner
        cases += [
            (3, rows * m + extra, inner)
            for rows in (planning.SIDE_GROUPS, 9)
            for extra in (0, m - 1)
        ]
        inner *= 2
    if dtype.itemsize == 1:  # (four blocks: fewer would go to ``narrow``)
        cases += [(4, rows * 2 + 1, lanes // 2) for rows in (span, span + 1)]
    for shape in cases:
        if column_path == "serial":
            held = shape[1] // (lanes // shape[2]) <= span
            how = planning.plan(*shape, dtype.itemsize, 1).kernel
            assert how == (Kernel.BLOCK_COLS if held else Kernel.SIDE_COLS), shape
        for special in (0.0, 0.3):
            x = random_tensor(dtype, shape, rng, special=special)
            _rows_match_onnx(x, str(shape))


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_gathered_blocks(dtype, column_path, searched_by):
    # Blocks too short to read side by side are read a few at a time, the same
    # GATHER_BYTES of a row of each gathered into one vector (SHORT_GATHER_BYTES, of rows
    # that short, twice as many blocks; WIDE_GATHER_BYTES loaded a block at a time, of
    # rows up to that long, half as many): rows of one such piece or several, the last one
    # partial or not; a whole number of groups of blocks or not, and the last block of the
    # array (past whose end a gather could reach) on its own; more rows than 8-bit row
    # numbers could count (they are 16 bits wide or more).
    size = dtype.itemsize
    piece = GATHER_BYTES // size
    inners = {i for i in (2, 3, piece, piece + 1, 3 * piece - 1, SHORT_GATHER_BYTES // size)}
    inners |= {WIDE_GATHER_BYTES // size - 1, WIDE_GATHER_BYTES // size}
    rng = np.random.default_rng(18)
    cases = []
    for inner in sorted(i for i in inners if 1 < i < 64 // size):
        group = 64 // _gathered(inner * size, size)[1]
        for n in (2, 3, 9):
            cases += [(outer, n, inner) for outer in (group, group + 1, 5 * group - 3)]
    if size == 1:
        cases += [(17, n, 3) for n in (127, 128, 255)]
    for shape in cases:
        outer, n, inner = shape
        if column_path == "serial":
            gathered, slot = _gathered(inner * size, size)
            chosen = planning.plan(outer, n, inner, size, 1)
            how, block = chosen.kernel, chosen.block
            assert how == gathered, shape
            # A task holds whole groups of blocks, where it holds one.
            group = 64 // slot
            assert block // inner < group or block // inner % group == 0, shape
        for special in (0.0, 0.3):
            x = random_tensor(dtype, shape, rng, special=special)
            _rows_match_onnx(x, str(shape))


@pytest.mark.parametrize(("dtype", "searched_by"), SEARCHES, ids=str, indirect=["searched_by"])
def test_few_blocks_of_wide_rows(dtype, monkeypatch, searched_by):
    # A few blocks x[o] whose columns ``cols`` would split between the threads into
    # pieces narrower than NARROW_PIECE_BYTES (a quarter of that for 8-bit data) have their rows
    # split instead, in large inputs (``narrow``, one row at a time where rows are
    # LANE_BYTES or more); the tasks' candidates are merged, earlier rows first.
    use_thresholds(monkeypatch, SERIAL_BELOW_BYTES=0)
    size = dtype.itemsize
    least = planning.NARROW_PIECE_BYTES // (4 if size == 1 else 1)
    rng = np.random.default_rng(16)
    use_thresholds(monkeypatch, NARROW_SPLIT_BYTES=0)
    for outer, n, row_bytes in [(1, 300, 256), (1, 520, 1024), (2, 301, 1000), (3, 257, 1536)]:
        inner = row_bytes // size
        assert planning.plan(outer, n, inner, size, 2).kernel == Kernel.NARROW
        for special in (0.0, 0.3):
            x = random_tensor(dtype, (outer, n, inner), rng, special=special)
            _rows_match_onnx(x, f"{x.shape}")
    # Pieces of NARROW_PIECE_BYTES or more stay with ``cols``, and so do inputs under
    # NARROW_SPLIT_BYTES.
    assert planning.plan(1, 300, 4 * least // size, size, 2).kernel == Kernel.COLS
    use_thresholds(monkeypatch, NARROW_SPLIT_BYTES=300 * 256 + 1)
    assert planning.plan(1, 300, 256 // size, size, 2).kernel == Kernel.COLS
    # Many blocks go to ``cols`` whole however large, rows side by side where they are
    # narrower than a vector (in registers where their wide rows are numbered in 32 bits).
    side_by = Kernel.BLOCK_COLS if size >= 4 else Kernel.SIDE_COLS
    assert planning.plan(16, 1 << 20, 4, size, 2).kernel == side_by


@pytest.mark.parametrize("dtype", [np.dtype(np.int8), np.dtype(np.float32)], ids=str)
def test_few_narrow_blocks_on_one_thread(dtype, monkeypatch):
    # On one thread, a few blocks of rows under NARROW_SERIAL_BYTES go to the column
    # kernels, not ``narrow``; for elements wider than 8 bits, only in inputs under
    # NARROW_SERIAL_INPUT bytes. On numba's threads they go to ``narrow``.
    use_thresholds(monkeypatch, SERIAL_BELOW_BYTES=1 << 62)
    size = dtype.itemsize
    inner = (planning.NARROW_SERIAL_BYTES - 1) // size
    small = 4 * -(-planning.LANE_BYTES // (inner * size))  # rows enough for ``narrow``
    large = -(-planning.NARROW_SERIAL_INPUT // (inner * size))
    rng = np.random.default_rng(17)
    for n in (small, large):
        on_one = planning.plan(1, n, inner, size, 1).kernel
        wide_input = size > 1 and n * inner * size >= planning.NARROW_SERIAL_INPUT
        assert (on_one == Kernel.NARROW) == wide_input, (n, on_one)
        assert planning.plan(1, n, inner, size, 2).kernel == Kernel.NARROW
        x = random_tensor(dtype, (n, inner), rng, special=0.2)
        for last in (0, 1):
            np.testing.assert_array_equal(argmax(x, 0, 1, last), onnx_argmax(x, 0, 1, last))


@pytest.mark.parametrize("threads", [2, 3, 4])
def test_column_blocks_shared_evenly(threads, monkeypatch, searched_by):
    # The parallel loop hands each thread an equal count of tasks: columns split between tasks make
    # blocks of one width (the last one narrower by less than a block's count), as many
    # as a multiple of the threads in all.
    for outer, n, inner, size in [
        (1, 256, 65552, 4),
        (1, 7, 2396745, 4),
        (3, 9, 70001, 1),
        (5, 100, 40000, 4),
        (2, 64, 100003, 8),
        (1, 3, 5000001, 2),
    ]:
        chosen = planning.plan(outer, n, inner, size, threads)
        block = chosen.block
        assert chosen.kernel == Kernel.COLS and block < inner
        nblocks = -(-inner // block)
        assert outer * nblocks % threads == 0, (outer, n, inner, size)
        assert inner - (nblocks - 1) * block > block - nblocks, (outer, n, inner, size)
    # Too few blocks for the threads: as few pieces as share them equally.
    for outer, pieces in [(1, 2), (2, 1), (3, 2), (4, 1)]:
        chosen = planning.plan(outer, 4096, 8192, 4, 2)
        assert (chosen.kernel, chosen.block) == (Kernel.COLS, 8192 // pieces), outer
    # And the kernels reduce such blocks: 5 blocks' worth of columns made 6 here.
    use_thresholds(monkeypatch, SERIAL_BELOW_BYTES=0, COL_BLOCK_BYTES=4096)
    rng = np.random.default_rng(17)
    for dtype in (np.dtype(np.float32), np.dtype(np.int8)):
        inner = 5 * 4096 // dtype.itemsize - 3
        assert planning.plan(1, 20, inner, dtype.itemsize, 2).block == -(-inner // 6)
        x = random_tensor(dtype, (20, inner), rng, special=0.3)
        for last in (0, 1):
            np.testing.assert_array_equal(argmax(x, 0, 1, last), onnx_argmax(x, 0, 1, last))


STRETCH_CASES = [(np.dtype(t), 300) for t in DTYPES] + [
    (np.dtype(t), FAR_ROW_BYTES + 64) for t in (np.int8, np.uint8, np.float32)
]


@pytest.mark.parametrize(("dtype", "row_bytes"), STRETCH_CASES, ids=str)
def test_columns_longer_than_one_stretch(dtype, row_bytes, searched_by):
    # Row numbers are kept as wide as the elements, at most INDEX_BITS, in stretches of
    # whole groups of FOLD_ROWS rows: 120 rows per stretch for 8-bit types, 32,760 for
    # wider ones. Rows of 300 bytes are wide enough for the column kernel, not the narrow
    # one; rows FAR_ROW_BYTES apart are folded fewer at a time.
    bits = min(8 * dtype.itemsize, INDEX_BITS)
    span = (2 ** (bits - 1) - 1) // FOLD_ROWS * FOLD_ROWS
    inner = row_bytes // dtype.itemsize
    rng = np.random.default_rng(10)
    x = rng.integers(0, 4, size=(span + 40, inner)).astype(dtype)
    top = np.iinfo(dtype).max if dtype.kind in "iu" else np.array(np.inf, dtype)
    # The first stretch is rows 0 to span - 1, the next starts at span.
    x[span - 1, :3] = top
    x[span, 1:4] = top
    x[span + 39, 5] = top
    for c in range(6, 12):  # rows past the first stretch
        x[span + c - 6, c] = top
    for last in (0, 1):
        got = argmax(x, 0, 0, last)
        want = onnx_argmax(x, 0, 0, last)
        np.testing.assert_array_equal(got, want)
        both = span if last else span - 1  # columns 1 and 2 hold both rows
        assert list(got[:6]) == [span - 1, both, both, span, got[4], span + 39]
        assert list(got[6:12]) == [span + c - 6 for c in range(6, 12)]

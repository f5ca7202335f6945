"""Inputs large enough for the vector searches.

Along the last axis a row is searched in chunks of one vector (8 to 64 lanes, by
width), the last chunk masked; split rows start pieces at any offset; and a row longer
than one search call (whose chunk numbers are kept as wide as the elements) is searched
in several calls whose results are merged. Along other axes, vectors of columns fold
eight rows at a time into running maxima (four, for rows far apart in memory), the
columns after the last whole vector one by one, and row numbers restart every stretch
of rows that the elements' width holds.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from conftest import DTYPES, onnx_argmax, random_tensor

import argmax_numba._api as api
from argmax_numba import argmax
from argmax_numba._lanes import FAR_FOLD_ROWS, FAR_ROW_BYTES, FOLD_ROWS

# Every length with a loop of its own (2 to 8), around every lane count (8, 16, 32 and
# 64 elements per 64-byte vector) and beyond.
ROW_LENGTHS = [*range(1, 10), 15, 16, 17, 31, 32, 33, 63, 64, 65, 129, 200, 1000, 4099]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rows_of_every_length(dtype, kernel_path):
    rng = np.random.default_rng(7)
    for n in ROW_LENGTHS:
        for special in (0.0, 0.02, 0.3):  # ties among small integers; rare or common maxima
            x = random_tensor(dtype, (3, n), rng, special=special)
            for last in (0, 1):
                np.testing.assert_array_equal(
                    argmax(x, 1, 1, last), onnx_argmax(x, 1, 1, last), err_msg=f"n={n} {special}"
                )


NARROW = [np.int8, np.uint8, np.int16, np.uint16, np.float16, ml_dtypes.bfloat16]


@pytest.mark.parametrize("dtype", [np.dtype(t) for t in NARROW], ids=str)
def test_row_longer_than_one_search(dtype, monkeypatch):
    # One call searches at most 2**bits - 1 chunks of 64 bytes: 16,320 int8 or 2,097,120
    # int16 elements. The serial path searches a whole row in one task.
    monkeypatch.setattr(api, "SERIAL_BELOW", 1 << 62)
    lanes = 64 // dtype.itemsize
    run = lanes * (2 ** (8 * dtype.itemsize) - 1)
    n = 2 * run + lanes + 3
    rng = np.random.default_rng(8)
    base = rng.integers(0, 4, size=n).astype(dtype)
    top = np.iinfo(dtype).max if dtype.kind in "iu" else np.array(np.inf, dtype)
    past = lanes * 2 ** (8 * dtype.itemsize) + 1  # a chunk number one call cannot hold
    for where in ([run - 1, run], [run, 2 * run + 1], [n - 1], [0, 2 * run], [past], [3, past]):
        x = base.copy()
        x[where] = top
        for last in (0, 1):
            got = argmax(x, 0, 0, last)
            assert got == (where[-1] if last else where[0]), (where, last)
            assert got == onnx_argmax(x, 0, 0, last)


# (shape, axis): blocks of columns with and without a partial vector; rows in groups of
# eight and not; the side-by-side rows of the narrow kernel.
COLUMN_CASES = [
    ((2, 9, 70), 0),
    ((2, 9, 70), 1),
    ((3, 17, 64), 1),
    ((1, 8, 130), 1),
    ((4, 33, 129), 0),
    ((300, 5), 0),
    ((2, 100, 3), 1),
]


@pytest.fixture(params=["serial", "parallel"])
def column_path(request, monkeypatch):
    """The serial column kernels, or the parallel ones on blocks of 72 bytes (a vector and
    an eighth), so that blocks end inside a vector too."""
    monkeypatch.setattr(api, "SERIAL_BELOW", 1 << 62 if request.param == "serial" else 0)
    if request.param == "parallel":
        monkeypatch.setattr(api, "COL_BLOCK_BYTES", 72)
    return request.param


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_columns(dtype, column_path):
    rng = np.random.default_rng(9)
    for shape, axis in COLUMN_CASES:
        for special in (0.0, 0.3):
            x = random_tensor(dtype, shape, rng, special=special)
            for last in (0, 1):
                np.testing.assert_array_equal(
                    argmax(x, axis, 1, last), onnx_argmax(x, axis, 1, last), err_msg=str(shape)
                )


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_columns_far_apart(dtype, column_path):
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


STRETCH_CASES = [(np.dtype(t), 300) for t in NARROW] + [
    (np.dtype(t), FAR_ROW_BYTES + 64) for t in NARROW if np.dtype(t).itemsize == 1
]


@pytest.mark.parametrize(("dtype", "row_bytes"), STRETCH_CASES, ids=str)
def test_columns_longer_than_one_stretch(dtype, row_bytes):
    # Row numbers are kept as wide as the elements, in stretches of whole groups of
    # FOLD_ROWS rows: 120 rows per stretch for 8-bit types, 32,760 for 16-bit ones. Rows
    # of 300 bytes are wide enough for the column kernel, not the narrow one; rows
    # FAR_ROW_BYTES apart are folded fewer at a time.
    span = np.iinfo(np.dtype(f"i{dtype.itemsize}")).max // FOLD_ROWS * FOLD_ROWS
    inner = row_bytes // dtype.itemsize
    rng = np.random.default_rng(10)
    x = rng.integers(0, 4, size=(span + 40, inner)).astype(dtype)
    top = np.iinfo(dtype).max if dtype.kind in "iu" else np.array(np.inf, dtype)
    # Row 0 starts; the first stretch is rows 1 to span, the next starts at span + 1.
    x[span, :3] = top
    x[span + 1, 1:4] = top
    x[span + 39, 5] = top
    for c in range(6, 12):  # rows past the first stretch
        x[span + c - 5, c] = top
    for last in (0, 1):
        got = argmax(x, 0, 0, last)
        want = onnx_argmax(x, 0, 0, last)
        np.testing.assert_array_equal(got, want)
        both = span + 1 if last else span  # columns 1 and 2 hold both rows
        assert list(got[:6]) == [span, both, both, span + 1, got[4], span + 39]
        assert list(got[6:12]) == [span + c - 5 for c in range(6, 12)]

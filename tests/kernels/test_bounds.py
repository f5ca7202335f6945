"""No read outside the input: arrays placed against a page that may not be read.

The kernels read whole vectors; where one would run past the end of the array (the
last rows of short rows, a run's last partial vector) they must load only the lanes
inside it. An input that ends right before a page without read access (or starts right
after one) turns a read outside it into a crash instead of a silently ignored lane.
The same pages show that a search which is done reads no further.
"""

from __future__ import annotations

import ctypes
import mmap
import sys

import numpy as np
import pytest
from conftest import DTYPES, FLOATS, numpy_argmax, random_tensor

from argmax_numba import argmax, argmin, planning
from argmax_numba.planning import Kernel
from argmax_numba.vector.lanes import RUN_BYTES

# These tests check the fast kernels: they run on them whatever tier the process chose.
pytestmark = [
    pytest.mark.usefixtures("fast_tier"),
    pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="mprotect through the C library, on Linux"
    ),
]

PAGE = mmap.PAGESIZE
SHAPES = [
    *[((r, n), 1) for r in (1, 3, 70) for n in (1, 2, 5, 8, 9, 15, 17, 33, 63, 65, 130)],
    ((1, 4099), 1),
    ((9, 70), 0),
    ((21, 13), 0),
    ((5, 16, 4), 1),
    ((3, 130, 2), 1),
    ((16, 3, 3), 1),
    ((16, 2, 7), 1),
    ((3, 7, 33), 1),
    ((600, 3), 0),
]


def _mprotect_none(address: int, size: int) -> None:
    """Make ``size`` bytes of pages from ``address`` (page-aligned) unreadable."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    if libc.mprotect(ctypes.c_void_p(address), size, 0) != 0:  # PROT_NONE
        raise OSError(ctypes.get_errno(), "mprotect failed")


class _Fenced:
    """Anonymous pages with the page after (``at_end``) or before the array's bytes
    made unreadable; the array's bytes end at (or start at) that page."""

    def __init__(self, nbytes: int, at_end: bool):
        size = -(-nbytes // PAGE) * PAGE
        self.map = mmap.mmap(-1, size + PAGE)
        base = np.frombuffer(self.map, np.uint8)
        address = base.ctypes.data
        _mprotect_none(address + size if at_end else address, PAGE)
        start = size - nbytes if at_end else PAGE
        self.bytes = base[start : start + nbytes]

    def array(self, x: np.ndarray) -> np.ndarray:
        y = self.bytes.view(x.dtype).reshape(x.shape)
        y[...] = x
        return y


@pytest.mark.parametrize("at_end", [True, False], ids=["end", "start"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_no_read_outside_the_input(dtype, at_end, kernel_path):
    rng = np.random.default_rng(13)
    fences = []  # kept until the end: the arrays are views of their pages
    for shape, axis in SHAPES:
        x = random_tensor(dtype, shape, rng, special=0.2)
        fences.append(_Fenced(x.nbytes, at_end))
        y = fences[-1].array(x)
        wide = x.astype(np.float64) if x.dtype in FLOATS else x  # exact for every float type
        for last in (0, 1):
            got = argmax(y, axis, 1, last)
            np.testing.assert_array_equal(got, numpy_argmax(wide, axis, 1, last), str(shape))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_search_ends_at_the_greatest_key(dtype):
    # A row's search for the first occurrence of its maximum ends after the run
    # (RUN_BYTES) in which it finds the greatest key there is: the type's largest
    # integer (its smallest, for ArgMin) or a NaN. A row of three runs whose last two
    # lie on pages that may not be read, with that value in its first run (and again in
    # its second), is searched without a crash. (One row of this size is searched whole
    # by the calling thread, by the long-row search.)
    run = RUN_BYTES // dtype.itemsize
    n = 3 * run
    assert RUN_BYTES % PAGE == 0
    assert planning.plan(1, n, 1, dtype.itemsize, 1).kernel == Kernel.ROWS
    assert planning.serial(1, n, 1, dtype.itemsize)
    rng = np.random.default_rng(29)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(info.min + 1, info.max, size=(1, n), dtype=dtype)
        extremes = {argmax: info.max, argmin: info.min}
    else:
        x = rng.standard_normal((1, n)).astype(dtype)
        extremes = {argmax: np.nan, argmin: np.nan}
    fences = []  # kept until the end: the arrays are views of their pages
    for search, extreme in extremes.items():
        for first in (0, 5, run - 1):
            y = x.copy()
            y[0, first] = extreme
            y[0, first + run] = extreme  # past the readable pages; not the first
            wide = y.astype(np.float64) if dtype in FLOATS else y
            oracle = np.argmax if search is argmax else np.argmin  # NaN first in both
            expected = oracle(wide, axis=1)
            assert expected == first
            block = mmap.mmap(-1, y.nbytes)
            fences.append(block)
            z = np.frombuffer(block, dtype).reshape(y.shape)
            z[...] = y
            _mprotect_none(z.ctypes.data + RUN_BYTES, y.nbytes - RUN_BYTES)
            np.testing.assert_array_equal(search(z, 1, 0, 0), expected, str(first))

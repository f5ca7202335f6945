"""No read outside the input: arrays placed against a page that may not be read.

The kernels read whole vectors; where one would run past the end of the array (the
last rows of short rows, a run's last partial vector) they must load only the lanes
inside it. An input that ends right before a page without read access (or starts right
after one) turns a read outside it into a crash instead of a silently ignored lane.
"""

from __future__ import annotations

import ctypes
import mmap
import sys

import numpy as np
import pytest
from conftest import DTYPES, FLOATS, numpy_argmax, random_tensor

from argmax_numba import argmax

# These tests check the fast kernels: they run on them whatever tier the process chose.
pytestmark = pytest.mark.usefixtures("fast_tier")

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="mprotect through the C library, on Linux"
)

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


class _Fenced:
    """Anonymous pages with the page after (``at_end``) or before the array's bytes
    made unreadable; the array's bytes end at (or start at) that page."""

    def __init__(self, nbytes: int, at_end: bool):
        size = -(-nbytes // PAGE) * PAGE
        self.map = mmap.mmap(-1, size + PAGE)
        base = np.frombuffer(self.map, np.uint8)
        address = base.ctypes.data
        fence = address + size if at_end else address
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        if libc.mprotect(ctypes.c_void_p(fence), PAGE, 0) != 0:  # PROT_NONE
            raise OSError(ctypes.get_errno(), "mprotect failed")
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

"""The kernels' scratch vectors and buffer views, against numpy's own."""

import numpy as np
import pytest
from numba import njit

from argmax_numba.runtime.arrays import c_view, empty

# These tests check the fast kernels: they run on them whatever tier the process chose.
pytestmark = pytest.mark.usefixtures("fast_tier")


@njit
def _window(x, start, rows, cols):
    return c_view(x, start, (rows, cols))


@njit
def _flat(x, start, size):
    return c_view(x, start, size)


@njit
def _scalar(x, start):
    return c_view(x, start, ())


@njit
def _view_of_a_temporary():
    # The view must keep the buffer alive after the array it came from is gone.
    return c_view(np.arange(10.0), 3, 4)


@njit
def _filled(size):
    v = empty(size, np.int16)
    for i in range(size):
        v[i] = i - 7
    return v


def test_views_match_numpy_reshape():
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    for start, rows, cols in ((0, 2, 12), (5, 3, 2), (23, 1, 1), (4, 0, 5)):
        expected = x.reshape(-1)[start : start + rows * cols].reshape(rows, cols)
        got = _window(x, start, rows, cols)
        assert got.shape == expected.shape and got.flags.c_contiguous
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(_flat(x, 7, 9), x.reshape(-1)[7:16])
    scalar = _scalar(x, 11)  # rank 0, as a reduction of a vector without keepdims
    assert scalar.shape == () and scalar == x.reshape(-1)[11]


def test_a_view_shares_and_keeps_its_buffer():
    x = np.arange(12, dtype=np.int64)
    v = _flat(x, 2, 5)
    v[0] = -1
    assert x[2] == -1
    np.testing.assert_array_equal(_view_of_a_temporary(), [3.0, 4.0, 5.0, 6.0])


def test_a_view_of_read_only_data_is_read_only():
    x = np.arange(6.0)
    x.flags.writeable = False
    assert not _flat(x, 1, 3).flags.writeable


def test_empty_vectors():
    v = _filled(9)
    assert v.dtype == np.int16 and v.shape == (9,)
    np.testing.assert_array_equal(v, np.arange(9) - 7)
    assert _filled(0).shape == (0,)
    for size in (-1, 1 << 62):
        with pytest.raises(ValueError, match="no such array size"):
            _filled(size)

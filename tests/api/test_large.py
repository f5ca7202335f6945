"""Indices beyond 2**31: a reduced axis longer than any int32 can count."""

from __future__ import annotations

import numpy as np
import pytest

from argmax_numba import argmax

BIG = 2**31 + 7


@pytest.mark.slow
def test_last_axis_longer_than_int32():
    x = np.zeros(BIG, dtype=np.int8)
    x[BIG - 3] = 5
    x[2**31 + 1] = 5
    assert int(argmax(x, 0, 0, 0)) == 2**31 + 1
    assert int(argmax(x, 0, 0, 1)) == BIG - 3


@pytest.mark.slow
def test_middle_axis_longer_than_int32():
    x = np.zeros((BIG, 2), dtype=np.uint8)
    x[2**31 + 2, 0] = 1
    x[2**31 + 5, 1] = 1
    x[5, 1] = 1
    np.testing.assert_array_equal(argmax(x, 0, 0, 0), [2**31 + 2, 5])
    np.testing.assert_array_equal(argmax(x, 0, 0, 1), [2**31 + 2, 2**31 + 5])

"""Bad input gets a clear error, never a crash or a wrong answer."""

from __future__ import annotations

import numpy as np
import pytest

from argmax_numba import SUPPORTED_DTYPES, argmax

# numpy's AxisError (numpy.exceptions.AxisError from numpy 1.25, numpy.AxisError before).
AxisError = getattr(np, "exceptions", np).AxisError


@pytest.mark.parametrize(
    "dtype",
    [
        np.bool_,
        np.complex64,
        np.complex128,
        object,
        "U3",
        "S2",
        "datetime64[s]",
        "timedelta64[s]",
        np.longdouble,
    ],
    ids=str,
)
def test_unsupported_dtype(dtype):
    x = np.zeros((2, 3), dtype=dtype)
    with pytest.raises(TypeError) as exc:
        argmax(x, 1)
    msg = str(exc.value)
    assert str(np.dtype(dtype)) in msg
    assert "float32" in msg and "bfloat16" in msg and "uint64" in msg


def test_float8_is_rejected():
    import ml_dtypes

    x = np.zeros(4, dtype=ml_dtypes.float8_e4m3fn)
    with pytest.raises(TypeError, match="float8_e4m3fn"):
        argmax(x)


def test_supported_list_matches_spec():
    assert set(SUPPORTED_DTYPES) == {
        "float64",
        "float32",
        "float16",
        "bfloat16",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
    }


@pytest.mark.parametrize("axis", [2, -3, 100])
def test_axis_out_of_range(axis):
    with pytest.raises(AxisError) as exc:
        argmax(np.zeros((2, 3)), axis)
    assert str(axis) in str(exc.value) and "[-2, 1]" in str(exc.value)
    assert isinstance(exc.value, ValueError)


@pytest.mark.parametrize("axis", [1.0, "0", None, True, [0]])
def test_axis_not_integer(axis):
    with pytest.raises(TypeError, match="axis"):
        argmax(np.zeros((2, 3)), axis)


@pytest.mark.parametrize("name", ["keepdims", "select_last_index"])
@pytest.mark.parametrize("value", [2, -1])
def test_flag_out_of_range(name, value):
    with pytest.raises(ValueError, match=name):
        argmax(np.zeros((2, 3)), 0, **{name: value})


@pytest.mark.parametrize("name", ["keepdims", "select_last_index"])
def test_flag_wrong_type(name):
    with pytest.raises(TypeError, match=name):
        argmax(np.zeros((2, 3)), 0, **{name: 0.5})


def test_rank_zero():
    with pytest.raises(ValueError, match="rank 0"):
        argmax(np.float32(3.0))


def test_empty_reduced_axis():
    with pytest.raises(ValueError, match="reduced axis 1 is empty"):
        argmax(np.zeros((3, 0, 2), dtype=np.float32), 1)

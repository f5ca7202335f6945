"""Bad input gets a clear error, never a crash or a wrong answer: the same errors from
argmax and argmin, each naming the function that raised it."""

from __future__ import annotations

import numpy as np
import pytest

from argmax_numba import SUPPORTED_DTYPES, argmax, argmin

# numpy's AxisError (numpy.exceptions.AxisError from numpy 1.25, numpy.AxisError before).
AxisError = getattr(np, "exceptions", np).AxisError


@pytest.fixture(params=[argmax, argmin], ids=["argmax", "argmin"])
def function(request):
    """Each of the two functions."""
    return request.param


def raised_by(function, exc: pytest.ExceptionInfo) -> str:
    """The message of ``exc``, checked to name ``function`` first."""
    message = str(exc.value)
    assert message.startswith(f"{function.__name__}: "), message
    return message


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
def test_unsupported_dtype(dtype, function):
    x = np.zeros((2, 3), dtype=dtype)
    with pytest.raises(TypeError) as exc:
        function(x, 1)
    msg = raised_by(function, exc)
    assert str(np.dtype(dtype)) in msg
    assert "float32" in msg and "bfloat16" in msg and "uint64" in msg


def test_float8_is_rejected(function):
    import ml_dtypes

    x = np.zeros(4, dtype=ml_dtypes.float8_e4m3fn)
    with pytest.raises(TypeError, match="float8_e4m3fn") as exc:
        function(x)
    raised_by(function, exc)


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
def test_axis_out_of_range(axis, function):
    with pytest.raises(AxisError) as exc:
        function(np.zeros((2, 3)), axis)
    message = raised_by(function, exc)
    assert str(axis) in message and "[-2, 1]" in message
    assert isinstance(exc.value, ValueError)


@pytest.mark.parametrize("axis", [1.0, "0", None, True, [0]])
def test_axis_not_integer(axis, function):
    with pytest.raises(TypeError, match="axis") as exc:
        function(np.zeros((2, 3)), axis)
    raised_by(function, exc)


@pytest.mark.parametrize("name", ["keepdims", "select_last_index"])
@pytest.mark.parametrize("value", [2, -1])
def test_flag_out_of_range(name, value, function):
    with pytest.raises(ValueError, match=name) as exc:
        function(np.zeros((2, 3)), 0, **{name: value})
    raised_by(function, exc)


@pytest.mark.parametrize("name", ["keepdims", "select_last_index"])
def test_flag_wrong_type(name, function):
    with pytest.raises(TypeError, match=name) as exc:
        function(np.zeros((2, 3)), 0, **{name: 0.5})
    raised_by(function, exc)


def test_rank_zero(function):
    with pytest.raises(ValueError, match="rank 0") as exc:
        function(np.float32(3.0))
    raised_by(function, exc)


def test_empty_reduced_axis(function):
    with pytest.raises(ValueError, match="reduced axis 1 is empty") as exc:
        function(np.zeros((3, 0, 2), dtype=np.float32), 1)
    raised_by(function, exc)

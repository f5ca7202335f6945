"""Shared test helpers: the independent oracles (onnx's reference ArgMax and ArgMin,
numpy) and inputs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

import argmax_numba.api as api
import argmax_numba.planning as planning
from argmax_numba import argmin, tiers

FLOATS = [
    np.dtype(np.float64),
    np.dtype(np.float32),
    np.dtype(np.float16),
    np.dtype(ml_dtypes.bfloat16),
]
INTS = [
    np.dtype(t)
    for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
]
DTYPES = FLOATS + INTS
LAYOUTS = ["C", "F", "transposed", "sliced", "negative", "readonly", "byteswapped", "unaligned"]


def onnx_arg(op_type: str, x: np.ndarray, axis: int, keepdims: int, last: int) -> np.ndarray:
    """ArgMax or ArgMin (``op_type``) computed by onnx's reference implementation."""
    node = helper.make_node(
        op_type, ["x"], ["y"], axis=axis, keepdims=keepdims, select_last_index=last
    )
    return ReferenceEvaluator(node).run(None, {"x": np.ascontiguousarray(x)})[0]


def onnx_argmax(x: np.ndarray, axis: int, keepdims: int, last: int) -> np.ndarray:
    """ArgMax computed by onnx's reference implementation (the oracle)."""
    return onnx_arg("ArgMax", x, axis, keepdims, last)


def onnx_argmin(x: np.ndarray, axis: int, keepdims: int, last: int) -> np.ndarray:
    """ArgMin computed by onnx's reference implementation (the oracle)."""
    return onnx_arg("ArgMin", x, axis, keepdims, last)


def reversed_order(x: np.ndarray) -> np.ndarray:
    """The values of ``x`` with their order reversed, exactly: ``~x`` for integers, ``-x``
    for floats (NaN stays NaN, ``-0.0`` and ``+0.0`` stay equal), in the memory order of
    ``x``. The ArgMin of the result is the ArgMax of ``x``, ties and NaN included."""
    return np.invert(x) if x.dtype.kind in "iu" else np.negative(x)


def argmax_by_argmin(x, axis: int = 0, keepdims: int = 1, select_last_index: int = 0):
    """The ArgMax of ``x``, computed by this package's ``argmin`` (``reversed_order``)."""
    return argmin(reversed_order(np.asarray(x)), axis, keepdims, select_last_index)


def numpy_argmax(x: np.ndarray, axis: int, keepdims: int, last: int) -> np.ndarray:
    """ArgMax by numpy (which orders NaN first and -0.0 == +0.0, as ONNX does); the last
    index from the flipped axis."""
    if last:
        n = x.shape[axis]
        idx = n - 1 - np.argmax(np.flip(x, axis), axis=axis)
    else:
        idx = np.argmax(x, axis=axis)
    idx = idx.astype(np.int64)
    return np.expand_dims(idx, axis) if keepdims else idx


def special_values(dtype: np.dtype) -> np.ndarray:
    """Values that stress the ordering: extremes, signed zeros, infinities, NaN."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype=dtype)
    vals = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0]
    return np.array(vals, dtype=np.float64).astype(dtype)


def random_tensor(dtype: np.dtype, shape, rng: np.random.Generator, special=0.05) -> np.ndarray:
    """Small integers (many ties) with a sprinkling of the special values."""
    x = rng.integers(0, 6, size=shape).astype(dtype)
    if x.size and special:
        sv = special_values(dtype)
        mask = rng.random(shape) < special
        x[mask] = sv[rng.integers(0, len(sv), size=int(mask.sum()))]
    return x


def with_layout(x: np.ndarray, layout: str) -> np.ndarray:
    """The same values as ``x`` (C-ordered), presented in the named memory layout."""
    if layout == "C":
        return x
    if layout == "F":
        return np.asfortranarray(x)
    if layout == "transposed":  # a permutation of a C-contiguous array, neither C nor F
        return np.moveaxis(np.ascontiguousarray(np.moveaxis(x, 0, -1)), -1, 0)
    if layout == "sliced":
        big = np.zeros(tuple(2 * s + 1 for s in x.shape), dtype=x.dtype)
        view = big[tuple(slice(1, None, 2) for _ in x.shape)]
        view[...] = x
        return view
    if layout == "negative":
        flipped = np.ascontiguousarray(x[tuple(slice(None, None, -1) for _ in x.shape)])
        return flipped[tuple(slice(None, None, -1) for _ in x.shape)]
    if layout == "readonly":
        y = x.copy()
        y.flags.writeable = False
        return y
    if layout == "byteswapped":
        return x.astype(x.dtype.newbyteorder("S"))
    if layout == "unaligned":
        buf = np.zeros(x.nbytes + 1, dtype=np.uint8)[1:]
        y = buf.view(x.dtype).reshape(x.shape) if x.itemsize > 1 else buf.view(x.dtype)
        y = y.reshape(x.shape)
        y[...] = x
        return y
    raise ValueError(layout)


# Thresholds under which every input runs serially, and under which even small inputs
# run in parallel with rows split, inner blocks and side-by-side row groups small enough
# to cross borders.
SERIAL = {"SERIAL_BELOW_BYTES": 1 << 62}
PARALLEL = {"SERIAL_BELOW_BYTES": 0, "MIN_ROW_CHUNK": 3, "COL_BLOCK_BYTES": 40, "LANE_BYTES": 16}


def use_thresholds(monkeypatch: pytest.MonkeyPatch, **values: int) -> None:
    """Set ``planning``'s thresholds for the rest of a test, with an empty store of the
    calls that small inputs remember: a call remembered under other thresholds would run
    the kernel those chose (a serial one, say, where the test asks for a parallel one)."""
    for name, value in values.items():
        assert hasattr(planning, name), name
        monkeypatch.setattr(planning, name, value)
    monkeypatch.setattr(api, "_PLANS", {})


def use_tier(monkeypatch: pytest.MonkeyPatch, tier: str) -> None:
    """Run this test's calls from Python on ``tier`` ("fast" or "portable"), with an
    empty store of remembered calls (they would run the other tier's kernels)."""
    monkeypatch.setattr(tiers.STATE, "tier", tiers.Tier(tier))
    monkeypatch.setattr(api, "_PLANS", {})


@pytest.fixture(params=["fast", "portable"])
def tier(request, monkeypatch):
    """Run a test on each tier of kernels."""
    use_tier(monkeypatch, request.param)
    return request.param


@pytest.fixture
def fast_tier(monkeypatch):
    """Run a test that checks the fast kernels on them, whatever tier the process chose."""
    use_tier(monkeypatch, "fast")


@pytest.fixture(params=["argmax", "argmin"])
def searched_by(request, monkeypatch):
    """Run a test module's ``argmax`` calls as they are, or as ``argmax_by_argmin``: the
    ArgMin kernels, on the very layouts, sizes and positions of the extreme that the test
    builds, checked against the same ArgMax oracle."""
    if request.param == "argmin":
        monkeypatch.setattr(request.module, "argmax", argmax_by_argmin)
    return request.param


@pytest.fixture(params=["serial", "parallel"])
def kernel_path(request, monkeypatch):
    """Run a test through the serial kernels, or through the parallel ones even on
    small inputs (``PARALLEL``)."""
    use_thresholds(monkeypatch, **(SERIAL if request.param == "serial" else PARALLEL))
    return request.param


def assert_same_type(ours: onnx.TypeProto, theirs: onnx.TypeProto) -> None:
    """Shape inference's types: equal, except that a dim onnx names ``unk__N`` may be
    unknown in ours."""
    a, b = ours.tensor_type, theirs.tensor_type
    assert a.elem_type == b.elem_type
    assert a.HasField("shape") == b.HasField("shape")
    assert len(a.shape.dim) == len(b.shape.dim)
    for x, y in zip(a.shape.dim, b.shape.dim, strict=True):
        if y.dim_param.startswith("unk__") and not x.HasField("dim_value") and not x.dim_param:
            continue
        assert x == y

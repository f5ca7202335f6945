"""Differential test against onnx's reference ArgMax and ArgMin over generated inputs."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    DTYPES,
    LAYOUTS,
    PARALLEL,
    onnx_arg,
    special_values,
    use_thresholds,
    use_tier,
    with_layout,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from argmax_numba import argmax, argmin

OPS = {"ArgMax": argmax, "ArgMin": argmin}


@st.composite
def cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    ndim = draw(st.integers(1, 4))
    sizes = draw(st.lists(st.integers(0, 6), min_size=ndim, max_size=ndim))
    axis = draw(st.integers(-ndim, ndim - 1))
    sizes[axis] = max(sizes[axis], 1)  # other axes may be empty, the reduced one not
    shape = tuple(sizes)
    size = int(np.prod(shape))
    pool = np.concatenate([special_values(dtype), np.arange(4).astype(dtype)])
    picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=size, max_size=size))
    x = pool[np.array(picks, dtype=np.int64)].reshape(shape) if size else np.zeros(shape, dtype)
    layout = draw(st.sampled_from(LAYOUTS))
    flags = draw(st.integers(0, 1)), draw(st.integers(0, 1))
    tier, op_type = draw(st.sampled_from(TIERS)), draw(st.sampled_from(tuple(OPS)))
    return x, axis, *flags, layout, draw(st.booleans()), tier, op_type


TIERS = ("fast", "portable")


@pytest.mark.slow
@settings(max_examples=250, deadline=None, derandomize=True)
@given(cases())
def test_matches_onnx_reference(case):
    x, axis, keep, last, layout, parallel, tier, op_type = case
    y = with_layout(x, layout)
    before = y.tobytes()
    with pytest.MonkeyPatch.context() as monkeypatch:
        use_tier(monkeypatch, tier)
        if parallel:
            use_thresholds(monkeypatch, **(PARALLEL | {"MIN_ROW_CHUNK": 2, "COL_BLOCK_BYTES": 24}))
        got = OPS[op_type](y, axis, keep, last)
    want = onnx_arg(op_type, x, axis, keep, last)
    assert got.dtype == np.int64 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert y.tobytes() == before

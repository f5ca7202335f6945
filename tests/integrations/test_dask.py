"""``argmax_numba.dask.argmax`` and ``argmin`` across chunk borders, against in-memory
oracles.

Oracles: the in-memory ``argmax_numba.argmax`` (the operator the dask version must
reproduce exactly), numpy (``np.argmax``, flipped for ``select_last_index``, which
orders NaN and signed zeros as ONNX does) and dask's own ``dask.array.argmax``.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import dask
import dask.array as da
import ml_dtypes
import numpy as np
import pytest
from conftest import DTYPES, numpy_argmax, onnx_argmin, random_tensor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import argmax_numba
from argmax_numba.dask import argmax, argmin

# numpy's AxisError (numpy.exceptions.AxisError from numpy 1.25, numpy.AxisError before).
AxisError = getattr(np, "exceptions", np).AxisError

pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


@st.composite
def chunking(draw, n: int) -> tuple[int, ...]:
    """Block sizes summing to ``n``: all ones, one block, or random cuts; sometimes
    with an empty block squeezed in."""
    kind = draw(st.sampled_from(["ones", "whole", "cuts", "cuts"]))
    if kind == "ones":
        sizes = [1] * n
    elif kind == "whole":
        sizes = [n]
    else:
        cuts = sorted(draw(st.sets(st.integers(1, n - 1), max_size=n))) if n > 1 else []
        sizes = np.diff([0, *cuts, n]).tolist()
    if draw(st.integers(0, 9)) == 0:
        sizes.insert(draw(st.integers(0, len(sizes))), 0)
    return tuple(sizes)


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 8)) for _ in range(ndim))
    return {
        "shape": shape,
        "chunks": tuple(draw(chunking(n)) for n in shape),
        "dtype": draw(st.sampled_from(DTYPES)),
        "axis": draw(st.integers(-ndim, ndim - 1)),
        "keepdims": draw(st.sampled_from([0, 1])),
        "last": draw(st.sampled_from([0, 1])),
        "special": draw(st.sampled_from([0.0, 0.1, 0.5])),
        "split_every": draw(st.sampled_from([None, 2, 3])),
        "seed": draw(st.integers(0, 2**32 - 1)),
        "minimum": draw(st.booleans()),
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_random_chunkings_match_in_memory_and_numpy(case):
    rng = np.random.default_rng(case["seed"])
    x = random_tensor(case["dtype"], case["shape"], rng, special=case["special"])
    ax, keep, last = case["axis"], case["keepdims"], case["last"]
    lazy_function, in_memory = (
        (argmin, argmax_numba.argmin) if case["minimum"] else (argmax, argmax_numba.argmax)
    )
    lazy = lazy_function(
        da.from_array(x, chunks=case["chunks"]), ax, keep, last, split_every=case["split_every"]
    )
    assert isinstance(lazy, da.Array)
    assert lazy.dtype == np.int64
    with dask.config.set(scheduler="sync"):
        got = lazy.compute()
    assert got.dtype == np.int64
    assert got.shape == lazy.shape
    np.testing.assert_array_equal(got, in_memory(x, ax, keep, last))
    oracle = onnx_argmin if case["minimum"] else numpy_argmax
    np.testing.assert_array_equal(got, oracle(x, ax, keep, last))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_matches_dask_own_argmax(dtype, axis, tier):
    rng = np.random.default_rng(11)
    x = random_tensor(dtype, (9, 7, 5), rng, special=0.2)
    d = da.from_array(x, chunks=((1, 3, 5), (2, 1, 4), (5,)))
    got = argmax(d, axis=axis, keepdims=0).compute(scheduler="threads")
    np.testing.assert_array_equal(got, da.argmax(d, axis=axis).compute())


@pytest.mark.parametrize(
    ("op", "values", "chunks", "first", "last"),
    [
        ("max", [5, 1, 5, 5, 0, 5], (3, 2, 1), 0, 5),  # equal maxima in several blocks
        ("max", [1, 2, 3, 9, 2, 9], (1, 1, 1, 1, 1, 1), 3, 5),
        ("max", [0, 0, 0, 0, 0, 7], (2, 2, 2), 5, 5),  # the maximum in the last block only
        ("max", [np.inf, 1, np.nan, 2, np.nan, np.inf], (2, 2, 2), 2, 4),  # NaN beats inf
        ("max", [np.nan, 0, 0, 0, 0, np.nan], (1, 4, 1), 0, 5),
        ("max", [-0.0, 0.0, -0.0, -1.0], (1, 1, 2), 0, 2),  # -0 == +0
        ("max", [-np.inf, -np.inf, -np.inf], (1, 2), 0, 2),
        ("min", [5, 1, 5, 1, 0, 0], (3, 2, 1), 4, 5),  # equal minima in two blocks
        ("min", [-np.inf, 1, np.nan, -2, np.nan, -np.inf], (2, 2, 2), 2, 4),  # NaN wins too
        ("min", [0.0, -0.0, 1.0, 0.0], (1, 1, 2), 0, 3),  # -0 == +0
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, ml_dtypes.bfloat16], ids=str)
def test_ties_nan_and_zeros_across_block_borders(op, values, chunks, first, last, dtype):
    lazy, oracle = (argmax, numpy_argmax) if op == "max" else (argmin, onnx_argmin)
    x = np.array(values, dtype=np.float64).astype(dtype)
    d = da.from_array(x, chunks=(chunks,))
    assert lazy(d, 0, keepdims=0, select_last_index=0).compute() == first
    assert lazy(d, 0, keepdims=0, select_last_index=1).compute() == last
    assert oracle(x, 0, 0, 0) == first
    assert oracle(x, 0, 0, 1) == last


def test_argmin_errors_name_argmin():
    with pytest.raises(ValueError, match=r"^argmin: the reduced axis 0 is empty"):
        argmin(da.zeros((0, 3), chunks=1), 0)
    with pytest.raises(TypeError, match=r"^argmin: unsupported input dtype bool"):
        argmin(da.zeros(3, dtype=bool, chunks=1))


def test_offsets_in_every_block_position():
    # One maximum per row, placed in each block in turn; blocks of uneven sizes.
    n = 23
    x = np.zeros((n, n), dtype=np.int16)
    x[np.arange(n), np.arange(n)[::-1]] = 7
    d = da.from_array(x, chunks=((5, 18), (1, 4, 1, 9, 8)))
    np.testing.assert_array_equal(argmax(d, axis=1, keepdims=0).compute(), np.arange(n)[::-1])
    np.testing.assert_array_equal(argmax(d, axis=0, keepdims=1).compute(), [np.arange(n)[::-1]])


def test_stays_lazy_until_computed():
    def boom(block):
        raise RuntimeError("computed too early")

    d = da.zeros((6, 4), chunks=2, dtype=np.float32).map_blocks(boom, dtype=np.float32)
    lazy = argmax(d, axis=1)
    assert lazy.shape == (6, 1)
    assert lazy.chunks == ((2, 2, 2), (1,))
    with pytest.raises(RuntimeError, match="too early"):
        lazy.compute(scheduler="sync")


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"axis": 2}, AxisError),
        ({"axis": -3}, AxisError),
        ({"axis": 1.0}, TypeError),
        ({"axis": True}, TypeError),
        ({"keepdims": 2}, ValueError),
        ({"keepdims": "yes"}, TypeError),
        ({"select_last_index": -1}, ValueError),
    ],
)
def test_invalid_arguments_fail_eagerly_like_in_memory(kwargs, error):
    x = np.zeros((3, 4), dtype=np.float32)
    with pytest.raises(error):
        argmax_numba.argmax(x, **kwargs)
    with pytest.raises(error):
        argmax(da.from_array(x, chunks=2), **kwargs)


@pytest.mark.parametrize("dtype", [np.bool_, np.complex64, np.float128, "U3"])
def test_unsupported_dtypes_fail_eagerly(dtype):
    d = da.zeros((3, 2), dtype=dtype, chunks=1)
    with pytest.raises(TypeError, match="dtype"):
        argmax(d)


def test_empty_axis_and_scalar_fail_eagerly():
    with pytest.raises(ValueError, match="empty"):
        argmax(da.zeros((0, 3), chunks=1), axis=0)
    with pytest.raises(ValueError, match="rank 0"):
        argmax(da.from_array(np.float32(1.0)))
    # An empty *other* axis is fine: the result is empty as well.
    assert argmax(da.zeros((0, 3), chunks=1), axis=1).compute().shape == (0, 1)


def test_numpy_input_and_byteswapped_blocks():
    x = np.array([[3, 1, 3], [2, 8, 8]], dtype=">i4")
    np.testing.assert_array_equal(argmax(x, axis=1, keepdims=0).compute(), [0, 1])
    d = da.from_array(x, chunks=1)
    np.testing.assert_array_equal(argmax(d, axis=1, select_last_index=1).compute(), [[2], [2]])


def test_import_argmax_numba_does_not_import_dask():
    code = "import sys, argmax_numba; sys.exit('dask' in sys.modules)"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    assert subprocess.run([sys.executable, "-c", code], env=env, cwd=root).returncode == 0


@pytest.mark.slow
def test_on_a_local_cluster_of_two_processes():
    import distributed

    x = random_tensor(np.dtype(np.float32), (40, 30), np.random.default_rng(5), special=0.1)
    d = da.from_array(x, chunks=(7, 4))
    with (
        distributed.LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        for axis in (0, 1):
            for last in (0, 1):
                got = client.compute(argmax(d, axis, 0, last)).result()
                np.testing.assert_array_equal(got, numpy_argmax(x, axis, 0, last))
        # The blocks were reduced in the worker processes, by the kernel.
        loaded = client.run(_kernels_loaded)
        assert len(loaded) == 2
        assert all(pid != os.getpid() and kernel for pid, kernel in loaded.values())


def _kernels_loaded() -> tuple[int, bool]:
    """A worker's process id, and whether the kernels of its tier have run there."""
    from argmax_numba import api, kernel_tier

    if kernel_tier() == "fast":
        return os.getpid(), "argmax_numba.kernels.registry" in sys.modules
    return os.getpid(), api.portable_kernels.cache_info().currsize > 0

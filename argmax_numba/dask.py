"""ONNX ArgMax and ArgMin of a chunked ``dask.array.Array``, computed by the numba kernels.

:func:`argmax` and :func:`argmin` plug the kernel into dask's own tree reduction
(``dask.array.reductions.arg_reduction``, which also builds ``dask.array.argmax``):

* *chunk*: the kernel gives each block's local index of its extreme along the axis;
  the value found there is gathered with ``np.take_along_axis`` and the index is
  shifted by the block's offset along the axis, giving (extreme, global index) pairs;
* *combine* and *aggregate*: the extremes of neighbouring blocks, concatenated in block
  order, go through the kernel again (same ``select_last_index``) to choose the winner.

Because every comparison goes through the kernel, blocks and their borders use one
total order: NaN wins (for ArgMin too), ``-0.0 == +0.0``, and ties resolve to the first
occurrence (the last one with ``select_last_index=1``), exactly as the in-memory
:func:`argmax_numba.argmax` and :func:`argmax_numba.argmin`.

This module imports dask (``pip install "argmax-numba[dask]"``); ``import
argmax_numba`` alone does not.
"""

from __future__ import annotations

from functools import partial

import dask.array as da
import numpy as np
from dask.array.reductions import arg_reduction

from . import api as _api
from .dtypes import Extreme, kernel_view

__all__ = ["argmax", "argmin"]

# The in-memory function of each operator.
_FUNCTIONS = {Extreme.MAX: _api.argmax, Extreme.MIN: _api.argmin}


def _pairs(vals: np.ndarray, arg: np.ndarray) -> np.ndarray:
    """(extreme, global index) pairs as one structured array, the form dask's tree
    reduction concatenates between steps."""
    out = np.empty(vals.shape, dtype=[("vals", vals.dtype), ("arg", np.int64)])
    out["vals"] = vals
    out["arg"] = arg
    return out


def _chunk(
    x: np.ndarray, axis: tuple[int, ...], offset_info, *, last: int, extreme: Extreme
) -> np.ndarray:
    """Per block: its extreme along ``axis`` and that extreme's index in the whole array."""
    (ax,) = axis
    # arg_reduction passes the block's offset along the axis, or for a 1-D array the
    # pair (offsets, total shape), which for one axis means the same thing.
    offset = offset_info[0][0] if isinstance(offset_info, tuple) else offset_info
    local = _FUNCTIONS[extreme](x, axis=ax, keepdims=1, select_last_index=last)
    return _pairs(np.take_along_axis(x, local, axis=ax), local + offset)


def _winner(data: np.ndarray, ax: int, last: int, extreme: Extreme) -> np.ndarray:
    """The pair whose value wins along ``ax`` (blocks in order), keeping the axis."""
    pick = _FUNCTIONS[extreme](data["vals"], axis=ax, keepdims=1, select_last_index=last)
    return np.take_along_axis(data, pick, axis=ax)


def _combine(
    data: np.ndarray, axis: tuple[int, ...], *, last: int, extreme: Extreme, **kwargs
) -> np.ndarray:
    (ax,) = axis
    return _winner(data, ax, last, extreme)


def _aggregate(
    data: np.ndarray,
    axis: tuple[int, ...],
    keepdims: bool = False,
    *,
    last: int,
    extreme: Extreme,
    **kwargs,
) -> np.ndarray:
    (ax,) = axis
    arg = _winner(data, ax, last, extreme)["arg"]
    return arg if keepdims else np.squeeze(arg, axis=ax)


def _drop_empty_blocks(x: da.Array, ax: int) -> da.Array:
    """``x`` without blocks of length 0 along ``ax`` (they have no extreme)."""
    sizes = x.chunks[ax]
    if len(sizes) > 1 and 0 in sizes:
        kept = tuple(s for s in sizes if s != 0)
        x = x.rechunk({ax: kept})
    return x


def _arg_reduction(
    x: da.Array,
    axis: int,
    keepdims: int,
    select_last_index: int,
    split_every: int | None,
    extreme: Extreme,
) -> da.Array:
    """``argmax`` or ``argmin`` (``extreme``), checked at once and planned lazily."""
    name = extreme.function
    if not isinstance(x, da.Array):
        x = da.asarray(x)
    keep = _api._flag(keepdims, "keepdims", name)
    last = _api._flag(select_last_index, "select_last_index", name)
    if x.ndim == 0:
        raise ValueError(f"{name}: the input is a scalar (rank 0); there is no axis to reduce")
    ax = _api._axis(axis, x.ndim, name)
    dtype = x.dtype if x.dtype.isnative else x.dtype.newbyteorder("=")
    kernel_view(dtype, extreme)  # TypeError for a dtype the operator does not accept
    if x.shape[ax] == 0:
        raise ValueError(
            f"{name}: the reduced axis {ax} is empty (input shape {x.shape}); "
            f"{extreme.op_type} of an empty axis is undefined"
        )
    steps = (partial(step, last=last, extreme=extreme) for step in (_chunk, _combine, _aggregate))
    return arg_reduction(
        _drop_empty_blocks(x, ax),
        *steps,
        axis=ax,
        keepdims=bool(keep),
        split_every=split_every,
    ).astype(np.int64, copy=False)


def argmax(
    x: da.Array,
    axis: int = 0,
    keepdims: int = 1,
    select_last_index: int = 0,
    *,
    split_every: int | None = None,
) -> da.Array:
    """Lazy int64 indices of the maximum along ``axis``, with ONNX ArgMax-12/13 semantics.

    Parameters are those of :func:`argmax_numba.argmax` and are checked at once, with
    the same errors (TypeError for a bad type or dtype, ``numpy.exceptions.AxisError``,
    ValueError for a rank-0 input, an empty reduced axis or a flag not 0/1).
    ``split_every`` is handed to dask's tree reduction (how many blocks one step merges).
    Anything that is not a dask array goes through ``dask.array.asarray`` first.
    """
    return _arg_reduction(x, axis, keepdims, select_last_index, split_every, Extreme.MAX)


def argmin(
    x: da.Array,
    axis: int = 0,
    keepdims: int = 1,
    select_last_index: int = 0,
    *,
    split_every: int | None = None,
) -> da.Array:
    """Lazy int64 indices of the minimum along ``axis``, with ONNX ArgMin-12/13 semantics
    (NaN wins, as for :func:`argmax`). Parameters and errors as for :func:`argmax`."""
    return _arg_reduction(x, axis, keepdims, select_last_index, split_every, Extreme.MIN)

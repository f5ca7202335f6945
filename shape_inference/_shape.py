"""The output shape of ArgMax and ArgMin as a pure function of the input shape and
attributes (both operators reduce one axis the same way)."""

from __future__ import annotations

import operator
from collections.abc import Sequence

__all__ = ["Dim", "argmax_output_shape", "keeps_reduced_dim", "normalize_axis"]

#: One dimension: a concrete size, a symbolic name, or None (unknown).
Dim = int | str | None


def normalize_axis(axis: int, rank: int) -> int | None:
    """Return ``axis`` mapped into ``[0, rank)``, or None if it is outside ``[-rank, rank-1]``."""
    if -rank <= axis < rank:
        return axis + rank if axis < 0 else axis
    return None


def keeps_reduced_dim(keepdims: int) -> bool:
    """Whether ArgMax and ArgMin keep the reduced dimension.

    Like onnx's own shape inference (and onnxruntime), only ``keepdims == 1`` keeps it;
    every other value (0 or anything else) removes it.
    """
    return keepdims == 1


def _as_int(name: str, value: object) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not bool")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}") from None


def _as_dim(index: int, value: object) -> Dim:
    if value is None or isinstance(value, str):
        return value
    dim = _as_int(f"input_shape[{index}]", value)
    if dim < 0:
        raise ValueError(f"input_shape[{index}] is {dim}; dimensions must be >= 0")
    return dim


def argmax_output_shape(
    input_shape: Sequence[Dim] | None, axis: int = 0, keepdims: int = 1
) -> list[Dim] | tuple[Dim, ...] | None:
    """Output shape of ONNX ArgMax, and equally of ONNX ArgMin.

    ArgMin has the same attributes and shape rule as ArgMax, so this one function serves
    both operators (there is no separate ``argmin_output_shape``).

    Args:
        input_shape: the input's dimensions, each an int, a symbolic name (str) or None
            (unknown); or None when the rank itself is unknown.
        axis: the reduced axis, in ``[-r, r-1]`` for an input of rank ``r``.
        keepdims: 1 keeps the reduced axis as a dimension of size 1; any other value
            removes it (as in onnx's shape inference).

    Returns:
        The output shape in the same form: a list if ``input_shape`` is a list, else a
        tuple; None if the rank is unknown. Every dimension other than the reduced one
        is copied unchanged (symbolic names are kept as they are).

    Raises:
        ValueError: ``axis`` is outside ``[-r, r-1]`` (in particular for a scalar input),
            or a dimension is negative.
        TypeError: ``axis``, ``keepdims`` or a dimension has the wrong type.
    """
    axis = _as_int("axis", axis)
    keepdims = _as_int("keepdims", keepdims)
    if input_shape is None:
        return None
    if isinstance(input_shape, (str, bytes)):
        raise TypeError("input_shape must be a sequence of dimensions, not a string")
    dims = [_as_dim(i, d) for i, d in enumerate(input_shape)]
    rank = len(dims)
    reduced = normalize_axis(axis, rank)
    if reduced is None:
        raise ValueError(
            f"axis {axis} is outside [{-rank}, {rank - 1}] for an input of rank {rank}"
        )
    kept: list[Dim] = [1] if keeps_reduced_dim(keepdims) else []
    out = dims[:reduced] + kept + dims[reduced + 1 :]
    return out if isinstance(input_shape, list) else tuple(out)

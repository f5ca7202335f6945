"""Per-node entry points: the output type of one ArgMax or one ArgMin node."""

from __future__ import annotations

from onnx import NodeProto, TypeProto

from . import _argmax_rule  # noqa: F401  (registers the ArgMax and ArgMin rules)
from ._registry import get_rule, normalize_domain
from .errors import Problem, RuleError, ShapeInferenceError

__all__ = ["argmax_output_type", "argmin_output_type"]


def _output_type(
    op_type: str, node: NodeProto, input_type: TypeProto | None, opset: int
) -> TypeProto:
    """Output type of a node of ``op_type`` (ArgMax or ArgMin) by the registered rule."""
    if not isinstance(node, NodeProto):
        raise TypeError(f"expected an onnx.NodeProto, got {type(node).__name__}")
    if node.op_type != op_type or normalize_domain(node.domain) != "":
        domain = node.domain or "ai.onnx"
        raise ValueError(
            f"expected an {op_type} node of domain ai.onnx, got {domain}::{node.op_type}"
        )
    label = node.name or op_type
    found = get_rule(op_type, "", opset)
    if found is None:
        raise ShapeInferenceError([Problem(label, op_type, "opset", f"{opset}", "an opset >= 1")])
    try:
        outputs = found[1](node, [input_type], opset)
    except RuleError as exc:
        raise ShapeInferenceError(
            [Problem(label, op_type, i.subject, i.found, i.expected) for i in exc.issues]
        ) from None
    out = TypeProto()
    if outputs[0] is not None:
        out.CopyFrom(outputs[0])  # rules may share the objects they return
    return out


def argmax_output_type(node: NodeProto, input_type: TypeProto | None, opset: int) -> TypeProto:
    """Output type of an ArgMax node, from its input type and the model's opset.

    Args:
        node: the ArgMax ``NodeProto`` (default ONNX domain).
        input_type: the type of its input, or None if unknown.
        opset: the opset the model imports for the default domain; the ArgMax version
            used is the highest of 1, 11, 12, 13 not above it.

    Returns:
        A new ``TypeProto``: an int64 tensor, with the reduced shape when the input's
        rank is known and no shape otherwise.

    Raises:
        ShapeInferenceError: the node is invalid (every problem is listed).
        ValueError: ``node`` is not an ArgMax node of the default domain (for an ArgMin
            node, use :func:`argmin_output_type`).
    """
    return _output_type("ArgMax", node, input_type, opset)


def argmin_output_type(node: NodeProto, input_type: TypeProto | None, opset: int) -> TypeProto:
    """Output type of an ArgMin node, from its input type and the model's opset.

    ArgMin has the same attributes, input types and shape rule as ArgMax: arguments,
    result and errors are those of :func:`argmax_output_type`, for an ArgMin ``node``
    (a ValueError for any other node), and its errors name ArgMin.
    """
    return _output_type("ArgMin", node, input_type, opset)

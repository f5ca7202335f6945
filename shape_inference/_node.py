"""Per-node entry point: the output type of one ArgMax node."""

from __future__ import annotations

from onnx import NodeProto, TypeProto

from . import _argmax_rule  # noqa: F401  (registers the ArgMax rules)
from ._registry import get_rule, normalize_domain
from .errors import Problem, RuleError, ShapeInferenceError

__all__ = ["argmax_output_type"]


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
        ValueError: ``node`` is not an ArgMax node of the default domain.
    """
    if not isinstance(node, NodeProto):
        raise TypeError(f"expected an onnx.NodeProto, got {type(node).__name__}")
    if node.op_type != "ArgMax" or normalize_domain(node.domain) != "":
        domain = node.domain or "ai.onnx"
        raise ValueError(f"expected an ArgMax node of domain ai.onnx, got {domain}::{node.op_type}")
    label = node.name or "ArgMax"
    found = get_rule("ArgMax", "", opset)
    if found is None:
        raise ShapeInferenceError([Problem(label, "ArgMax", "opset", f"{opset}", "an opset >= 1")])
    try:
        outputs = found[1](node, [input_type], opset)
    except RuleError as exc:
        raise ShapeInferenceError(
            [Problem(label, "ArgMax", i.subject, i.found, i.expected) for i in exc.issues]
        ) from None
    out = TypeProto()
    if outputs[0] is not None:
        out.CopyFrom(outputs[0])  # rules may share the objects they return
    return out

"""Type-inference rules of ArgMax and ArgMin, versions 1, 11, 12 and 13 of each.

ArgMin has exactly ArgMax's attributes, input types and shape rule (onnx defines both
from one template), so one rule serves both operators: it is registered once per
operator and version, and only its error messages differ (they name the operator).

Version 1 applies to opsets 1 to 10, version 11 to opset 11, version 12 to opset 12 and
version 13 to opsets 13 and later. The output is always an int64 tensor; its shape is
the input's with the reduced axis set to 1 (``keepdims == 1``) or removed.

Unlike onnx's shape inference for version 1, version 1 here also requires ``axis`` to
be in ``[-r, r-1]``: onnx skips that check for opset 1-10 models and then silently
returns the input shape unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from onnx import AttributeProto, NodeProto, TensorProto, TypeProto

from ._registry import InferenceRule, register
from ._shape import keeps_reduced_dim, normalize_axis
from .errors import Issue, RuleError

__all__ = [
    "ARGMAX_ATTRIBUTES",
    "ARGMAX_INPUT_TYPES",
    "ARG_REDUCE_OPS",
    "argmax_v1",
    "argmax_v11",
    "argmax_v12",
    "argmax_v13",
    "argmin_v1",
    "argmin_v11",
    "argmin_v12",
    "argmin_v13",
]

#: The operators these rules type (default ONNX domain).
ARG_REDUCE_OPS: tuple[str, ...] = ("ArgMax", "ArgMin")

_NUMERIC = frozenset(
    {
        TensorProto.UINT8,
        TensorProto.UINT16,
        TensorProto.UINT32,
        TensorProto.UINT64,
        TensorProto.INT8,
        TensorProto.INT16,
        TensorProto.INT32,
        TensorProto.INT64,
        TensorProto.FLOAT16,
        TensorProto.FLOAT,
        TensorProto.DOUBLE,
    }
)

#: Element types accepted for the input, per version (the same for ArgMax and ArgMin).
ARGMAX_INPUT_TYPES: Mapping[int, frozenset[int]] = {
    1: _NUMERIC,
    11: _NUMERIC,
    12: _NUMERIC,
    13: _NUMERIC | {TensorProto.BFLOAT16},
}

#: Attributes, per version, with their defaults (the same for ArgMax and ArgMin).
ARGMAX_ATTRIBUTES: Mapping[int, Mapping[str, int]] = {
    1: {"axis": 0, "keepdims": 1},
    11: {"axis": 0, "keepdims": 1},
    12: {"axis": 0, "keepdims": 1, "select_last_index": 0},
    13: {"axis": 0, "keepdims": 1, "select_last_index": 0},
}

_TYPE_NAMES = {
    "sequence_type": "a sequence",
    "map_type": "a map",
    "optional_type": "an optional",
    "sparse_tensor_type": "a sparse tensor",
    "opaque_type": "an opaque type",
}


def _elem_name(elem_type: int) -> str:
    try:
        return TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"element type {elem_type}"


def _attribute_issue(attr: AttributeProto, op_type: str, version: int, opset: int) -> Issue:
    name = attr.name
    subject = f"attribute '{name}'"
    defaults = ARGMAX_ATTRIBUTES[version]
    if name == "select_last_index" and name not in defaults:
        return Issue(
            subject,
            f"set, but {op_type}-{version} (model opset {opset}) has no such attribute",
            "no select_last_index before opset 12",
        )
    if name not in defaults:
        return Issue(
            subject, f"not an attribute of {op_type}-{version}", "only " + ", ".join(defaults)
        )
    if attr.ref_attr_name:
        return Issue(
            subject,
            f"refers to function attribute '{attr.ref_attr_name}' outside a function",
            "an INT value",
        )
    return Issue(
        subject, f"of type {AttributeProto.AttributeType.Name(attr.type)}", "an INT attribute"
    )


# Output types already computed, keyed by (version, axis, keeps dim, serialized input type).
# ArgMax and ArgMin share the entries: a valid node's output type does not depend on
# which of the two it is. The cached TypeProto objects are shared: callers copy them and
# never modify them.
_CACHE: dict[tuple[int, int, bool, bytes], TypeProto] = {}
_CACHE_SIZE = 4096
_INT = AttributeProto.INT


def _arg_reduce(
    op_type: str,
    version: int,
    node: NodeProto,
    input_types: Sequence[TypeProto | None],
    opset: int,
) -> list[TypeProto | None]:
    """The rule of ``op_type`` (ArgMax or ArgMin) version ``version``; ``op_type`` only
    names the operator in error messages."""
    issues: list[Issue] = []
    axis = 0
    keepdims = 1
    known = ARGMAX_ATTRIBUTES[version]
    attrs = node.attribute
    for k in range(len(attrs)):
        attr = attrs[k]
        name = attr.name
        if name not in known or attr.type != _INT or attr.ref_attr_name:
            issues.append(_attribute_issue(attr, op_type, version, opset))
        elif name == "axis":
            axis = attr.i
        elif name == "keepdims":
            keepdims = attr.i

    inputs = node.input
    n_in = len(inputs)
    if n_in == 0 or not inputs[0]:
        issues.append(Issue("input 0 (data)", "missing", "one input tensor"))
    elif n_in > 1:
        issues.append(Issue("inputs", f"{n_in} inputs", "exactly one input"))
    outputs = node.output
    if len(outputs) != 1 or not outputs[0]:
        issues.append(Issue("outputs", f"{len(outputs)} output(s)", "exactly one, named, output"))

    in_type = input_types[0] if input_types else None
    if in_type is None or in_type.WhichOneof("value") is None:
        if issues:
            raise RuleError(*issues)
        out = TypeProto()
        out.tensor_type.elem_type = TensorProto.INT64
        return [out]

    keep = keeps_reduced_dim(keepdims)
    key = (version, axis, keep, in_type.SerializeToString())
    cached = _CACHE.get(key)
    if cached is not None and not issues:
        return [cached]

    kind = in_type.WhichOneof("value")
    in_tensor = in_type.tensor_type if kind == "tensor_type" else None
    if in_tensor is None:
        issues.append(Issue("input 0 type", _TYPE_NAMES.get(kind, kind), "a tensor"))
    reduced = None
    if in_tensor is not None:
        elem = in_tensor.elem_type
        allowed = ARGMAX_INPUT_TYPES[version]
        if elem != TensorProto.UNDEFINED and elem not in allowed:
            names = ", ".join(sorted(_elem_name(t) for t in allowed))
            issues.append(
                Issue(
                    "input 0 element type",
                    f"{_elem_name(elem)}, not allowed by {op_type}-{version} (model opset {opset})",
                    f"one of {names}",
                )
            )
        if in_tensor.HasField("shape"):
            rank = len(in_tensor.shape.dim)
            reduced = normalize_axis(axis, rank)
            if reduced is None:
                found = f"{axis}, outside [{-rank}, {rank - 1}] for an input of rank {rank}"
                if rank == 0:
                    expected = "an input of rank >= 1 (a scalar has no axis to reduce)"
                else:
                    expected = f"an integer in [{-rank}, {rank - 1}]"
                issues.append(Issue("attribute 'axis'", found, expected))

    if issues:
        raise RuleError(*issues)

    out = TypeProto()
    out_tensor = out.tensor_type
    out_tensor.elem_type = TensorProto.INT64
    if reduced is not None:
        out_tensor.shape.CopyFrom(in_tensor.shape)
        dims = out_tensor.shape.dim
        if keep:
            dims[reduced].Clear()
            dims[reduced].dim_value = 1
        else:
            del dims[reduced]
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[key] = out
    return [out]


#: What each version adds, for the rules' docstrings.
_VERSION_NOTES: Mapping[int, str] = {
    1: "opsets 1-10: attributes axis, keepdims; no bfloat16",
    11: "opset 11: attributes axis, keepdims; no bfloat16",
    12: "opset 12: adds select_last_index; no bfloat16",
    13: "opsets 13+: adds bfloat16 inputs",
}


def _registered_rule(op_type: str, version: int) -> InferenceRule:
    """Register and return the rule of ``op_type`` version ``version``."""

    def rule(
        node: NodeProto, input_types: Sequence[TypeProto | None], opset: int
    ) -> list[TypeProto | None]:
        return _arg_reduce(op_type, version, node, input_types, opset)

    rule.__name__ = rule.__qualname__ = f"{op_type.lower()}_v{version}"
    rule.__doc__ = f"{op_type}-{version} ({_VERSION_NOTES[version]})."
    return register(op_type, since_version=version)(rule)


argmax_v1 = _registered_rule("ArgMax", 1)
argmax_v11 = _registered_rule("ArgMax", 11)
argmax_v12 = _registered_rule("ArgMax", 12)
argmax_v13 = _registered_rule("ArgMax", 13)

argmin_v1 = _registered_rule("ArgMin", 1)
argmin_v11 = _registered_rule("ArgMin", 11)
argmin_v12 = _registered_rule("ArgMin", 12)
argmin_v13 = _registered_rule("ArgMin", 13)

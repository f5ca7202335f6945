"""Fast check that onnx's pass already gave every ArgMax exactly the type of our rule.

Reading thousands of nodes through the protobuf Python API costs about as much as
onnx's whole C++ pass. So for plain graphs, the serialized result of onnx's pass is
read through minimal protobuf message types that expose nodes and values as raw bytes,
and all per-node work is done by ``map`` over C-implemented callables. Our rule is
applied once per distinct (attributes, input type, declared output type) signature and
its serialized output compared with the type onnx wrote for every ArgMax.

The check answers "verified" (with, for the ArgMax outputs where our type differs from
onnx's without telling more, our types to write) or "not verified"; in the second case
the caller runs the exact, node-by-node walk. It declines as soon as anything is
unusual: model-local functions, other registered rules used by the model, an ArgMax
input name of 128 bytes or more, anything but INT attributes and a default domain after
the op_type, an ArgMax whose input is not a graph input or a value onnx typed in the
main graph, a node holding an ArgMax in a subgraph, an ArgMax type of ours telling more
than onnx's, or a corrected ArgMax type feeding another ArgMax.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Sequence
from itertools import repeat

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError
from onnx import ModelProto, NodeProto, TypeProto

from ._registry import _RULES, get_rule
from ._types import adds_information, merge_types
from .errors import RuleError

__all__ = ["argmax_types_verified"]

_OP_TYPE = b'"\x06ArgMax'  # NodeProto.op_type (field 4) == "ArgMax"
_FIRST = operator.itemgetter(0)
_SECOND = operator.itemgetter(1)


@functools.cache
def _slim_classes() -> tuple[type, type, type, type]:
    """Minimal message types reading serialized ONNX without building it.

    ``Model`` reads a ModelProto's main-graph nodes, inputs, outputs and value_info as
    raw serialized entries, skipping everything else. ``Values`` reads a concatenation
    of serialized ValueInfoProto: protobuf merges repeated fields, so its ``name`` and
    ``type`` lists hold every entry's name and serialized TypeProto, in order. ``Nodes``
    and ``OpTypes`` do the same for the inputs, outputs and op_types of concatenated
    NodeProto.
    """
    fdp = descriptor_pb2.FileDescriptorProto(
        name="shape_inference_slim.proto", package="shape_inference_slim"
    )
    field = descriptor_pb2.FieldDescriptorProto
    repeated_bytes = {"type": field.TYPE_BYTES, "label": field.LABEL_REPEATED}
    values = fdp.message_type.add(name="Values")
    values.field.add(name="name", number=1, **repeated_bytes)
    values.field.add(name="type", number=2, **repeated_bytes)
    nodes = fdp.message_type.add(name="Nodes")
    nodes.field.add(name="input", number=1, **repeated_bytes)
    nodes.field.add(name="output", number=2, **repeated_bytes)
    op_types = fdp.message_type.add(name="OpTypes")
    op_types.field.add(name="op_type", number=4, **repeated_bytes)
    graph = fdp.message_type.add(name="Graph")
    for name, number in (("node", 1), ("input", 11), ("output", 12), ("value_info", 13)):
        graph.field.add(name=name, number=number, **repeated_bytes)
    model = fdp.message_type.add(name="Model")
    model.field.add(
        name="graph",
        number=7,
        type=field.TYPE_MESSAGE,
        label=field.LABEL_OPTIONAL,
        type_name=".shape_inference_slim.Graph",
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return tuple(
        message_factory.GetMessageClass(pool.FindMessageTypeByName(f"shape_inference_slim.{n}"))
        for n in ("Model", "Values", "Nodes", "OpTypes")
    )


def _MODEL() -> type:
    return _slim_classes()[0]


def _VALUES() -> type:
    return _slim_classes()[1]


def _NODES() -> type:
    return _slim_classes()[2]


def _OP_TYPES() -> type:
    return _slim_classes()[3]


def _value_types(entries: Sequence[bytes]) -> dict[bytes, bytes] | None:
    """name -> serialized type of serialized ValueInfoProto entries, None if irregular."""
    entries = list(entries)
    values = _VALUES().FromString(b"".join(entries))
    names, types = list(values.name), list(values.type)
    if len(names) != len(entries) or len(types) != len(entries):
        return None  # an entry without a type, or with a repeated field
    found = dict(zip(names, types, strict=True))
    return found if len(found) == len(entries) else None


def _preconditions(model: ModelProto, data: bytes) -> bool:
    """Cheap reasons to leave the model to the exact walk.

    Subgraphs and custom domains need no special case: an ArgMax inside a subgraph is
    found in the bytes too, and its values are not among the main graph's, so it
    fails the check below unless everything about it is plainly right.
    """
    if len(model.functions):
        return False
    for domain, op_type in _RULES:
        if (domain, op_type) == ("", "ArgMax"):
            continue
        raw = op_type.encode()
        if len(raw) >= 128 or b'"' + bytes([len(raw)]) + raw in data:
            return False
    return True


def _declared(model: ModelProto) -> tuple[dict[bytes, bytes], set[bytes]]:
    """Declared types of the original graph (name -> serialized type); value_info names."""
    graph = model.graph
    declared: dict[bytes, bytes] = {}
    names: set[bytes] = set()
    for vi in graph.value_info:
        names.add(vi.name.encode())
        if vi.HasField("type"):
            declared.setdefault(vi.name.encode(), vi.type.SerializeToString())
    for vi in graph.output:
        if vi.HasField("type"):
            declared.setdefault(vi.name.encode(), vi.type.SerializeToString())
    return declared, names


def _expected(tail: bytes, in_type: bytes, declared: bytes | None, opset: int) -> bytes | None:
    """Serialized output type our rule gives, or None unless the node is plainly valid.

    ``tail`` is the node's serialization from its op_type field on: op_type, INT
    attributes and an optional default domain, nothing else.
    """
    try:
        parsed = NodeProto.FromString(tail)
        input_type = TypeProto.FromString(in_type)
    except DecodeError:
        return None
    node = NodeProto(op_type="ArgMax")
    node.attribute.extend(parsed.attribute)
    if parsed.HasField("domain"):
        node.domain = parsed.domain
    if node.SerializeToString() != tail or node.domain not in ("", "ai.onnx"):
        return None  # some other field, or not in canonical form
    found = get_rule("ArgMax", "", opset)
    if found is None:
        return None
    node.input.append("x")
    node.output.append("y")
    if input_type.SerializeToString() != in_type:
        return None
    try:
        outputs = found[1](node, [input_type], opset)
    except RuleError:
        return None
    if len(outputs) != 1 or outputs[0] is None:
        return None
    out = outputs[0]
    if declared is not None:
        out, conflict = merge_types(out, TypeProto.FromString(declared))
        if conflict is not None:
            return None
    return out.SerializeToString()


def argmax_types_verified(
    model: ModelProto, result: bytes, opset: int | None
) -> dict[str, bytes] | None:
    """Check every ArgMax of ``model`` against the types onnx gave it in ``result``.

    Returns None if the check cannot conclude (the exact walk must run), else the
    serialized types to write over onnx's for the ArgMax outputs where ours differ
    (usually none), every ArgMax being valid and nothing else needing a rule.

    Per-node work is done with ``map`` over C-implemented callables: a Python loop over
    thousands of nodes would cost as much as onnx's whole pass.

    Args:
        model: the model given to onnx's pass.
        result: the serialized model onnx's pass returned for it.
        opset: the model's opset for the default domain (None if not imported).
    """
    if opset is None or not _preconditions(model, result):
        return None
    graph = _MODEL().FromString(result).graph
    # The main graph's ArgMax nodes (each node has exactly one op_type). Every occurrence
    # of the op_type field's bytes must be theirs: one in a subgraph, a function or a
    # name makes the check decline.
    nodes = list(graph.node)
    op_types = list(_OP_TYPES().FromString(b"".join(nodes)).op_type)
    if len(op_types) != len(nodes):
        return None
    argmax = list(itertools.compress(nodes, map(b"ArgMax".__eq__, op_types)))
    if len(argmax) != result.count(_OP_TYPE):
        return None
    if not argmax:
        return {}
    # Their single input and output. Each node must start with one input field (tag
    # 0x0a, a one-byte length) directly followed by an output field (tag 0x12): then it
    # has exactly one input, at least one output, and with as many outputs as nodes,
    # exactly one output; so the merged lists below line up with the nodes.
    heads = _NODES().FromString(b"".join(argmax))
    inputs, outputs = list(heads.input), list(heads.output)
    if len(inputs) != len(argmax) or len(outputs) != len(argmax):
        return None
    lengths = list(map(len, inputs))
    if (
        max(lengths) >= 0x80
        or not all(map(operator.eq, map(_FIRST, argmax), repeat(0x0A)))
        or list(map(_SECOND, argmax)) != lengths
        or not all(
            map(
                operator.eq, map(bytes.__getitem__, argmax, map((2).__add__, lengths)), repeat(0x12)
            )
        )
    ):
        return None
    # From the op_type field on (its only occurrence in the node). Protobuf writes
    # fields in number order: only a name may come between the output and it.
    tails = list(
        map(
            bytes.__getitem__,
            argmax,
            map(slice, map(bytes.find, argmax, repeat(_OP_TYPE)), repeat(None)),
        )
    )

    inferred = _value_types(graph.value_info)
    graph_inputs = _value_types(graph.input)
    graph_outputs = _value_types(graph.output)
    if inferred is None or graph_inputs is None or graph_outputs is None:
        return None
    declared, declared_names = _declared(model)

    # Input types: graph inputs, or values onnx typed (not merely declared ones, which
    # might be produced by nothing).
    input_types = inferred
    if declared_names or graph_inputs:
        input_types = dict(inferred)
        for name in declared_names:
            input_types.pop(name, None)
        input_types.update(graph_inputs)
    in_types = list(map(input_types.get, inputs))
    if None in in_types:
        return None
    have = list(map(inferred.get, outputs))
    if None in have:
        have = [
            graph_outputs.get(name) if found is None else found
            for name, found in zip(outputs, have, strict=True)
        ]
    declared_types = list(map(declared.get, outputs)) if declared else [None] * len(outputs)

    keys = list(zip(tails, in_types, declared_types, strict=True))
    expected = {key: _expected(*key, opset) for key in set(keys)}
    if None in expected.values():
        return None
    want = list(map(expected.__getitem__, keys))
    if want == have:
        return {}
    # Where onnx's type differs from ours (typically an ``unk__`` name onnx made up for
    # an unknown dim), ours replaces it, as the walk would. If ours told more than
    # onnx's, the walk would rerun onnx's pass to spread it: leave that to the walk.
    fixes: dict[bytes, bytes] = {}
    harmless: dict[tuple[bytes, bytes], bool] = {}
    for name, ours, theirs in zip(outputs, want, have, strict=True):
        if ours == theirs:
            continue
        if theirs is None:
            return None
        pair = (ours, theirs)
        if pair not in harmless:
            harmless[pair] = not adds_information(
                TypeProto.FromString(ours), TypeProto.FromString(theirs)
            )
        if not harmless[pair]:
            return None
        fixes[name] = ours
    if not fixes.keys().isdisjoint(inputs):
        return None  # a corrected type feeds another ArgMax: the walk handles the chain
    return {name.decode(): ours for name, ours in fixes.items()}

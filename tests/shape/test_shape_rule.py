"""The ArgMax and ArgMin shape rule and per-node entry points, checked against onnx's
C++ inference (``infer_node_outputs``) and onnx's operator schemas, for both operators."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import AttributeProto, TensorProto, helper
from onnx.shape_inference import infer_node_outputs

import shape_inference as si
from shape_inference._argmax_rule import ARGMAX_ATTRIBUTES, ARGMAX_INPUT_TYPES

VERSIONS = (1, 11, 12, 13)
OP_TYPES = ("ArgMax", "ArgMin")
OUTPUT_TYPE = {"ArgMax": si.argmax_output_type, "ArgMin": si.argmin_output_type}
DIMS = st.one_of(
    st.integers(min_value=0, max_value=9), st.sampled_from(["N", "batch", "S"]), st.none()
)


def schema_types(opset: int, op_type: str = "ArgMax") -> set[int]:
    """Element types onnx's ``op_type`` schema allows at ``opset``."""
    (constraint,) = onnx.defs.get_schema(op_type, opset).type_constraints
    names = (s.removeprefix("tensor(").removesuffix(")") for s in constraint.allowed_type_strs)
    return {TensorProto.DataType.Value(name.upper()) for name in names}


def tensor_type(elem: int, shape):
    return helper.make_tensor_type_proto(elem, shape)


def dims_of(type_proto: onnx.TypeProto):
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        return None
    out = []
    for d in tensor.shape.dim:
        if d.HasField("dim_value"):
            out.append(d.dim_value)
        elif d.HasField("dim_param"):
            out.append(d.dim_param)
        else:
            out.append(None)
    return out


def onnx_output(opset: int, node: onnx.NodeProto, input_type: onnx.TypeProto):
    """onnx's own C++ inference for one node."""
    schema = onnx.defs.get_schema(node.op_type, opset)
    return infer_node_outputs(schema, node, {node.input[0]: input_type})[node.output[0]]


# ---------------------------------------------------------------- argmax_output_shape


@settings(max_examples=300, deadline=None)
@given(
    shape=st.lists(DIMS, min_size=1, max_size=6),
    data=st.data(),
    keepdims=st.sampled_from([0, 1, 2, -1]),
    op_type=st.sampled_from(OP_TYPES),
)
def test_shape_matches_onnx(shape, data, keepdims, op_type):
    """``argmax_output_shape`` gives ArgMax's and ArgMin's output shape alike."""
    rank = len(shape)
    axis = data.draw(st.integers(min_value=-rank, max_value=rank - 1))
    node = helper.make_node(op_type, ["x"], ["y"], axis=axis, keepdims=keepdims)
    expected = dims_of(onnx_output(13, node, tensor_type(TensorProto.FLOAT, shape)))
    assert si.argmax_output_shape(shape, axis=axis, keepdims=keepdims) == expected
    assert si.argmax_output_shape(tuple(shape), axis=axis, keepdims=keepdims) == tuple(expected)


@settings(max_examples=100, deadline=None)
@given(
    shape=st.lists(DIMS, min_size=0, max_size=5),
    axis=st.integers(-12, 12),
    op_type=st.sampled_from(OP_TYPES),
)
def test_shape_axis_out_of_range_rejected_like_onnx(shape, axis, op_type):
    rank = len(shape)
    if -rank <= axis < rank:
        return
    node = helper.make_node(op_type, ["x"], ["y"], axis=axis)
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx_output(13, node, tensor_type(TensorProto.FLOAT, shape))
    with pytest.raises(ValueError, match="outside"):
        si.argmax_output_shape(shape, axis=axis)


def test_shape_defaults_and_unknown_rank():
    assert si.argmax_output_shape([2, "N", None]) == [1, "N", None]
    assert si.argmax_output_shape([2, "N", None], keepdims=0) == ["N", None]
    assert si.argmax_output_shape(None, axis=5) is None
    assert si.argmax_output_shape((np.int64(4), 3), axis=np.int32(-1)) == (4, 1)


def test_shape_scalar_rejected():
    # A scalar has no axis: onnx returns a scalar when axis is not given, this package
    # rejects it (the default axis 0 is outside [-0, -1]).
    with pytest.raises(ValueError, match="rank 0"):
        si.argmax_output_shape([])


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"input_shape": [2, 3], "axis": True}, TypeError),
        ({"input_shape": [2, 3], "axis": 1.0}, TypeError),
        ({"input_shape": [2, 3], "keepdims": "1"}, TypeError),
        ({"input_shape": "NC"}, TypeError),
        ({"input_shape": [2, 3.5]}, TypeError),
        ({"input_shape": [2, -3]}, ValueError),
    ],
)
def test_shape_bad_arguments(kwargs, error):
    with pytest.raises(error):
        si.argmax_output_shape(**kwargs)


# ---------------------------------------------------------------- argmax/argmin_output_type


@pytest.mark.parametrize("op_type", OP_TYPES)
@pytest.mark.parametrize("opset", [1, 7, 11, 12, 13, 18])
@pytest.mark.parametrize("keepdims", [None, 0, 1])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, -3])
def test_node_type_matches_onnx(opset, axis, keepdims, op_type):
    attrs = {k: v for k, v in (("axis", axis), ("keepdims", keepdims)) if v is not None}
    node = helper.make_node(op_type, ["x"], ["y"], name="am", **attrs)
    for elem in sorted(schema_types(opset, op_type)):
        input_type = tensor_type(elem, ["batch", None, 7])
        assert OUTPUT_TYPE[op_type](node, input_type, opset) == onnx_output(opset, node, input_type)


@pytest.mark.parametrize("op_type", OP_TYPES)
@pytest.mark.parametrize("opset", [12, 13])
def test_node_type_select_last_index(opset, op_type):
    node = helper.make_node(op_type, ["x"], ["y"], axis=1, keepdims=0, select_last_index=1)
    input_type = tensor_type(TensorProto.INT32, [3, "S", 5])
    assert OUTPUT_TYPE[op_type](node, input_type, opset) == onnx_output(opset, node, input_type)


@pytest.mark.parametrize("op_type", OP_TYPES)
@pytest.mark.parametrize("opset", VERSIONS)
def test_node_type_unknown_rank_and_unknown_type(opset, op_type):
    node = helper.make_node(op_type, ["x"], ["y"], axis=3)
    no_shape = onnx.TypeProto()
    no_shape.tensor_type.elem_type = TensorProto.FLOAT
    assert OUTPUT_TYPE[op_type](node, no_shape, opset) == onnx_output(opset, node, no_shape)
    unknown = OUTPUT_TYPE[op_type](node, None, opset)
    assert unknown.tensor_type.elem_type == TensorProto.INT64
    assert not unknown.tensor_type.HasField("shape")


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_node_type_does_not_copy_denotation(op_type):
    input_type = tensor_type(TensorProto.FLOAT, [2, 3])
    input_type.denotation = "TENSOR"
    input_type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    node = helper.make_node(op_type, ["x"], ["y"], axis=1)
    assert OUTPUT_TYPE[op_type](node, input_type, 13) == onnx_output(13, node, input_type)


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_node_type_opset1_axis_is_checked_unlike_onnx(op_type):
    node = helper.make_node(op_type, ["x"], ["y"], axis=5)
    input_type = tensor_type(TensorProto.FLOAT, [2, 3])
    # onnx skips the range check for version 1 and returns the input shape unchanged.
    assert dims_of(onnx_output(1, node, input_type)) == [2, 3]
    with pytest.raises(si.ShapeInferenceError, match=r"outside \[-2, 1\]"):
        OUTPUT_TYPE[op_type](node, input_type, 1)


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_node_type_errors_name_the_node_and_the_operator(op_type):
    node = helper.make_node(op_type, ["x"], ["y"], name="pick", select_last_index=1)
    with pytest.raises(si.ShapeInferenceError) as info:
        OUTPUT_TYPE[op_type](node, tensor_type(TensorProto.BFLOAT16, [2, 3]), 11)
    assert [(p.node, p.op_type, p.subject) for p in info.value.problems] == [
        ("pick", op_type, "attribute 'select_last_index'"),
        ("pick", op_type, "input 0 element type"),
    ]
    message = str(info.value)
    assert f"pick ({op_type}): attribute 'select_last_index': set, but {op_type}-11" in message
    assert f"bfloat16, not allowed by {op_type}-11 (model opset 11)" in message
    node.name = ""  # an unnamed node is named by its operator
    with pytest.raises(si.ShapeInferenceError) as info:
        OUTPUT_TYPE[op_type](node, tensor_type(TensorProto.FLOAT, [2, 3]), 11)
    (problem,) = info.value.problems
    assert str(problem).startswith(f"{op_type} ({op_type}): attribute 'select_last_index'")


@pytest.mark.parametrize(("op_type", "other"), [("ArgMax", "ArgMin"), ("ArgMin", "ArgMax")])
def test_node_type_rejects_other_operators(op_type, other):
    output_type = OUTPUT_TYPE[op_type]
    with pytest.raises(ValueError, match=f"expected an {op_type} node .* got ai.onnx::{other}"):
        output_type(helper.make_node(other, ["x"], ["y"]), None, 13)
    with pytest.raises(ValueError, match=op_type):
        node = helper.make_node(op_type, ["x"], ["y"], domain="com.example")
        output_type(node, None, 13)
    with pytest.raises(TypeError):
        output_type(op_type, None, 13)


# ---------------------------------------------------------------- tables vs onnx's schemas


@pytest.mark.parametrize("op_type", OP_TYPES)
@pytest.mark.parametrize("version", VERSIONS)
def test_allowed_input_types_match_schema(version, op_type):
    """One table serves both operators: it must match each one's schema."""
    schema = onnx.defs.get_schema(op_type, version)
    assert schema.since_version == version
    assert ARGMAX_INPUT_TYPES[version] == schema_types(version, op_type)


@pytest.mark.parametrize("op_type", OP_TYPES)
@pytest.mark.parametrize("version", VERSIONS)
def test_attributes_match_schema(version, op_type):
    schema = onnx.defs.get_schema(op_type, version)
    assert set(ARGMAX_ATTRIBUTES[version]) == set(schema.attributes)
    for name, default in ARGMAX_ATTRIBUTES[version].items():
        attr = schema.attributes[name]
        assert attr.type == AttributeProto.INT
        assert attr.default_value.i == default


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_rule_version_per_opset_matches_schema(op_type):
    for opset in range(1, onnx.defs.onnx_opset_version() + 1):
        since, _ = si.get_rule(op_type, "", opset)
        assert since == onnx.defs.get_schema(op_type, opset).since_version, opset
        assert si.get_rule(op_type, "ai.onnx", opset)[0] == since


def test_both_operators_registered_for_the_same_versions():
    registered = si.registered()
    for op_type in OP_TYPES:
        assert [v for d, op, v in registered if (d, op) == ("", op_type)] == list(VERSIONS)
    assert si.get_rule("ArgMin", "", 13)[1] is not si.get_rule("ArgMax", "", 13)[1]


@pytest.mark.parametrize("op_type", OP_TYPES)
@pytest.mark.parametrize("opset", [1, 11, 12, 13])
def test_every_element_type_accepted_or_rejected_like_schema(opset, op_type):
    allowed = schema_types(opset, op_type)
    node = helper.make_node(op_type, ["x"], ["y"], name="am")
    for elem in TensorProto.DataType.values():
        if elem == TensorProto.UNDEFINED:
            continue
        input_type = tensor_type(elem, [2, 3])
        if elem in allowed:
            assert OUTPUT_TYPE[op_type](node, input_type, opset).tensor_type.elem_type == 7
        else:
            with pytest.raises(si.ShapeInferenceError) as info:
                OUTPUT_TYPE[op_type](node, input_type, opset)
            (problem,) = info.value.problems
            assert (problem.op_type, problem.subject) == (op_type, "input 0 element type")
            with pytest.raises(onnx.checker.ValidationError):
                onnx_output(opset, node, input_type)

"""ArgMax's shape rule and per-node entry point, checked against onnx's C++ inference
(``infer_node_outputs``) and onnx's operator schemas."""

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
DIMS = st.one_of(
    st.integers(min_value=0, max_value=9), st.sampled_from(["N", "batch", "S"]), st.none()
)


def schema_types(opset: int) -> set[int]:
    """Element types onnx's ArgMax schema allows at ``opset``."""
    (constraint,) = onnx.defs.get_schema("ArgMax", opset).type_constraints
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
    schema = onnx.defs.get_schema("ArgMax", opset)
    return infer_node_outputs(schema, node, {node.input[0]: input_type})[node.output[0]]


# ---------------------------------------------------------------- argmax_output_shape


@settings(max_examples=300, deadline=None)
@given(
    shape=st.lists(DIMS, min_size=1, max_size=6),
    data=st.data(),
    keepdims=st.sampled_from([0, 1, 2, -1]),
)
def test_shape_matches_onnx(shape, data, keepdims):
    rank = len(shape)
    axis = data.draw(st.integers(min_value=-rank, max_value=rank - 1))
    node = helper.make_node("ArgMax", ["x"], ["y"], axis=axis, keepdims=keepdims)
    expected = dims_of(onnx_output(13, node, tensor_type(TensorProto.FLOAT, shape)))
    assert si.argmax_output_shape(shape, axis=axis, keepdims=keepdims) == expected
    assert si.argmax_output_shape(tuple(shape), axis=axis, keepdims=keepdims) == tuple(expected)


@settings(max_examples=100, deadline=None)
@given(shape=st.lists(DIMS, min_size=0, max_size=5), axis=st.integers(-12, 12))
def test_shape_axis_out_of_range_rejected_like_onnx(shape, axis):
    rank = len(shape)
    if -rank <= axis < rank:
        return
    node = helper.make_node("ArgMax", ["x"], ["y"], axis=axis)
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


# ---------------------------------------------------------------- argmax_output_type


@pytest.mark.parametrize("opset", [1, 7, 11, 12, 13, 18])
@pytest.mark.parametrize("keepdims", [None, 0, 1])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, -3])
def test_node_type_matches_onnx(opset, axis, keepdims):
    attrs = {k: v for k, v in (("axis", axis), ("keepdims", keepdims)) if v is not None}
    node = helper.make_node("ArgMax", ["x"], ["y"], name="am", **attrs)
    for elem in sorted(schema_types(opset)):
        input_type = tensor_type(elem, ["batch", None, 7])
        assert si.argmax_output_type(node, input_type, opset) == onnx_output(
            opset, node, input_type
        )


@pytest.mark.parametrize("opset", [12, 13])
def test_node_type_select_last_index(opset):
    node = helper.make_node("ArgMax", ["x"], ["y"], axis=1, keepdims=0, select_last_index=1)
    input_type = tensor_type(TensorProto.INT32, [3, "S", 5])
    assert si.argmax_output_type(node, input_type, opset) == onnx_output(opset, node, input_type)


@pytest.mark.parametrize("opset", VERSIONS)
def test_node_type_unknown_rank_and_unknown_type(opset):
    node = helper.make_node("ArgMax", ["x"], ["y"], axis=3)
    no_shape = onnx.TypeProto()
    no_shape.tensor_type.elem_type = TensorProto.FLOAT
    assert si.argmax_output_type(node, no_shape, opset) == onnx_output(opset, node, no_shape)
    unknown = si.argmax_output_type(node, None, opset)
    assert unknown.tensor_type.elem_type == TensorProto.INT64
    assert not unknown.tensor_type.HasField("shape")


def test_node_type_does_not_copy_denotation():
    input_type = tensor_type(TensorProto.FLOAT, [2, 3])
    input_type.denotation = "TENSOR"
    input_type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    node = helper.make_node("ArgMax", ["x"], ["y"], axis=1)
    assert si.argmax_output_type(node, input_type, 13) == onnx_output(13, node, input_type)


def test_node_type_opset1_axis_is_checked_unlike_onnx():
    node = helper.make_node("ArgMax", ["x"], ["y"], axis=5)
    input_type = tensor_type(TensorProto.FLOAT, [2, 3])
    # onnx skips the range check for ArgMax-1 and returns the input shape unchanged.
    assert dims_of(onnx_output(1, node, input_type)) == [2, 3]
    with pytest.raises(si.ShapeInferenceError, match=r"outside \[-2, 1\]"):
        si.argmax_output_type(node, input_type, 1)


def test_node_type_rejects_other_operators():
    with pytest.raises(ValueError, match="ArgMax"):
        si.argmax_output_type(helper.make_node("ArgMin", ["x"], ["y"]), None, 13)
    with pytest.raises(ValueError, match="ArgMax"):
        node = helper.make_node("ArgMax", ["x"], ["y"], domain="com.example")
        si.argmax_output_type(node, None, 13)
    with pytest.raises(TypeError):
        si.argmax_output_type("ArgMax", None, 13)


# ---------------------------------------------------------------- tables vs onnx's schemas


@pytest.mark.parametrize("version", VERSIONS)
def test_allowed_input_types_match_schema(version):
    schema = onnx.defs.get_schema("ArgMax", version)
    assert schema.since_version == version
    assert ARGMAX_INPUT_TYPES[version] == schema_types(version)


@pytest.mark.parametrize("version", VERSIONS)
def test_attributes_match_schema(version):
    schema = onnx.defs.get_schema("ArgMax", version)
    assert set(ARGMAX_ATTRIBUTES[version]) == set(schema.attributes)
    for name, default in ARGMAX_ATTRIBUTES[version].items():
        attr = schema.attributes[name]
        assert attr.type == AttributeProto.INT
        assert attr.default_value.i == default


def test_rule_version_per_opset_matches_schema():
    for opset in range(1, onnx.defs.onnx_opset_version() + 1):
        since, _ = si.get_rule("ArgMax", "", opset)
        assert since == onnx.defs.get_schema("ArgMax", opset).since_version, opset
        assert si.get_rule("ArgMax", "ai.onnx", opset)[0] == since


@pytest.mark.parametrize("opset", [1, 11, 12, 13])
def test_every_element_type_accepted_or_rejected_like_schema(opset):
    allowed = schema_types(opset)
    node = helper.make_node("ArgMax", ["x"], ["y"], name="am")
    for elem in TensorProto.DataType.values():
        if elem == TensorProto.UNDEFINED:
            continue
        input_type = tensor_type(elem, [2, 3])
        if elem in allowed:
            assert si.argmax_output_type(node, input_type, opset).tensor_type.elem_type == 7
        else:
            with pytest.raises(si.ShapeInferenceError) as info:
                si.argmax_output_type(node, input_type, opset)
            (problem,) = info.value.problems
            assert problem.subject == "input 0 element type"
            with pytest.raises(onnx.checker.ValidationError):
                onnx_output(opset, node, input_type)

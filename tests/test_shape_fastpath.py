"""The fast check (reading onnx's serialized result) against the exact node-by-node walk.

Whatever the model, inference with the fast check enabled must give exactly what the
walk alone gives (same model, or same problems); the check must accept plain models
and decline the unusual ones."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

import shape_inference as si
from shape_inference import _fast, _graph
from shape_inference.bench import build_chain_model

FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64


def vi(name, elem=FLOAT, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def fast_check(model: onnx.ModelProto) -> dict[str, bytes] | None:
    data = _graph._onnx_pass_bytes(model)
    return _fast.argmax_types_verified(model, data, _graph._Engine(model, False).model_opsets[""])


def verified(model: onnx.ModelProto) -> bool:
    """Verified, with no type to correct."""
    return fast_check(model) == {}


def outcome(model: onnx.ModelProto, fast: bool):
    try:
        return _graph.infer(model, typings=False, fast=fast)[0]
    except si.ShapeInferenceError as exc:
        return exc.problems


def assert_same_outcome(model: onnx.ModelProto) -> None:
    assert outcome(model, fast=True) == outcome(model, fast=False)


def chain(input_name="x", output_name="y", node_name="am", shape=("N", 3, 4), mid="c", **attrs):
    nodes = [
        helper.make_node("Cast", [input_name], [mid], name="cast", to=TensorProto.FLOAT16),
        helper.make_node("ArgMax", [mid], [output_name], name=node_name, axis=1, **attrs),
    ]
    return helper.make_model(
        helper.make_graph(
            nodes, "g", [vi(input_name, FLOAT, list(shape))], [vi(output_name, INT64, None)]
        ),
        opset_imports=[helper.make_opsetid("", 13)],
    )


def direct(shape):
    """ArgMax straight on the graph input."""
    node = helper.make_node("ArgMax", ["x"], ["y"], name="am", axis=1)
    graph = helper.make_graph([node], "g", [vi("x", FLOAT, shape)], [vi("y", INT64, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_accepts_the_benchmark_model():
    model = build_chain_model(400)
    assert verified(model)
    assert_same_outcome(model)


@pytest.mark.parametrize("declared", [["N", 1, 4], [5, 1, 4], ["B", None, 4], None])
def test_accepts_plain_model_with_compatible_declared_output(declared):
    model = chain()
    model.graph.output[0].type.CopyFrom(helper.make_tensor_type_proto(INT64, declared))
    assert verified(model)
    assert_same_outcome(model)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: chain(mid="i" * 200), id="200-byte input name"),
        pytest.param(lambda: chain(node_name='sneaky"\x06ArgMax'), id="op_type bytes in name"),
        pytest.param(lambda: chain(select_last_index=2.0), id="FLOAT attribute"),
        pytest.param(lambda: chain(axis2=1), id="unknown attribute"),
    ],
)
def test_declines_unusual_models_and_agrees(make):
    model = make()
    assert not verified(model)
    assert_same_outcome(model)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: chain(output_name="out\x01put"), id="control char in a name"),
        pytest.param(lambda: chain(output_name="o" * 200), id="200-byte output name"),
        pytest.param(lambda: chain(node_name=""), id="unnamed"),
        pytest.param(lambda: chain(mid="i" * 127), id="127-byte input name"),
    ],
)
def test_accepts_odd_but_valid_names(make):
    model = make()
    assert verified(model)
    assert_same_outcome(model)


def test_corrects_unknown_dims_named_by_onnx():
    model = direct(shape=[None, 3])
    (theirs,) = onnx.shape_inference.infer_shapes(model).graph.output
    assert theirs.type.tensor_type.shape.dim[0].dim_param.startswith("unk__")
    fixes = fast_check(model)
    assert set(fixes) == {"y"}
    (ours,) = outcome(model, fast=True).graph.output
    assert not ours.type.tensor_type.shape.dim[0].HasField("dim_param")
    assert_same_outcome(model)


def test_declines_correction_feeding_another_argmax():
    node = helper.make_node("ArgMax", ["y"], ["z"], name="am2", axis=0)
    model = direct(shape=[None, 3])
    model.graph.node.append(node)
    model.graph.output[0].name = "z"
    assert fast_check(model) is None
    assert_same_outcome(model)


def test_declines_doc_string():
    model = chain()
    model.graph.node[1].doc_string = "picks the class"
    assert not verified(model)
    assert_same_outcome(model)


def test_accepts_graph_input_with_known_dims():
    model = direct(shape=["N", 3])
    assert verified(model)
    assert_same_outcome(model)


def test_declines_subgraph_argmax():
    branch = helper.make_graph(
        [helper.make_node("ArgMax", ["x"], ["t"], name="inner", axis=1)], "b", [], [vi("t", INT64)]
    )
    model = helper.make_model(
        helper.make_graph(
            [helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)],
            "g",
            [vi("x", FLOAT, [2, 3]), vi("c", TensorProto.BOOL, [])],
            [vi("y", INT64)],
        ),
        opset_imports=[helper.make_opsetid("", 13)],
    )
    assert not verified(model)
    assert_same_outcome(model)


def test_declines_input_only_declared():
    model = chain()
    model.graph.node[1].input[0] = "ghost"
    model.graph.value_info.append(vi("ghost", FLOAT, [2, 3]))
    assert not verified(model)
    problems = outcome(model, fast=True)
    assert [p.subject for p in problems] == ["input 0 'ghost'"]
    assert_same_outcome(model)


def test_declines_initializer_input():
    model = chain()
    model.graph.node[1].input[0] = "w"
    model.graph.initializer.append(helper.make_tensor("w", FLOAT, [2, 2], [1.0, 2.0, 3.0, 4.0]))
    assert not verified(model)
    assert_same_outcome(model)


@pytest.mark.parametrize(
    "declared",
    [helper.make_tensor_type_proto(INT64, ["N", 1, 5]), helper.make_tensor_type_proto(INT64, [1])],
)
def test_conflicting_declaration_gives_the_same_problems(declared):
    model = chain()
    model.graph.output[0].type.CopyFrom(declared)
    assert not verified(model)
    problems = outcome(model, fast=True)
    assert [p.subject for p in problems] == ["output 'y' type"]
    assert_same_outcome(model)


def test_invalid_nodes_give_the_same_problems():
    for attrs in ({"axis": 9}, {"keepdims": "x"}):
        model = chain()
        model.graph.node[1].ClearField("attribute")
        model.graph.node[1].attribute.extend(helper.make_attribute(k, v) for k, v in attrs.items())
        assert not verified(model)
        assert isinstance(outcome(model, fast=True), tuple)
        assert_same_outcome(model)


def test_declines_models_with_functions_or_custom_rules():
    function = helper.make_function(
        "local", "Id", ["a"], ["b"], [helper.make_node("Identity", ["a"], ["b"])], []
    )
    model = chain()
    model.functions.append(function)
    assert fast_check(model) is None

    @si.register("Cast", since_version=1)
    def cast(node, input_types, opset):
        return [None]

    try:
        assert fast_check(chain()) is None
    finally:
        si.unregister("Cast", since_version=1)
    assert verified(chain())

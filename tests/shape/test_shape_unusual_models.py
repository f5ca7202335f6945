"""Valid but unusual models: long or odd names, unnamed nodes, doc strings, declared
outputs, one subgraph used by both branches, rules that decline, large chains.

Expected types come from onnx's own strict shape inference on the same model; expected
reports from onnx's checker and from the node's own fields."""

from __future__ import annotations

import onnx
import pytest
from conftest import assert_same_type
from onnx import TensorProto, helper

import shape_inference as si
from shape_inference.bench import build_chain_model

FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64
OP_TYPES = ("ArgMax", "ArgMin")


def vi(name, elem=FLOAT, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def onnx_strict(model: onnx.ModelProto) -> onnx.ModelProto:
    return onnx.shape_inference.infer_shapes(model, strict_mode=True, check_type=True)


def types_of(graph: onnx.GraphProto) -> dict[str, onnx.TypeProto]:
    return {v.name: v.type for v in (*graph.value_info, *graph.output)}


def assert_types_match_onnx(model: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    """Every value onnx types has exactly onnx's type in ours, and nothing else is typed."""
    ours, theirs = types_of(si.infer_shapes(model).graph), types_of(onnx_strict(model).graph)
    assert set(ours) == set(theirs)
    for name, their_type in theirs.items():
        assert ours[name] == their_type, name
    return ours


def chain(
    input_name="x", output_name="y", node_name="am", shape=("N", 3, 4), mid="c", op_type="ArgMax"
):
    """x -> Cast (to float16) -> ArgMax(axis=1), or ArgMin(axis=1)."""
    nodes = [
        helper.make_node("Cast", [input_name], [mid], name="cast", to=TensorProto.FLOAT16),
        helper.make_node(op_type, [mid], [output_name], name=node_name, axis=1),
    ]
    return helper.make_model(
        helper.make_graph(
            nodes, "g", [vi(input_name, FLOAT, list(shape))], [vi(output_name, INT64, None)]
        ),
        opset_imports=[helper.make_opsetid("", 13)],
    )


def test_benchmark_chain_model_matches_onnx():
    model = build_chain_model(400)
    ours = assert_types_match_onnx(model)
    assert len(ours) == 400
    typings = si.infer_argmax_types(model)
    assert [t.path for t in typings] == [f"argmax_{i}" for i in range(200)]
    # keepdims=1 everywhere: each ArgMax sets one of the last three dims to 1, and its
    # input is the graph input, then the previous ArgMax's output cast to float16 or float
    dims = ["batch", 16, 32, 32]
    for i, typing in enumerate(typings):
        elem = "float" if i == 0 or (i - 1) % 2 else "float16"
        in_dims = ",".join(map(str, dims))
        dims = dims[:]
        dims[1 + i % 3] = 1
        out_dims = ",".join(map(str, dims))
        assert si.format_type(typing.input_type) == f"{elem}[{in_dims}]", typing
        assert si.format_type(typing.output_type) == f"int64[{out_dims}]", typing


@pytest.mark.parametrize("declared", [["N", 1, 4], [5, 1, 4], ["B", None, 4], None])
def test_compatible_declared_output_merged_like_onnx(declared):
    model = chain()
    model.graph.output[0].type.CopyFrom(helper.make_tensor_type_proto(INT64, declared))
    assert_types_match_onnx(model)


@pytest.mark.parametrize(
    ("names", "path"),
    [
        pytest.param({"mid": "i" * 200}, "am", id="200-byte input name"),
        pytest.param({"mid": "i" * 127}, "am", id="127-byte input name"),
        pytest.param({"output_name": "o" * 200}, "am", id="200-byte output name"),
        pytest.param({"output_name": "out\x01put"}, "am", id="control char in a name"),
        pytest.param({"node_name": 'sneaky"\x06ArgMax'}, 'sneaky"\x06ArgMax', id="op in name"),
        pytest.param({"node_name": ""}, "{op_type}#1", id="unnamed"),
    ],
)
@pytest.mark.parametrize("op_type", OP_TYPES)
def test_odd_but_valid_names(names, path, op_type):
    model = chain(**names, op_type=op_type)
    assert_types_match_onnx(model)
    (typing,) = si.infer_argmax_argmin_types(model)
    assert (typing.path, typing.op_type) == (path.format(op_type=op_type), op_type)
    assert si.format_type(typing.input_type) == "float16[N,3,4]"
    assert si.format_type(typing.output_type) == "int64[N,1,4]"


def test_doc_string_is_ignored():
    model = chain()
    model.graph.node[1].doc_string = "picks the class"
    assert_types_match_onnx(model)


def test_unknown_dim_corrected_before_it_feeds_another_argmax():
    nodes = [
        helper.make_node("ArgMax", ["x"], ["y"], name="am", axis=1),
        helper.make_node("ArgMax", ["y"], ["z"], name="am2", axis=0),
    ]
    graph = helper.make_graph(nodes, "g", [vi("x", FLOAT, [None, 3])], [vi("z", INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    theirs = types_of(onnx_strict(model).graph)
    assert theirs["y"].tensor_type.shape.dim[0].dim_param.startswith("unk__")
    ours = types_of(si.infer_shapes(model).graph)
    assert set(ours) == set(theirs)
    assert_same_type(ours["y"], theirs["y"])
    assert not ours["y"].tensor_type.shape.dim[0].HasField("dim_param")
    assert ours["z"] == theirs["z"]  # int64[1,1]
    typings = {t.path: t for t in si.infer_argmax_types(model)}
    assert typings["am2"].input_type == ours["y"]


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_same_subgraph_in_both_branches(op_type):
    branch = helper.make_graph(
        [helper.make_node(op_type, ["x"], ["t"], name="inner", axis=1)], "b", [], [vi("t", INT64)]
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
    ours_model, theirs_model = si.infer_shapes(model), onnx_strict(model)
    assert types_of(ours_model.graph)["y"] == types_of(theirs_model.graph)["y"]
    for k in range(2):
        ours = types_of(ours_model.graph.node[0].attribute[k].g)
        theirs = types_of(theirs_model.graph.node[0].attribute[k].g)
        assert ours["t"] == theirs["t"]
        assert si.format_type(ours["t"]) == "int64[2,1]"
    typings = sorted((t.path, t.op_type) for t in si.infer_argmax_argmin_types(model))
    assert typings == [("If#0/else_branch/inner", op_type), ("If#0/then_branch/inner", op_type)]


def test_input_declared_in_value_info_but_produced_by_nothing():
    node = helper.make_node("ArgMax", ["ghost"], ["y"], name="am", axis=1)
    graph = helper.make_graph(
        [node],
        "g",
        [vi("x", FLOAT, [2, 3])],
        [vi("y", INT64, [2, 1])],
        value_info=[vi("ghost", FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(onnx.checker.ValidationError, match="'ghost'"):
        onnx.checker.check_model(model)
    with pytest.raises(si.ShapeInferenceError) as info:
        si.infer_shapes(model)
    (problem,) = info.value.problems
    assert (problem.node, problem.subject) == ("am", "input 0 'ghost'")


def test_rule_returning_no_type_leaves_onnx_types():
    @si.register("Cast", since_version=1)
    def cast(node, input_types, opset):
        return [None]

    try:
        assert_types_match_onnx(chain())
    finally:
        si.unregister("Cast", since_version=1)


def test_unused_model_local_function_does_not_change_the_main_graph():
    function = helper.make_function(
        "local",
        "Id",
        ["a"],
        ["b"],
        [helper.make_node("Identity", ["a"], ["b"])],
        [helper.make_opsetid("", 13)],
    )
    model = chain()
    model.opset_import.append(helper.make_opsetid("local", 1))
    model.functions.append(function)
    assert_types_match_onnx(model)

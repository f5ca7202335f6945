"""infer_shapes on whole models: main graph, subgraphs, functions, registry; with ArgMax
nodes, ArgMin nodes and both mixed.

Expected types come from onnx's own shape inference (run on the same model, or on an
equivalent model made only of standard operators), never from this package."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing

import onnx
import pytest
from conftest import assert_same_type
from onnx import TensorProto, helper

import shape_inference as si

FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64
OP_TYPES = ("ArgMax", "ArgMin")
# The two reducing nodes of ``argmax_chain``: each operator alone, and both mixed.
CHAIN_OPS = [("ArgMax", "ArgMax"), ("ArgMin", "ArgMin"), ("ArgMin", "ArgMax")]


def vi(name, elem=FLOAT, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def model_of(nodes, inputs, outputs, opset=13, functions=(), value_info=(), initializer=()):
    graph = helper.make_graph(
        nodes, "g", inputs, outputs, value_info=list(value_info), initializer=list(initializer)
    )
    opsets = [helper.make_opsetid("", opset)]
    if functions:
        opsets.append(helper.make_opsetid("local", 1))
    return helper.make_model(graph, opset_imports=opsets, functions=list(functions))


def types_of(graph: onnx.GraphProto) -> dict[str, onnx.TypeProto]:
    return {v.name: v.type for v in (*graph.value_info, *graph.output)}


def onnx_types(model) -> onnx.GraphProto:
    return onnx.shape_inference.infer_shapes(model, strict_mode=True, check_type=True).graph


def argmax_chain(opset=13, op_types=("ArgMax", "ArgMax")):
    """x -> am0 -> Cast -> Transpose -> am1, am0 and am1 of the operators ``op_types``."""
    first, second = op_types
    nodes = [
        helper.make_node(first, ["x"], ["a0"], name="am0", axis=1),
        helper.make_node("Cast", ["a0"], ["c0"], name="cast0", to=FLOAT),
        helper.make_node("Transpose", ["c0"], ["t0"], name="tr0", perm=[2, 0, 1]),
        helper.make_node(second, ["t0"], ["a1"], name="am1", axis=-1, keepdims=0),
    ]
    return model_of(nodes, [vi("x", FLOAT, ["N", 5, None])], [vi("a1", INT64, None)], opset)


# ---------------------------------------------------------------- main graph


@pytest.mark.parametrize("op_types", CHAIN_OPS)
def test_main_graph_types_match_onnx(op_types):
    model = argmax_chain(op_types=op_types)
    ours, theirs = types_of(si.infer_shapes(model).graph), types_of(onnx_types(model))
    assert set(ours) == set(theirs)
    for name in ("a0", "c0", "t0", "a1"):
        assert_same_type(ours[name], theirs[name])


def test_argmax_outputs_typed_in_value_info_or_graph_output():
    result = si.infer_shapes(argmax_chain()).graph
    assert "a0" in {v.name for v in result.value_info}
    assert "a1" not in {v.name for v in result.value_info}
    (output,) = result.output
    assert output.type.tensor_type.elem_type == INT64


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_unknown_dims_left_unknown_where_onnx_invents_names(op_type):
    model = model_of(
        [helper.make_node(op_type, ["x"], ["y"], axis=1)],
        [vi("x", FLOAT, [None, 3])],
        [vi("y", INT64)],
    )
    (theirs,) = onnx_types(model).output
    assert theirs.type.tensor_type.shape.dim[0].dim_param.startswith("unk__")
    (ours,) = si.infer_shapes(model).graph.output
    assert_same_type(ours.type, theirs.type)
    assert not ours.type.tensor_type.shape.dim[0].HasField("dim_param")


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_initializer_input(op_type):
    weights = helper.make_tensor("w", FLOAT, [2, 4], [0.0] * 8)
    model = model_of(
        [helper.make_node(op_type, ["w"], ["y"], axis=1)],
        [],
        [vi("y", INT64)],
        initializer=[weights],
    )
    (ours,) = si.infer_shapes(model).graph.output
    (theirs,) = onnx_types(model).output
    assert_same_type(ours.type, theirs.type)


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_declared_output_merged_like_onnx(op_type):
    model = model_of(
        [helper.make_node(op_type, ["x"], ["y"], axis=1)],
        [vi("x", FLOAT, ["N", 3, None])],
        [vi("y", INT64, ["B", None, "W"])],
    )
    (ours,) = si.infer_shapes(model).graph.output
    (theirs,) = onnx_types(model).output
    assert ours.type == theirs.type


def test_input_model_is_not_modified():
    models = (
        argmax_chain(),
        argmax_chain(opset=11, op_types=("ArgMin", "ArgMax")),
        nested_model()[0],
        nested_model("ArgMin")[0],
        function_model(),
        function_model(op_type="ArgMin"),
    )
    for model in models:
        before = model.SerializeToString()
        si.infer_shapes(model)
        si.infer_argmax_types(model)
        si.infer_argmax_argmin_types(model)
        assert model.SerializeToString() == before
    for op_type in OP_TYPES:
        node = helper.make_node(op_type, ["x"], ["y"], axis=9)
        bad = model_of([node], [vi("x", FLOAT, [2])], [])
        before = bad.SerializeToString()
        with pytest.raises(si.ShapeInferenceError):
            si.infer_shapes(bad)
        assert bad.SerializeToString() == before


def test_precondition_errors():
    with pytest.raises(TypeError):
        si.infer_shapes(argmax_chain().graph)
    with pytest.raises(si.ShapeInferenceError, match="graph"):
        si.infer_shapes(onnx.ModelProto(ir_version=8))


@pytest.mark.parametrize("op_types", CHAIN_OPS)
def test_chain_with_known_dims_is_typed_exactly_like_onnx(op_types):
    model = argmax_chain(op_types=op_types)
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_value = 4  # no unknown dim
    theirs = types_of(onnx_types(model))
    ours = types_of(si.infer_shapes(model).graph)
    assert ours == theirs
    typings = si.infer_argmax_argmin_types(model)
    assert [t.path for t in typings] == ["am0", "am1"]
    assert [t.op_type for t in typings] == list(op_types)
    assert [t.output_type for t in typings] == [theirs["a0"], theirs["a1"]]
    assert [t.input_type for t in typings] == [model.graph.input[0].type, theirs["t0"]]
    # infer_argmax_types lists the same records, less those of ArgMin nodes
    assert si.infer_argmax_types(model) == [t for t in typings if t.op_type == "ArgMax"]


def test_typing_records_and_their_text():
    model = argmax_chain(op_types=("ArgMin", "ArgMax"))
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_value = 4
    assert [str(t) for t in si.infer_argmax_argmin_types(model)] == [
        "am0 (ArgMin): float[N,5,4] -> int64[N,1,4]",
        "am1 (ArgMax): float[4,N,1] -> int64[4,N]",
    ]
    (typing,) = si.infer_argmax_types(model)
    assert (typing.path, typing.op_type) == ("am1", "ArgMax")
    # a record built from its first three fields, as before op_type existed, is an ArgMax's
    assert si.ArgMaxTyping("p", None, None).op_type == "ArgMax"
    assert str(si.ArgMaxTyping("p", None, None, "ArgMin")) == "p (ArgMin): ? -> ?"


# ---------------------------------------------------------------- subgraphs


def nested_model(op_type="ArgMax"):
    """``op_type`` (ArgMax or ArgMin) in an If branch, and in a Loop body nested in the
    other branch."""
    then_branch = helper.make_graph(
        [helper.make_node(op_type, ["x"], ["t"], name="am_then", axis=2, keepdims=0)],
        "then",
        [],
        [vi("t", INT64, None)],
    )
    loop_body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node(op_type, ["x"], ["am"], name="am_loop", axis=-2),
            helper.make_node("Cast", ["am"], ["am_f"], to=FLOAT),
            helper.make_node(op_type, ["am_f"], ["scan"], name="am_loop2", axis=0, keepdims=0),
        ],
        "body",
        [vi("i", INT64, []), vi("cond_in", TensorProto.BOOL, [])],
        [vi("cond_out", TensorProto.BOOL, []), vi("scan", INT64, None)],
    )
    else_branch = helper.make_graph(
        [
            helper.make_node("Loop", ["trip", ""], ["stacked"], name="loop_0", body=loop_body),
            helper.make_node(op_type, ["stacked"], ["e"], name="am_else", axis=1, keepdims=0),
        ],
        "else",
        [],
        [vi("e", INT64, None)],
    )
    model = model_of(
        [
            helper.make_node(
                "If", ["c"], ["y"], name="if_0", then_branch=then_branch, else_branch=else_branch
            )
        ],
        [vi("x", FLOAT, ["N", 3, 4]), vi("c", TensorProto.BOOL, []), vi("trip", INT64, [])],
        [vi("y", INT64, None)],
    )
    paths = {
        "am_then": ("then_branch",),
        "am_else": ("else_branch",),
        "am_loop": ("else_branch", 0, "body"),
        "am_loop2": ("else_branch", 0, "body"),
    }
    return model, paths


def subgraph(graph, steps):
    node = graph.node[0]
    for step in steps:
        if isinstance(step, int):
            node = graph.node[step]
            continue
        graph = next(a.g for a in node.attribute if a.name == step)
    return graph


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_subgraph_types_match_onnx(op_type):
    model, paths = nested_model(op_type)
    ours_model = si.infer_shapes(model)
    theirs_model = onnx.shape_inference.infer_shapes(model, strict_mode=True, check_type=True)
    outputs = {"am_then": "t", "am_else": "e", "am_loop": "am", "am_loop2": "scan"}
    for node_name, steps in paths.items():
        ours = types_of(subgraph(ours_model.graph, steps))[outputs[node_name]]
        theirs = types_of(subgraph(theirs_model.graph, steps))[outputs[node_name]]
        assert ours.tensor_type.HasField("shape"), node_name
        assert_same_type(ours, theirs)


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_scan_body(op_type):
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["s_in"], ["s_out"]),
            helper.make_node(op_type, ["row"], ["idx"], name="am_scan", axis=0, keepdims=0),
        ],
        "scan_body",
        [vi("s_in", FLOAT, [2]), vi("row", FLOAT, [5, 2])],
        [vi("s_out", FLOAT, [2]), vi("idx", INT64, None)],
    )
    model = model_of(
        [
            helper.make_node(
                "Scan", ["s", "x"], ["s_final", "ys"], name="scan_0", body=body, num_scan_inputs=1
            )
        ],
        [vi("s", FLOAT, [2]), vi("x", FLOAT, ["T", 5, 2])],
        [vi("s_final", FLOAT, None), vi("ys", INT64, None)],
    )
    ours = si.infer_shapes(model)
    theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True, check_type=True)
    steps = ("body",)
    assert_same_type(
        types_of(subgraph(ours.graph, steps))["idx"], types_of(subgraph(theirs.graph, steps))["idx"]
    )
    assert_same_type(types_of(ours.graph)["ys"], types_of(theirs.graph)["ys"])
    typings = {t.path: t.op_type for t in si.infer_argmax_argmin_types(model)}
    assert typings == {"scan_0/body/am_scan": op_type}


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_argmax_types_paths(op_type):
    model, _ = nested_model(op_type)
    typings = si.infer_argmax_argmin_types(model)
    assert {t.op_type for t in typings} == {op_type}
    assert [t.path for t in si.infer_argmax_types(model)] == (
        [t.path for t in typings] if op_type == "ArgMax" else []
    )
    paths = [t.path for t in typings]
    assert sorted(paths) == sorted(
        [
            "if_0/then_branch/am_then",
            "if_0/else_branch/loop_0/body/am_loop",
            "if_0/else_branch/loop_0/body/am_loop2",
            "if_0/else_branch/am_else",
        ]
    )


# ---------------------------------------------------------------- functions


def function_model(second_input_shape=None, op_type="ArgMax"):
    body = [
        helper.make_node("Cast", ["a"], ["a_f"], to=FLOAT),
        helper.make_node(op_type, ["a_f"], ["b"], name="am_f", keepdims=0),
    ]
    body[1].attribute.append(
        onnx.AttributeProto(name="axis", ref_attr_name="ax", type=onnx.AttributeProto.INT)
    )
    function = helper.make_function(
        "local", "Pick", ["a"], ["b"], body, [helper.make_opsetid("", 13)], attributes=["ax"]
    )
    nodes = [helper.make_node("Pick", ["x"], ["y"], domain="local", name="call_0", ax=1)]
    inputs = [vi("x", FLOAT, ["N", 3, 4])]
    outputs = [vi("y", INT64, None)]
    if second_input_shape is not None:
        nodes.append(helper.make_node("Pick", ["x2"], ["y2"], domain="local", name="call_1", ax=1))
        inputs.append(vi("x2", FLOAT, second_input_shape))
        outputs.append(vi("y2", INT64, None))
    return model_of(nodes, inputs, outputs, functions=[function])


def function_value_types(model, name="Pick"):
    (function,) = [f for f in model.functions if f.name == name]
    return {v.name: v.type for v in function.value_info}


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_function_body_types_match_onnx_call_outputs(op_type):
    model = function_model(op_type=op_type)
    result = si.infer_shapes(model)
    theirs = types_of(onnx_types(model))
    assert_same_type(function_value_types(result)["b"], theirs["y"])
    assert_same_type(types_of(result.graph)["y"], theirs["y"])
    (typing,) = si.infer_argmax_argmin_types(model)
    assert (typing.path, typing.op_type) == ("local.Pick/am_f", op_type)
    assert_same_type(typing.output_type, theirs["y"])


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_function_called_with_two_shapes_is_generalized(op_type):
    model = function_model(second_input_shape=["M", 3, 4], op_type=op_type)
    theirs = types_of(onnx_types(model))
    assert [d.dim_param for d in theirs["y"].tensor_type.shape.dim] == ["N", ""]
    assert [d.dim_param for d in theirs["y2"].tensor_type.shape.dim] == ["M", ""]
    ours = function_value_types(si.infer_shapes(model))["b"]
    dims = ours.tensor_type.shape.dim
    assert ours.tensor_type.elem_type == INT64
    assert len(dims) == 2
    assert not dims[0].HasField("dim_value") and not dims[0].dim_param  # N vs M: unknown
    assert dims[1] == theirs["y"].tensor_type.shape.dim[1]  # 4 in both calls


def test_nested_and_uncalled_functions():
    inner = helper.make_function(
        "local",
        "Inner",
        ["p"],
        ["q"],
        [helper.make_node("ArgMin", ["p"], ["q"], name="am_inner", axis=-1)],
        [helper.make_opsetid("", 13)],
    )
    outer = helper.make_function(
        "local",
        "Outer",
        ["u"],
        ["v"],
        [helper.make_node("Inner", ["u"], ["v"], domain="local", name="call_inner")],
        [helper.make_opsetid("", 13), helper.make_opsetid("local", 1)],
    )
    unused = helper.make_function(
        "local",
        "Unused",
        ["s"],
        ["t"],
        [helper.make_node("ArgMax", ["s"], ["t"], name="am_unused")],
        [helper.make_opsetid("", 13)],
    )
    model = model_of(
        [helper.make_node("Outer", ["x"], ["y"], domain="local", name="call_outer")],
        [vi("x", FLOAT, [2, "K"])],
        [vi("y", INT64, None)],
        functions=[inner, outer, unused],
    )
    result = si.infer_shapes(model)
    theirs = types_of(onnx_types(model))
    assert_same_type(function_value_types(result, "Inner")["q"], theirs["y"])
    unused_type = function_value_types(result, "Unused")["t"]
    assert unused_type.tensor_type.elem_type == INT64
    assert not unused_type.tensor_type.HasField("shape")
    typings = {t.path: t.op_type for t in si.infer_argmax_argmin_types(model)}
    assert typings == {"local.Inner/am_inner": "ArgMin", "local.Unused/am_unused": "ArgMax"}
    assert [t.path for t in si.infer_argmax_types(model)] == ["local.Unused/am_unused"]


# ---------------------------------------------------------------- registry


@pytest.fixture
def doubler():
    """A custom op com.example::Repeat2 (input repeated twice along axis 0)."""

    @si.register("Repeat2", domain="com.example", since_version=1)
    def repeat2(node, input_types, opset):
        (input_type,) = input_types
        if input_type is None:
            return [None]
        out = onnx.TypeProto()
        out.CopyFrom(input_type)
        dim = out.tensor_type.shape.dim[0]
        if dim.HasField("dim_value"):
            dim.dim_value *= 2
        else:
            dim.Clear()
        return [out]

    yield repeat2
    si.unregister("Repeat2", domain="com.example", since_version=1)


def custom_then_argmax(custom: bool, op_type="ArgMax"):
    """x -> Repeat2 (or the equivalent Concat(x, x)) -> Cast -> ``op_type``."""
    if custom:
        first = helper.make_node("Repeat2", ["x"], ["r"], domain="com.example", name="rep")
    else:
        first = helper.make_node("Concat", ["x", "x"], ["r"], name="rep", axis=0)
    nodes = [
        first,
        helper.make_node("Cast", ["r"], ["rc"], name="cast", to=TensorProto.INT32),
        helper.make_node(op_type, ["rc"], ["y"], name="am", axis=0),
    ]
    model = model_of(nodes, [vi("x", FLOAT, [3, "W"])], [vi("y", INT64, None)])
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    return model


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_custom_rule_feeds_argmax(doubler, op_type):
    theirs = types_of(onnx_types(custom_then_argmax(custom=False, op_type=op_type)))
    model = custom_then_argmax(custom=True, op_type=op_type)
    without_rule = types_of(onnx.shape_inference.infer_shapes(model).graph)
    # onnx alone cannot type the custom op's output, so the shape is lost after it
    assert "r" not in without_rule
    assert not without_rule["rc"].tensor_type.HasField("shape")
    ours = types_of(si.infer_shapes(model).graph)
    for name in ("r", "rc", "y"):
        assert_same_type(ours[name], theirs[name])


def test_custom_rule_errors_are_reported(doubler):
    @si.register("Fail", domain="com.example")
    def fail(node, input_types, opset):
        raise si.RuleError(si.Issue("attribute 'mode'", "'x'", "'a' or 'b'"))

    try:
        model = custom_then_argmax(custom=True)
        model.graph.node.append(helper.make_node("Fail", ["x"], ["z"], domain="com.example"))
        with pytest.raises(si.ShapeInferenceError) as info:
            si.infer_shapes(model)
        (problem,) = info.value.problems
        assert (problem.node, problem.op_type, problem.subject) == (
            "Fail#3",
            "Fail",
            "attribute 'mode'",
        )
    finally:
        si.unregister("Fail", domain="com.example")


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_infer_shapes_uses_the_registered_argmax_rule(op_type):
    """Replacing one operator's rule changes the types of that operator's nodes only."""
    since, original = si.get_rule(op_type, "", 13)

    def fixed(node, input_types, opset):
        out = onnx.TypeProto()
        out.tensor_type.elem_type = INT64
        out.tensor_type.shape.dim.add().dim_value = 42
        return [out]

    other = "ArgMin" if op_type == "ArgMax" else "ArgMax"
    model = model_of(
        [
            helper.make_node(op_type, ["x"], ["y0"], name="replaced", axis=1),
            helper.make_node(other, ["x"], ["y1"], name="kept", axis=1),
        ],
        [vi("x", FLOAT, ["N", 5, 4])],
        [vi("y0", INT64, None), vi("y1", INT64, None)],
    )
    theirs = types_of(onnx_types(model))
    si.register(op_type, since_version=since, replace=True)(fixed)
    try:
        ours = types_of(si.infer_shapes(model).graph)
        assert si.format_type(ours["y0"]) == "int64[42]"
        assert ours["y1"] == theirs["y1"]
    finally:
        si.register(op_type, since_version=since, replace=True)(original)
    assert si.get_rule(op_type, "", 13) == (since, original)


def test_registry_api():
    @si.register("Thing", domain="com.example", since_version=3)
    def v3(node, input_types, opset):
        return [None]

    @si.register("Thing", domain="com.example", since_version=7)
    def v7(node, input_types, opset):
        return [None]

    try:
        assert si.get_rule("Thing", "com.example", 2) is None
        assert si.get_rule("Thing", "com.example", 5) == (3, v3)
        assert si.get_rule("Thing", "com.example", 9) == (7, v7)
        assert ("com.example", "Thing", 3) in si.registered()
        with pytest.raises(ValueError, match="already registered"):
            si.register("Thing", domain="com.example", since_version=3)(v7)
        with pytest.raises(ValueError):
            si.register("Thing", since_version=0)
        with pytest.raises(KeyError):
            si.unregister("Thing", domain="com.example", since_version=4)
    finally:
        assert si.unregister("Thing", domain="com.example", since_version=3) is v3
        assert si.unregister("Thing", domain="com.example", since_version=7) is v7
    assert si.get_rule("Thing", "com.example", 9) is None


# ---------------------------------------------------------------- packaging


def test_import_does_not_import_numba():
    code = "import shape_inference, sys; assert 'numba' not in sys.modules, 'numba imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_public_api_is_documented():
    for name in si.__all__:
        obj = getattr(si, name)
        # (A type alias such as InferenceRule is no class, though Python 3.10's
        # inspect.isclass says it is.)
        alias = typing.get_origin(obj) is not None
        if inspect.isfunction(obj) or (inspect.isclass(obj) and not alias):
            assert obj.__doc__, name

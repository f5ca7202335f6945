"""Every error infer_shapes reports, for ArgMax and ArgMin nodes alike, and the
one-exception-for-all-nodes report.

Where onnx has an opinion, it is the oracle: its checker for attribute errors, its
schemas and strict shape inference for element types and axis ranges. Every report must
name the node and its operator (ArgMin, not ArgMax, for an ArgMin node)."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

import shape_inference as si

FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64
OP_TYPES = ("ArgMax", "ArgMin")


def vi(name, elem=FLOAT, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def model_of(nodes, inputs, outputs, opset=13, value_info=(), functions=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, value_info=list(value_info))
    opsets = [helper.make_opsetid("", opset)]
    if functions:
        opsets.append(helper.make_opsetid("local", 1))
    return helper.make_model(graph, opset_imports=opsets, functions=list(functions))


def one_argmax(
    opset=13, elem=FLOAT, shape=(2, 3), inputs=("x",), output=None, op_type="ArgMax", **attrs
):
    """A model with one node ``am`` of ``op_type`` (ArgMax or ArgMin)."""
    node = helper.make_node(op_type, list(inputs), ["y"], name="am", **attrs)
    out = output if output is not None else vi("y", INT64, None)
    return model_of([node], [vi("x", elem, list(shape))], [out], opset)


def problems_of(model, op_type=None) -> list[si.Problem]:
    """The problems ``infer_shapes`` reports; with ``op_type``, each must be of a node of
    that operator, and its text must say so."""
    with pytest.raises(si.ShapeInferenceError) as info:
        si.infer_shapes(model)
    assert isinstance(info.value, ValueError)
    for problem in info.value.problems:
        assert str(problem) in str(info.value)
        if op_type is not None:
            assert problem.op_type == op_type
            assert str(problem).startswith(f"{problem.node} ({op_type}): ")
    return list(info.value.problems)


def onnx_strict(model):
    return onnx.shape_inference.infer_shapes(model, strict_mode=True, check_type=True)


# ---------------------------------------------------------------- axis


@pytest.mark.parametrize("op_type", OP_TYPES)
@pytest.mark.parametrize("opset", [11, 12, 13])
@pytest.mark.parametrize("axis", [2, -3, 10])
def test_axis_out_of_range(opset, axis, op_type):
    model = one_argmax(opset, axis=axis, op_type=op_type)
    with pytest.raises(onnx.shape_inference.InferenceError, match="axis"):
        onnx_strict(model)
    (problem,) = problems_of(model, op_type)
    assert (problem.node, problem.op_type, problem.subject) == ("am", op_type, "attribute 'axis'")
    assert problem.found.startswith(f"{axis}, outside [-2, 1]")
    assert problem.expected == "an integer in [-2, 1]"


@pytest.mark.parametrize("op_type", OP_TYPES)
@pytest.mark.parametrize("axis", [2, -3])
def test_axis_out_of_range_opset1_where_onnx_does_not_check(axis, op_type):
    model = one_argmax(1, axis=axis, op_type=op_type)
    (theirs,) = onnx_strict(model).graph.output  # onnx accepts it...
    assert [d.dim_value for d in theirs.type.tensor_type.shape.dim] == [2, 3]
    (problem,) = problems_of(model, op_type)  # ...this package does not
    assert problem.subject == "attribute 'axis'"


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_scalar_input(op_type):
    model = one_argmax(shape=(), op_type=op_type)
    onnx_strict(model)  # onnx returns a scalar for the default axis
    (problem,) = problems_of(model, op_type)
    assert problem.subject == "attribute 'axis'"
    assert "rank 0" in problem.found


# ---------------------------------------------------------------- attributes


@pytest.mark.parametrize(
    ("name", "value", "kind"),
    [
        ("axis", 1.0, "FLOAT"),
        ("keepdims", "yes", "STRING"),
        ("select_last_index", [1, 0], "INTS"),
        ("axis", helper.make_tensor("t", INT64, [], [1]), "TENSOR"),
    ],
)
@pytest.mark.parametrize("op_type", OP_TYPES)
def test_attribute_of_wrong_type(name, value, kind, op_type):
    model = one_argmax(output=vi("y", INT64, [1, 3]), op_type=op_type, **{name: value})
    with pytest.raises(onnx.checker.ValidationError, match="Mismatched attribute type"):
        onnx.checker.check_model(model)
    (problem,) = problems_of(model, op_type)
    assert problem.subject == f"attribute '{name}'"
    assert problem.found == f"of type {kind}"
    assert problem.expected == "an INT attribute"


@pytest.mark.parametrize("op_type", OP_TYPES)
@pytest.mark.parametrize(("opset", "version"), [(1, 1), (9, 1), (11, 11)])
def test_select_last_index_before_opset_12(opset, version, op_type):
    assert "select_last_index" not in onnx.defs.get_schema(op_type, opset).attributes
    model = one_argmax(opset, output=vi("y", INT64, [1, 3]), op_type=op_type, select_last_index=0)
    with pytest.raises(onnx.checker.ValidationError, match="select_last_index"):
        onnx.checker.check_model(model)
    (problem,) = problems_of(model, op_type)
    assert problem.subject == "attribute 'select_last_index'"
    assert (
        problem.found == f"set, but {op_type}-{version} (model opset {opset}) has no such attribute"
    )
    assert "opset 12" in problem.expected


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_unknown_attribute(op_type):
    model = one_argmax(output=vi("y", INT64, [1, 3]), op_type=op_type, mode=1)
    with pytest.raises(onnx.checker.ValidationError, match="Unrecognized attribute"):
        onnx.checker.check_model(model)
    (problem,) = problems_of(model, op_type)
    assert problem.subject == "attribute 'mode'"
    assert problem.found == f"not an attribute of {op_type}-13"


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_attribute_reference_outside_function(op_type):
    model = one_argmax(op_type=op_type)
    model.graph.node[0].attribute.append(
        onnx.AttributeProto(name="axis", ref_attr_name="ax", type=onnx.AttributeProto.INT)
    )
    (problem,) = problems_of(model, op_type)
    assert problem.subject == "attribute 'axis'" and "'ax'" in problem.found


# ---------------------------------------------------------------- element types


def allowed(opset, op_type="ArgMax"):
    (constraint,) = onnx.defs.get_schema(op_type, opset).type_constraints
    return constraint.allowed_type_strs


@pytest.mark.parametrize(
    ("opset", "elem"),
    [
        (12, TensorProto.BFLOAT16),
        (11, TensorProto.BFLOAT16),
        (1, TensorProto.BFLOAT16),
        (13, TensorProto.BOOL),
        (13, TensorProto.STRING),
        (13, TensorProto.COMPLEX64),
        (13, TensorProto.FLOAT8E4M3FN),
    ],
)
@pytest.mark.parametrize("op_type", OP_TYPES)
def test_input_element_type_not_allowed(opset, elem, op_type):
    name = TensorProto.DataType.Name(elem).lower()
    assert f"tensor({name})" not in allowed(opset, op_type)
    model = one_argmax(opset, elem=elem, op_type=op_type)
    with pytest.raises(onnx.shape_inference.InferenceError, match="unsupported type"):
        onnx_strict(model)
    (problem,) = problems_of(model, op_type)
    assert problem.subject == "input 0 element type"
    # (each opset here is also the version of the operator it selects)
    assert problem.found == f"{name}, not allowed by {op_type}-{opset} (model opset {opset})"
    for allowed_type in allowed(opset, op_type):
        assert allowed_type.removeprefix("tensor(").removesuffix(")") in problem.expected


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_bfloat16_allowed_from_opset_13(op_type):
    assert "tensor(bfloat16)" in allowed(13, op_type)
    model = one_argmax(13, elem=TensorProto.BFLOAT16, op_type=op_type, axis=1)
    (ours,) = si.infer_shapes(model).graph.output
    (theirs,) = onnx_strict(model).graph.output
    assert ours == theirs


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_non_tensor_input(op_type):
    seq = helper.make_tensor_sequence_value_info("x", FLOAT, [2])
    model = model_of([helper.make_node(op_type, ["x"], ["y"], name="am")], [seq], [vi("y", INT64)])
    (problem,) = problems_of(model, op_type)
    assert (problem.subject, problem.found) == ("input 0 type", "a sequence")


# ---------------------------------------------------------------- inputs


@pytest.mark.parametrize(
    ("inputs", "subject"),
    [([], "input 0 (data)"), ([""], "input 0 (data)"), (["nowhere"], "input 0 'nowhere'")],
)
@pytest.mark.parametrize("op_type", OP_TYPES)
def test_missing_input(inputs, subject, op_type):
    model = one_argmax(inputs=inputs, op_type=op_type)
    (problem,) = problems_of(model, op_type)
    assert (problem.node, problem.subject) == ("am", subject)


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_too_many_inputs(op_type):
    model = one_argmax(inputs=("x", "x"), op_type=op_type)
    (problem,) = problems_of(model, op_type)
    assert problem.subject == "inputs"


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_outer_scope_input_is_not_missing(op_type):
    branch = helper.make_graph(
        [helper.make_node(op_type, ["x"], ["t"], name="inner")], "b", [], [vi("t", INT64)]
    )
    model = model_of(
        [helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)],
        [vi("x", FLOAT, [2, 3]), vi("c", TensorProto.BOOL, [])],
        [vi("y", INT64)],
    )
    si.infer_shapes(model)


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_missing_default_opset_import(op_type):
    model = one_argmax(op_type=op_type)
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    (problem,) = problems_of(model)  # reported by onnx's pass, which cannot run
    assert "am" in str(problem) and "opset" in str(problem).lower()


# ---------------------------------------------------------------- declared types


@pytest.mark.parametrize(
    ("declared", "in_value_info"),
    [
        (vi("y", INT64, [2, 5]), False),  # size
        (vi("y", INT64, [1, 3, 1]), False),  # rank
        (vi("y", TensorProto.INT32, None), False),  # element type
        (vi("y", INT64, [7, 3]), True),
    ],
)
@pytest.mark.parametrize("op_type", OP_TYPES)
def test_conflict_with_declared_type(declared, in_value_info, op_type):
    node = helper.make_node(op_type, ["x"], ["y"], name="am")
    nodes = [node]
    outputs = [declared]
    value_info = []
    if in_value_info:
        nodes.append(helper.make_node("Identity", ["y"], ["z"]))
        outputs, value_info = [vi("z", INT64)], [declared]
    model = model_of(nodes, [vi("x", FLOAT, [2, 3])], outputs, value_info=value_info)
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx_strict(model)
    (problem,) = problems_of(model, op_type)
    assert (problem.node, problem.subject) == ("am", "output 'y' type")
    assert problem.found == f"declared as {si.format_type(declared.type)}"
    assert problem.expected == "a type compatible with the inferred int64[1,3]"


# ---------------------------------------------------------------- the whole report


def test_every_bad_node_in_one_exception_with_paths():
    then_branch = helper.make_graph(
        [helper.make_node("ArgMax", ["x"], ["t"], name="argmax_3", axis=7)],
        "then",
        [],
        [vi("t", INT64)],
    )
    loop_body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("ArgMin", ["x"], ["s"], name="deep", keepdims=1.5),
        ],
        "body",
        [vi("i", INT64, []), vi("cond_in", TensorProto.BOOL, [])],
        [vi("cond_out", TensorProto.BOOL, []), vi("s", INT64)],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Loop", ["n", ""], ["e"], name="loop_1", body=loop_body)],
        "else",
        [],
        [vi("e", INT64)],
    )
    function = helper.make_function(
        "local",
        "F",
        ["a"],
        ["b"],
        [helper.make_node("ArgMin", ["a"], ["b"], name="in_function", select_last_index=1)],
        [helper.make_opsetid("", 11)],
    )
    nodes = [
        helper.make_node("Foo", ["x"], ["f"], domain="local"),  # no schema, no rule
        helper.make_node("ArgMax", ["x"], ["y0"], axis=-4),  # unnamed
        helper.make_node("ArgMin", ["x"], ["y4"], axis=3),  # unnamed
        helper.make_node(
            "If", ["c"], ["y1"], name="if_0", then_branch=then_branch, else_branch=else_branch
        ),
        helper.make_node("F", ["x"], ["y2"], domain="local", name="call"),
        helper.make_node("ArgMax", ["x"], ["y3"], name="fine", axis=1),
        helper.make_node("ArgMin", ["x"], ["y5"], name="fine_too", axis=1),
    ]
    model = model_of(
        nodes,
        [vi("x", FLOAT, [2, 3, 4]), vi("c", TensorProto.BOOL, []), vi("n", INT64, [])],
        [vi(n, INT64) for n in ("y0", "y1", "y2", "y3", "y4", "y5")],
        functions=[function],
    )
    onnx_strict(model)  # onnx's strict mode reports nothing after the unknown op "Foo"
    problems = problems_of(model)
    found = {(p.node, p.op_type, p.subject) for p in problems}
    assert found == {
        ("ArgMax#1", "ArgMax", "attribute 'axis'"),
        ("ArgMin#2", "ArgMin", "attribute 'axis'"),
        ("if_0/then_branch/argmax_3", "ArgMax", "attribute 'axis'"),
        ("if_0/else_branch/loop_1/body/deep", "ArgMin", "attribute 'keepdims'"),
        ("local.F/in_function", "ArgMin", "attribute 'select_last_index'"),
    }
    with pytest.raises(si.ShapeInferenceError) as info:
        si.infer_shapes(model)
    message = str(info.value)
    assert message.startswith("shape inference failed: 5 problem(s) in 5 node(s)")
    assert "if_0/then_branch/argmax_3 (ArgMax): attribute 'axis': 7, outside [-3, 2]" in message
    assert "ArgMin#2 (ArgMin): attribute 'axis': 3, outside [-3, 2]" in message
    assert (
        "local.F/in_function (ArgMin): attribute 'select_last_index': "
        "set, but ArgMin-11 (model opset 11) has no such attribute" in message
    )


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_function_error_names_the_call_site(op_type):
    body = helper.make_node(op_type, ["a"], ["b"], name="am")
    body.attribute.append(
        onnx.AttributeProto(name="axis", ref_attr_name="ax", type=onnx.AttributeProto.INT)
    )
    function = helper.make_function(
        "local", "F", ["a"], ["b"], [body], [helper.make_opsetid("", 13)], attributes=["ax"]
    )
    model = model_of(
        [
            helper.make_node("F", ["x"], ["y"], domain="local", name="ok_call", ax=1),
            helper.make_node("F", ["x"], ["z"], domain="local", name="bad_call", ax=5),
        ],
        [vi("x", FLOAT, [2, 3])],
        [vi("y", INT64), vi("z", INT64)],
        functions=[function],
    )
    (problem,) = problems_of(model, op_type)
    assert problem.node == "local.F/am"
    assert problem.found.endswith("(when called from bad_call)")


def test_problem_and_error_are_structured():
    problem = si.Problem("a/b", "ArgMax", "attribute 'axis'", "9", "an integer in [-1, 0]")
    assert str(problem) == "a/b (ArgMax): attribute 'axis': 9; expected an integer in [-1, 0]"
    error = si.ShapeInferenceError([problem])
    assert isinstance(error, ValueError) and error.problems == (problem,)
    with pytest.raises(TypeError):
        si.RuleError()

"""The ArgMax and ArgMin evaluator ops and the backend, on whole models, against onnx's
reference.

The oracle is ``onnx.reference.ReferenceEvaluator`` without ``new_ops`` (onnx's numpy
ArgMax and ArgMin). Each test also counts the calls into the numba kernels, so that a
model that silently ran onnx's own operator cannot pass.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from conftest import DTYPES, random_tensor
from onnx import AttributeProto, TensorProto, helper
from onnx.reference import ReferenceEvaluator

import argmax_numba.api as api
from argmax_numba.onnx_ops import (
    ArgMax,
    ArgMin,
    NumbaArgMaxBackend,
    NumbaReferenceEvaluator,
    run_model,
)

BF16 = np.dtype(ml_dtypes.bfloat16)
OPS = ("ArgMax", "ArgMin")


@pytest.fixture
def kernel_calls(monkeypatch):
    """A list that grows by one each time the numba ArgMax or ArgMin reduces a tensor
    (with the function's name)."""
    calls = []

    def counting(name):
        real = getattr(api, name)

        def count(*args, **kwargs):
            calls.append(name)
            return real(*args, **kwargs)

        return count

    for name in ("argmax", "argmin"):
        monkeypatch.setattr(api, name, counting(name))
    return calls


def elem(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def oracle(model, feeds):
    return ReferenceEvaluator(model).run(None, feeds)


def assert_same(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g, e)


def pipeline_model(opset: int, dtype, shape, attrs: dict, op_type: str = "ArgMax") -> object:
    """Transpose -> ``op_type``(attrs) -> Add(y, y), and a second node of ``op_type``
    with no attributes."""
    perm = list(range(len(shape)))[::-1]
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=perm),
        helper.make_node(op_type, ["t"], ["y"], **attrs),
        helper.make_node("Add", ["y", "y"], ["twice"]),
        helper.make_node(op_type, ["x"], ["d"]),
    ]
    graph = helper.make_graph(
        nodes,
        "pipeline",
        [helper.make_tensor_value_info("x", elem(dtype), shape)],
        [helper.make_tensor_value_info(n, TensorProto.INT64, None) for n in ("y", "twice", "d")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def attr_grid(opset: int, rank: int):
    for axis in (0, rank - 1, -1):
        for keepdims in (0, 1):
            if opset < 12:
                yield {"axis": axis, "keepdims": keepdims}
            else:
                for last in (0, 1):
                    yield {"axis": axis, "keepdims": keepdims, "select_last_index": last}


# bfloat16 is an ArgMax type from opset 13 on.
OPSET_DTYPES = [(o, d) for o in (1, 11, 12, 13) for d in DTYPES if o >= 13 or d != BF16]


@pytest.mark.parametrize("op_type", OPS)
@pytest.mark.parametrize(("opset", "dtype"), OPSET_DTYPES, ids=str)
def test_multi_node_models_match_onnx_reference(opset, dtype, op_type, kernel_calls):
    rng = np.random.default_rng(opset * 100 + len(str(dtype)))
    x = random_tensor(dtype, (4, 3, 5), rng, special=0.2)
    runs = 0
    for attrs in attr_grid(opset, x.ndim):
        model = pipeline_model(opset, dtype, x.shape, attrs, op_type)
        got = ReferenceEvaluator(model, new_ops=[ArgMax, ArgMin]).run(None, {"x": x})
        assert_same(got, oracle(model, {"x": x}))
        runs += 1
    assert kernel_calls == [op_type.lower()] * (2 * runs)


@pytest.mark.parametrize("op_type", OPS)
@pytest.mark.parametrize("opset", [1, 11, 12, 13, 18])
def test_missing_attributes_take_the_opset_defaults(opset, op_type, kernel_calls):
    x = np.array([[1, 7, 7], [7, 2, 7]], dtype=np.float32)
    model = pipeline_model(opset, x.dtype, x.shape, {}, op_type)
    assert_same(run_model(model, {"x": x}), oracle(model, {"x": x}))
    assert kernel_calls == [op_type.lower()] * 2


@pytest.mark.parametrize("op_type", OPS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, BF16], ids=str)
@pytest.mark.parametrize("last", [0, 1])
def test_nan_signed_zero_and_ties_follow_the_reference(dtype, last, op_type, kernel_calls, tier):
    rows = [
        [np.nan, 1.0, np.nan, 3.0],
        [-0.0, 0.0, -0.0, -1.0],
        [2.0, 2.0, -np.inf, 2.0],
        [-np.inf, -np.inf, -np.inf, -np.inf],
        [1.0, np.inf, np.nan, np.inf],
    ]
    x = np.array(rows, dtype=np.float64).astype(dtype)
    attrs = {"axis": 1, "select_last_index": last}
    model = pipeline_model(13, x.dtype, x.shape, attrs, op_type)
    assert_same(run_model(model, {"x": x}), oracle(model, {"x": x}))
    assert kernel_calls == [op_type.lower()] * 2


@pytest.mark.parametrize("op_type", OPS)
def test_select_last_index_needs_opset_12(op_type):
    attrs = {"axis": 1, "select_last_index": 1}
    model = pipeline_model(11, np.float32, [2, 3], attrs, op_type)
    with pytest.raises(ValueError, match=f"{op_type} node .*select_last_index"):
        ReferenceEvaluator(model, new_ops=[ArgMax, ArgMin])


def test_errors_of_the_kernel_reach_the_caller():
    model = pipeline_model(13, np.float32, [0, 3], {"axis": 1})
    with pytest.raises(ValueError, match="empty"):
        run_model(model, {"x": np.zeros((0, 3), np.float32)})


def if_model() -> object:
    """ArgMax over different axes in the two branches of an If."""

    def branch(name, axis):
        node = helper.make_node("ArgMax", ["x"], [f"{name}_y"], axis=axis, keepdims=0)
        out = helper.make_tensor_value_info(f"{name}_y", TensorProto.INT64, None)
        return helper.make_graph([node], name, [], [out])

    node = helper.make_node(
        "If", ["cond"], ["y"], then_branch=branch("then", 0), else_branch=branch("else", 1)
    )
    graph = helper.make_graph(
        [node],
        "if_argmax",
        [
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("cond", [True, False])
def test_argmax_inside_if_branches(cond, kernel_calls):
    x = np.random.default_rng(3).integers(0, 3, (3, 4)).astype(np.float32)
    feeds = {"cond": np.array(cond), "x": x}
    model = if_model()
    got = ReferenceEvaluator(model, new_ops=[ArgMax]).run(None, feeds)
    assert_same(got, oracle(model, feeds))
    assert len(kernel_calls) == 1


def function_model() -> object:
    """A model-local function wrapping ArgMax, its axis linked to the caller's attribute."""
    inner = helper.make_node("ArgMax", ["a"], ["b"], select_last_index=1)
    inner.attribute.append(helper.make_attribute_ref("axis", AttributeProto.INT))
    fn = helper.make_function(
        "local",
        "LastArgMax",
        ["a"],
        ["b"],
        [inner],
        [helper.make_opsetid("", 13)],
        attributes=["axis"],
    )
    call = helper.make_node("LastArgMax", ["x"], ["y"], domain="local", axis=1)
    graph = helper.make_graph(
        [call],
        "calls_function",
        [helper.make_tensor_value_info("x", TensorProto.INT32, [2, 5])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2, 1])],
    )
    return helper.make_model(
        graph,
        functions=[fn],
        opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("local", 1)],
    )


def test_model_local_functions_use_the_kernel(kernel_calls):
    x = np.array([[1, 4, 4, 0, 4], [9, 1, 9, 9, 2]], dtype=np.int32)
    model = function_model()
    got = NumbaReferenceEvaluator(model).run(None, {"x": x})
    assert_same(got, oracle(model, {"x": x}))
    np.testing.assert_array_equal(got[0], [[4], [3]])
    assert len(kernel_calls) == 1


def classifier_model(opset: int = 13) -> object:
    """MatMul -> Add -> ArgMax over classes, weights as initializers, symbolic batch."""
    rng = np.random.default_rng(7)
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 3], rng.standard_normal(12).tolist())
    b = helper.make_tensor("b", TensorProto.FLOAT, [3], rng.standard_normal(3).tolist())
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Add", ["h", "b"], ["logits"]),
        helper.make_node("ArgMax", ["logits"], ["label"], axis=1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [
            helper.make_tensor_value_info("label", TensorProto.INT64, ["batch"]),
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 3]),
        ],
        initializer=[w, b],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_backend_runs_whole_models(kernel_calls):
    model = classifier_model()
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    label, logits = oracle(model, {"x": x})
    rep = NumbaArgMaxBackend.prepare(model, "CPU")
    for inputs in ([x], (x,), x, {"x": x}):
        out = rep.run(inputs)
        np.testing.assert_array_equal(out[0], label)
        np.testing.assert_array_equal(out["label"], label)
        np.testing.assert_allclose(out[1], logits)
    out = NumbaArgMaxBackend.run_model(model, [x])
    np.testing.assert_array_equal(out.label, label)
    assert len(kernel_calls) == 5


def nearest_centre_model() -> object:
    """A KMeans labeller as converters write it: squared distances to each centre (an
    initializer), then ArgMin over the centres."""
    centres = np.array([[0.0, 0.0], [5.0, 5.0], [0.0, 5.0]], np.float32)
    c = helper.make_tensor("c", TensorProto.FLOAT, [1, 3, 2], centres.ravel().tolist())
    nodes = [
        helper.make_node("Unsqueeze", ["x", "one"], ["xu"]),
        helper.make_node("Sub", ["xu", "c"], ["d"]),
        helper.make_node("Mul", ["d", "d"], ["d2"]),
        helper.make_node("ReduceSum", ["d2", "two"], ["dist"], keepdims=0),
        helper.make_node("ArgMin", ["dist"], ["label"], axis=1, keepdims=0),
    ]
    axes = [
        helper.make_tensor("one", TensorProto.INT64, [1], [1]),
        helper.make_tensor("two", TensorProto.INT64, [1], [2]),
    ]
    graph = helper.make_graph(
        nodes,
        "kmeans",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 2])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, ["batch"])],
        initializer=[c, *axes],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_backend_labels_with_argmin(kernel_calls):
    model = nearest_centre_model()
    x = np.array([[0.5, 0.2], [4.0, 6.0], [-1.0, 4.0], [2.5, 2.5]], np.float32)
    out = NumbaArgMaxBackend.run_model(model, [x])
    np.testing.assert_array_equal(out.label, oracle(model, {"x": x})[0])
    np.testing.assert_array_equal(out.label, [0, 1, 2, 0])
    assert kernel_calls == ["argmin"]


@pytest.mark.parametrize("op_type", OPS)
@pytest.mark.parametrize("opset", [11, 13])
def test_backend_run_node(opset, op_type, kernel_calls):
    x = np.array([[3, 9, 9], [9, 0, 9]], dtype=np.int64)
    attrs = {"axis": 1, "keepdims": 0}
    if opset >= 12:
        attrs["select_last_index"] = 1
    node = helper.make_node(op_type, ["x"], ["y"], **attrs)
    got = NumbaArgMaxBackend.run_node(node, [x], opset_version=opset)
    expected = ReferenceEvaluator(node).run(None, {"x": x})
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got["y"], expected[0])
    assert len(kernel_calls) == 1


def test_backend_is_cpu_only():
    assert NumbaArgMaxBackend.supports_device("CPU")
    assert not NumbaArgMaxBackend.supports_device("CUDA")
    with pytest.raises(RuntimeError, match="CPU"):
        NumbaArgMaxBackend.prepare(classifier_model(), "CUDA")

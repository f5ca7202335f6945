"""A small ONNX classifier whose ArgMax runs on the numba kernel, checked against onnxruntime.

The model is ``label = ArgMax(x @ W + b, axis=1)`` with a symbolic batch dimension
``"batch"``. It is typed with ``shape_inference.infer_shapes`` (the ArgMax output
becomes ``int64[batch]``), saved, run by onnx's ``ReferenceEvaluator`` with the numba
``ArgMax`` in place of onnx's own, and compared with onnxruntime.

Weights and inputs are small integers stored as float32, so both engines compute the
logits exactly and meet the same (many) exact ties: the predictions must be equal,
and ties must go to the first class in both.

Usage: ``python examples/onnx_classifier.py [MODEL.onnx] [--batch N]``
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import shape_inference
from argmax_numba.onnx_ops import ArgMax

FEATURES = 16
CLASSES = 10


def build_classifier(rng: np.random.Generator) -> onnx.ModelProto:
    """MatMul -> Add -> ArgMax over the class axis, the output's shape left to inference."""
    w = rng.integers(-3, 4, size=(FEATURES, CLASSES)).astype(np.float32)
    b = rng.integers(-2, 3, size=CLASSES).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["scores"]),
        helper.make_node("Add", ["scores", "b"], ["logits"]),
        helper.make_node("ArgMax", ["logits"], ["label"], axis=1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", FEATURES])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, None)],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", help="where to save the model (default: a temp dir)")
    parser.add_argument("--batch", type=int, default=4096, help="rows to classify")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(2024)
    model = shape_inference.infer_shapes(build_classifier(rng))
    out_type = shape_inference.format_type(model.graph.output[0].type)
    print(f"inferred type of 'label': {out_type}")
    assert out_type == "int64[batch]", out_type

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.model) if args.model else Path(tmp) / "classifier.onnx"
        onnx.save(model, path)
        onnx.checker.check_model(str(path))
        x = rng.integers(-2, 3, size=(args.batch, FEATURES)).astype(np.float32)

        start = time.perf_counter()
        (ours,) = ReferenceEvaluator(str(path), new_ops=[ArgMax]).run(None, {"x": x})
        t_ours = time.perf_counter() - start
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        (theirs,) = session.run(None, {"x": x})
        print(f"saved to {path.name}; ran {args.batch} rows in {t_ours * 1e3:.1f} ms")

    assert ours.dtype == np.int64 and ours.shape == (args.batch,)
    np.testing.assert_array_equal(ours, theirs)
    w, b = model_weights(model)
    logits = x @ w + b
    ties = int(((logits == logits.max(axis=1, keepdims=True)).sum(axis=1) > 1).sum())
    counts = np.bincount(ours, minlength=CLASSES)
    print(f"predictions equal to onnxruntime for all {args.batch} rows (tied maxima in {ties})")
    print("class counts:", " ".join(f"{c}:{n}" for c, n in enumerate(counts)))


def model_weights(model: onnx.ModelProto) -> tuple[np.ndarray, np.ndarray]:
    """``(W, b)`` read back from the model's initializers."""
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    return inits["W"], inits["b"]


if __name__ == "__main__":
    main()

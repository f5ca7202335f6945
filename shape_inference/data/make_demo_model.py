"""Build ``demo_classifier.onnx``, the small model bundled for the demo.

A linear classifier over 4 features with 3 classes, opset 13:

* ``logits = pixels @ weight + bias`` for a batch of symbolic size ``batch``;
* ``label = ArgMax(logits, axis=-1, keepdims=0)``: the predicted class per row;
* ``best_row = ArgMax(logits, axis=0, keepdims=1)``: per class, the row scoring best;
* ``prior_class = ArgMax(class_prior)``: the most frequent class of a fixed prior.

Run ``python shape_inference/data/make_demo_model.py`` to rebuild it next to this file.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUTPUT = Path(__file__).with_name("demo_classifier.onnx")


def build() -> onnx.ModelProto:
    """Return the demo model (deterministic)."""
    rng = np.random.default_rng(12)
    weight = rng.standard_normal((4, 3)).astype(np.float32)
    bias = np.array([0.1, -0.2, 0.05], dtype=np.float32)
    prior = np.array([0.2, 0.5, 0.3], dtype=np.float32)
    nodes = [
        helper.make_node("MatMul", ["pixels", "weight"], ["scores"], name="matmul"),
        helper.make_node("Add", ["scores", "bias"], ["logits"], name="add_bias"),
        helper.make_node("ArgMax", ["logits"], ["label"], name="argmax_label", axis=-1, keepdims=0),
        helper.make_node(
            "ArgMax", ["logits"], ["best_row"], name="argmax_best_row", axis=0, keepdims=1
        ),
        helper.make_node("ArgMax", ["class_prior"], ["prior_class"], name="argmax_prior"),
    ]
    graph = helper.make_graph(
        nodes,
        "demo_classifier",
        [helper.make_tensor_value_info("pixels", TensorProto.FLOAT, ["batch", 4])],
        [
            helper.make_tensor_value_info("label", TensorProto.INT64, ["batch"]),
            helper.make_tensor_value_info("best_row", TensorProto.INT64, [1, 3]),
            helper.make_tensor_value_info("prior_class", TensorProto.INT64, [1]),
        ],
        initializer=[
            numpy_helper.from_array(weight, "weight"),
            numpy_helper.from_array(bias, "bias"),
            numpy_helper.from_array(prior, "class_prior"),
        ],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="shape_inference demo"
    )
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def main(argv: list[str] | None = None) -> int:
    """Write the model to the path given, or next to this file."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else OUTPUT
    onnx.save(build(), path)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

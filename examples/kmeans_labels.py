"""A k-means labeller as ONNX converters write it, its ArgMin on the numba kernel.

The model computes each point's squared distance to every centre and labels the point
with the nearest centre: ``label = ArgMin(ReduceSum((x - C)**2, axis=2), axis=1)``, with
a symbolic batch dimension ``"batch"``. It is typed with
``shape_inference.infer_shapes`` (the ArgMin output becomes ``int64[batch]``), run by
``NumbaReferenceEvaluator`` (ArgMax and ArgMin on the numba kernels, every other node
on onnx's reference implementation) and compared with onnxruntime and with numpy.

Points and centres are small integers stored as float32, so every engine computes the
distances exactly and meets the same ties (a point as far from two centres): ties must
go to the first centre in all of them.

Usage: ``python examples/kmeans_labels.py [--batch N] [--centres K]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import shape_inference
from argmax_numba.onnx_ops import NumbaReferenceEvaluator

FEATURES = 8


def build_labeller(centres: np.ndarray) -> onnx.ModelProto:
    """Unsqueeze -> Sub -> Mul -> ReduceSum -> ArgMin, the output's shape left to
    inference."""
    k = centres.shape[0]
    nodes = [
        helper.make_node("Unsqueeze", ["x", "axis1"], ["points"]),  # (batch, 1, features)
        helper.make_node("Sub", ["points", "C"], ["diff"]),  # (batch, k, features)
        helper.make_node("Mul", ["diff", "diff"], ["squares"]),
        helper.make_node("ReduceSum", ["squares", "axis2"], ["dist"], keepdims=0),
        helper.make_node("ArgMin", ["dist"], ["label"], axis=1, keepdims=0),
    ]
    initializers = [
        numpy_helper.from_array(centres.reshape(1, k, FEATURES), "C"),
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
        numpy_helper.from_array(np.array([2], np.int64), "axis2"),
    ]
    graph = helper.make_graph(
        nodes,
        "kmeans_labeller",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", FEATURES])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, None)],
        initializer=initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4096, help="points to label")
    parser.add_argument("--centres", type=int, default=12, help="number of centres")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(7)
    centres = rng.integers(-3, 4, size=(args.centres, FEATURES)).astype(np.float32)
    model = shape_inference.infer_shapes(build_labeller(centres))
    onnx.checker.check_model(model)
    out_type = shape_inference.format_type(model.graph.output[0].type)
    print(f"inferred type of 'label': {out_type}")
    assert out_type == "int64[batch]", out_type

    x = rng.integers(-3, 4, size=(args.batch, FEATURES)).astype(np.float32)
    start = time.perf_counter()
    (ours,) = NumbaReferenceEvaluator(model).run(None, {"x": x})
    t_ours = time.perf_counter() - start
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (theirs,) = session.run(None, {"x": x})
    print(f"labelled {args.batch} points in {t_ours * 1e3:.1f} ms")

    assert ours.dtype == np.int64 and ours.shape == (args.batch,)
    np.testing.assert_array_equal(ours, theirs)
    dist = ((x[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(ours, np.argmin(dist, axis=1))
    ties = int(((dist == dist.min(axis=1, keepdims=True)).sum(axis=1) > 1).sum())
    print(
        f"labels equal to onnxruntime and numpy for all {args.batch} points "
        f"(nearest centres tied for {ties})"
    )
    counts = np.bincount(ours, minlength=args.centres)
    print("points per centre:", " ".join(f"{c}:{n}" for c, n in enumerate(counts)))


if __name__ == "__main__":
    main()

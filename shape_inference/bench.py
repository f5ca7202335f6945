"""Benchmark: this package's ``infer_shapes`` against onnx's on a 5,000-node model.

``python -m shape_inference.bench [--nodes N] [--repeats R]``

The model is a chain of alternating ArgMax (keepdims=1, axis cycling over the last
three dims) and Cast nodes on a float input of shape ``[batch, 16, 32, 32]``. Both
functions run on the same model, interleaved (onnx, ours, onnx, ours...) after a
warm-up; the medians of the wall-clock and CPU times are compared, and their ratio
against :data:`TARGET_RATIO`.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable, Sequence

import onnx
from onnx import TensorProto, helper

from ._graph import infer_shapes

__all__ = ["TARGET_RATIO", "build_chain_model", "main", "measure"]

#: The most this package's ``infer_shapes`` may take, as a multiple of onnx's own pass on
#: the same model. It runs onnx's pass itself and then visits every node in Python, so it
#: cannot be faster than onnx; the bound keeps that visit cheap.
TARGET_RATIO = 3.0


def build_chain_model(n_nodes: int = 5000) -> onnx.ModelProto:
    """ArgMax/Cast chain with ``n_nodes`` nodes (half of each), opset 13."""
    if n_nodes < 2 or n_nodes % 2:
        raise ValueError("n_nodes must be an even number >= 2")
    nodes = []
    previous = "x"
    for i in range(n_nodes // 2):
        nodes.append(
            helper.make_node(
                "ArgMax", [previous], [f"argmax_{i}"], name=f"argmax_{i}", axis=1 + i % 3
            )
        )
        to = TensorProto.FLOAT if i % 2 else TensorProto.FLOAT16
        nodes.append(
            helper.make_node("Cast", [f"argmax_{i}"], [f"cast_{i}"], name=f"cast_{i}", to=to)
        )
        previous = f"cast_{i}"
    graph = helper.make_graph(
        nodes,
        "argmax_cast_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16, 32, 32])],
        [helper.make_tensor_value_info(previous, TensorProto.UNDEFINED, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _time(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def measure(model: onnx.ModelProto, repeats: int = 21) -> dict[str, list[tuple[float, float]]]:
    """Interleaved (wall, CPU) times in seconds of each contender, ``repeats`` runs each.

    Contenders: ``onnx`` (onnx's ``infer_shapes``) and ``ours`` (this package's).
    """
    contenders: dict[str, Callable[[], object]] = {
        "onnx": lambda: onnx.shape_inference.infer_shapes(model),
        "ours": lambda: infer_shapes(model),
    }
    for fn in contenders.values():  # warm-up
        fn()
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            times[name].append(_time(fn))
    return times


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print medians and the ratios."""
    parser = argparse.ArgumentParser(prog="python -m shape_inference.bench")
    parser.add_argument("--nodes", type=int, default=5000, help="number of nodes (even)")
    parser.add_argument("--repeats", type=int, default=21, help="timed runs of each")
    args = parser.parse_args(argv)

    model = build_chain_model(args.nodes)
    times = measure(model, args.repeats)
    wall = {name: statistics.median(t[0] for t in runs) for name, runs in times.items()}
    cpu = {name: statistics.median(t[1] for t in runs) for name, runs in times.items()}
    print(f"model: ArgMax/Cast chain, {args.nodes} nodes; {args.repeats} interleaved runs each")
    print(f"{'':34s} {'wall median':>12s} {'CPU median':>12s}")
    labels = {
        "onnx": "onnx.shape_inference.infer_shapes",
        "ours": "shape_inference.infer_shapes",
    }
    for name, label in labels.items():
        print(f"{label:34s} {wall[name] * 1e3:9.2f} ms {cpu[name] * 1e3:9.2f} ms")
    print(
        f"ratio ours/onnx: {wall['ours'] / wall['onnx']:.2f} wall, "
        f"{cpu['ours'] / cpu['onnx']:.2f} CPU (target <= {TARGET_RATIO:g})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

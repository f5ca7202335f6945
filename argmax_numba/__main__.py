"""Demo: ``python -m argmax_numba`` runs ArgMax and ArgMin on generated tensors and
compares them with numpy, then infers the output types of a small bundled ONNX model."""

from __future__ import annotations

import argparse
import time
from importlib import resources

import numpy as np

from . import argmax, argmin


def _best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


# (ours, numpy's, the dtypes shown) for each operator.
_OPERATORS = (
    ("ArgMax", argmax, np.argmax, (np.float32, np.float64, np.int8, np.uint16)),
    ("ArgMin", argmin, np.argmin, (np.float32, np.int8)),
)


def run_tensors(size: int, repeats: int) -> None:
    rng = np.random.default_rng(0)
    print(f"ArgMax and ArgMin on generated tensors (best of {repeats} runs, after one call)")
    head = ("op", "dtype", "shape", "axis", "ours ms", "numpy ms", "speed-up")
    print("{:>6} {:>8} {:>16} {:>4}  {:>8} {:>8}  {:>8}  same".format(*head))
    for op, ours_fn, numpy_fn, dtypes in _OPERATORS:
        for dtype in dtypes:
            x = (rng.standard_normal((size, size)) * 50).astype(dtype)
            for axis in (0, 1):
                start = time.perf_counter()
                ours = ours_fn(x, axis, 0)
                first = time.perf_counter() - start
                t_ours = _best_of(lambda: ours_fn(x, axis, 0), repeats)  # noqa: B023
                t_np = _best_of(lambda: numpy_fn(x, axis), repeats)  # noqa: B023
                same = bool((ours == numpy_fn(x, axis)).all())
                print(
                    f"{op:>6} {np.dtype(dtype).name:>8} {x.shape!s:>16} {axis:>4}  "
                    f"{t_ours * 1e3:8.2f} {t_np * 1e3:8.2f}  {t_np / t_ours:7.1f}x  {same}   "
                    f"(first call {first:.2f} s)"
                )
    x = np.array([[1.0, np.nan, 3.0, np.nan], [-1.0, 0.0, -0.0, -1.0]], dtype=np.float32)
    print("\nONNX semantics on", x.tolist(), "(NaN wins, -0.0 == +0.0)")
    for op, ours_fn, _, _ in _OPERATORS:
        first, last = ours_fn(x, 1, 0).tolist(), ours_fn(x, 1, 0, 1).tolist()
        print(f"  {op}: first occurrence {first}, last occurrence {last}")


def run_shape_inference() -> None:
    import onnx

    import shape_inference

    path = resources.files("shape_inference") / "data" / "demo_classifier.onnx"
    model = onnx.load_from_string(path.read_bytes())
    print(f"\nShape inference on the bundled model {path.name}:")
    for typing in shape_inference.infer_argmax_argmin_types(model):
        print(f"  {typing}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m argmax_numba", description=__doc__)
    parser.add_argument("--size", type=int, default=2048, help="side of the square tensors")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per case")
    args = parser.parse_args(argv)
    run_tensors(args.size, args.repeats)
    run_shape_inference()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""onnxruntime's ArgMax as a benchmark competitor.

Each case gets its own one-node ArgMax-13 model and CPU session with one intra-op
thread per core and idle-thread spinning off, so that onnxruntime's pool does not
keep cores busy while the other competitors are timed. Whether onnxruntime has a
kernel for a dtype is found out by building and running the session: where it has
none the case reports "n/a". Where onnxruntime inserts a ``Cast`` in front of the node
(float16 on CPU) the timing includes that cast, and the row says so.
"""

from __future__ import annotations

import functools
import os
import tempfile

import numpy as np

__all__ = ["OrtCompetitor", "ort_version"]


def _ort():
    """The onnxruntime module, or None where it is not installed."""
    try:
        import onnxruntime
    except ImportError:
        return None
    return onnxruntime


def ort_version() -> str:
    """onnxruntime's version, or "not installed"."""
    ort = _ort()
    return ort.__version__ if ort is not None else "not installed"


def _model_bytes(dtype: np.dtype, shape, axis: int, keepdims: int, last: int) -> bytes:
    """A serialized one-node ArgMax (opset 13) model with a static input shape."""
    from onnx import TensorProto, helper

    if dtype.name == "bfloat16":
        elem = TensorProto.BFLOAT16
    else:
        elem = helper.np_dtype_to_tensor_dtype(dtype)
    x = helper.make_tensor_value_info("x", elem, list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    node = helper.make_node(
        "ArgMax", ["x"], ["y"], axis=axis, keepdims=keepdims, select_last_index=last
    )
    graph = helper.make_graph([node], "argmax_bench", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return model.SerializeToString()


def _options(ort, optimized_path: str | None = None):
    so = ort.SessionOptions()
    so.intra_op_num_threads = os.cpu_count() or 1
    so.inter_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.log_severity_level = 3
    if optimized_path is not None:
        so.optimized_model_filepath = optimized_path
    return so


@functools.cache
def inserted_cast(dtype_name: str) -> bool:
    """True where onnxruntime runs a ``Cast`` before ArgMax for this dtype (found by
    saving the optimized graph of a tiny model and looking for the node)."""
    import onnx

    from .cases import DTYPES

    ort = _ort()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "optimized.onnx")
        model = _model_bytes(DTYPES[dtype_name], (4, 4), 1, 1, 0)
        try:
            ort.InferenceSession(model, _options(ort, path), providers=["CPUExecutionProvider"])
            return any(n.op_type == "Cast" for n in onnx.load(path).graph.node)
        except Exception:
            return False


class OrtCompetitor:
    """A session for one case; ``call`` is None and ``why`` says why when unusable."""

    def __init__(self, x: np.ndarray, axis: int, keepdims: int, last: int):
        self.call = None
        self.why = ""
        self.notes: list[str] = []
        ort = _ort()
        if ort is None:
            self.why = "onnxruntime not installed"
            return
        try:
            model = _model_bytes(x.dtype, x.shape, axis, keepdims, last)
            session = ort.InferenceSession(model, _options(ort), providers=["CPUExecutionProvider"])
            feed = {"x": x}
            session.run(None, feed)
        except Exception as exc:
            self.why = _short_error(exc)
            return
        self.call = functools.partial(_run_first, session, feed)
        if inserted_cast(x.dtype.name):
            self.notes.append(f"ort casts {x.dtype.name}")
        if not x.flags.c_contiguous:
            self.notes.append("ort copies to C order")


def _run_first(session, feed):
    return session.run(None, feed)[0]


def _short_error(exc: Exception) -> str:
    text = str(exc)
    if "NOT_IMPLEMENTED" in text or "Could not find an implementation" in text:
        return "no ort kernel"
    return f"ort error: {type(exc).__name__}"

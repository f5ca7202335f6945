"""The ONNX and dask examples run as scripts, as a user would run them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parent.parent


def run_example(name: str, *args: str) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_onnx_classifier(tmp_path):
    path = tmp_path / "model.onnx"
    out = run_example("onnx_classifier.py", str(path), "--batch", "500")
    assert "inferred type of 'label': int64[batch]" in out
    assert "predictions equal to onnxruntime for all 500 rows" in out
    model = onnx.load(path)
    assert [n.op_type for n in model.graph.node] == ["MatMul", "Add", "ArgMax"]
    dims = model.graph.output[0].type.tensor_type.shape.dim
    assert [d.dim_param for d in dims] == ["batch"]


def test_onnx_classifier_default_temp_dir():
    out = run_example("onnx_classifier.py", "--batch", "64")
    assert "predictions equal to onnxruntime for all 64 rows" in out


def test_dask_big_argmax_small_size():
    out = run_example("dask_big_argmax.py", "--gib", "0.02", "--chunk-mib", "2", "--cols", "512")
    assert "100% Completed" in out
    assert "equals dask.array.argmax for all 512 columns" in out
    assert "peak RSS" in out


def test_kmeans_labels_with_argmin():
    out = run_example("kmeans_labels.py", "--batch", "500", "--centres", "7")
    assert "inferred type of 'label': int64[batch]" in out
    assert "labels equal to onnxruntime and numpy for all 500 points" in out

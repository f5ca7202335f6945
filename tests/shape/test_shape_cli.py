"""The command line (``python -m shape_inference``) and the bundled demo model; the
command line lists ArgMax and ArgMin nodes, each line saying which operator it is."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from importlib.resources import files
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

import shape_inference as si
from shape_inference.__main__ import main

CONSOLE_SCRIPT = "shape-inference-argmax"
DEMO = files("shape_inference") / "data" / "demo_classifier.onnx"
# The directory the tested package is imported from (the subprocesses import it too).
ROOT = Path(si.__file__).resolve().parent.parent
# The script that makes the demo model: a source file of the repository, not package data.
DEMO_SCRIPT_DIR = Path(__file__).resolve().parents[2] / "shape_inference" / "data"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "shape_inference", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )


def bad_model(path: Path) -> Path:
    nodes = [
        helper.make_node("ArgMax", ["x"], ["y"], name="too_far", axis=3),
        helper.make_node("ArgMin", ["x"], ["z"], name="wrong_type", keepdims=0.5),
    ]
    graph = helper.make_graph(
        nodes,
        "bad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [
            helper.make_tensor_value_info("y", TensorProto.INT64, None),
            helper.make_tensor_value_info("z", TensorProto.INT64, None),
        ],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


# ---------------------------------------------------------------- demo model


def test_demo_model_is_bundled_and_reproducible():
    model = onnx.load_from_string(DEMO.read_bytes())
    onnx.checker.check_model(model, full_check=True)
    argmax = [n for n in model.graph.node if n.op_type == "ArgMax"]
    assert len(argmax) >= 2
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "batch"
    sys.path.insert(0, str(DEMO_SCRIPT_DIR))
    try:
        import make_demo_model
    finally:
        sys.path.pop(0)
    assert make_demo_model.build().SerializeToString() == DEMO.read_bytes()


def test_demo_types_match_onnx():
    model = onnx.load_from_string(DEMO.read_bytes())
    theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True, check_type=True)
    their_types = {v.name: v.type for v in (*theirs.graph.value_info, *theirs.graph.output)}
    typings = si.infer_argmax_types(model)
    assert len(typings) == 3
    outputs = {n.name: n.output[0] for n in model.graph.node}
    for typing in typings:
        assert typing.output_type == their_types[outputs[typing.path]]
    assert str(typings[0]) == "argmax_label (ArgMax): float[batch,3] -> int64[batch]"


# ---------------------------------------------------------------- subprocess


def test_cli_prints_types_and_writes_model(tmp_path):
    out = tmp_path / "annotated.onnx"
    result = run_cli(str(DEMO), "-o", str(out))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines == [
        "argmax_label (ArgMax): float[batch,3] -> int64[batch]",
        "argmax_best_row (ArgMax): float[batch,3] -> int64[1,3]",
        "argmax_prior (ArgMax): float[3] -> int64[1]",
    ]
    annotated = onnx.load(out)
    assert {v.name for v in annotated.graph.value_info} >= {"scores", "logits"}
    onnx.checker.check_model(annotated, full_check=True)


def test_cli_missing_file(tmp_path):
    result = run_cli(str(tmp_path / "nope.onnx"))
    assert result.returncode == 1
    assert "no such file" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_not_an_onnx_model(tmp_path):
    text = tmp_path / "notes.onnx"
    text.write_text("hello, this is not a model\n")
    result = run_cli(str(text))
    assert result.returncode == 1
    assert "not an ONNX model" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_model_with_errors(tmp_path):
    result = run_cli(str(bad_model(tmp_path / "bad.onnx")))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "too_far (ArgMax): attribute 'axis'" in result.stderr
    assert "wrong_type (ArgMin): attribute 'keepdims'" in result.stderr


def test_cli_usage_error():
    result = run_cli()
    assert result.returncode == 2
    assert "usage" in result.stderr


# ---------------------------------------------------------------- main()


def mixed_model() -> onnx.ModelProto:
    """ArgMax and ArgMin nodes in the main graph, an ArgMin in an If branch and one in a
    model-local function."""
    vi = helper.make_tensor_value_info
    branch = helper.make_graph(
        [helper.make_node("ArgMin", ["x"], ["t"], name="min_in_branch", axis=0)],
        "branch",
        [],
        [vi("t", TensorProto.INT64, None)],
    )
    function = helper.make_function(
        "local",
        "Lowest",
        ["a"],
        ["b"],
        [helper.make_node("ArgMin", ["a"], ["b"], name="min_in_function", keepdims=0)],
        [helper.make_opsetid("", 13)],
    )
    nodes = [
        helper.make_node("ArgMax", ["x"], ["hi"], name="max_row", axis=1, keepdims=0),
        helper.make_node("ArgMin", ["x"], ["lo"], name="min_row", axis=-1),
        helper.make_node("If", ["c"], ["br"], name="if_0", then_branch=branch, else_branch=branch),
        helper.make_node("Lowest", ["x"], ["fn"], domain="local", name="call_0"),
    ]
    graph = helper.make_graph(
        nodes,
        "mixed",
        [vi("x", TensorProto.FLOAT, ["B", 4]), vi("c", TensorProto.BOOL, [])],
        [vi(name, TensorProto.INT64, None) for name in ("hi", "lo", "br", "fn")],
    )
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid("local", 1)]
    return helper.make_model(graph, opset_imports=opsets, functions=[function])


def test_main_lists_argmax_and_argmin_nodes(tmp_path, capsys):
    model = mixed_model()
    path = tmp_path / "mixed.onnx"
    onnx.save(model, path)
    assert main([str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "max_row (ArgMax): float[B,4] -> int64[B]",
        "min_row (ArgMin): float[B,4] -> int64[B,1]",
        # (make_node stores attributes sorted by name: else_branch comes first)
        "if_0/else_branch/min_in_branch (ArgMin): float[B,4] -> int64[1,4]",
        "if_0/then_branch/min_in_branch (ArgMin): float[B,4] -> int64[1,4]",
        "local.Lowest/min_in_function (ArgMin): float[B,4] -> int64[4]",
    ]
    # the output types written by hand above are onnx's too
    theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True, check_type=True)
    their_types = {v.name: si.format_type(v.type) for v in theirs.graph.output}
    assert their_types == {
        "hi": "int64[B]",
        "lo": "int64[B,1]",
        "br": "int64[1,4]",
        "fn": "int64[4]",
    }


def test_main_without_argmax_or_argmin(tmp_path, capsys):
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "plain",
        [vi("x", TensorProto.FLOAT, [2])],
        [vi("y", TensorProto.FLOAT, None)],
    )
    path = tmp_path / "plain.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    assert main([str(path)]) == 0
    assert capsys.readouterr().out == "no ArgMax or ArgMin node\n"


def test_main_exit_codes(tmp_path, capsys):
    assert main([str(DEMO)]) == 0
    assert "argmax_prior (ArgMax): float[3] -> int64[1]" in capsys.readouterr().out

    assert main([str(tmp_path / "missing.onnx")]) == 1
    assert "no such file" in capsys.readouterr().err

    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    assert main([str(empty)]) == 1
    assert "not an ONNX model" in capsys.readouterr().err

    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(bytes(range(256)) * 4)
    assert main([str(garbage)]) == 1
    assert "not an ONNX model" in capsys.readouterr().err

    assert main([str(tmp_path)]) == 1
    assert "directory" in capsys.readouterr().err

    assert main([str(bad_model(tmp_path / "bad.onnx"))]) == 1
    assert "2 problem(s) in 2 node(s)" in capsys.readouterr().err

    unwritable = tmp_path / "missing_dir" / "out.onnx"
    assert main([str(DEMO), "-o", str(unwritable)]) == 1
    assert "cannot write" in capsys.readouterr().err


def test_console_script_runs_main():
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == CONSOLE_SCRIPT]
    assert script.load() is main


def test_main_help():
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0

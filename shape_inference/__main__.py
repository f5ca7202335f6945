"""Command line: infer the types of the ArgMax and ArgMin nodes of an ONNX model.

Usage: ``python -m shape_inference MODEL.onnx [-o OUT.onnx]``

Prints one line per ArgMax or ArgMin node, ``<path> (<op type>): <input type> ->
<output type>`` (``no ArgMax or ArgMin node`` if the model has none), and with ``-o``
writes the model annotated with every inferred type. Exit status 0 on success, 1 with a
one-paragraph message on standard error for a missing file, a file that is not an ONNX
model, or a model with errors (2 for wrong command-line usage).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import onnx
from google.protobuf.message import DecodeError

from ._graph import infer
from .errors import ShapeInferenceError

__all__ = ["main"]


class _Failure(Exception):
    """A readable reason to stop with exit status 1."""


def _load(path: str) -> onnx.ModelProto:
    if not os.path.exists(path):
        raise _Failure(f"{path}: no such file")
    if os.path.isdir(path):
        raise _Failure(f"{path}: is a directory, not an ONNX model file")
    try:
        model = onnx.load(path)
    except (DecodeError, ValueError, RuntimeError, UnicodeDecodeError) as exc:
        raise _Failure(f"{path}: not an ONNX model ({exc})") from None
    except OSError as exc:
        raise _Failure(f"{path}: cannot read ({exc.strerror or exc})") from None
    if not model.HasField("graph") or model.ir_version <= 0 or not len(model.opset_import):
        raise _Failure(f"{path}: not an ONNX model (no graph, IR version or opset import)")
    return model


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m shape_inference",
        description="Infer the output types of the ArgMax and ArgMin nodes of an ONNX model.",
    )
    parser.add_argument("model", help="path of the ONNX model")
    parser.add_argument("-o", "--output", help="write the annotated model to this path")
    args = parser.parse_args(argv)

    try:
        model = _load(args.model)
        try:
            result, typings = infer(model)
        except ShapeInferenceError as exc:
            raise _Failure(f"{args.model}: {exc}") from None
        for typing in typings:
            print(typing)
        if not typings:
            print("no ArgMax or ArgMin node")
        if args.output:
            try:
                onnx.save(result, args.output)
            except (OSError, ValueError) as exc:
                raise _Failure(f"{args.output}: cannot write ({exc})") from None
    except _Failure as failure:
        print(f"error: {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

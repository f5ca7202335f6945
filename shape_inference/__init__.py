"""ONNX ArgMax and ArgMin shape inference (opsets 1, 11, 12 and 13), without numba.

ArgMin has the same attributes, input types and shape rule as ArgMax; both are typed and
checked by one rule, and everything below that handles ArgMax handles ArgMin alike.

Public API:

* :func:`argmax_output_shape`: output shape from an input shape and the attributes (for
  ArgMax and ArgMin alike);
* :func:`argmax_output_type`, :func:`argmin_output_type`: output ``TypeProto`` of one
  ArgMax, respectively ArgMin, ``NodeProto``;
* :func:`infer_shapes`: a typed copy of a whole ``ModelProto`` (graphs, subgraphs,
  model-local functions); :func:`infer_argmax_argmin_types` lists the types of each
  ArgMax and ArgMin node (:class:`ArgMaxTyping` records, whose ``op_type`` tells them
  apart), :func:`infer_argmax_types` those of the ArgMax nodes only;
* :func:`register` and friends: inference rules for other (e.g. custom) operators;
* :class:`ShapeInferenceError`: raised with every offending node of a model;
* :func:`format_type`: short text form of a type, e.g. ``int64[batch,1]``.

Command line: ``python -m shape_inference MODEL.onnx [-o OUT.onnx]``.
"""

from ._graph import ArgMaxTyping, infer_argmax_argmin_types, infer_argmax_types, infer_shapes
from ._node import argmax_output_type, argmin_output_type
from ._registry import InferenceRule, get_rule, register, registered, unregister
from ._shape import Dim, argmax_output_shape
from ._types import format_type
from .errors import Issue, Problem, RuleError, ShapeInferenceError

__all__ = [
    "ArgMaxTyping",
    "Dim",
    "InferenceRule",
    "Issue",
    "Problem",
    "RuleError",
    "ShapeInferenceError",
    "argmax_output_shape",
    "argmax_output_type",
    "argmin_output_type",
    "format_type",
    "get_rule",
    "infer_argmax_argmin_types",
    "infer_argmax_types",
    "infer_shapes",
    "register",
    "registered",
    "unregister",
]

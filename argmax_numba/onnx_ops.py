"""Run the numba ArgMax and ArgMin inside ONNX models, through onnx's ``ReferenceEvaluator``.

* :class:`ArgMax` and :class:`ArgMin` replace onnx's own:
  ``ReferenceEvaluator(model, new_ops=[ArgMax, ArgMin])`` runs every ArgMax and ArgMin
  node (any opset: 1, 11, 12, 13 and later) on the numba kernels and every other node on
  onnx's reference implementation. The evaluator picks a ``new_ops`` class by its name
  alone (``ArgMax``, whatever the node's opset), so one class serves every version of
  its operator and reads the node's opset itself to apply that version's defaults.
* :class:`NumbaReferenceEvaluator` is a ``ReferenceEvaluator`` with both classes
  always installed, also inside model-local functions (which a plain evaluator builds
  without ``new_ops``) and in ``If``/``Loop``/``Scan`` bodies.
* :func:`run_model` runs a model once; :class:`NumbaArgMaxBackend` is an
  ``onnx.backend.base.Backend`` for onnx's backend test suite and other backend users.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from . import api as _api
from .dtypes import Extreme

__all__ = [
    "ArgMax",
    "ArgMin",
    "NumbaArgMaxBackend",
    "NumbaBackendRep",
    "NumbaReferenceEvaluator",
    "run_model",
]


def _opset(run_params: Mapping[str, Any], domain: str) -> int:
    """The version of ``domain`` the evaluator runs (its latest if it does not say)."""
    opsets = run_params.get("opsets") or {}
    version = opsets.get(domain) or opsets.get("ai.onnx")
    return int(version) if version else onnx.defs.onnx_opset_version()


class _ArgReduction(OpRun):
    """An ONNX ArgMax or ArgMin node (opsets 1, 11, 12, 13) computed by this package's
    function of the same name.

    Missing attributes take the defaults of the node's opset (``axis=0``,
    ``keepdims=1``, and from opset 12 on ``select_last_index=0``). A node of opset 1 or
    11 that sets ``select_last_index`` is rejected, as onnx's checker does.
    """

    op_domain = ""
    extreme: Extreme  # set by each operator's class

    def __init__(self, onnx_node: onnx.NodeProto, run_params: dict[str, Any], schema: Any = None):
        op_type = self.extreme.op_type
        self.opset_version = _opset(run_params, onnx_node.domain)
        if schema is None:
            # The schema of the node's opset gives the defaults of that version.
            schema = onnx.defs.get_schema(op_type, self.opset_version, "")
        if self.opset_version < 12 and any(
            a.name == "select_last_index" for a in onnx_node.attribute
        ):
            raise ValueError(
                f"{op_type} node {onnx_node.name!r}: attribute select_last_index needs "
                f"opset 12 or later, the model uses opset {self.opset_version}"
            )
        super().__init__(onnx_node, run_params, schema)

    def _run(self, data, axis=0, keepdims=1, select_last_index=0):
        function = _api.argmin if self.extreme is Extreme.MIN else _api.argmax
        return (function(data, axis=axis, keepdims=keepdims, select_last_index=select_last_index),)


class ArgMax(_ArgReduction):
    """ONNX ArgMax (opsets 1, 11, 12, 13) computed by :func:`argmax_numba.argmax`."""

    extreme = Extreme.MAX


class ArgMin(_ArgReduction):
    """ONNX ArgMin (opsets 1, 11, 12, 13) computed by :func:`argmax_numba.argmin`."""

    extreme = Extreme.MIN


class NumbaReferenceEvaluator(ReferenceEvaluator):
    """``ReferenceEvaluator`` whose ArgMax and ArgMin nodes run on the numba kernels,
    everywhere.

    Same arguments as ``ReferenceEvaluator``; classes given in ``new_ops`` come first,
    so a caller can still override ArgMax or ArgMin. Model-local functions are evaluated by
    instances of this class too, which is what carries the kernel into them.
    """

    def __init__(self, proto: Any, *args: Any, new_ops: list[type[OpRun]] | None = None, **kw: Any):
        super().__init__(proto, *args, new_ops=[*(new_ops or []), ArgMax, ArgMin], **kw)


def run_model(model: Any, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """Run ``model`` (a ``ModelProto``, a file name or serialized bytes) once on ``feeds``
    and return all its outputs, ArgMax and ArgMin nodes computed by the numba kernels."""
    return list(NumbaReferenceEvaluator(model).run(None, dict(feeds)))


def _is_cpu(device: str) -> bool:
    try:
        return Device(device).type == DeviceType.CPU
    except (AttributeError, ValueError):
        return False


class NumbaBackendRep(BackendRep):
    """A prepared model: runs it repeatedly with :class:`NumbaReferenceEvaluator`."""

    def __init__(self, model: onnx.ModelProto):
        self._session = NumbaReferenceEvaluator(model)
        inits = {i.name for i in model.graph.initializer}
        inits.update(i.values.name for i in model.graph.sparse_initializer)
        self._all_inputs = [i.name for i in model.graph.input]
        self._inputs = [n for n in self._all_inputs if n not in inits]
        self._outputs = [o.name for o in model.graph.output]

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Run on ``inputs``: a dict by name, a sequence in the order of the graph's
        inputs (initializers may be left out), or a single array for a one-input model."""
        if isinstance(inputs, Mapping):
            feeds = dict(inputs)
        else:
            if isinstance(inputs, np.ndarray) or not isinstance(inputs, Sequence):
                inputs = [inputs]
            names = self._inputs if len(inputs) <= len(self._inputs) else self._all_inputs
            if len(inputs) != len(names):
                raise ValueError(f"the model takes inputs {self._inputs}, got {len(inputs)} values")
            feeds = dict(zip(names, inputs, strict=True))
        outputs = self._session.run(None, feeds)
        return namedtupledict("Outputs", self._outputs)(*outputs)


class NumbaArgMaxBackend(Backend):
    """``onnx.backend.base.Backend`` running whole models on onnx's reference evaluator,
    with ArgMax and ArgMin on the numba kernels. CPU only."""

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return _is_cpu(device)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> NumbaBackendRep:
        if not cls.supports_device(device):
            raise RuntimeError(f"{cls.__name__} runs on CPU only, not on {device!r}")
        super().prepare(model, device, **kwargs)  # onnx.checker.check_model
        return NumbaBackendRep(model)

    @classmethod
    def run_model(
        cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Any,
        device: str = "CPU",
        outputs_info: Any = None,
        **kwargs: Any,
    ) -> tuple[Any, ...]:
        """Run one node; ``opset_version=`` chooses the opset of its domain (default: the
        latest onnx knows)."""
        if not cls.supports_device(device):
            raise RuntimeError(f"{cls.__name__} runs on CPU only, not on {device!r}")
        super().run_node(node, inputs, device, outputs_info, **kwargs)  # onnx.checker
        version = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        in_names = [n for n in node.input if n]
        out_names = [n for n in node.output if n]
        graph = onnx.helper.make_graph(
            [node],
            "run_node",
            [onnx.helper.make_empty_tensor_value_info(n) for n in in_names],
            [onnx.helper.make_empty_tensor_value_info(n) for n in out_names],
        )
        session = NumbaReferenceEvaluator(graph, opsets={node.domain or "": version})
        if isinstance(inputs, Mapping):
            feeds = dict(inputs)
        else:
            if isinstance(inputs, np.ndarray):
                inputs = [inputs]
            feeds = dict(zip(in_names, inputs, strict=True))
        return namedtupledict("Outputs", out_names)(*session.run(None, feeds))

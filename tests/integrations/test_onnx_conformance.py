"""onnx's own backend conformance cases for ArgMax and ArgMin, run on
:class:`NumbaArgMaxBackend`.

``onnx.backend.test.BackendTest`` builds a unittest case per node test and device; only
the ``test_argmax_*`` and ``test_argmin_*`` CPU cases are kept here, so none of them is
counted as a skip.
Building the suite computes every operator's test data (a few seconds, once).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import onnx.backend.test
import pytest
from onnx.backend.test.case.node import collect_testcases

import argmax_numba.api as api
from argmax_numba.onnx_ops import NumbaArgMaxBackend

PREFIXES = ("test_argmax_", "test_argmin_")
_KEEP = re.compile(rf"^({'|'.join(PREFIXES)}).*_cpu$")

with warnings.catch_warnings():  # onnx's data generation for other operators is noisy
    warnings.simplefilter("ignore", RuntimeWarning)
    backend_test = onnx.backend.test.BackendTest(NumbaArgMaxBackend, __name__)
for _prefix in PREFIXES:
    backend_test.include(rf"^{_prefix}")


def _only_arg_cpu(cases: dict[str, type]) -> dict[str, type]:
    """The test classes with nothing but the ArgMax and ArgMin CPU tests left in them."""
    kept = {}
    for name, cls in cases.items():
        for attr in [a for a in vars(cls) if a.startswith("test_") and not _KEEP.match(a)]:
            delattr(cls, attr)
        if any(a.startswith("test_") for a in vars(cls)):
            kept[name] = cls
    return kept


ONNX_CASES = _only_arg_cpu(backend_test.test_cases)
globals().update(ONNX_CASES)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_all_sixteen_node_cases_of_each_operator_run_on_cpu(prefix, tier):
    expected = {c.name for c in collect_testcases() if c.name.startswith(prefix)}
    assert len(expected) == 16
    collected = {
        attr.removesuffix("_cpu")
        for cls in ONNX_CASES.values()
        for attr in vars(cls)
        if attr.startswith(prefix)
    }
    assert collected == expected
    for cls in ONNX_CASES.values():
        for attr in vars(cls):
            if attr.startswith("test_"):
                assert not getattr(getattr(cls, attr), "__unittest_skip__", False), attr


def test_backend_refuses_other_devices():
    assert NumbaArgMaxBackend.supports_device("CPU")
    assert not NumbaArgMaxBackend.supports_device("CUDA")
    assert not NumbaArgMaxBackend.supports_device("TPU")


@pytest.mark.parametrize("prefix", PREFIXES)
def test_the_cases_run_on_the_numba_kernel(prefix, monkeypatch, tier):
    calls = []
    name = prefix.split("_")[1]  # argmax or argmin
    real = getattr(api, name)
    monkeypatch.setattr(api, name, lambda *a, **k: calls.append(1) or real(*a, **k))
    cases = [c for c in collect_testcases() if c.name.startswith(prefix)]
    for case in cases:
        rep = NumbaArgMaxBackend.prepare(case.model, "CPU")
        for inputs, expected in case.data_sets:
            np.testing.assert_array_equal(rep.run(inputs)[0], expected[0])
    assert len(calls) == sum(len(c.data_sets) for c in cases)

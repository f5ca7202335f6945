"""Drivers called from Python reach their task through its address: the types they pass
must be exactly those the task was compiled for (``Kernel.task_types``)."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from conftest import FLOATS
from numba import types

from argmax_numba._dtypes import KINDS
from argmax_numba._kernels import KERNELS


def _calls_by_address(driver, args) -> list[tuple]:
    """The argument types of every ``call_task`` in ``driver``, as numba types them
    (compiled afresh, without the on-disk cache, so that its typing is at hand)."""
    fresh = numba.njit(driver.py_func)
    signature = tuple(numba.typeof(a) for a in args)
    fresh.compile(signature)
    calltypes = fresh.overloads[signature].type_annotation.calltypes
    return [
        tuple(sig.args[1])
        for sig in calltypes.values()
        if sig is not None
        and len(sig.args) == 2
        and isinstance(sig.args[0], types.Integer)
        and isinstance(sig.args[1], types.BaseTuple)
    ]


@pytest.mark.parametrize("dtype", [FLOATS[1], FLOATS[3], np.dtype(np.uint64)], ids=str)
@pytest.mark.parametrize("writeable", [True, False], ids=["writeable", "readonly"])
def test_task_types_are_what_the_driver_passes(dtype, writeable):
    kind, view_dtype = KINDS[dtype]
    k = KERNELS[(kind, False)]
    cases = [
        (k.rows, (4, 9), ()),
        (k.row_pieces, (4, 9), (2,)),
        (k.short_rows[2], (4, 4), ()),
        (k.cols, (2, 9, 5), (64,)),
        (k.narrow, (2, 9, 5), (4, 1)),
    ]
    for kernel, shape, extra in cases:
        x = np.zeros(shape, view_dtype)
        x.flags.writeable = writeable
        out = np.empty(shape[:1] + shape[2:], np.int64)
        calls = _calls_by_address(kernel.driver, (x, out, 0, *extra, 0))
        assert calls == [kernel.task_types(view_dtype, writeable)], kernel.task

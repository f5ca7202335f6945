"""Drivers reach their task through its address, and compiled callers reach drivers and
tasks through addresses in a table: the types passed must be exactly those the code
was compiled for (``Kernel.task_types``, ``Kernel.driver_types``)."""

from __future__ import annotations

import itertools

import numba
import numpy as np
import pytest
from conftest import FLOATS
from numba import types

from argmax_numba import _task_table
from argmax_numba._dtypes import kernel_view
from argmax_numba._kernels import KERNELS
from argmax_numba._task_table import run_kernel


def _calls_by_address(fn, args) -> list[tuple]:
    """The argument types of every ``call_task`` in ``fn`` called with ``args`` (values,
    or their numba types), as numba types them (compiled afresh, without the on-disk
    cache, so that its typing is at hand)."""
    fresh = numba.njit(fn.py_func)
    signature = tuple(a if isinstance(a, types.Type) else numba.typeof(a) for a in args)
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
    kind, view_dtype = kernel_view(dtype)
    k = KERNELS[(kind, False)]
    cases = [
        (k.rows, (4, 9), ()),
        (k.chunk_rows, (4, 9), ()),
        (k.group_rows, (4, 9), ()),
        (k.row_pieces, (4, 9), (2,)),
        (k.short_rows[2], (4, 4), ()),
        (k.cols, (2, 9, 5), (64,)),
        (k.narrow, (2, 9, 5), (4, 1, 0)),
        (k.side_cols, (2, 9, 5), (5,)),
        (k.each_cols, (2, 9, 5), (5,)),
    ]
    for kernel, shape, extra in cases:
        x = np.zeros(shape, view_dtype)
        x.flags.writeable = writeable
        out = np.empty(shape[:1] + shape[2:], np.int64)
        args = (x, out, 0, *extra, 0)
        calls = _calls_by_address(kernel.driver, args)
        assert calls == [kernel.task_types(view_dtype, writeable)], kernel.driver
        # From Python the driver is compiled for these types; compiled callers use them.
        python_types = tuple(numba.typeof(a) for a in args)
        assert python_types == kernel.driver_types(view_dtype, writeable), kernel.driver
        # A task that calls other kernels' tasks passes them their own task types.
        helpers = [getattr(k, h).task_types(view_dtype, writeable) for h in kernel.helpers]
        for task in kernel.tasks if helpers else ():
            assert _calls_by_address(task, kernel.task_types(view_dtype, writeable)) == helpers


def test_table_slots_are_distinct():
    combos = itertools.product(
        _task_table.KERNEL_NAMES,
        _task_table._KINDS,
        _task_table._VIEWS,
        (False, True),
        (_task_table.TASK_FIRST, _task_table.TASK_LAST, _task_table.SERIAL, _task_table.PARALLEL),
    )
    slots = [_task_table._slot(*c) for c in combos]
    assert len(set(slots)) == len(slots) == _task_table._SLOTS
    assert min(slots) == 0 and max(slots) == _task_table._SLOTS - 1


def test_run_kernel_checks_argument_types():
    kind = kernel_view(np.dtype(np.float32))[0]

    @numba.njit
    def wrong_last(x, out):
        run_kernel((x, out, np.int32(0)), 0, kind, False, 0)

    x = np.zeros((3, 4), np.float32)
    with pytest.raises(numba.core.errors.TypingError, match="rows takes"):
        wrong_last(x, np.empty(3, np.int64))

"""Drivers reach their task through its address, and compiled callers reach drivers and
tasks through addresses in a table: the types passed must be exactly those the code
was compiled for (``Kernel.task_types``, ``Kernel.driver_types``)."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest
from conftest import FLOATS, PARALLEL, SERIAL, numpy_argmax, use_thresholds
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from argmax_numba import argmax
from argmax_numba.dtypes import KeyKind, kernel_view
from argmax_numba.kernels import registry
from argmax_numba.kernels.registry import KERNELS
from argmax_numba.planning import Kernel
from argmax_numba.runtime import table
from argmax_numba.runtime.calls import task_address
from argmax_numba.runtime.parallel import parallel_tasks, serial_tasks
from argmax_numba.runtime.table import planned, run_plan

# These tests check the fast kernels: they run on them whatever tier the process chose.
pytestmark = pytest.mark.usefixtures("fast_tier")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _calls_by_address(fn, args) -> list[tuple]:
    """The argument types of the task in every task loop (``ntasks, where, head,
    tail``: the task takes ``head``, its number, ``tail``) in ``fn`` called with ``args``
    (values, or their numba types), as numba types them (compiled afresh, without the
    on-disk cache, so that its typing is at hand)."""
    fresh = numba.njit(fn.py_func)
    signature = tuple(a if isinstance(a, types.Type) else numba.typeof(a) for a in args)
    fresh.compile(signature)
    calltypes = fresh.overloads[signature].type_annotation.calltypes
    calls = []
    for sig in filter(None, calltypes.values()):
        ints = [isinstance(a, types.Integer) for a in sig.args]
        tuples = [isinstance(a, types.BaseTuple) for a in sig.args]
        if ints == [True, True, False, False] and tuples == [False, False, True, True]:
            calls.append((*sig.args[2], types.int64, *sig.args[3]))
    return calls


@pytest.mark.parametrize("dtype", [FLOATS[1], FLOATS[3], np.dtype(np.uint64)], ids=str)
@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
def test_task_types_are_what_the_driver_passes(dtype, parallel):
    kind, view_dtype = kernel_view(dtype)
    k = KERNELS[(kind, parallel)]
    cases = [
        (k[Kernel.ROWS], (4, 9), ()),
        (k[Kernel.CHUNK_ROWS], (4, 9), ()),
        (k[Kernel.GROUP_ROWS], (4, 9), ()),
        (k[Kernel.ROW_PIECES], (4, 9), (2,)),
        (k[Kernel.SHORT_ROWS], (4, 4), ()),
        (k.for_python(Kernel.SHORT_ROWS, 4), (4, 4), ()),
        (k[Kernel.COLS], (2, 9, 5), (64,)),
        (k[Kernel.NARROW], (2, 9, 5), (4, 1)),
        (k[Kernel.SIDE_COLS], (2, 9, 5), (5,)),
        (k[Kernel.EACH_COLS], (2, 9, 5), (5,)),
        (k[Kernel.EACH_SHORT_COLS], (2, 9, 2), (2,)),
        (k[Kernel.EACH_WIDE_COLS], (2, 9, 3), (3,)),
        (k[Kernel.BLOCK_COLS], (2, 9, 4), (4,)),
    ]
    assert {c[0].shape for c in cases} >= set(registry.SHAPES.values())
    for kernel, shape, extra in cases:
        # The input as the drivers take it, writeable or not: typed read-only.
        x = np.zeros(shape, view_dtype)
        x.flags.writeable = False
        out = np.empty(shape[:1] + shape[2:], np.int64)
        args = (x, out, 0, *extra, 0)
        calls = _calls_by_address(kernel.driver, args)
        assert calls == [kernel.task_types(view_dtype)], kernel.driver
        python_types = tuple(numba.typeof(a) for a in args)
        assert python_types == kernel.driver_types(view_dtype), kernel.driver


@pytest.mark.parametrize(("shape", "out_shape"), [((9,), ()), ((9,), (1,)), ((2, 3, 9), (2, 3))])
def test_row_drivers_of_other_ranks_pass_their_tasks_rows(shape, out_shape):
    # Python passes a small input and its result to the row drivers as they are; the
    # drivers pass their tasks the same types as ever, rows and a flat result.
    kind, view_dtype = kernel_view(FLOATS[1])
    ranks = registry.Ranks(len(shape), len(out_shape))
    x = np.zeros(shape, view_dtype)
    x.flags.writeable = False
    args = (x, np.empty(out_shape, np.int64), 0, 0)
    for kernel in (Kernel.ROWS, Kernel.GROUP_ROWS, Kernel.SHORT_ROWS):
        code = KERNELS[(kind, False)][kernel]
        assert code.shape.any_rank
        assert _calls_by_address(code.driver, args) == [code.task_types(view_dtype)]
        python_types = tuple(numba.typeof(a) for a in args)
        assert python_types == code.driver_types(view_dtype, ranks)


@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
def test_writeable_and_read_only_inputs_share_the_compiled_kernels(parallel, monkeypatch):
    # The drivers and tasks take the input typed read-only: a writeable input and a
    # read-only one of the same dtype run the same compiled code, compiled once.
    use_thresholds(monkeypatch, **(PARALLEL if parallel else SERIAL))
    kind, view_dtype = kernel_view(np.dtype(np.int16))
    rng = np.random.default_rng(5)
    x = rng.integers(-50, 50, (40, 33)).astype(np.int16)
    frozen = x.copy()
    frozen.flags.writeable = False
    element = numba.from_dtype(view_dtype)
    for axis, last in itertools.product((0, 1), (0, 1)):
        np.testing.assert_array_equal(argmax(x, axis, 0, last), numpy_argmax(x, axis, 0, last))
        np.testing.assert_array_equal(
            argmax(frozen, axis, 0, last), numpy_argmax(frozen, axis, 0, last)
        )
    ran = [
        code
        for code in KERNELS[(kind, parallel)].all_codes()
        if any(s[0].dtype == element for s in code.driver.signatures)
    ]
    assert ran  # (the calls above ran some kernel of this dtype)
    # (Every version of them for this dtype, whichever test compiled it, reads it so.)
    for code in ran:
        compiled = [s for s in code.driver.signatures if s[0].dtype == element]
        assert all(not s[0].mutable for s in compiled), compiled
        for last in (0, 1):
            tasks = [s for s in code.task_of(last).signatures if s[0].dtype == element]
            assert all(not s[0].mutable for s in tasks), tasks


_SLOT_PARTS = (
    Kernel,
    KeyKind,
    table._VIEWS,
    (table.TASK_FIRST, table.TASK_LAST, table.SERIAL, table.PARALLEL),
)


def test_table_slots_are_distinct():
    combos = itertools.product(*_SLOT_PARTS)
    slots = [table._slot(*c) for c in combos]
    assert len(set(slots)) == len(slots) == table._SLOTS
    assert min(slots) == 0 and max(slots) == table._SLOTS - 1
    # ``fill_slots`` finds what a slot holds from its number alone.
    for combo, slot in zip(itertools.product(*_SLOT_PARTS), slots, strict=True):
        assert tuple(table.slot_key(slot)) == combo
    assert table.PLAN_SLOT not in slots
    # A kernel's slots lie a fixed stride from the next kernel's (compiled callers
    # compute them from the kernel's number).
    for kernel, *rest in itertools.product(*_SLOT_PARTS):
        want = table._slot(kernel, *rest)
        assert int(kernel) * table._KERNEL_STRIDE + table._slot(0, *rest) == want


def test_run_plan_checks_argument_types():
    kind = int(kernel_view(np.dtype(np.float32))[0])

    @numba.njit
    def wrong_last(x, out):
        run_plan((x, out, np.int32(0)), planned(3, 4, 1, 4), kind, 0)

    x = np.zeros((3, 4), np.float32)
    with pytest.raises(numba.core.errors.TypingError, match="ROWS takes"):
        wrong_last(x, np.empty(3, np.int64))


def _record(out, seen, t, tag):
    # A task: adds 1 + tag at its number t and records the thread that ran it; fails on
    # t == -tag.
    if t == -tag:
        raise ValueError("task failed")
    out[t] += 1 + tag
    seen[t] = numba.get_thread_id()


_RECORD = numba.njit(no_cpython_wrapper=True)(_record)
_RECORD_TYPES = (types.int64[::1], types.int64[::1], types.int64, types.int64)


@numba.njit
def _run_serial(ntasks, where, out, seen, tag):
    serial_tasks(ntasks, where, (out, seen), (tag,))


def _run_parallel_tasks(ntasks, where, out, seen, tag):
    parallel_tasks(ntasks, where, (out, seen), (tag,))


_run_parallel = numba.njit(_run_parallel_tasks)
_run_parallel_nogil = numba.njit(nogil=True)(_run_parallel_tasks)


@pytest.mark.parametrize("run", [_run_serial, _run_parallel], ids=["serial", "parallel"])
def test_task_loops_run_every_task_once(run):
    # Against a plain count: every task number in range(ntasks) runs once, with the
    # arguments before and after its number; the parallel loop gives each thread one
    # range of consecutive tasks.
    where = task_address(_RECORD, _RECORD_TYPES)
    threads = numba.get_num_threads()
    for ntasks in (0, 1, 2, 3, 5, 64, 1001):
        out, seen = np.zeros(ntasks + 1, np.int64), np.full(ntasks + 1, -1, np.int64)
        run(ntasks, where, out, seen, 6)
        np.testing.assert_array_equal(out, np.r_[np.full(ntasks, 7), 0])
        ran = seen[:ntasks]
        assert (np.diff(ran) != 0).sum() < threads  # consecutive tasks stay together
        assert len(set(ran)) <= min(threads, max(ntasks, 1))


def test_task_loops_report_a_failed_task():
    where = task_address(_RECORD, _RECORD_TYPES)
    out, seen = np.zeros(8, np.int64), np.zeros(8, np.int64)
    with pytest.raises(ValueError, match="task failed"):
        _run_serial(8, where, out, seen, -3)
    out[:] = 0
    with pytest.raises(RuntimeError, match="a task failed"):
        _run_parallel(8, where, out, seen, -3)
    assert (np.delete(out, 3) == -2).all() and out[3] == 0  # the others ran


@intrinsic
def _gil_held(typingctx):
    # 1 where the calling thread holds the GIL (``PyGILState_Check``).
    def codegen(context, builder, sig, args):
        pyapi = context.get_python_api(builder)
        check = pyapi._get_function(ir.FunctionType(ir.IntType(32), []), name="PyGILState_Check")
        return builder.sext(builder.call(check, []), ir.IntType(64))

    return types.int64(), codegen


def _probe(held, ran, t, tag):
    # A task: whether the thread that ran it held the GIL.
    held[t] = _gil_held()
    ran[t] = tag


_PROBE = numba.njit(no_cpython_wrapper=True)(_probe)


def test_parallel_loop_runs_without_the_gil():
    # A compiled caller that holds the GIL (as ``@njit`` code without ``nogil`` does)
    # lets it go while the tasks run, as numba's prange loops do; one that does not hold
    # it does not take it. The serial loop keeps it, which shows the probe works.
    where = task_address(_PROBE, _RECORD_TYPES)
    for run, expected in ((_run_serial, 1), (_run_parallel, 0), (_run_parallel_nogil, 0)):
        held, ran = np.full(64, -1, np.int64), np.zeros(64, np.int64)
        run(64, where, held, ran, 1)
        assert (ran == 1).all()
        assert (held == expected).all(), (run, held)


def test_kernel_sets_are_created_on_first_use():
    # Importing the package creates no drivers (numba's dispatchers for all twenty sets,
    # ArgMax's and ArgMin's, would slow the import); a first call creates those of its
    # key kind and threading only.
    code = textwrap.dedent(
        """
        import numpy as np
        import argmax_numba
        from argmax_numba.dtypes import KeyKind
        from argmax_numba.kernels import registry
        before = len(registry.KERNELS)
        assert (argmax_numba.argmax(np.eye(3, dtype=np.float32), 1, 0) == [0, 1, 2]).all()
        print(before, list(registry.KERNELS) == [(KeyKind.F32, False)])
        """
    )
    env = {**os.environ, "ARGMAX_NUMBA_TIER": "fast"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=env
    ).stdout.split()
    assert out == ["0", "True"]
    assert len(set(registry.KERNEL_SETS)) == 20  # 5 key kinds x 2 operators x 2 threadings
    with pytest.raises(KeyError):
        registry.KERNELS[(99, True)]

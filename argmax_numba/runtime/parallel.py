"""numba's threads: which threading layer runs them, and the loops with which a driver
runs its tasks, serially or split between them.

The threading layer, and what to do after ``fork()``:
numba's default layer on Linux is GNU OpenMP, which aborts a child process forked
after the parent has used it ("fork() called from a process already using GNU
OpenMP") -- exactly what multiprocessing and process pools do. The TBB layer is safe
with both threads and fork, but pip installs ``libtbb`` where the dynamic loader does
not look, so numba reports it unavailable. This module loads it from the ``tbb``
distribution's own files and selects it, unless the user chose a layer through
``NUMBA_THREADING_LAYER`` or numba's threads are already running.

Where TBB still cannot be had, the wrapper falls back to the serial kernels in a
child forked after the parent ran parallel code under OpenMP, and serialises calls
under the ``workqueue`` layer, which is not thread-safe.

The task loops: the parallel loop calls the threading layer's ``parallel_for`` itself,
the function that numba's own parallel loops (``prange``) end in, with a small kernel of
its own that runs a range of tasks. A ``prange`` loop costs its function's first compile
far more than the loop: numba's parallel passes and a second function for the loop body.
Here the loop is plain code and the driver a serial function, which compiles faster,
and the calls take as long (docs/performance.md, "Parallel loop over the threading layer
instead of prange"). The tasks are split as ``prange`` splits its loop: into one range
of consecutive tasks per thread.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from contextlib import contextmanager
from importlib import metadata

import numba
from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

from .calls import launch_threads, native_call, native_status, thread_count_ir

__all__ = [
    "configure",
    "layer_lock",
    "parallel_allowed",
    "parallel_tasks",
    "serial_tasks",
]

_I8P = ir.IntType(8).as_pointer()
_I64 = ir.IntType(64)
# ``void kernel(char **args, intp *dimensions, intp *steps, void *data)``: the kernels
# that ``parallel_for`` runs, each on a range of items; ``parallel_for(kernel, args,
# dimensions, steps, data, inner_ndim, array_count, num_threads)`` (numba's
# ``build_gufunc_kernel`` declares it so).
_KERNEL_TYPE = ir.FunctionType(
    ir.VoidType(), [_I8P.as_pointer(), _I64.as_pointer(), _I64.as_pointer(), _I8P]
)
_PARALLEL_FOR_TYPE = ir.FunctionType(ir.VoidType(), [_I8P] * 5 + [_I64] * 3)
_FLAG = ir.IntType(8)
# The fields of the struct the parallel loop shares with its kernel: the task's address,
# the task count, the count of ranges, whether a task failed; the task's arguments.
_WHERE, _COUNT, _RANGES, _FAILED, _ARGS = range(5)


def _check(ntasks, where, head, tail) -> tuple:
    if not isinstance(ntasks, types.Integer) or not isinstance(where, types.Integer):
        raise errors.TypingError("task loops take an integer count and address")
    if not isinstance(head, types.BaseTuple) or not isinstance(tail, types.BaseTuple):
        raise errors.TypingError("task loops take the task's arguments as two tuples")
    return tuple(head), tuple(tail)


def _task_types(head_types: tuple, tail_types: tuple) -> tuple:
    return (*head_types, types.int64, *tail_types)


def _unpack(builder, head, tail, count_head: int, count_tail: int) -> tuple[list, list]:
    return (
        [builder.extract_value(head, i) for i in range(count_head)],
        [builder.extract_value(tail, i) for i in range(count_tail)],
    )


@intrinsic
def serial_tasks(typingctx, ntasks, where, head, tail):
    """``task(*head, t, *tail)`` for t in range(ntasks), in order, where ``where`` is
    the address of ``task`` compiled for those types (``calls.task_address``)."""
    head_types, tail_types = _check(ntasks, where, head, tail)
    arg_types = _task_types(head_types, tail_types)

    def codegen(context, builder, sig, args):
        n = context.cast(builder, args[0], sig.args[0], types.int64)
        heads, tails = _unpack(builder, args[2], args[3], len(head_types), len(tail_types))
        with cgutils.for_range(builder, n) as loop:
            native_call(context, builder, args[1], arg_types, [*heads, loop.index, *tails])
        return context.get_dummy_value()

    return types.none(ntasks, where, head, tail), codegen


@intrinsic
def parallel_tasks(typingctx, ntasks, where, head, tail):
    """``serial_tasks``, with the tasks split into one range of consecutive tasks per
    thread of numba's threading layer (fewer where there are fewer tasks), which run at
    once, without the GIL. A task that fails (it could only fail to allocate) raises
    ``RuntimeError`` once all have run."""
    launch_threads()  # the threading layer, and the symbols it defines
    head_types, tail_types = _check(ntasks, where, head, tail)
    arg_types = _task_types(head_types, tail_types)

    def codegen(context, builder, sig, args):
        module = builder.module
        n = context.cast(builder, args[0], sig.args[0], types.int64)
        threads = thread_count_ir(context, builder)  # and starts the layer on a cache load
        ranges = builder.select(builder.icmp_signed("<", n, threads), n, threads)
        # What the kernel reads: the fields up to _ARGS, then the task's arguments.
        heads, tails = _unpack(builder, args[2], args[3], len(head_types), len(tail_types))
        values = [args[1], n, ranges, _FLAG(0), *heads, *tails]
        fields = [_I64, _I64, _I64, _FLAG]
        fields += [context.get_value_type(t) for t in (*head_types, *tail_types)]
        shared = ir.LiteralStructType(fields)
        data = cgutils.alloca_once(builder, shared)
        for i, value in enumerate(values):
            builder.store(value, cgutils.gep_inbounds(builder, data, 0, i))

        kernel = _kernel(context, module, shared, arg_types, len(head_types))
        first = cgutils.alloca_once_value(builder, ir.Constant(_I8P, None))
        dims = cgutils.alloca_once_value(builder, ranges)
        steps = cgutils.alloca_once_value(builder, _I64(1))
        call = [first, dims, steps, builder.bitcast(data, _I8P)]
        with builder.if_else(builder.icmp_signed(">", ranges, _I64(1))) as (split, alone):
            with split, _gil_released(context, builder):
                parallel_for = cgutils.get_or_insert_function(
                    module, _PARALLEL_FOR_TYPE, "numba_parallel_for"
                )
                pointers = [builder.bitcast(a, _I8P) for a in (kernel, *call)]
                builder.call(parallel_for, [*pointers, _I64(0), _I64(1), threads])
            with alone, builder.if_then(builder.icmp_signed(">", ranges, _I64(0))):
                builder.call(kernel, call)
        failed = builder.load(cgutils.gep_inbounds(builder, data, 0, _FAILED))
        with builder.if_then(builder.icmp_unsigned("!=", failed, _FLAG(0)), likely=False):
            context.call_conv.return_user_exc(
                builder, RuntimeError, ("argmax: a task failed (out of memory?)",)
            )
        return context.get_dummy_value()

    return types.none(ntasks, where, head, tail), codegen


# The thread state that holds the GIL (3.10, 3.11), or this thread's where it holds the
# GIL (3.12 on): renamed in 3.13.
_HOLDER = (
    "PyThreadState_GetUnchecked" if sys.version_info >= (3, 13) else "_PyThreadState_UncheckedGet"
)


@contextmanager
def _gil_released(context, builder):
    """Code emitted within runs without the GIL, released if the calling thread holds it
    (a user's ``@njit`` function without ``nogil``; numba's ``prange`` loops release it
    too), so that other Python threads run meanwhile. Drivers called from Python do not
    hold it, and do not take it here (``PyGILState_Ensure`` would wait for it). Not
    ``PyGILState_Check``, which says yes to every thread in a process that has made a
    sub-interpreter: releasing a GIL this thread does not hold is a fatal error."""
    pyapi = context.get_python_api(builder)
    states = ir.FunctionType(_I8P, [])
    holder = builder.call(pyapi._get_function(states, name=_HOLDER), [])
    mine = builder.call(pyapi._get_function(states, name="PyGILState_GetThisThreadState"), [])
    nobody = ir.Constant(_I8P, None)
    held = builder.and_(
        builder.icmp_unsigned("==", holder, mine), builder.icmp_unsigned("!=", mine, nobody)
    )
    state = cgutils.alloca_once_value(builder, nobody)
    with builder.if_then(held):
        builder.store(pyapi.save_thread(), state)
    yield
    with builder.if_then(held):
        pyapi.restore_thread(builder.load(state))


def _kernel(context, module, shared, arg_types: tuple, count_head: int) -> ir.Function:
    """The kernel for ``parallel_for``: runs the tasks of its range of items (``args[0]``
    is the first item's number, as a pointer from 0 with a step of 1; ``dimensions[0]``
    the count), with the address, the task count, the number of items and the task's
    other arguments from the struct ``shared`` at ``data``."""
    fn = ir.Function(module, _KERNEL_TYPE, module.get_unique_name("argmax_numba_tasks"))
    fn.linkage = "internal"
    builder = ir.IRBuilder(fn.append_basic_block())
    args, dims, _, data = fn.args
    shared_ptr = builder.bitcast(data, shared.as_pointer())
    fields = [
        builder.load(cgutils.gep_inbounds(builder, shared_ptr, 0, i))
        for i in range(len(shared.elements))
    ]
    where, n, ranges = fields[_WHERE], fields[_COUNT], fields[_RANGES]
    rest = fields[_ARGS:]
    start = builder.ptrtoint(builder.load(args), _I64)
    with cgutils.for_range(builder, builder.load(dims)) as item:
        r = builder.add(start, item.index)
        t0 = builder.udiv(builder.mul(r, n), ranges)
        t1 = builder.udiv(builder.mul(builder.add(r, _I64(1)), n), ranges)
        with cgutils.for_range(builder, t1, start=t0) as task_loop:
            values = [*rest[:count_head], task_loop.index, *rest[count_head:]]
            status = native_status(context, builder, where, arg_types, values)
            with builder.if_then(status.is_error, likely=False):
                builder.store(_FLAG(1), cgutils.gep_inbounds(builder, shared_ptr, 0, _FAILED))
    builder.ret_void()
    return fn


# --- the threading layer ---------------------------------------------------------------
_state = {"forked_after_omp": False}
_lock = threading.Lock()


def _tbb_library() -> str | None:
    """Path of ``libtbb.so.12`` as installed by the ``tbb`` distribution, if any."""
    try:
        files = metadata.files("tbb") or []
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name.startswith("libtbb.so.12"):
            path = str(f.locate())
            if os.path.exists(path):
                return path
    return None


def _load_tbb() -> bool:
    try:
        from numba.np.ufunc import tbbpool

        return True
    except ImportError:
        pass
    path = _tbb_library()
    if path is None:
        return False
    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        from numba.np.ufunc import tbbpool  # noqa: F401
    except (OSError, ImportError):
        return False
    return True


def _launched_layer() -> str | None:
    """The threading layer numba has started, or None where it has started none."""
    from numba.np.ufunc import parallel as numba_parallel

    if not numba_parallel._is_initialized:
        return None
    return numba.threading_layer()


def _after_fork_in_child() -> None:
    if _launched_layer() == "omp":
        _state["forked_after_omp"] = True


def configure() -> None:
    """Select TBB where the user has not chosen a layer and threads are not yet running.
    Where numba's internals this relies on have moved, numba's own choice stands."""
    try:
        if "NUMBA_THREADING_LAYER" not in os.environ and _launched_layer() is None:
            if numba.config.THREADING_LAYER == "default" and _load_tbb():
                numba.config.THREADING_LAYER = "tbb"
    except (ImportError, AttributeError):
        return
    os.register_at_fork(after_in_child=_after_fork_in_child)


def parallel_allowed() -> bool:
    """False in a child forked after its parent ran OpenMP threads."""
    return not _state["forked_after_omp"]


def layer_lock() -> threading.Lock | None:
    """A lock to hold around parallel calls where the layer is not thread-safe."""
    return _lock if _launched_layer() in (None, "workqueue") else None

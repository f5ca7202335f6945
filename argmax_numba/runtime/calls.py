"""Calls of compiled code through its address.

A numba function that calls another links in a copy of the callee and optimises it
again (a ``prange`` loop does so twice: its body is a function of its own); for a
column task that is a large part of a first call. The drivers therefore receive the
compiled task's address at run time and call through it: the task is compiled once,
the driver stays small, and both are cached on disk separately (docs/performance.md,
"Tasks called through their address"). ``argmax`` inside users' ``@njit`` code calls
the drivers the same way, with addresses it finds in a table (``runtime.table``),
since an address held in their code would be stale in the next process.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = [
    "entry_point",
    "launch_threads",
    "native_call",
    "native_status",
    "native_value",
    "task_address",
    "thread_count",
    "thread_count_ir",
]


def launch_threads() -> None:
    """Start numba's threading layer, which defines the symbols that parallel code calls
    (imported here, not with the module, so that the portable tier never needs it)."""
    from numba.np.ufunc.parallel import _launch_threads

    _launch_threads()


def native_call(context, builder, address, arg_types: tuple, values: list) -> None:
    """Emit a call of the numba function at ``address`` (an LLVM i64) that takes
    ``arg_types`` and returns nothing; an exception it raises is passed on."""
    status = native_status(context, builder, address, arg_types, values)
    with builder.if_then(status.is_error, likely=False):
        context.call_conv.return_status_propagate(builder, status)


def native_status(context, builder, address, arg_types: tuple, values: list):
    """``native_call``, for code that cannot pass an exception on (a kernel of the
    threading layer): the call's status, which the caller checks itself."""
    fnty = context.call_conv.get_function_type(types.none, arg_types)
    function = builder.inttoptr(address, fnty.as_pointer())
    status, _ = context.call_conv.call_function(builder, function, types.none, arg_types, values)
    return status


def native_value(context, builder, address, return_type, arg_types: tuple, values: list):
    """``native_call`` of a function that returns a value of ``return_type``: the value."""
    fnty = context.call_conv.get_function_type(return_type, arg_types)
    function = builder.inttoptr(address, fnty.as_pointer())
    status, value = context.call_conv.call_function(
        builder, function, return_type, arg_types, values
    )
    with builder.if_then(status.is_error, likely=False):
        context.call_conv.return_status_propagate(builder, status)
    return value


def task_address(task, arg_types: tuple) -> int:
    """The address of ``task`` (a numba dispatcher) compiled for ``arg_types``,
    compiling it (or loading it from the on-disk cache) if it is not yet. The address
    stays valid for the life of the process."""
    task.compile(arg_types)
    compiled = task.overloads[arg_types]
    address = compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name)
    if not address:
        raise RuntimeError(f"no compiled code for {task.py_func.__qualname__}{arg_types}")
    return address


def entry_point(function, arg_types: tuple):
    """The Python entry point of ``function`` (a numba dispatcher) compiled for
    ``arg_types``, compiling it (or loading it from the disk cache) if it is not yet: a
    callable that skips numba's dispatch on the arguments' types, so its caller must pass
    exactly those types."""
    function.compile(arg_types)
    return function.overloads[arg_types].entry_point


@intrinsic
def thread_count(typingctx):
    """``numba.get_num_threads()``, called by the threading runtime's symbol name: numba's
    own version calls through a pointer held in Python, and code holding one cannot be
    cached on disk (users' functions that call ``argmax`` could not be)."""
    launch_threads()  # the runtime, and its symbols

    def codegen(context, builder, sig, args):
        return thread_count_ir(context, builder)

    return types.int64(), codegen


def thread_count_ir(context, builder) -> ir.Value:
    """``thread_count()`` in LLVM IR, an i64, for the code ``builder`` is emitting (which
    must have been typed after ``_launch_threads()``: it defines the symbol)."""
    # Code that calls the runtime must start it when it is loaded from the disk cache.
    # numba arranges that only for code with parallel loops of its own or linked in, and
    # the parallel drivers are called through their addresses, not linked in.
    context.active_code_library._reload_init.add(launch_threads)
    # Declared as numba's parallel loops declare it (returning an intp), which may be in
    # the same module; the C function returns an int, so only its low 32 bits count.
    fnty = ir.FunctionType(ir.IntType(64), [])
    runtime = cgutils.get_or_insert_function(builder.module, fnty, "get_num_threads")
    count = builder.trunc(builder.call(runtime, []), ir.IntType(32))
    return builder.sext(count, ir.IntType(64))

"""Kernel addresses for ``argmax`` in users' compiled code, in a table their code finds.

Inside ``@njit`` code ``argmax`` calls the same drivers as from Python, and the drivers
call their task, all through addresses (``_calls``): code called by name would be
linked into every user's function and optimised again there, seconds of its first
compile. An address is only valid in the process that compiled the code, so users'
code does not hold one. It reads it from a table under a fixed symbol name, at a slot
that depends only on (kernel, key kind, dtype, writeable, role): the serial driver,
the parallel one, or the task for one value of ``last``. ``run_kernel`` fills the
slots when the user's code is compiled and puts the fill in the code's reload list,
which numba runs whenever it loads that code from its disk cache, before the code can
run.

The symbol carries the table's layout version: code compiled against one layout must
not read another, so any change to the slots, the kernels or their argument types
needs a new version. numba keys its disk cache on the user's function, not on this
package, so code cached against another version can still be loaded: its reload list
records the symbol it reads, and ``fill`` refuses it with an error (its code would
look up a symbol that is no longer defined, and crash).
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba import types
from numba.core import errors
from numba.extending import intrinsic
from numba.np.numpy_support import as_dtype

from ._calls import native_call
from ._dtypes import KIND_F64, KIND_INT
from ._kernels import KERNELS

__all__ = ["BOTH", "KERNEL_NAMES", "TABLE_SYMBOL", "fill", "run_kernel"]

TABLE_SYMBOL = "argmax_numba_task_table_v8"
# The kernels (fields of ``Kernels``) that compiled code runs, and the dtypes of the
# views they read.
KERNEL_NAMES = (
    *("rows", "chunk_rows", "group_rows", "row_pieces", "short_any"),
    *("cols", "narrow", "side_cols", "each_cols", "block_cols", "each_short_cols"),
    "each_wide_cols",
)
_VIEWS = tuple(
    np.dtype(t)
    for t in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
    + ("float32", "float64")
)
_KINDS = range(KIND_INT, KIND_F64 + 1)
# Roles: the task for ``last`` 0, for ``last`` 1, the serial driver, the parallel driver.
TASK_FIRST, TASK_LAST, SERIAL, PARALLEL = range(4)
_ROLES = PARALLEL + 1
# ``lasts`` of code that chooses ``last`` at run time (else the one it was compiled for).
BOTH = 2
_SLOTS = len(KERNEL_NAMES) * len(_KINDS) * len(_VIEWS) * 2 * _ROLES

_TABLE = (ctypes.c_uint64 * _SLOTS)()
llvm.add_symbol(TABLE_SYMBOL, ctypes.addressof(_TABLE))


def _slot(name: str, kind: int, dtype: np.dtype, writeable: bool, role: int) -> int:
    slot = KERNEL_NAMES.index(name)
    slot = slot * len(_KINDS) + _KINDS.index(kind)
    slot = slot * len(_VIEWS) + _VIEWS.index(dtype)
    return (slot * 2 + writeable) * _ROLES + role


# The table that code read before its reload list recorded one.
_UNRECORDED_SYMBOL = "argmax_numba_task_table_v3"


def fill(
    name: str,
    kind: int,
    dtype: str,
    writeable: bool,
    symbol: str = _UNRECORDED_SYMBOL,
    lasts: int = BOTH,
) -> None:
    """Compile (or load from the disk cache) kernel ``name``'s drivers and its tasks for
    ``last`` = ``lasts`` (both where it is ``BOTH``: code that chooses ``last`` at run
    time), for views of ``dtype``, and put their addresses in the table ``symbol``, which
    the code that needs them reads: a RuntimeError where that is not this version's
    table."""
    if symbol != TABLE_SYMBOL:
        raise RuntimeError(
            f"argmax: this compiled function was cached by another version of argmax-numba"
            f" (its code reads {symbol}, this version has {TABLE_SYMBOL}); delete its numba"
            " cache (the .nbi and .nbc files in __pycache__ beside its module, or under"
            " NUMBA_CACHE_DIR) to compile it again"
        )
    view = np.dtype(dtype)
    for role, parallel in ((SERIAL, False), (PARALLEL, True)):
        kernel = getattr(KERNELS[(kind, parallel)], name)
        _TABLE[_slot(name, kind, view, writeable, role)] = kernel.driver_address(view, writeable)
    task = getattr(KERNELS[(kind, False)], name)  # serial and parallel share the tasks
    for role, last in ((TASK_FIRST, 0), (TASK_LAST, 1)):
        if lasts in (last, BOTH):
            _TABLE[_slot(name, kind, view, writeable, role)] = task.address(view, writeable, last)


@functools.cache
def _refill(name: str, kind: int, dtype: str, writeable: bool, lasts: int):
    """``fill`` of these arguments, one object for each (reload lists are sets); it
    pickles by reference, as numba's disk cache needs."""
    return functools.partial(fill, name, kind, dtype, writeable, TABLE_SYMBOL, lasts)


@intrinsic(prefer_literal=True)
def run_kernel(typingctx, args, name, kind, parallel, lasts):
    """Run kernel ``KERNEL_NAMES[name]`` of key kind ``kind`` (both constants), its
    parallel driver or its serial one as the boolean ``parallel`` says, as
    ``driver(*args, task address)``, the task for the ``last`` that ``args[2]`` holds,
    which must be the constant ``lasts`` unless that is ``BOTH`` (only these tasks are
    compiled); ``args`` must have the types the drivers were compiled for
    (``Kernel.driver_types``, the same for both)."""
    if not all(isinstance(c, types.IntegerLiteral) for c in (name, kind, lasts)):
        raise errors.TypingError("run_kernel(): name, kind and lasts must be constants")
    lasts_value = lasts.literal_value
    if not isinstance(parallel, (types.Boolean, types.Integer)):
        raise errors.TypingError("run_kernel(): parallel must be a boolean")
    kernel_name, kind_value = KERNEL_NAMES[name.literal_value], kind.literal_value
    if not (isinstance(args, types.BaseTuple) and isinstance(args[0], types.Array)):
        raise errors.TypingError("run_kernel(): args must be a tuple, the input first")
    x = args[0]
    dtype, writeable = as_dtype(x.dtype), x.mutable
    kernel = getattr(KERNELS[(kind_value, False)], kernel_name)
    driver_types = kernel.driver_types(dtype, writeable)
    if tuple(args) + (types.int64,) != driver_types:  # and the task's address
        raise errors.TypingError(
            f"run_kernel(): {kernel_name} takes {driver_types[:-1]}, got {tuple(args)}"
        )
    slots = [_slot(kernel_name, kind_value, dtype, writeable, r) for r in (SERIAL, PARALLEL)]
    roles = {0: (TASK_FIRST,), 1: (TASK_LAST,), BOTH: (TASK_FIRST, TASK_LAST)}[lasts_value]
    slots += [_slot(kernel_name, kind_value, dtype, writeable, role) for role in roles]

    def codegen(context, builder, sig, llargs):
        fill(kernel_name, kind_value, dtype.str, writeable, TABLE_SYMBOL, lasts_value)
        context.active_code_library._reload_init.add(
            _refill(kernel_name, kind_value, dtype.str, writeable, lasts_value)
        )
        i64 = ir.IntType(64)
        table = builder.module.globals.get(TABLE_SYMBOL)
        if table is None:  # declared here, defined by this process (``llvm.add_symbol``)
            table = ir.GlobalVariable(builder.module, ir.ArrayType(i64, _SLOTS), TABLE_SYMBOL)
        serial, par, *tasks = (builder.load(builder.gep(table, [i64(0), i64(s)])) for s in slots)
        on = context.cast(builder, llargs[3], sig.args[3], types.boolean)
        driver = builder.select(on, par, serial)
        values = [builder.extract_value(llargs[0], i) for i in range(len(args))]
        task = tasks[0]
        if lasts_value == BOTH:  # the tasks for ``last`` 0 and 1
            last = context.cast(builder, values[2], args[2], types.boolean)
            task = builder.select(last, tasks[1], tasks[0])
        missing = builder.or_(
            builder.icmp_unsigned("==", driver, i64(0)), builder.icmp_unsigned("==", task, i64(0))
        )
        with builder.if_then(missing, likely=False):
            context.call_conv.return_user_exc(
                builder, RuntimeError, ("argmax: compiled code found no kernel address",)
            )
        native_call(context, builder, driver, driver_types, [*values, task])
        return context.get_dummy_value()

    return types.none(args, name, kind, parallel, lasts), codegen

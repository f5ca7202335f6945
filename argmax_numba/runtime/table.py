"""Kernel addresses for ``argmax`` in users' compiled code, in a table their code finds.

Inside ``@njit`` code ``argmax`` calls the same drivers as from Python, and the drivers
call their task, all through addresses (``calls``): code called by name would be
linked into every user's function and optimised again there, a large part of its first
compile (docs/performance.md, "Tasks called through their address"). An address is
only valid in the process that compiled the code, so users' code does not hold one. It
reads it from a table under a fixed symbol name, at a slot that depends only on
(kernel, key kind, dtype, writeable, role): the serial driver, the parallel one, or the
task for one value of ``last``. ``run_plan`` fills the slots when the user's code is
compiled and puts the fill in the code's reload list, which numba runs whenever it
loads that code from its disk cache, before the code can run.

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

from ..dtypes import KeyKind
from ..kernels.registry import KERNELS, SHAPES
from ..planning import Kernel, Plan
from .calls import native_call

__all__ = ["BOTH", "TABLE_SYMBOL", "fill", "run_plan"]

TABLE_SYMBOL = "argmax_numba_task_table_v10"
# The dtypes of the views the kernels read.
_VIEWS = tuple(
    np.dtype(t)
    for t in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
    + ("float32", "float64")
)
# Roles: the task for ``last`` 0, for ``last`` 1, the serial driver, the parallel driver.
TASK_FIRST, TASK_LAST, SERIAL, PARALLEL = range(4)
_ROLES = PARALLEL + 1
# ``lasts`` of code that chooses ``last`` at run time (else the one it was compiled for).
BOTH = 2
# The key kinds, ArgMax's and ArgMin's, in slot order.
_KINDS = tuple(KeyKind)
_SLOTS = len(Kernel) * len(_KINDS) * len(_VIEWS) * 2 * _ROLES

_TABLE = (ctypes.c_uint64 * _SLOTS)()
llvm.add_symbol(TABLE_SYMBOL, ctypes.addressof(_TABLE))


def _slot(kernel: int, kind: int, dtype: np.dtype, writeable: bool, role: int) -> int:
    slot = int(kernel) * len(_KINDS) + _KINDS.index(kind)
    slot = slot * len(_VIEWS) + _VIEWS.index(dtype)
    return (slot * 2 + writeable) * _ROLES + role


# The table that code read before its reload list recorded one.
_UNRECORDED_SYMBOL = "argmax_numba_task_table_v3"


def fill(
    kernel: int,
    kind: int,
    dtype: str,
    writeable: bool,
    symbol: str = _UNRECORDED_SYMBOL,
    lasts: int = BOTH,
) -> None:
    """Compile (or load from the disk cache) ``kernel``'s drivers and its tasks for
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
        code = KERNELS[(kind, parallel)][Kernel(kernel)]
        _TABLE[_slot(kernel, kind, view, writeable, role)] = code.driver_address(view, writeable)
    code = KERNELS[(kind, False)][Kernel(kernel)]  # serial and parallel share the tasks
    for role, last in ((TASK_FIRST, 0), (TASK_LAST, 1)):
        if lasts in (last, BOTH):
            _TABLE[_slot(kernel, kind, view, writeable, role)] = code.address(view, writeable, last)


@functools.cache
def _refill(kernel: int, kind: int, dtype: str, writeable: bool, lasts: int):
    """``fill`` of these arguments, one object for each (reload lists are sets); it
    pickles by reference, as numba's disk cache needs."""
    return functools.partial(fill, kernel, kind, dtype, writeable, TABLE_SYMBOL, lasts)


@intrinsic(prefer_literal=True)
def run_plan(typingctx, args, plan, kind, parallel, lasts):
    """Run the kernel that ``plan`` (a ``planning.Plan``) names, with the arguments its
    driver takes from it: ``driver(*args, *plan's fields, task address)``, where ``args``
    is ``(x, out, last)`` as the drivers of ``x``'s rank take them
    (``KernelCode.driver_types``). ``kind`` (the key kind) and ``lasts`` are constants:
    the task run is the one for the ``last`` that ``args[2]`` holds, which must be
    ``lasts`` unless that is ``BOTH``. The parallel driver runs where the boolean
    ``parallel`` says. Every kernel for inputs of ``x``'s rank is compiled (or loaded)
    with the calling code, and found at run time in the table."""
    if not all(isinstance(c, types.IntegerLiteral) for c in (kind, lasts)):
        raise errors.TypingError("run_plan(): kind and lasts must be constants")
    if not isinstance(parallel, (types.Boolean, types.Integer)):
        raise errors.TypingError("run_plan(): parallel must be a boolean")
    if not (isinstance(args, types.BaseTuple) and isinstance(args[0], types.Array)):
        raise errors.TypingError("run_plan(): args must be a tuple, the input first")
    if not (isinstance(plan, types.BaseNamedTuple) and plan.instance_class is Plan):
        raise errors.TypingError(f"run_plan(): plan must be a Plan, got {plan}")
    lasts_value, kind_value = lasts.literal_value, kind.literal_value
    x = args[0]
    dtype, writeable = as_dtype(x.dtype), x.mutable
    kernels = [k for k, shape in SHAPES.items() if shape.ndim == x.ndim]
    codes = {k: KERNELS[(kind_value, False)][k] for k in kernels}
    for k, code in codes.items():
        expected = code.driver_types(dtype, writeable)[:3]
        if tuple(args) != expected:
            raise errors.TypingError(f"run_plan(): {k.name} takes {expected}, got {tuple(args)}")
    roles = {0: (TASK_FIRST,), 1: (TASK_LAST,), BOTH: (TASK_FIRST, TASK_LAST)}[lasts_value]

    def codegen(context, builder, sig, llargs):
        i64 = ir.IntType(64)
        table = builder.module.globals.get(TABLE_SYMBOL)
        if table is None:  # declared here, defined by this process (``llvm.add_symbol``)
            table = ir.GlobalVariable(builder.module, ir.ArrayType(i64, _SLOTS), TABLE_SYMBOL)
        values = [builder.extract_value(llargs[0], i) for i in range(len(args))]
        on = context.cast(builder, llargs[2], sig.args[2], types.boolean)
        last = context.cast(builder, values[2], args[2], types.boolean)
        which = context.cast(builder, builder.extract_value(llargs[1], 0), plan[0], types.int64)
        fields = {
            name: context.cast(builder, builder.extract_value(llargs[1], i), plan[i], types.int64)
            for i, name in enumerate(Plan._fields)
            if i > 0
        }
        done = builder.append_basic_block("argmax_kernel_done")
        for k, code in codes.items():
            fill(int(k), kind_value, dtype.str, writeable, TABLE_SYMBOL, lasts_value)
            context.active_code_library._reload_init.add(
                _refill(int(k), kind_value, dtype.str, writeable, lasts_value)
            )
            slots = [_slot(k, kind_value, dtype, writeable, r) for r in (SERIAL, PARALLEL)]
            slots += [_slot(k, kind_value, dtype, writeable, role) for role in roles]
            with builder.if_then(builder.icmp_signed("==", which, i64(int(k)))):
                loads = [builder.load(builder.gep(table, [i64(0), i64(s)])) for s in slots]
                serial, par, *tasks = loads
                driver = builder.select(on, par, serial)
                task = tasks[0] if lasts_value != BOTH else builder.select(last, *tasks[::-1])
                missing = builder.or_(
                    builder.icmp_unsigned("==", driver, i64(0)),
                    builder.icmp_unsigned("==", task, i64(0)),
                )
                with builder.if_then(missing, likely=False):
                    context.call_conv.return_user_exc(
                        builder, RuntimeError, ("argmax: compiled code found no kernel address",)
                    )
                extra = [fields[name] for name in code.shape.plan_args]
                driver_types = code.driver_types(dtype, writeable)
                native_call(context, builder, driver, driver_types, [*values, *extra, task])
                builder.branch(done)
        context.call_conv.return_user_exc(
            builder, RuntimeError, ("argmax: the plan names no kernel for this rank",)
        )
        builder.position_at_end(done)
        return context.get_dummy_value()

    return types.none(args, plan, kind, parallel, lasts), codegen

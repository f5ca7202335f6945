"""Kernel addresses for ``argmax`` in users' compiled code, in a table their code finds.

Inside ``@njit`` code ``argmax`` calls the same drivers as from Python, and the drivers
call their task, all through addresses (``calls``): code called by name would be
linked into every user's function and optimised again there, a large part of its first
compile (docs/performance.md, "Tasks called through their address"). An address is
only valid in the process that compiled the code, so users' code does not hold one. It
reads it from a table under a fixed symbol name, at a slot that depends only on
(kernel, key kind, dtype, role): the serial driver, the parallel one, or the
task for one value of ``last``.

The table starts empty, and a slot is filled the first time a call needs it: the
user's code finds a zero there and calls ``fill_slots`` (through a second fixed symbol),
which compiles the driver or the task, or loads it from the disk cache. A user's
function thus compiles only the kernel its calls run, not every kernel its argument's
rank could run (docs/performance.md, "Compiled callers' first compile").

The symbols carry the table's layout version: code compiled against one layout must
not read another, so any change to the slots, the kernels or their argument types
needs a new version. numba keys its disk cache on the user's function, not on this
package, so code cached against another version can still be loaded: its reload list
records the symbol it reads, and ``check`` (``fill`` in code of earlier versions)
refuses it with an error (its code would look up a symbol that is no longer defined,
and crash).
"""

from __future__ import annotations

import ctypes
import functools
from typing import NamedTuple

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic
from numba.np.numpy_support import as_dtype

from ..dtypes import KeyKind
from ..kernels.compiling import compile_function
from ..kernels.registry import KERNELS, SHAPES
from ..planning import Kernel, Plan, plan, serial
from .calls import native_call, native_value, task_address, thread_count

__all__ = [
    "BOTH",
    "FILL_SYMBOL",
    "TABLE_SYMBOL",
    "check",
    "fill",
    "fill_slots",
    "planned",
    "run_plan",
]

TABLE_SYMBOL = "argmax_numba_task_table_v12"
# The function that fills a slot on its first use (``fill_slots``), same version.
FILL_SYMBOL = "argmax_numba_fill_slots_v12"
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
_SLOTS = len(Kernel) * len(_KINDS) * len(_VIEWS) * _ROLES
# The distance between the slots of two kernels of the same key kind, dtype and role.
_KERNEL_STRIDE = _SLOTS // len(Kernel)
# The slot after the kernels' holds ``planned``'s function.
PLAN_SLOT = _SLOTS
_TABLE_SIZE = _SLOTS + 1

_TABLE = (ctypes.c_uint64 * _TABLE_SIZE)()
llvm.add_symbol(TABLE_SYMBOL, ctypes.addressof(_TABLE))


class SlotKey(NamedTuple):
    """What one slot of the table holds the address of."""

    kernel: Kernel
    kind: KeyKind
    dtype: np.dtype  # of the view the kernel reads (writeable or not)
    role: int  # TASK_FIRST, TASK_LAST, SERIAL or PARALLEL


def _by_call(codes: dict) -> dict[tuple[str, ...], list[Kernel]]:
    """The kernels of ``codes`` grouped by the fields of the plan their drivers take
    (drivers of a group are called alike)."""
    groups: dict[tuple[str, ...], list[Kernel]] = {}
    for k, code in codes.items():
        groups.setdefault(code.shape.plan_args, []).append(k)
    return groups


def _slot(kernel: int, kind: int, dtype: np.dtype, role: int) -> int:
    slot = int(kernel) * len(_KINDS) + _KINDS.index(kind)
    slot = slot * len(_VIEWS) + _VIEWS.index(dtype)
    return slot * _ROLES + role


def slot_key(slot: int) -> SlotKey:
    """What ``slot`` holds (the inverse of ``_slot``)."""
    rest, role = divmod(slot, _ROLES)
    rest, view = divmod(rest, len(_VIEWS))
    kernel, kind = divmod(rest, len(_KINDS))
    return SlotKey(Kernel(kernel), _KINDS[kind], _VIEWS[view], role)


def plan_fields(outer, n, inner, itemsize):
    """``(parallel, kernel, block, side_rows, splits)``: whether the input runs in
    parallel (``planning.serial``), and the fields of the ``planning.Plan`` for it, as
    integers (what compiled callers run, through ``planned``)."""
    parallel = not serial(outer, n, inner, itemsize)
    chosen = plan(outer, n, inner, itemsize, thread_count() if parallel else 1)
    kernel = np.int64(chosen.kernel)
    return (np.int64(parallel), kernel, chosen.block, chosen.side_rows, chosen.splits)


_PLAN_FIELDS = compile_function(plan_fields, "plan_fields", {})
_PLAN_ARGS = (types.int64,) * 4
# The fields of what ``plan_fields``, and so ``planned``, returns.
PLANNED_FIELDS = ("parallel", *Plan._fields)
_PLAN_TYPE = types.UniTuple(types.int64, len(PLANNED_FIELDS))


def _address(slot: int) -> int:
    """The address ``slot`` holds: its code compiled, or loaded from the disk cache."""
    if slot == PLAN_SLOT:
        return task_address(_PLAN_FIELDS, _PLAN_ARGS)
    key = slot_key(slot)
    if key.role in (SERIAL, PARALLEL):
        code = KERNELS[(key.kind, key.role == PARALLEL)][key.kernel]
        return code.driver_address(key.dtype)
    code = KERNELS[(key.kind, False)][key.kernel]  # serial and parallel share the tasks
    return code.address(key.dtype, int(key.role == TASK_LAST))


def fill_slots(driver_slot: int, task_slot: int) -> int:
    """Fill the two slots a call reads (a driver's and its task's), where they are empty:
    0, or 1 where the fast kernels failed (after the one warning of ``tiers.fall_back``;
    the calling code then raises)."""
    try:
        for slot in (driver_slot, task_slot):
            if not _TABLE[slot]:
                _TABLE[slot] = _address(slot)
    except Exception as exc:  # an error must not cross into the compiled caller
        from .. import tiers

        tiers.fall_back(exc)
        return 1
    return 0


_FILL_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_int64)
_FILL = _FILL_TYPE(fill_slots)  # kept alive with the module: compiled code calls it
llvm.add_symbol(FILL_SYMBOL, ctypes.cast(_FILL, ctypes.c_void_p).value)


def check(symbol: str) -> None:
    """Refuse code (loaded from a disk cache) that reads another version's table
    ``symbol``, with a RuntimeError that says what to do."""
    if symbol != TABLE_SYMBOL:
        raise RuntimeError(
            f"argmax: this compiled function was cached by another version of argmax-numba"
            f" (its code reads {symbol}, this version has {TABLE_SYMBOL}); delete its numba"
            " cache (the .nbi and .nbc files in __pycache__ beside its module, or under"
            " NUMBA_CACHE_DIR) to compile it again"
        )


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
    """What the reload lists of code compiled by versions before table v11 call (they
    filled the table as they loaded): ``check`` of the table they read, which refuses
    them."""
    check(symbol)


@functools.cache
def _check_on_load(symbol: str):
    """``check`` of ``symbol``, one object for each (reload lists are sets); it pickles
    by reference, as numba's disk cache needs."""
    return functools.partial(check, symbol)


class _Table:
    """The table as the code being emitted sees it: its slots, and the call that fills
    the empty ones."""

    def __init__(self, context, builder):
        self.context, self.builder = context, builder
        i64 = ir.IntType(64)
        module = builder.module
        table = module.globals.get(TABLE_SYMBOL)
        if table is None:  # declared here, defined by this process (``llvm.add_symbol``)
            table = ir.GlobalVariable(module, ir.ArrayType(i64, _TABLE_SIZE), TABLE_SYMBOL)
        self.table = table
        fill_type = ir.FunctionType(ir.IntType(32), [i64, i64])
        self.filler = cgutils.get_or_insert_function(module, fill_type, FILL_SYMBOL)
        context.active_code_library._reload_init.add(_check_on_load(TABLE_SYMBOL))

    def load(self, slot: ir.Value) -> ir.Value:
        """The address in ``slot`` (an i64)."""
        i64 = ir.IntType(64)
        return self.builder.load(self.builder.gep(self.table, [i64(0), slot]))

    def fill(self, first: ir.Value, second: ir.Value) -> None:
        """Fill the two slots where either is empty, raising a RuntimeError where that
        fails."""
        builder, i64 = self.builder, ir.IntType(64)
        empty = builder.or_(
            builder.icmp_unsigned("==", self.load(first), i64(0)),
            builder.icmp_unsigned("==", self.load(second), i64(0)),
        )
        with builder.if_then(empty, likely=False):
            failed = builder.call(self.filler, [first, second])
            with builder.if_then(builder.icmp_signed("!=", failed, failed.type(0)), likely=False):
                self.context.call_conv.return_user_exc(builder, RuntimeError, (_FAILED,))


_FAILED = (
    "argmax: the fast kernels failed (the warning says why); run with"
    " ARGMAX_NUMBA_TIER=portable to use the portable kernels"
)


@intrinsic
def planned(typingctx, outer, n, inner, itemsize):
    """``plan_fields(outer, n, inner, itemsize)``, called where the package compiled it
    (through the table), not linked into the calling code: its fields as
    ``PLANNED_FIELDS`` names them."""
    sig = _PLAN_TYPE(*_PLAN_ARGS)

    def codegen(context, builder, sig, args):
        table = _Table(context, builder)
        slot = ir.IntType(64)(PLAN_SLOT)
        table.fill(slot, slot)
        return native_value(context, builder, table.load(slot), _PLAN_TYPE, _PLAN_ARGS, args)

    return sig, codegen


@intrinsic(prefer_literal=True)
def run_plan(typingctx, args, chosen, kind, lasts):
    """Run the kernel that ``chosen`` (what ``planned`` returned) names, with the
    arguments its driver takes from it: ``driver(*args, *plan's fields, task address)``,
    where ``args`` is ``(x, out, last)`` as the drivers of ``x``'s rank take them
    (``KernelCode.driver_types``); the parallel driver where ``chosen`` says.
    ``kind`` (the key kind) and ``lasts`` are constants: the task run is the one for the
    ``last`` that ``args[2]`` holds, which must be ``lasts`` unless that is ``BOTH``.
    The user's code reads the kernels' addresses from the table, and fills a slot it
    finds empty (``fill_slots``): a kernel is compiled, or loaded from the disk cache,
    when a call first runs it."""
    if not all(isinstance(c, types.IntegerLiteral) for c in (kind, lasts)):
        raise errors.TypingError("run_plan(): kind and lasts must be constants")
    if not (isinstance(args, types.BaseTuple) and isinstance(args[0], types.Array)):
        raise errors.TypingError("run_plan(): args must be a tuple, the input first")
    if chosen != _PLAN_TYPE:
        raise errors.TypingError(f"run_plan(): the plan must be planned()'s, got {chosen}")
    lasts_value, kind_value = lasts.literal_value, kind.literal_value
    x = args[0]
    dtype = as_dtype(x.dtype)
    kernels = [k for k, shape in SHAPES.items() if shape.ndim == x.ndim]
    codes = {k: KERNELS[(kind_value, False)][k] for k in kernels}
    # (A writeable input passed as the read-only one the drivers take: the same data.)
    given = (x.copy(readonly=True), *tuple(args)[1:])
    for k, code in codes.items():
        expected = code.driver_types(dtype)[:3]
        if given != expected:
            raise errors.TypingError(f"run_plan(): {k.name} takes {expected}, got {tuple(args)}")
    roles = {0: (TASK_FIRST,), 1: (TASK_LAST,), BOTH: (TASK_FIRST, TASK_LAST)}[lasts_value]

    def codegen(context, builder, sig, llargs):
        i64 = ir.IntType(64)
        table = _Table(context, builder)
        values = [builder.extract_value(llargs[0], i) for i in range(len(args))]
        last = context.cast(builder, values[2], args[2], types.boolean)
        fields = {
            name: builder.extract_value(llargs[1], i) for i, name in enumerate(PLANNED_FIELDS)
        }
        on = builder.icmp_signed("!=", fields["parallel"], i64(0))
        done = builder.append_basic_block("argmax_kernel_done")
        # A kernel's slots lie _KERNEL_STRIDE apart from the next kernel's: one branch
        # for each way of calling a driver, its slots computed from the kernel's number.
        kernel = fields["kernel"]
        base = {r: _slot(0, kind_value, dtype, r) for r in (SERIAL, PARALLEL, *roles)}
        offset = builder.mul(kernel, i64(_KERNEL_STRIDE))
        for plan_args, group in _by_call(codes).items():
            members = [builder.icmp_signed("==", kernel, i64(int(k))) for k in group]
            with builder.if_then(functools.reduce(builder.or_, members)):
                driver_base = builder.select(on, i64(base[PARALLEL]), i64(base[SERIAL]))
                task_bases = [i64(base[role]) for role in roles]
                task_base = (
                    task_bases[0]
                    if lasts_value != BOTH
                    else builder.select(last, *task_bases[::-1])
                )
                driver_slot = builder.add(offset, driver_base)
                task_slot = builder.add(offset, task_base)
                table.fill(driver_slot, task_slot)
                extra = [fields[name] for name in plan_args]
                driver_types = codes[group[0]].driver_types(dtype)
                call_args = [*values, *extra, table.load(task_slot)]
                native_call(context, builder, table.load(driver_slot), driver_types, call_args)
                builder.branch(done)
        context.call_conv.return_user_exc(
            builder, RuntimeError, ("argmax: the plan names no kernel for this rank",)
        )
        builder.position_at_end(done)
        return context.get_dummy_value()

    return types.none(args, chosen, kind, lasts), codegen

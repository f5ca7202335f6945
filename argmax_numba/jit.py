"""``argmax`` and ``argmin`` inside ``@numba.njit`` code.

An ``@overload`` of each Python function picks, at typing time, the kernels for the
argument's dtype and the output rank, on the process's tier (``tiers``). ``keepdims``
decides the output's rank, so it must be a compile-time constant; ``axis`` and
``select_last_index`` may vary at run time. The input is made C-contiguous (a copy only
if it is not), so a Fortran-ordered or strided argument costs one copy here, unlike from
Python.

On the fast tier the plan and the kernels are called through addresses kept in a
table (``runtime.table``), not linked into the user's function, and a kernel is compiled
when a call first runs it, which keeps the function's first compile short
(docs/performance.md, "Compiled callers' first compile"); users' code holds no address of
the running process, so their functions can be cached on disk. On the portable tier the
user's function calls the portable kernels (``kernels.portable``): the loops for rows
and for the middle axis, or, along an axis known at compile time to be the last (a 1-D
input's, or a constant -1 or ndim - 1), the loops for rows alone, which keeps its first
compile shorter.
"""

from __future__ import annotations

import functools
import platform
import sys

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic, overload

from . import tiers
from .api import argmax, argmin
from .dtypes import Extreme, kernel_view
from .kernels.portable import flip_argument, portable_kernels
from .planning import serial
from .tiers import Tier

__all__: list[str] = []

# Outputs of at least this many bytes are backed by huge pages where Linux offers them
# (as numpy does for its own arrays from 4 MiB): numba allocates without that advice, and
# first touching a large output of small pages is much slower than of huge ones
# (docs/performance.md, HUGE_PAGE_BYTES).
HUGE_PAGE_BYTES = 1 << 22
# ... and start at a huge page: numba's runtime writes the first bytes of a new buffer
# before the advice, which kept the huge page they fall in small, so that a large output
# from ``@njit`` took many more page faults, and more time, than numpy's from Python.
# Aligning costs 2 MiB more of address space, not of memory (docs/performance.md,
# ALIGN_BYTES).
ALIGN_BYTES = 1 << 21
_MADV_HUGEPAGE = 14
_ADVISE = sys.platform.startswith("linux") and platform.machine() in ("x86_64", "aarch64")


@intrinsic
def _output(typingctx, size):
    """A new int64 array of ``size`` elements; a large one starts at a huge page and is
    advised to huge pages (``madvise(MADV_HUGEPAGE)`` on its whole pages). Made in a few
    LLVM instructions, not numba's ``np.empty`` and slicing, which would be compiled into
    every caller (docs/performance.md, "Compiled callers' first compile")."""
    if not isinstance(size, types.Integer):
        raise errors.TypingError("_output(): takes an integer size")

    def codegen(context, builder, sig, args):
        from .runtime.arrays import new_vector, populate_array  # the fast tier's only

        i64, i32, i8p = ir.IntType(64), ir.IntType(32), ir.IntType(8).as_pointer()
        n = context.cast(builder, args[0], sig.args[0], types.int64)
        large = builder.icmp_signed(">=", n, i64(HUGE_PAGE_BYTES // 8))
        # A large buffer has room to start at the next huge page after its first bytes.
        room = builder.select(large, i64(ALIGN_BYTES // 8), i64(0))
        buffer = context.make_array(types.Array(types.int64, 1, "C"))(
            context, builder, new_vector(context, builder, types.int64, builder.add(n, room))
        )
        start = builder.ptrtoint(buffer.data, i64)
        aligned = builder.and_(builder.add(start, i64(ALIGN_BYTES - 1)), i64(-ALIGN_BYTES))
        first = builder.select(large, aligned, start)
        if _ADVISE:
            madvise = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(i32, [i8p, i64, i32]), "madvise"
            )
            with builder.if_then(large):
                end = builder.and_(builder.add(first, builder.mul(n, i64(8))), i64(-4096))
                length = builder.sub(end, first)
                builder.call(madvise, [builder.inttoptr(first, i8p), length, i32(_MADV_HUGEPAGE)])
        out = context.make_array(sig.return_type)(context, builder)
        populate_array(
            out,
            data=builder.inttoptr(first, buffer.data.type),
            shape=[n],
            strides=[i64(8)],
            itemsize=i64(8),
            meminfo=buffer.meminfo,
        )
        return out._getvalue()

    return types.Array(types.int64, 1, "C")(size), codegen


def _constant(value) -> int | None:
    """The value of an integer argument known at compile time (a literal, or a default
    left out), else None."""
    if isinstance(value, types.Omitted):
        return int(value.value)
    if isinstance(value, int):  # Python default (a bool too)
        return int(value)
    if isinstance(value, types.IntegerLiteral):
        return int(value.literal_value)
    return None


def _literal_flag(value, name: str, op: str, *, required: bool) -> int | None:
    v = _constant(value)
    if v is None and isinstance(value, types.BooleanLiteral):
        v = int(value.literal_value)
    if v is not None:
        if v not in (0, 1):
            raise errors.TypingError(f"{op}: {name} must be 0 or 1, got {v}")
        return v
    if isinstance(value, (types.Integer, types.Boolean)) and not required:
        return None
    raise errors.TypingError(
        f"{op}: in compiled code {name} must be a compile-time constant 0/1 or True/False "
        f"(it decides the output's rank), got {value}"
    )


def _numpy_dtype(dtype: types.Type, op: str) -> np.dtype:
    """The numpy dtype of a numba scalar type; TypeError for one that has none."""
    if not isinstance(dtype, (types.Integer, types.Float)):
        raise TypeError(f"{op}: unsupported input dtype {dtype}")
    return np.dtype(str(dtype))


def _typed(extreme: Extreme):
    """The typing of ``argmax`` or ``argmin`` in compiled code (``extreme``): checks at
    compile time, then the implementation on the process's tier."""
    op = extreme.function

    def typing(data, axis=0, keepdims=1, select_last_index=0):
        if not isinstance(data, types.Array):
            raise errors.TypingError(f"{op}: data must be an array, got {data}")
        if data.dtype == types.float16:
            raise errors.TypingError(
                f"{op}: input dtype float16 is not supported in compiled code: numba has no "
                f"float16 arithmetic on the CPU; call {op} from Python for float16/bfloat16"
            )
        try:
            kind, view_dtype = kernel_view(_numpy_dtype(data.dtype, op), extreme)
        except TypeError as exc:
            raise errors.TypingError(str(exc)) from None
        # The fast kernels read the input as it is: only float16 and bfloat16, which
        # compiled code does not take, are read through a view of another dtype.
        assert view_dtype == _numpy_dtype(data.dtype, op), (data.dtype, view_dtype)
        if not isinstance(axis, (types.Integer, types.Omitted, int)) or isinstance(
            axis, types.Boolean
        ):
            raise errors.TypingError(f"{op}: axis must be an integer, got {axis}")
        keep = _literal_flag(keepdims, "keepdims", op, required=True)
        # ``last`` where the code can take one value only (a constant), else None.
        last = _literal_flag(select_last_index, "select_last_index", op, required=False)
        ndim = data.ndim
        if ndim == 0:
            raise errors.TypingError(f"{op}: the input is rank 0; there is no axis to reduce")
        extents = _extents(op)
        if tiers.current() is Tier.FAST:
            try:
                return _fast_impl(
                    ndim, keep, last, int(kind), view_dtype, extents, data.layout == "C"
                )
            except Exception as exc:  # the checks above passed: the fast tier itself failed
                tiers.fall_back(exc)
        # The last axis, whatever the input's extents: that of a 1-D input, or a constant
        # -1 or ndim - 1.
        last_axis = ndim == 1 or _constant(axis) in (-1, ndim - 1)
        return _portable_impl(ndim, keep, int(kind), view_dtype, extents, last_axis)

    return typing


overload(argmax, prefer_literal=True)(_typed(Extreme.MAX))
overload(argmin, prefer_literal=True)(_typed(Extreme.MIN))


@functools.cache
def _extents(op: str):
    """An intrinsic ``extents(shape, axis)`` for ``op`` (named in its errors):
    ``(ax, outer, n, inner)``, ``axis`` made non-negative and the input of ``shape`` seen
    as ``(outer, n, inner)`` with the reduced axis in the middle; a ValueError for an
    axis out of range or an empty reduced axis. Emitted as a few instructions rather
    than a function of its own, each of which adds to a caller's first compile
    (docs/performance.md, "Compiled callers' first compile")."""
    out_of_range = f"{op}: axis is out of range for the input's rank"
    empty = f"{op}: the reduced axis is empty"

    @intrinsic
    def extents(typingctx, shape, axis):
        if not (
            isinstance(shape, types.UniTuple) and isinstance(axis, (types.Integer, types.Omitted))
        ):
            raise errors.TypingError("extents(): takes a shape and an integer axis")
        ndim = shape.count

        def codegen(context, builder, sig, args):
            i64 = ir.IntType(64)
            if isinstance(sig.args[1], types.Integer):
                given = context.cast(builder, args[1], sig.args[1], types.int64)
            else:  # the default, a constant
                given = i64(sig.args[1].value)
            ax = builder.select(
                builder.icmp_signed("<", given, i64(0)), builder.add(given, i64(ndim)), given
            )
            outside = builder.or_(
                builder.icmp_signed("<", ax, i64(0)), builder.icmp_signed(">=", ax, i64(ndim))
            )
            with builder.if_then(outside, likely=False):
                context.call_conv.return_user_exc(builder, ValueError, (out_of_range,))
            outer, n, inner = i64(1), i64(0), i64(1)
            for i in range(ndim):
                extent = context.cast(
                    builder, builder.extract_value(args[0], i), shape.dtype, types.int64
                )
                before = builder.icmp_signed("<", i64(i), ax)
                after = builder.icmp_signed(">", i64(i), ax)
                outer = builder.mul(outer, builder.select(before, extent, i64(1)))
                inner = builder.mul(inner, builder.select(after, extent, i64(1)))
                n = builder.select(builder.icmp_signed("==", i64(i), ax), extent, n)
            with builder.if_then(builder.icmp_signed("==", n, i64(0)), likely=False):
                context.call_conv.return_user_exc(builder, ValueError, (empty,))
            return context.make_tuple(builder, sig.return_type, [ax, outer, n, inner])

        return types.UniTuple(types.int64, 4)(shape, axis), codegen

    return extents


@functools.cache
def _result_shape(keep: int):
    """An intrinsic ``result_shape(shape, ax)``: the shape of the result of reducing axis
    ``ax`` (a valid one) of an input of ``shape``, a tuple of static length, with a 1 in
    place of that axis where ``keep``. (numba slices tuples only at constant positions;
    a few instructions here compile faster than a loop over an array of extents.)"""

    @intrinsic
    def result_shape(typingctx, shape, ax):
        if not (isinstance(shape, types.UniTuple) and isinstance(ax, types.Integer)):
            raise errors.TypingError("result_shape(): takes a shape and an integer axis")
        ndim = shape.count
        rank = ndim if keep else ndim - 1

        def codegen(context, builder, sig, args):
            i64 = ir.IntType(64)
            axis = context.cast(builder, args[1], sig.args[1], types.int64)
            extents = [
                context.cast(builder, builder.extract_value(args[0], i), shape.dtype, types.int64)
                for i in range(ndim)
            ]
            dims = []
            for j in range(rank):
                if keep:  # the input's extent, or 1 at the axis
                    at_axis = builder.icmp_signed("==", i64(j), axis)
                    dims.append(builder.select(at_axis, i64(1), extents[j]))
                else:  # the input's extent j before the axis, j + 1 from it on
                    before = builder.icmp_signed("<", i64(j), axis)
                    dims.append(builder.select(before, extents[j], extents[j + 1]))
            return context.make_tuple(builder, sig.return_type, dims)

        return types.UniTuple(types.int64, rank)(shape, ax), codegen

    return result_shape


def _portable_impl(ndim: int, keep: int, kind: int, view_dtype: np.dtype, extents, last_axis: bool):
    """The implementation on the portable tier: the portable kernels, called by name.
    ``last_axis``: whether the reduced axis is known to be the last, for which the
    rows loops alone are linked in."""
    # Floats and unsigned integers are read as signed integers of their width, with the
    # flip of their operator and sign (``kernels.portable``: the loops are shared).
    itemsize = view_dtype.itemsize
    kernels = portable_kernels(kind, itemsize)
    element = kernels.signed
    read_type = element.type
    flip = np.int64(flip_argument(kind, itemsize, view_dtype.kind == "u"))
    rows_serial, rows_parallel = (kernels.rows[p].compiled(element) for p in (False, True))
    middle_serial = middle_parallel = None  # (never typed where ``last_axis``: pruned)
    if not last_axis:
        middle_serial, middle_parallel = (
            kernels.middle[p].compiled(element) for p in (False, True)
        )
    result_shape = _result_shape(keep)

    def impl(data, axis=0, keepdims=1, select_last_index=0):
        ax, outer, n, inner = extents(data.shape, axis)
        last = np.int64(1 if select_last_index else 0)
        # Every element is written below. (numpy's own allocation: the portable tier
        # leaves out the huge-page advice of ``_output``, made of numba's internals.)
        out = np.empty(outer * inner, np.int64)
        if outer * inner > 0:
            view = np.ascontiguousarray(data).view(read_type)
            parallel = not serial(outer, n, inner, itemsize)
            # Two of the loops ``PortableKernels.choose`` chooses from: each loop that
            # a user's function calls is compiled with it, so its first compile takes
            # longer for every loop linked in (docs/performance.md, "The portable
            # tier's loops from compiled code"); along an axis known to be the last,
            # numba leaves out the branch of the middle axis before typing it.
            if last_axis or inner == 1:
                x2 = view.reshape((outer, n))
                if parallel:
                    rows_parallel(x2, out, last, flip)
                else:
                    rows_serial(x2, out, last, flip)
            else:
                x3, o2 = view.reshape((outer, n, inner)), out.reshape((outer, inner))
                if parallel:
                    middle_parallel(x3, o2, last, flip)
                else:
                    middle_serial(x3, o2, last, flip)
        return out.reshape(result_shape(data.shape, ax))

    return impl


def _fast_impl(
    ndim: int, keep: int, last: int | None, kind: int, view_dtype: np.dtype, extents, is_c: bool
):
    """The implementation on the fast tier: the plan's kernel run through the address
    table (its modules imported only where the fast tier runs). ``is_c``: whether the
    input's type is a C-contiguous array."""
    from .runtime.arrays import c_view
    from .runtime.table import BOTH, planned, run_plan

    # The tasks for the one ``last`` the code can take, where that is a constant.
    lasts = BOTH if last is None else last
    itemsize = view_dtype.itemsize
    result_shape = _result_shape(keep)

    def impl(data, axis=0, keepdims=1, select_last_index=0):
        ax, outer, n, inner = extents(data.shape, axis)
        shape = data.shape
        last = np.int64(1 if select_last_index else 0)
        out = _output(outer * inner)  # every element is written below
        if outer * inner > 0:
            # (Its dtype is the kernels' view's; a C array is taken as it is, which
            # spares compiling ``np.ascontiguousarray`` for the most common layout.)
            view = data if is_c else np.ascontiguousarray(data)
            chosen = planned(outer, n, inner, itemsize)
            if inner == 1:  # ``plan`` chose a row kernel
                run_plan((c_view(view, 0, (outer, n)), out, last), chosen, kind, lasts)
            else:
                x3, o2 = c_view(view, 0, (outer, n, inner)), c_view(out, 0, (outer, inner))
                run_plan((x3, o2, last), chosen, kind, lasts)
        return c_view(out, 0, result_shape(shape, ax))

    return impl

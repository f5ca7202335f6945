"""``argmax`` and ``argmin`` inside ``@numba.njit`` code.

An ``@overload`` of each Python function picks, at typing time, the kernels for the
argument's dtype and the output rank, on the process's tier (``tiers``). ``keepdims``
decides the output's rank, so it must be a compile-time constant; ``axis`` and
``select_last_index`` may vary at run time. The input is made C-contiguous (a copy only
if it is not), so a Fortran-ordered or strided argument costs one copy here, unlike from
Python.

On the fast tier the kernels are called through addresses kept in a table
(``runtime.table``), not linked into the user's function, which keeps its first compile
short (docs/performance.md, "Compiled callers' first compile"); users' code holds no
address of the running process, so their functions can be cached on disk. On the
portable tier the user's function calls the portable kernels (``kernels.portable``).
"""

from __future__ import annotations

import functools
import platform
import sys

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils, errors
from numba.extending import intrinsic, overload, register_jitable

from . import tiers
from .api import argmax, argmin
from .dtypes import Extreme, kernel_view
from .kernels.portable import portable_kernels
from .planning import plan, serial
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
def _advise_huge_pages(typingctx, array):
    """``madvise(MADV_HUGEPAGE)`` on the whole pages of ``array``'s buffer (``_output``
    calls it for large arrays only)."""

    def codegen(context, builder, sig, args):
        if not _ADVISE:
            return context.get_dummy_value()
        a = context.make_array(sig.args[0])(context, builder, args[0])
        i64, i32, i8p = ir.IntType(64), ir.IntType(32), ir.IntType(8).as_pointer()
        madvise = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(i32, [i8p, i64, i32]), "madvise"
        )

        def const(value):
            return ir.Constant(i64, value)

        start = builder.ptrtoint(a.data, i64)
        end = builder.add(start, builder.mul(a.nitems, a.itemsize))
        first = builder.and_(builder.add(start, const(4095)), const(-4096))  # whole pages
        stop = builder.and_(end, const(-4096))
        with builder.if_then(builder.icmp_unsigned(">", stop, first)):
            advice = ir.Constant(i32, _MADV_HUGEPAGE)
            builder.call(madvise, [builder.inttoptr(first, i8p), builder.sub(stop, first), advice])
        return context.get_dummy_value()

    return types.none(array), codegen


@register_jitable
def _output(size):
    """A new int64 array of ``size`` elements, its large ones advised to huge pages and
    starting at one."""
    if size * 8 < HUGE_PAGE_BYTES:
        return np.empty(size, np.int64)
    buf = np.empty(size + ALIGN_BYTES // 8, np.int64)
    skip = (-buf.ctypes.data) % ALIGN_BYTES // 8
    out = buf[skip : skip + size]
    _advise_huge_pages(out)
    return out


def _literal_flag(value, name: str, op: str, *, required: bool) -> int | None:
    if isinstance(value, (types.Omitted,)):
        return int(value.value)
    if isinstance(value, (int, bool)):  # Python default
        return int(value)
    if isinstance(value, (types.IntegerLiteral, types.BooleanLiteral)):
        v = int(value.literal_value)
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
                return _fast_impl(ndim, keep, last, int(kind), view_dtype, extents)
            except Exception as exc:  # the checks above passed: the fast tier itself failed
                tiers.fall_back(exc)
        return _portable_impl(ndim, keep, int(kind), view_dtype, extents)

    return typing


overload(argmax, prefer_literal=True)(_typed(Extreme.MAX))
overload(argmin, prefer_literal=True)(_typed(Extreme.MIN))


@functools.cache
def _extents(op: str):
    """A compiled ``extents(shape, axis, ndim)`` for ``op`` (named in its errors)."""
    out_of_range = f"{op}: axis is out of range for the input's rank"
    empty = f"{op}: the reduced axis is empty"

    def extents(shape, axis, ndim):
        # ``(ax, outer, n, inner)``: ``axis`` made non-negative, and the input of
        # ``shape`` seen as ``(outer, n, inner)`` with the reduced axis in the middle.
        ax = axis + ndim if axis < 0 else axis
        if ax < 0 or ax >= ndim:
            raise ValueError(out_of_range)
        outer = 1
        inner = 1
        for i in range(ndim):
            if i < ax:
                outer *= shape[i]
            elif i > ax:
                inner *= shape[i]
        n = shape[ax]
        if n == 0:
            raise ValueError(empty)
        return ax, outer, n, inner

    return register_jitable(extents)


@functools.cache
def _result_shape(ndim: int, keep: int):
    """A compiled ``result_shape(shape, ax)``: the shape of the result of reducing axis
    ``ax`` of an input of ``shape`` (rank ``ndim``), a tuple of static length, written
    out for each axis (numba slices tuples only at constant positions)."""
    lines = ["def result_shape(shape, ax):", "    one = shape[0] - shape[0] + 1"]
    for ax in range(ndim):
        dims = [f"shape[{i}]" for i in range(ndim) if i != ax]
        if keep:
            dims.insert(ax, "one")
        lines.append(f"    if ax == {ax}:")
        lines.append(f"        return ({''.join(d + ', ' for d in dims)})")
    lines.append(f"    return ({''.join('one, ' for _ in range(ndim if keep else ndim - 1))})")
    namespace: dict = {}
    exec("\n".join(lines), namespace)
    return njit(inline="always")(namespace["result_shape"])


def _portable_impl(ndim: int, keep: int, kind: int, view_dtype: np.dtype, extents):
    """The implementation on the portable tier: the portable kernels, called by name."""
    # Floats are read as signed integers of their width (``kernels.portable``).
    read_as = np.dtype(f"i{view_dtype.itemsize}") if view_dtype.kind == "f" else view_dtype
    read_type, itemsize = read_as.type, read_as.itemsize
    kernels = portable_kernels(kind, itemsize)
    rows_serial, rows_parallel = kernels.rows[False], kernels.rows[True]
    middle_serial, middle_parallel = kernels.middle[False], kernels.middle[True]
    result_shape = _result_shape(ndim, keep)

    def impl(data, axis=0, keepdims=1, select_last_index=0):
        ax, outer, n, inner = extents(data.shape, axis, ndim)
        last = select_last_index != 0
        out = _output(outer * inner)  # every element is written below
        if outer * inner > 0:
            view = np.ascontiguousarray(data).view(read_type)
            parallel = not serial(outer, n, inner, itemsize)
            if inner == 1:
                x2 = view.reshape((outer, n))
                if parallel:
                    rows_parallel(x2, out, last)
                else:
                    rows_serial(x2, out, last)
            else:
                x3, o2 = view.reshape((outer, n, inner)), out.reshape((outer, inner))
                if parallel:
                    middle_parallel(x3, o2, last)
                else:
                    middle_serial(x3, o2, last)
        return out.reshape(result_shape(data.shape, ax))

    return impl


def _fast_impl(ndim: int, keep: int, last: int | None, kind: int, view_dtype: np.dtype, extents):
    """The implementation on the fast tier: the plan's kernel run through the address
    table (its modules imported only where the fast tier runs)."""
    from .runtime.arrays import c_view, to_fixed_tuple
    from .runtime.calls import thread_count
    from .runtime.table import BOTH, run_plan

    # The tasks for the one ``last`` the code can take, where that is a constant.
    lasts = BOTH if last is None else last
    out_ndim = ndim if keep else ndim - 1
    view_type = view_dtype.type
    itemsize = view_dtype.itemsize

    def impl(data, axis=0, keepdims=1, select_last_index=0):
        ax, outer, n, inner = extents(data.shape, axis, ndim)
        shape = data.shape
        last = np.int64(1 if select_last_index else 0)
        out = _output(outer * inner)  # every element is written below
        if outer * inner > 0:
            view = np.ascontiguousarray(data).view(view_type)
            parallel = not serial(outer, n, inner, itemsize)
            chosen = plan(outer, n, inner, itemsize, thread_count() if parallel else 1)
            if inner == 1:  # ``plan`` chose a row kernel
                args = (c_view(view, 0, (outer, n)), out, last)
                run_plan(args, chosen, kind, parallel, lasts)
            else:
                x3, o2 = c_view(view, 0, (outer, n, inner)), c_view(out, 0, (outer, inner))
                run_plan((x3, o2, last), chosen, kind, parallel, lasts)
        dims = np.empty(out_ndim, np.int64)
        j = 0
        for i in range(ndim):
            if i != ax:
                dims[j] = shape[i]
                j += 1
            elif keep:
                dims[j] = 1
                j += 1
        return c_view(out, 0, to_fixed_tuple(dims, out_ndim))

    return impl

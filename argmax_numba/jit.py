"""``argmax`` inside ``@numba.njit`` code.

An ``@overload`` of the Python ``argmax`` picks, at typing time, the kernels for the
argument's dtype and the output rank. ``keepdims`` decides the output's rank, so it
must be a compile-time constant; ``axis`` and ``select_last_index`` may vary at run
time. The input is made C-contiguous (a copy only if it is not), so a Fortran-ordered
or strided argument costs one copy here, unlike from Python. The kernels are called
through addresses kept in a table (``runtime.table``), not linked into the user's
function, which keeps its first compile short (docs/performance.md, "Compiled callers'
first compile"); users' code holds no address of the running process, so their
functions can be cached on disk.
"""

from __future__ import annotations

import platform
import sys

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic, overload, register_jitable

from .api import argmax
from .dtypes import kernel_view
from .planning import plan, serial
from .runtime.arrays import as_dtype, c_view, to_fixed_tuple
from .runtime.calls import thread_count
from .runtime.table import BOTH, run_plan

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


def _literal_flag(value, name: str, *, required: bool) -> int | None:
    if isinstance(value, (types.Omitted,)):
        return int(value.value)
    if isinstance(value, (int, bool)):  # Python default
        return int(value)
    if isinstance(value, (types.IntegerLiteral, types.BooleanLiteral)):
        v = int(value.literal_value)
        if v not in (0, 1):
            raise errors.TypingError(f"argmax: {name} must be 0 or 1, got {v}")
        return v
    if isinstance(value, (types.Integer, types.Boolean)) and not required:
        return None
    raise errors.TypingError(
        f"argmax: in compiled code {name} must be a compile-time constant 0/1 or True/False "
        f"(it decides the output's rank), got {value}"
    )


@overload(argmax, prefer_literal=True)
def _argmax_overload(data, axis=0, keepdims=1, select_last_index=0):
    if not isinstance(data, types.Array):
        raise errors.TypingError(f"argmax: data must be an array, got {data}")
    if data.dtype == types.float16:
        raise errors.TypingError(
            "argmax: input dtype float16 is not supported in compiled code: numba has no "
            "float16 arithmetic on the CPU; call argmax from Python for float16/bfloat16"
        )
    try:
        kind, view_dtype = kernel_view(as_dtype(data.dtype))
    except (TypeError, NotImplementedError) as exc:
        raise errors.TypingError(str(exc)) from None
    if not isinstance(axis, (types.Integer, types.Omitted, int)) or isinstance(axis, types.Boolean):
        raise errors.TypingError(f"argmax: axis must be an integer, got {axis}")
    keep = _literal_flag(keepdims, "keepdims", required=True)
    # The tasks for the one ``last`` the code can take, where that is a constant.
    lasts = _literal_flag(select_last_index, "select_last_index", required=False)
    lasts = BOTH if lasts is None else lasts
    ndim = data.ndim
    if ndim == 0:
        raise errors.TypingError("argmax: the input is rank 0; there is no axis to reduce")
    out_ndim = ndim if keep else ndim - 1
    view_type = view_dtype.type
    itemsize = view_dtype.itemsize
    kind = int(kind)

    def impl(data, axis=0, keepdims=1, select_last_index=0):
        ax = axis + ndim if axis < 0 else axis
        if ax < 0 or ax >= ndim:
            raise ValueError("argmax: axis is out of range for the input's rank")
        shape = data.shape
        outer = 1
        inner = 1
        for i in range(ndim):
            if i < ax:
                outer *= shape[i]
            elif i > ax:
                inner *= shape[i]
        n = shape[ax]
        if n == 0:
            raise ValueError("argmax: the reduced axis is empty")
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

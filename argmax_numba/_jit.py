"""``argmax`` inside ``@numba.njit`` code.

An ``@overload`` of the Python ``argmax`` picks, at typing time, the kernels for the
argument's dtype and the output rank. ``keepdims`` decides the output's rank, so it
must be a compile-time constant; ``axis`` and ``select_last_index`` may vary at run
time. The input is made C-contiguous (a copy only if it is not), so a Fortran-ordered
or strided argument costs one copy here, unlike from Python.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.core import errors
from numba.extending import overload
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from ._api import COLS, ROWS, SERIAL_BELOW, SHORT, argmax, plan
from ._dtypes import kernel_view
from ._kernels import JIT_KERNELS, SHORT_ROW

__all__: list[str] = []


def _short_rows(kind, parallel, length, x, out, last):
    """Run the ``short_rows`` driver for rows of ``x.shape[1]`` elements, which is in
    ``[length, SHORT_ROW]`` (``kind``, ``parallel`` and ``length`` are constants)."""
    raise NotImplementedError("only callable from compiled code")


@overload(_short_rows, prefer_literal=True)
def _short_rows_overload(kind, parallel, length, x, out, last):
    # One driver per length: this length's, else the next length's, and so on.
    m = length.literal_value
    kernels = JIT_KERNELS[(kind.literal_value, bool(parallel.literal_value))]
    driver = kernels.short_rows[m - 2].driver
    if m == SHORT_ROW:
        return lambda kind, parallel, length, x, out, last: driver(x, out, last, 0)
    following = m + 1

    def impl(kind, parallel, length, x, out, last):
        if x.shape[1] == m:
            driver(x, out, last, 0)
        else:
            _short_rows(kind, parallel, following, x, out, last)

    return impl


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
    _literal_flag(select_last_index, "select_last_index", required=False)
    ndim = data.ndim
    if ndim == 0:
        raise errors.TypingError("argmax: the input is rank 0; there is no axis to reduce")
    out_ndim = ndim if keep else ndim - 1
    view_type = view_dtype.type
    # The drivers that call their tasks directly: an address would not survive the
    # on-disk cache of the caller (``where``, their last argument, is unused).
    par, ser = JIT_KERNELS[(kind, True)], JIT_KERNELS[(kind, False)]
    rows_par, pieces_par = par.rows.driver, par.row_pieces.driver
    cols_par, narrow_par = par.cols.driver, par.narrow.driver
    rows_ser, cols_ser, narrow_ser = ser.rows.driver, ser.cols.driver, ser.narrow.driver
    itemsize = view_dtype.itemsize

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
        last = 1 if select_last_index else 0
        out = np.zeros(outer * inner, np.int64)
        if outer * inner > 0:
            view = np.ascontiguousarray(data).view(view_type)
            parallel = view.size >= SERIAL_BELOW
            threads = numba.get_num_threads() if parallel else 1
            which, p1, p2 = plan(outer, n, inner, itemsize, threads)
            x3 = view.reshape((outer, n, inner))
            o2 = out.reshape((outer, inner))
            if which == ROWS:
                x2 = view.reshape((outer, n))
                if parallel and p1 > 1:
                    pieces_par(x2, out, last, p1, 0)
                elif parallel:
                    rows_par(x2, out, last, 0)
                else:
                    rows_ser(x2, out, last, 0)
            elif which == SHORT:  # one driver per row length, from 2 up
                x2 = view.reshape((outer, n))
                if parallel:
                    _short_rows(kind, True, 2, x2, out, last)
                else:
                    _short_rows(kind, False, 2, x2, out, last)
            elif which == COLS:
                if parallel:
                    cols_par(x3, o2, last, p1, 0)
                else:
                    cols_ser(x3, o2, last, p1, 0)
            elif parallel:
                narrow_par(x3, o2, last, p1, p2, 0)
            else:
                narrow_ser(x3, o2, last, p1, p2, 0)
        dims = np.empty(out_ndim, np.int64)
        j = 0
        for i in range(ndim):
            if i != ax:
                dims[j] = shape[i]
                j += 1
            elif keep:
                dims[j] = 1
                j += 1
        return out.reshape(to_fixed_tuple(dims, out_ndim))

    return impl

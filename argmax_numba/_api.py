"""``argmax``: validate, bring the reduced axis into a canonical layout, dispatch."""

from __future__ import annotations

import operator
from math import prod

import numba
import numpy as np
from numba.extending import register_jitable

from . import _threading
from ._dtypes import KINDS as _KINDS
from ._dtypes import kernel_view
from ._ir import VECTOR_BYTES
from ._kernels import KERNELS, rows_per_task
from ._row_groups import CHUNK_ROW_BYTES, GROUP_ROW_BYTES
from ._short_rows import is_short
from ._side_blocks import GATHER_BYTES, SHORT_GATHER_BYTES, WIDE_GATHER_BYTES, wide_row_span

__all__ = ["argmax"]

# Inputs of fewer bytes than this are reduced on the calling thread: waking the pool
# costs 5-10 us, about what one thread takes to read 768 KiB from cache (measured on
# rows, columns, small blocks and tall, narrow inputs: one thread was 1.05-3.3x faster
# up to 512 KiB, about even at 768 KiB, and 0.65-1.07x at 1-1.5 MiB).
SERIAL_BELOW_BYTES = 3 << 18
# Bytes of each row that one task of the ``cols`` kernel reads as one stretch: longer
# stretches are read faster (64 MiB along axis 0 of (256, N), against 2048 elements a
# task: int8 1.47 -> 1.35 of the read bound, float32 1.38 -> 1.29); the running maxima
# and row numbers of a block stay in L2.
COL_BLOCK_BYTES = 1 << 16
# Inner extents under this many bytes use the ``narrow`` kernel, which reads rows side by
# side as one row of about LANE_BYTES, where there are few blocks x[o].
NARROW_BYTES = 256
# ``cols`` splits the columns of a few blocks between tasks; pieces narrower than this
# are read slower than rows split between tasks (32 MiB along axis 0, cols against
# narrow: (131072, 256) int8 1.62 against 0.41 ms, (65536, 256) int16 1.17 against
# 0.49 ms, (32768, 256) float32 0.78 against 0.45 ms, (8192, 1024) float32 0.75 against
# 0.44 ms; (8192, 4096) int8 0.63 against 0.80 ms; 64 MiB, ratios to the read bound,
# pieces of 3 KiB against narrow: (10922, 768) float64 1.47 against 1.26, (10922, 1536)
# float32 1.39 against 1.24; 8-bit pieces of 1.5 KiB: (21845, 3072) int8 1.38-1.40
# against 1.61), in inputs of NARROW_SPLIT_BYTES or more. Smaller ones, read from
# cache, are as fast or faster in ``cols`` ((2048, 2048) int8 0.05 against 0.13 ms;
# (32768, 256) int8, 8 MiB, 0.16 against 0.14 ms), whose first call also compiles 0.8 s
# faster.
NARROW_PIECE_BYTES = 4096
NARROW_SPLIT_BYTES = 8 << 20
LANE_BYTES = 1024
# Whole blocks narrower than a vector are read as rows side by side where that makes at
# least this many wide rows; fewer are faster gathered (``each_cols``). 32 MiB along
# axis 1, side by side against a column at a time, before blocks were gathered: (k, 8,
# 16) int8 (two wide rows) 8.5 against 6.1 ms, (k, 8, 8) float16 (two) 6.2 against 3.9
# ms; at three about even: (k, 12, 8) float16 4.3 against 4.2 ms; from four on, side by
# side wins: (k, 16, 4) float32 3.3 against 5.3 ms, (k, 16, 16) int8 3.7 against 4.3 ms,
# (k, 16, 8) float16 3.2 against 4.0 ms, (k, 16, 8) float32 (eight) 1.2 against 2.1 ms.
SIDE_GROUPS = 4
# ... and where a wide row takes several vectors (``inner`` not a power of two), whose
# lanes are merged in loops, not in registers, only where the wide rows times the
# gathers a row takes (of 8 bytes each) are more than GATHERED_ROWS. 64 MiB along axis
# 1, against the read bound, side by side against gathered: (87381, 256, 3) int8 (four
# wide rows, one gather a row) 14.7 against 4.7, (21845, 512, 3) int8 (eight) 11.3
# against 6.6, (29127, 768, 3) int8 (twelve) 7.6 against 6.4, (21845, 1024, 3) int8
# (sixteen) 3.8 against 5.2; (29127, 384, 3) int16 (twelve) 3.3 against 2.6, (21845, 512,
# 3) int16 (sixteen) 2.4 against 2.7; (87381, 64, 3) float32 (four, two gathers) 4.1
# against 2.4, (43690, 128, 3) float32 (eight) 3.8 against 3.4, (29127, 192, 3) float32
# (twelve) 1.8 against 3.1; (26214, 256, 10) int8 (eight, two) 4.7 against 2.3, (21845,
# 256, 12) int8 (sixteen, two) 1.6 against 2.7, (17476, 128, 12) float32 (32, six) 1.3
# against 2.6, (15420, 256, 17) int8 (four, three) 3.6 against 4.3.
GATHERED_ROWS = 16
# A row is split across tasks only into pieces of at least this many elements.
MIN_ROW_CHUNK = 1 << 15


# (shape, dtype, axis, keepdims, select_last_index) -> what a call on a small, aligned,
# writeable C-contiguous input of that kind runs: (kernel, view dtype or None, its input shape,
# its output shape, extra kernel arguments, result shape). Repeated small calls (a
# classifier's logits, a decoding loop) then cost little more than the kernel call.
_PLANS: dict[tuple, tuple] = {}
# At most this many, all dropped when full: about 300 bytes each (1.2 MiB in all).
# Where more shapes come in turn, every call plans again (600 float32 shapes against 512
# plans: 6.7 us a call, against 1.5 us planned and numpy's 2.9 us).
_MAX_PLANS = 4096
# (driver, dtype) -> whether the driver takes inputs of that dtype without a view
# (``_entry``).
_ENTRIES: dict[tuple, bool] = {}
# np.empty takes a dtype faster than a type (40 ns of 130).
_INT64 = np.dtype(np.int64)


def _flag(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(
            f"argmax: {name} must be 0, 1 or a bool, not {type(value).__name__}"
        ) from None
    if v not in (0, 1):
        raise ValueError(f"argmax: {name} must be 0 or 1, got {v}")
    return v


def _axis(axis, ndim: int) -> int:
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError("argmax: axis must be an integer, not bool")
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"argmax: axis must be an integer, not {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(
            f"argmax: axis {a} is out of range for a tensor of rank {ndim}; "
            f"valid axes are [{-ndim}, {ndim - 1}]"
        )
    return a + ndim if a < 0 else a


def _native(x: np.ndarray) -> np.ndarray:
    """``x`` in native byte order and aligned memory, copied only if it is not."""
    if x.dtype.isnative and x.flags.aligned:
        return x
    return x.astype(x.dtype.newbyteorder("="), order="C")  # a new array: aligned


def _contiguous_order(x: np.ndarray) -> tuple[int, ...] | None:
    """An axis order in which ``x`` is C-contiguous, if there is one (no copy needed)."""
    if x.flags.c_contiguous:
        return tuple(range(x.ndim))
    if x.flags.f_contiguous:
        return tuple(range(x.ndim - 1, -1, -1))
    ones = [a for a in range(x.ndim) if x.shape[a] == 1]
    rest = sorted((a for a in range(x.ndim) if x.shape[a] != 1), key=lambda a: -x.strides[a])
    order = tuple(ones + rest)
    return order if x.transpose(order).flags.c_contiguous else None


ROWS, SHORT, COLS, NARROW, GROUPS, CHUNKS = 0, 1, 2, 3, 4, 5
# How ``cols`` reads whole blocks narrower than a vector: rows side by side, gathered,
# rows side by side with the whole block in registers, gathered where a row is at most
# SHORT_GATHER_BYTES, or in pieces of WIDE_GATHER_BYTES where it is longer than
# GATHER_BYTES up to that, of elements of two bytes or more.
SIDE, EACH, REGISTERS, EACH_SHORT, EACH_WIDE = 1, 2, 3, 4, 5


@register_jitable
def serial(outer: int, n: int, inner: int, itemsize: int) -> bool:
    """Whether reducing ``(outer, n, inner)`` is faster on one thread than on the pool,
    for Python and compiled callers alike."""
    return outer * n * inner * itemsize < SERIAL_BELOW_BYTES


@register_jitable
def plan(outer: int, n: int, inner: int, itemsize: int, threads: int) -> tuple[int, int, int]:
    """Which kernel reduces ``(outer, n, inner)`` and its parameters, for Python and
    compiled callers alike: ``(ROWS, nchunks, 0)``, ``(SHORT, 0, 0)`` (rows of a few
    elements, ``is_short``), ``(GROUPS, 0, 0)`` (other rows of up to GROUP_ROW_BYTES),
    ``(CHUNKS, 0, 0)`` (longer rows of up to CHUNK_ROW_BYTES, not split), ``(COLS,
    block, how)`` (``block`` inner positions to a task; ``block // inner`` whole blocks
    where it spans them, read with rows side by side where ``how`` is SIDE or, the whole
    block in registers, REGISTERS, gathered a few blocks at a time where it is EACH,
    EACH_SHORT or EACH_WIDE, and where it is 0, rows of at least a vector) or ``(NARROW, m,
    nsplit)``.
    ``threads`` is 1 for the serial kernels."""
    # (Rows of one whole vector, 8 float64 or int64, are searched faster in groups: 1.3-1.6
    # of the read bound on 64 MiB, against 7-10 with a loop for their length.)
    if inner == 1 and is_short(n, itemsize):
        return SHORT, 0, 0
    if inner == 1 and n * itemsize <= GROUP_ROW_BYTES:
        return GROUPS, 0, 0
    if inner == 1:
        nchunks = 1
        if threads > 1 and outer < 2 * threads:  # split rows so that every core has work
            nchunks = max(1, min(-(-4 * threads // outer), n // MIN_ROW_CHUNK))
        # Rows of up to CHUNK_ROW_BYTES in groups where the tasks of ``rows`` (the driver)
        # hold whole groups: fewer rows, read from cache, are searched faster one at a
        # time ((1, 16384) float32 2.3 against 3.6 us, int8 1.6 against 3.3 us).
        group = VECTOR_BYTES // itemsize
        held = outer >= group and rows_per_task(outer, n, itemsize, threads) >= group
        if nchunks == 1 and n * itemsize <= CHUNK_ROW_BYTES and held:
            return CHUNKS, 0, 0
        return ROWS, nchunks, 0
    # Blocks gathered a few bytes of a row of each in a vector: as few as hold a row.
    row_bytes = inner * itemsize
    slot, gathered = GATHER_BYTES, EACH
    if row_bytes <= SHORT_GATHER_BYTES:
        slot, gathered = SHORT_GATHER_BYTES, EACH_SHORT
    elif GATHER_BYTES < row_bytes <= WIDE_GATHER_BYTES and itemsize > 1:
        slot, gathered = WIDE_GATHER_BYTES, EACH_WIDE
    # Rows read side by side: at least a vector's worth (``narrow`` reads whole vectors).
    m = max(-(-VECTOR_BYTES // (inner * itemsize)), LANE_BYTES // (inner * itemsize))
    # Few blocks x[o], whose rows the narrow kernel splits between the cores. Many blocks
    # go to ``cols`` whole, large ones too: a narrow task per block cost 3-10x ``cols``
    # on (k, 64, 16) float32, (k, 256, 16) int8 and (k, 100, 40) float32 or int8 along
    # axis 1, and for blocks of 16 KiB or more narrower than a vector, 1.4-8x the rows
    # side by side of ``side_cols`` (64 MiB along axis 1, ratios to the read bound:
    # (4096, 1024, 16) int8 9.5 -> 1.17, (2730, 8192, 3) int8 7.5 -> 1.54, (1024, 8192,
    # 4) int16 3.1 -> 1.10, (1024, 2048, 8) float32 1.71 -> 1.09, (16, 1048576, 4) int8
    # 1.37 -> 1.09).
    few = outer < 4 * threads
    narrow = inner * itemsize < NARROW_BYTES and few
    block = max(VECTOR_BYTES, COL_BLOCK_BYTES) // itemsize  # (``cols`` reads whole vectors)
    # Too few blocks for the cores: narrower ones, as few as give every thread an equal
    # share (64 MiB along axis 0, two per thread against one: (4096, 4096) float32 1.38-1.56
    # -> 1.24-1.25 of the read bound, (8192, 2048) float32 1.81-1.86 -> 1.31-1.34,
    # (16384, 4096) int8 2.35-2.41 -> 1.46-1.61; shorter stretches of each row are read
    # slower) ...
    split = threads > 1 and outer * -(-inner // block) < 2 * threads
    if split:
        pieces = 1
        while outer * pieces < threads or outer * pieces % threads:
            pieces += 1
        block = max(64, -(-inner // pieces))
        # ... but not narrower than NARROW_PIECE_BYTES (a quarter of that for 8-bit data,
        # whose row numbers restart more often in ``narrow``) in inputs read from memory:
        # there, the rows are split.
        least = NARROW_PIECE_BYTES // 4 if itemsize == 1 else NARROW_PIECE_BYTES
        large = outer * n * inner * itemsize >= NARROW_SPLIT_BYTES
        narrow = narrow or (large and block * itemsize < least)
    if narrow and n >= 4 * m:
        nsplit = 1
        if threads > 1:
            nsplit = max(1, min(-(-4 * threads // outer), n // (64 * m)))
        return NARROW, m, nsplit
    if threads > 1 and block < inner:
        # Blocks of equal width, as many as make a multiple of the threads in all: the
        # parallel loop gives every thread an equal count of tasks, and 5 blocks on 2
        # threads (4 full ones and a sliver) kept one thread at 3 full ones (64 MiB
        # (256, 65552) float32 along axis 0: 1.42-1.57 -> 1.27-1.29 of the read bound,
        # as (256, 65536)).
        nblocks = -(-inner // block)
        while outer * nblocks % threads:
            nblocks += 1
        # (At least a vector each: ``cols`` reads a block as whole vectors.)
        block = max(-(-inner // nblocks), VECTOR_BYTES // itemsize)
    if not split and block >= inner:
        # Whole blocks x[o] to a task, as many as make COL_BLOCK_BYTES (a task per block
        # of 4 KiB or less cost more than reading it), at least four tasks per thread.
        per = max(1, COL_BLOCK_BYTES // (n * inner * itemsize))
        if threads > 1:
            per = max(1, min(per, -(-outer // (4 * threads))))
        block = per * inner
        lanes = VECTOR_BYTES // itemsize
        if inner < lanes:
            # (``lanes // min(inner & -inner, lanes)`` is ``lanes // gcd(inner, lanes)``, for
            # lanes a power of two: the rows ``side_task`` reads side by side.)
            m = lanes // min(inner & -inner, lanes)
            whole = m * inner == lanes  # a wide row is one vector
            gathers = n // m * -(-inner * itemsize // GATHER_BYTES)
            if n // m >= SIDE_GROUPS and (whole or gathers > GATHERED_ROWS):
                # Rows side by side (``side_cols``), in registers where a wide row is one
                # vector and the wide rows are numbered in the lanes (``block_cols``).
                held = whole and n // m <= wide_row_span(itemsize)
                return COLS, block, REGISTERS if held else SIDE
            # Whole groups of gathered blocks to a task: the blocks after a task's last
            # group are searched one by one, ungathered (64 MiB along axis 1, time against
            # ``per`` blocks a task: (43690, 256, 3) int16 0.78, (349526, 16, 3) float32
            # 0.92, (174763, 16, 3) float64 0.94, (524288, 64, 2) int8 0.88).
            group = VECTOR_BYTES // slot  # blocks a gather
            if per >= group:
                block = per // group * group * inner
            return COLS, block, gathered  # (``each_cols``)
    if inner * itemsize < VECTOR_BYTES:
        # ``cols`` reads rows of at least a vector. Narrower ones split between threads get
        # here only for inputs too small for the threads (``serial``): a block to a task.
        return COLS, inner, gathered
    return COLS, block, 0


def _choose(
    kind: int, view: np.ndarray, outer: int, n: int, inner: int, parallel: bool, last: int
) -> tuple:
    """The driver for ``view`` seen as ``(outer, n, inner)`` (its ``Kernel.entry``), the
    shapes of its input and output, and its extra arguments (the last is the address of
    its task for ``last``)."""
    k = KERNELS[(kind, parallel)]
    which, p1, p2 = plan(outer, n, inner, view.itemsize, numba.get_num_threads() if parallel else 1)
    if which == ROWS:
        kernel, extra = (k.rows, ()) if p1 == 1 else (k.row_pieces, (p1,))
    elif which == SHORT:
        kernel, extra = k.short_rows[n - 2], ()
    elif which == GROUPS:
        kernel, extra = k.group_rows, ()
    elif which == CHUNKS:
        kernel, extra = k.chunk_rows, ()
    elif which == COLS:
        kernels = (
            *(k.cols, k.side_cols, k.each_cols, k.block_cols),
            *(k.each_short_cols, k.each_wide_cols),
        )
        kernel, extra = kernels[p2], (p1,)
    else:
        kernel, extra = k.narrow, (p1, p2)
    writeable = view.flags.writeable
    where = kernel.address(view.dtype, writeable, last)
    fn = kernel.entry(view.dtype, writeable)
    if kernel.ndim == 2:
        return fn, (outer, n), (outer,), (*extra, where)
    return fn, (outer, n, inner), (outer, inner), (*extra, where)


def _run(
    kind: int, view: np.ndarray, out: np.ndarray, outer: int, n: int, inner: int, last: int
) -> tuple | None:
    """Reduce the middle axis of ``view`` seen as C-contiguous ``(outer, n, inner)`` into
    the flat int64 ``out`` of ``outer * inner`` elements. Returns what ``_choose`` chose
    where that was a serial kernel (a plan to remember), else None."""
    parallel = not serial(outer, n, inner, view.itemsize) and _threading.parallel_allowed()
    chosen = _choose(kind, view, outer, n, inner, parallel, last)
    fn, in_shape, out_shape, extra = chosen
    args = (view.reshape(in_shape), out.reshape(out_shape), last, *extra)
    lock = _threading.layer_lock() if parallel else None
    if lock is None:
        fn(*args)
    else:
        with lock:
            fn(*args)
    return None if parallel else chosen


def _entry(x: np.ndarray, view: np.ndarray, chosen: tuple, last: int) -> tuple:
    """The driver ``chosen`` by ``_choose`` (a compiled function called without numba's
    dispatch on types, which the checks before a plan is used make safe), and whether it
    takes ``x`` itself where ``view`` is a view of another dtype: it checks an array's
    item size, not its dtype, so it can read a float16 or bfloat16 input as the int16
    array it was compiled for, without the view (0.14 us). Found once for each kind of
    call, not once a plan."""
    fn, in_shape, out_shape, extra = chosen
    if view.dtype is x.dtype:
        return fn, False
    key = (fn, x.dtype)
    own = _ENTRIES.get(key)
    if own is None:
        try:
            fn(x.reshape(in_shape), np.empty(out_shape, np.int64), last, *extra)
            own = True
        except TypeError:
            own = False
        _ENTRIES[key] = own
    return fn, own


def _remember(x, axis, keep, last, view, chosen, result_shape) -> None:
    """Keep the plan of a serial call (``chosen`` by ``_choose``) for later calls of the
    same kind."""
    if len(_PLANS) >= _MAX_PLANS:
        _PLANS.clear()
    _, in_shape, out_shape, extra = chosen
    fn, own = _entry(x, view, chosen, last)
    _PLANS[(x.shape, x.dtype, axis, keep, last)] = (
        fn,
        None if view.dtype is x.dtype or own else view.dtype,
        None if in_shape == x.shape else in_shape,  # None: no reshape needed
        out_shape,
        extra,
        None if result_shape == out_shape else result_shape,
    )


def argmax(data, axis: int = 0, keepdims: int = 1, select_last_index: int = 0) -> np.ndarray:
    """Indices of the maximum along ``axis``, with the semantics of ONNX ArgMax-12/13.

    Parameters
    ----------
    data
        Array-like of a type ArgMax accepts: float64, float32, float16, bfloat16
        (``ml_dtypes.bfloat16``), or a signed or unsigned integer of 8 to 64 bits.
    axis
        The reduced axis, in ``[-r, r-1]`` for a rank-``r`` input. ONNX's default, 0.
    keepdims
        1 (default) keeps the reduced axis with size 1; 0 drops it.
    select_last_index
        1 picks the last occurrence of the maximum, 0 (default) the first.

    Returns
    -------
    numpy.ndarray
        A new int64 array. NaN counts as the largest value and ``-0.0 == +0.0``.

    Also callable from ``@numba.njit`` code, with ``keepdims`` given as a constant.
    """
    x = data if type(data) is np.ndarray else np.asarray(data)
    if type(axis) is int and type(keepdims) is int and type(select_last_index) is int:
        small = _PLANS.get((x.shape, x.dtype, axis, keepdims, select_last_index))
        if small is not None:
            if x.flags.carray:  # C-contiguous, aligned and writeable, one lookup (70 ns less)
                fn, view_dtype, in_shape, out_shape, extra, result_shape = small
                view = x if view_dtype is None else x.view(view_dtype)
                out = np.empty(out_shape, _INT64)
                fn(
                    view if in_shape is None else view.reshape(in_shape),
                    out,
                    select_last_index,
                    *extra,
                )
                return out if result_shape is None else out.reshape(result_shape)
    shape = x.shape
    keep = keepdims if type(keepdims) is int and 0 <= keepdims <= 1 else _flag(keepdims, "keepdims")
    last = (
        select_last_index
        if type(select_last_index) is int and 0 <= select_last_index <= 1
        else _flag(select_last_index, "select_last_index")
    )
    ndim = x.ndim
    if ndim == 0:
        raise ValueError("argmax: the input is a scalar (rank 0); there is no axis to reduce")
    ax = axis if type(axis) is int and 0 <= axis < ndim else _axis(axis, ndim)
    dtype = x.dtype
    kind, view_dtype = _KINDS.get(dtype) or kernel_view(dtype.newbyteorder("="))
    n = shape[ax]
    if n == 0:
        raise ValueError(
            f"argmax: the reduced axis {ax} is empty (input shape {shape}); "
            "ArgMax of an empty axis is undefined"
        )
    if keep:
        out_shape = shape[:ax] + (1,) + shape[ax + 1 :]
    else:
        out_shape = shape[:ax] + shape[ax + 1 :]
    if x.size == 0:
        return np.zeros(out_shape, dtype=np.int64)

    flags = x.flags
    if flags.c_contiguous and flags.aligned and dtype.isnative:  # the common case: no copies
        view = x if view_dtype is dtype else x.view(view_dtype)
        out = np.empty(x.size // n, _INT64)
        serial_plan = _run(kind, view, out, prod(shape[:ax]), n, prod(shape[ax + 1 :]), last)
        plain_args = type(axis) is int and type(keepdims) is int
        # Plans of small calls only (large ones run serially only in a forked child).
        small = x.nbytes < SERIAL_BELOW_BYTES
        if plain_args and serial_plan and small and flags.writeable:
            _remember(x, axis, keep, last, view, serial_plan, out_shape)
        return out.reshape(out_shape)

    x = _native(x)
    order = _contiguous_order(x)
    if order is None:
        x, order = np.ascontiguousarray(x), tuple(range(ndim))
    # The same elements with the axes in an order in which they are C-contiguous go the
    # common way above (with its plans for repeated small calls: (8, 8, 8) float32 in
    # Fortran order 10.0 -> 3.5 us); the result's axes are then put back in input order.
    pos = order.index(ax)
    result = _reduce_view(x.transpose(order), pos, keep, last)
    kept = order if keep else order[:pos] + order[pos + 1 :]
    return result.transpose(sorted(range(len(kept)), key=kept.__getitem__))


# ``argmax`` itself, for its own second call on a C-contiguous view: one reduction is one
# call of the module's ``argmax`` (what a wrapper that replaces it, say to count calls,
# sees).
_reduce_view = argmax

"""``argmax`` and ``argmin``: validate, bring the reduced axis into a canonical layout,
dispatch."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from contextlib import contextmanager
from math import prod
from typing import Any, NamedTuple

import numba
import numpy as np

from . import tiers
from .dtypes import VIEWS, Extreme, kernel_view
from .kernels.portable import flip_argument, portable_kernels
from .planning import plan, serial
from .runtime import parallel as _parallel
from .tiers import Tier

__all__ = ["argmax", "argmin"]

# numpy 1.25 moved AxisError to numpy.exceptions.
AxisError = getattr(np, "exceptions", np).AxisError


class Call(NamedTuple):
    """A driver chosen for an input (``_choose``) and how to call it."""

    entry: Any  # the driver's compiled entry point (``KernelCode.entry``)
    in_shape: tuple[int, ...]  # the input as the driver takes it
    out_shape: tuple[int, ...]  # the output as the driver writes it
    extra: tuple[int, ...]  # the driver's arguments after ``last``: on the fast tier the
    # task's address last, on the portable one the ``flip`` of ArgMin or ArgMax
    tier: Tier = Tier.FAST  # the tier the driver belongs to
    threads: int = 0  # a parallel driver's: the threads it was planned for; 0: serial
    reads: np.dtype | None = None  # the dtype the driver takes the view as; None: its own


class RememberedCall(NamedTuple):
    """What a call on an aligned C-contiguous input runs (``_PLANS``), writeable or not
    (the fast kernels and the portable loops take the input typed read-only)."""

    entry: Any
    view_dtype: np.dtype | None  # the dtype the driver reads the input as; None: its own
    in_shape: tuple[int, ...] | None  # None: the input's own shape; LEADING, its shape
    # after an axis of 1 (``x[None]``: cheaper than a reshape); else that reshape of it
    shape: tuple[int, ...]  # the result's: allocated so, and returned
    out_shape: tuple[int, ...] | None  # how the driver takes the result: None, as it is;
    # FLAT, its flat view (``ravel``: cheaper than a reshape); else that reshape of it
    extra: tuple[int, ...]  # ``Call.extra`` but the last: a parallel plan's; most often
    # none, and then the driver is called without ``*extra`` (which cost a call about
    # 0.06 us: docs/performance.md, "Small calls: the driver's arguments without a star")
    final: int  # ``Call.extra``'s last: the task's address, or the portable ``flip``
    threads: int  # a parallel driver's: the threads it was planned for; 0: serial


# ``RememberedCall.out_shape`` of a driver that writes a 1-D output.
FLAT = ()
# ``RememberedCall.in_shape`` of a driver that takes the input with a leading axis of 1
# (a 2-D input reduced along its first axis, by a driver of 3-D inputs).
LEADING = (1,)


# (shape, dtype, axis, keepdims, select_last_index, function name) -> the call that such
# an input runs (the name: "argmax" or "argmin").
# Repeated calls (a classifier's logits, a decoding loop) then cost little more than the
# kernel call: for small inputs, a serial driver; for larger ones, a parallel driver,
# whose call after planning it in Python took about 12 us more (docs/performance.md,
# "Parallel calls remembered").
_PLANS: dict[tuple, RememberedCall] = {}
# At most this many, all dropped when full (docs/performance.md, _MAX_PLANS).
_MAX_PLANS = 4096
# (driver, dtype) -> whether the driver takes inputs of that dtype without a view
# (``_takes_own_dtype``).
_ENTRIES: dict[tuple, bool] = {}
# np.empty takes a dtype faster than a type (docs/performance.md, _INT64).
_INT64 = np.dtype(np.int64)
# numpy's names read as module globals, one lookup each, on the small calls' path.
ndarray, empty, asarray = np.ndarray, np.empty, np.asarray


def _flag(value, name: str, op: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(
            f"{op}: {name} must be 0, 1 or a bool, not {type(value).__name__}"
        ) from None
    if v not in (0, 1):
        raise ValueError(f"{op}: {name} must be 0 or 1, got {v}")
    return v


def _axis(axis, ndim: int, op: str) -> int:
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"{op}: axis must be an integer, not bool")
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{op}: axis must be an integer, not {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise AxisError(
            f"{op}: axis {a} is out of range for a tensor of rank {ndim}; "
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


def _choose(
    kind: int,
    view: np.ndarray,
    out: np.ndarray,
    outer: int,
    n: int,
    inner: int,
    parallel: bool,
    last: int,
) -> Call:
    """The driver that ``planning.plan`` chooses for ``view`` seen as ``(outer, n,
    inner)``, and how to call it with ``view`` and ``out``: as they are where the driver
    takes arrays of any rank, else reshaped to the ranks it takes."""
    from .kernels.registry import KERNELS, Ranks  # (the fast tier's, imported where it runs)

    threads = numba.get_num_threads() if parallel else 1
    chosen = plan(outer, n, inner, view.itemsize, threads)
    code = KERNELS[(kind, parallel)].for_python(chosen.kernel, n)
    extra = (*code.extra_args(chosen), code.address(view.dtype, last))
    if code.shape.any_rank and view.shape[-1] == n and not parallel:
        # (A row kernel: every axis after the reduced one has one element. The driver
        # reduces the last axis, which is the reduced one or, where ``n`` is 1 too, an
        # axis whose every answer is 0 all the same. Serial calls only: the small ones,
        # which the views in Python would cost most, and one compiled driver more for
        # each pair of ranks.)
        entry = code.entry(view.dtype, Ranks(view.ndim, out.ndim))
        return Call(entry, view.shape, out.shape, extra)
    entry = code.entry(view.dtype)
    threads = threads if parallel else 0
    if code.ndim == 2:
        return Call(entry, (outer, n), (outer,), extra, Tier.FAST, threads)
    return Call(entry, (outer, n, inner), (outer, inner), extra, Tier.FAST, threads)


def _choose_portable(
    kind: int, view: np.ndarray, outer: int, n: int, inner: int, parallel: bool
) -> Call:
    """``_choose`` on the portable tier: the loop that ``PortableKernels.choose`` chooses,
    taking a 1-D input on one thread as it is, and passing it the ``flip`` of ``kind``
    and of the view's sign, which tells ArgMin from ArgMax and an unsigned integer from a
    signed one. (A parallel loop's plan does not depend on the thread count, but is
    remembered with it all the same.)"""
    kernels = portable_kernels(kind, view.itemsize)
    chosen = kernels.choose(outer, n, inner, parallel, view.shape)
    threads = numba.get_num_threads() if parallel else 0
    flip = (flip_argument(kind, view.itemsize, view.dtype.kind == "u"),)
    reads = None
    if parallel and view.dtype != kernels.signed:
        # The loops on numba's threads take floats and unsigned integers viewed as signed
        # integers here, not through ``read_signed``: a view costs a parallel call little,
        # and each compiled function bound to a parallel loop has LLVM optimise it again
        # (docs/performance.md, "The portable tier's unsigned integers read as signed").
        reads = kernels.signed
    entry = kernels.entry(chosen, view.dtype if reads is None else reads)
    return Call(entry, chosen.in_shape, chosen.out_shape, flip, Tier.PORTABLE, threads, reads)


def _run(call: Call, view: np.ndarray, out: np.ndarray, last: int, parallel: bool) -> Call | None:
    """Run ``call`` on ``view`` into the int64 ``out`` (C-contiguous, of any shape), each
    reshaped as the driver or loop takes it, on numba's threads where ``parallel``.
    Returns ``call`` (a plan to remember), or None where the threading layer needs a lock
    around it."""
    if call.reads is not None:
        view = view.view(call.reads)
    args = (view.reshape(call.in_shape), out.reshape(call.out_shape), last, *call.extra)
    return call if _call_unlocked(call.entry, args, parallel) else None


def _call_unlocked(fn, args: tuple, parallel: bool) -> bool:
    """``fn(*args)``, under the lock the threading layer needs around a parallel call
    where it needs one. Whether it ran without (a call that may be remembered)."""
    lock = _parallel.layer_lock() if parallel else None
    if lock is None:
        fn(*args)
        return True
    with lock:
        fn(*args)
    return False


def _reduce(
    kind: int, view: np.ndarray, out: np.ndarray, outer: int, n: int, inner: int, last: int
) -> Call | None:
    """Reduce on this process's tier (``tiers``), serially or on numba's threads (decided
    here, once for either tier); where the fast tier fails, fall back to the portable one
    for good. Returns the call it ran, or None (``_run``)."""
    parallel = not serial(outer, n, inner, view.itemsize) and _parallel.parallel_allowed()
    if tiers.STATE.tier is Tier.FAST:
        try:
            call = _choose(kind, view, out, outer, n, inner, parallel, last)
            return _run(call, view, out, last, parallel)
        except Exception as exc:  # the inputs were checked: the fast tier itself failed
            tiers.fall_back(exc)
            _PLANS.clear()
    return _run(_choose_portable(kind, view, outer, n, inner, parallel), view, out, last, parallel)


@contextmanager
def on_tier(tier: Tier, plans: dict | None = None) -> Iterator[None]:
    """Run the process's calls from Python on ``tier`` for a while, with a store of
    remembered calls of its own: ``plans``, where given (kept by the caller from one
    stay on the tier to the next), else a new one if the tier is another (tests and the
    benchmark compare the tiers in one process; compiled callers keep the tier they
    were compiled with)."""
    global _PLANS
    saved_tier, saved_plans = tiers.current(), _PLANS
    tiers.use(tier)
    if plans is None:
        plans = {} if tier != saved_tier else saved_plans
    _PLANS = plans
    try:
        yield
    finally:
        tiers.use(saved_tier)
        _PLANS = saved_plans


def _takes_own_dtype(x: np.ndarray, view: np.ndarray, call: Call, last: int) -> bool:
    """Whether ``call``'s driver takes ``x`` itself where ``view`` is a view of it as
    another dtype. A driver checks an array's item size, not its dtype, so it can read a
    float16 or bfloat16 input as the int16 array it was compiled for, without the view.
    (Drivers are called without numba's dispatch on types, which the checks before a
    remembered call is used make safe.) Found once for each driver and dtype, not once a
    plan (docs/performance.md, "Small calls: one flag lookup and no view"). A portable
    loop is a numba dispatcher with a version for each element type it was compiled
    for: it takes only the view."""
    if view.dtype is x.dtype or call.tier is Tier.PORTABLE:
        return False
    key = (call.entry, x.dtype)
    own = _ENTRIES.get(key)
    if own is None:
        try:
            out = np.empty(call.out_shape, np.int64)
            call.entry(x.reshape(call.in_shape), out, last, *call.extra)
            own = True
        except TypeError:
            own = False
        _ENTRIES[key] = own
    return own


def _still_parallel(threads: int) -> bool:
    """Whether a parallel driver planned for ``threads`` threads may run as planned."""
    return _parallel.parallel_allowed() and numba.get_num_threads() == threads


def _remember(key: tuple, x, last, view, call: Call, result_shape) -> None:
    """Keep a call for later calls on inputs of the same kind, under ``key``."""
    if len(_PLANS) >= _MAX_PLANS:
        _PLANS.clear()
    own = _takes_own_dtype(x, view, call, last)
    if result_shape == call.out_shape:
        out_shape = None
    else:
        out_shape = FLAT if len(call.out_shape) == 1 else call.out_shape
    if call.in_shape == x.shape:
        in_shape = None
    else:
        in_shape = LEADING if call.in_shape == (1, *x.shape) else call.in_shape
    reads = view.dtype if call.reads is None else call.reads
    _PLANS[key] = RememberedCall(
        call.entry,
        None if reads is x.dtype or own else reads,
        in_shape,
        result_shape,
        out_shape,
        call.extra[:-1],
        call.extra[-1],
        call.threads,
    )


def _arg_function(extreme: Extreme):
    """``argmax`` or ``argmin``: the wrapper for the operator that looks for ``extreme``.
    One body serves both: the operator decides only the key kinds (``dtypes.KeyKind``)
    and the name in errors."""
    name = extreme.function  # also the operator's tag in ``_PLANS``' keys: a str, whose
    # hash Python keeps (an Enum member's hash is a Python-level call)
    views = VIEWS[extreme]  # dtype -> (key kind, view dtype), for dtypes seen before

    def arg_function(
        data, axis: int = 0, keepdims: int = 1, select_last_index: int = 0
    ) -> np.ndarray:
        x = data if type(data) is ndarray else asarray(data)
        # Flags given as bools (``keepdims=True``, as numpy's users write it) take the
        # remembered call of the ints they equal, and hash as: a bool is an int.
        keep_type, last_type = type(keepdims), type(select_last_index)
        plain_keep = keep_type is int or keep_type is bool
        if type(axis) is int and plain_keep and (last_type is int or last_type is bool):
            remembered = _PLANS.get((x.shape, x.dtype, axis, keepdims, select_last_index, name))
            # C-contiguous and aligned: a writeable input in one lookup (docs/performance.md,
            # "Small calls: one flag lookup and no view"), a read-only one in two more.
            if remembered is not None and (
                (flags := x.flags).carray or (flags.c_contiguous and flags.aligned)
            ):
                fn, view_dtype, in_shape, shape, out_shape, extra, final, threads = remembered
                # A parallel driver only where it may still run, planned for as many
                # threads as numba now gives this thread.
                if not threads or _still_parallel(threads):
                    view = x if view_dtype is None else x.view(view_dtype)
                    out = empty(shape, _INT64)
                    if in_shape is not None:
                        view = view[None] if in_shape is LEADING else view.reshape(in_shape)
                    result = (
                        out
                        if out_shape is None
                        else out.ravel()
                        if out_shape is FLAT
                        else out.reshape(out_shape)
                    )
                    if extra:
                        fn(view, result, select_last_index, *extra, final)
                    else:
                        fn(view, result, select_last_index, final)
                    return out
        shape = x.shape
        keep = (
            keepdims
            if type(keepdims) is int and 0 <= keepdims <= 1
            else _flag(keepdims, "keepdims", name)
        )
        last = (
            select_last_index
            if type(select_last_index) is int and 0 <= select_last_index <= 1
            else _flag(select_last_index, "select_last_index", name)
        )
        ndim = x.ndim
        if ndim == 0:
            raise ValueError(f"{name}: the input is a scalar (rank 0); there is no axis to reduce")
        ax = axis if type(axis) is int and 0 <= axis < ndim else _axis(axis, ndim, name)
        dtype = x.dtype
        kind, view_dtype = views.get(dtype) or kernel_view(dtype.newbyteorder("="), extreme)
        n = shape[ax]
        if n == 0:
            raise ValueError(
                f"{name}: the reduced axis {ax} is empty (input shape {shape}); "
                f"{extreme.op_type} of an empty axis is undefined"
            )
        if keep:
            out_shape = shape[:ax] + (1,) + shape[ax + 1 :]
        else:
            out_shape = shape[:ax] + shape[ax + 1 :]
        if x.size == 0:
            return np.zeros(out_shape, dtype=np.int64)

        flags = x.flags
        if flags.c_contiguous and flags.aligned and dtype.isnative:  # the common case
            view = x if view_dtype is dtype else x.view(view_dtype)
            out = np.empty(out_shape, _INT64)
            outer, inner = prod(shape[:ax]), prod(shape[ax + 1 :])
            call = _reduce(kind, view, out, outer, n, inner, last)
            plain_args = type(axis) is int and plain_keep
            if plain_args and call is not None:
                key = (x.shape, x.dtype, axis, keep, last, name)
                _remember(key, x, last, view, call, out_shape)
            return out

        x = _native(x)
        order = _contiguous_order(x)
        if order is None:
            x, order = np.ascontiguousarray(x), tuple(range(ndim))
        # The same elements with the axes in an order in which they are C-contiguous go
        # the common way above (with its remembered calls for repeated inputs);
        # the result's axes are then put back in input order (docs/performance.md,
        # "Small calls: one flag lookup and no view").
        pos = order.index(ax)
        result = arg_function(x.transpose(order), pos, keep, last)
        kept = order if keep else order[:pos] + order[pos + 1 :]
        return result.transpose(sorted(range(len(kept)), key=kept.__getitem__))

    arg_function.__name__ = arg_function.__qualname__ = name
    arg_function.__module__ = __name__
    return arg_function


_DOC = """Indices of the {what} along ``axis``, with the semantics of ONNX {op}-12/13.

Parameters
----------
data
    Array-like of a type {op} accepts: float64, float32, float16, bfloat16
    (``ml_dtypes.bfloat16``), or a signed or unsigned integer of 8 to 64 bits.
axis
    The reduced axis, in ``[-r, r-1]`` for a rank-``r`` input. ONNX's default, 0.
keepdims
    1 (default) keeps the reduced axis with size 1; 0 drops it.
select_last_index
    1 picks the last occurrence of the {what}, 0 (default) the first.

Returns
-------
numpy.ndarray
    A new int64 array. NaN {nan} and ``-0.0 == +0.0``.

Also callable from ``@numba.njit`` code, with ``keepdims`` given as a constant.
"""

argmax = _arg_function(Extreme.MAX)
argmax.__doc__ = _DOC.format(what="maximum", op="ArgMax", nan="counts as the largest value")
argmin = _arg_function(Extreme.MIN)
argmin.__doc__ = _DOC.format(
    what="minimum",
    op="ArgMin",
    nan="wins here too, as in numpy and onnx's reference implementation (the first NaN, "
    "or the last with ``select_last_index=1``)",
)

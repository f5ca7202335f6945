"""How a portable loop becomes compiled code: bound to the functions and constants of
one element format (``bind``), compiled on first use for each element type it is given
(``Loop``), and reached from Python through small compiled functions that view its input
as it takes it (``read_signed``, ``add_leading_axis``)."""

from __future__ import annotations

from types import FunctionType
from typing import Any

import numba
import numpy as np
from numba import njit, types

__all__ = [
    "Loop",
    "add_leading_axis",
    "bind",
    "read_signed",
    "read_signed_add_leading_axis",
    "signature",
]

# Bound for each adapter below: the compiled loop it calls (``loop``), and the signed
# integer type that float32, float64 and unsigned integers are viewed as (``bits``).
loop = bits = None


def read_signed(x, out, last, flip):
    # A float32, float64 or unsigned integer input passed to ``loop`` as the signed
    # integers of its width: made in compiled code, the view costs a small call from
    # Python less than numpy's (about 0.15 us), and the loops keep the one compiled version
    # that compiled callers use (docs/performance.md, "The portable tier's floats viewed
    # as integers in compiled code").
    loop(x.view(bits), out, last, flip)


def add_leading_axis(x, out, last, flip):
    # A 1-D input given without the leading axis of 1 that ``loop`` takes (one row), its
    # result in the shape the loop writes: made in compiled code, that view costs a small
    # call from Python less than ``x[None]`` there (docs/performance.md, "The portable
    # tier's leading axis added in compiled code"). (A reshape: ``x[None]`` compiles only
    # from numba 0.64 on.)
    loop(x.reshape((1, *x.shape)), out, last, flip)


def read_signed_add_leading_axis(x, out, last, flip):
    # ``read_signed`` and ``add_leading_axis`` in one function: each compiled function
    # between Python and the loop has LLVM optimise the loop again at its first compile.
    loop(x.view(bits).reshape((1, *x.shape)), out, last, flip)


def bind(fn, name: str, bound: dict):
    """``fn`` with ``bound`` as extra globals, under ``name``."""
    bound_fn = FunctionType(fn.__code__, {**fn.__globals__, **bound}, name, fn.__defaults__)
    bound_fn.__qualname__ = name
    return bound_fn


def signature(element: np.dtype, ndim: int) -> tuple:
    """The argument types of a portable loop, or of a function bound to one, for a
    C-contiguous input of ``element`` and ``ndim`` axes, typed read-only, and its int64
    result of one axis fewer (at least one): ``(x, out, last, flip)``."""
    return (
        types.Array(numba.from_dtype(element), ndim, "C", readonly=True),
        types.Array(types.int64, max(ndim - 1, 1), "C"),
        types.int64,
        types.int64,
    )


class Loop:
    """A portable loop (or a small function bound to one), serial or on numba's threads,
    compiled on first use for each type of element it is given.

    Each element type gets a dispatcher made with its signature (numba's eager
    compilation), whose input is typed read-only. A writeable input converts to that
    type, so writeable and read-only inputs run one compiled version: a dispatcher that
    compiles on demand would compile the loop again for an input that differs only in
    that flag (docs/performance.md, "The portable loops compiled once for writeable and
    read-only inputs"). Under ``NUMBA_DISABLE_JIT`` the loop is the Python function
    itself, in which ``prange`` is ``range``."""

    def __init__(self, fn, name: str, bound: dict, parallel: bool, ndim: int):
        self.py_func = bind(fn, name, bound)
        self.parallel = parallel
        self.ndim = ndim  # the input's axes
        self._versions: dict[np.dtype, Any] = {}  # a dispatcher for each element type

    def compiled(self, element: np.dtype):
        """What runs the loop for inputs of ``element``: a dispatcher compiled for them,
        or loaded from numba's disk cache, the first time."""
        if numba.config.DISABLE_JIT:
            return self.py_func
        version = self._versions.get(element)
        if version is None:
            options = {"parallel": self.parallel, "nogil": True, "cache": True}
            types_of_arguments = signature(element, self.ndim)
            version = self._versions[element] = njit(types_of_arguments, **options)(self.py_func)
        return version

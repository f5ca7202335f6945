"""The keys the portable loops compare, and ``flip``, which makes ArgMax's keys ArgMin's.

Signed integers are their own keys; a float's key is computed from its bits, ordered as
the floats are, with every NaN above +inf and ``-0.0 == +0.0``, exactly as the fast
kernels' (``vector.keys``). Before it is keyed, an element's bits are xor-ed with
``flip``, the loops' last argument (``flip_argument``), not a constant of their code.
ArgMin's keys are ArgMax's of the element's bits flipped (``dtypes.KeyKind``), and an
unsigned integer's bits have their top bit flipped too, which orders them as signed
integers. So one compiled loop serves both operators and both signs of an integer width:
a process or a user's function that calls more than one compiles it once
(docs/performance.md, "The portable tier's ArgMax and ArgMin in one compiled loop" and
"The portable tier's unsigned integers read as signed")."""

from __future__ import annotations

import functools

import numpy as np
from numba import njit
from numba.extending import overload

from ...dtypes import FLOAT_BITS, KeyKind, flip_mask, highest_key

__all__ = ["flip_argument", "flipped", "greatest_key_function", "key_function"]


def flipped(v, flip):
    """``v ^ flip``, as an integer of the type of ``v``: ``flip`` (a Python or numpy
    integer, wrapped to that type) is 0, or -1 for every bit, or a float format's sign
    bit. Plain Python, with numpy's scalars: used where numba's JIT is disabled."""
    return v ^ np.asarray(flip).astype(v.dtype)[()]


@overload(flipped, inline="always")
def _flipped_typed(v, flip):
    # numba types ``^`` of narrow integers as a 64-bit one: cast back to the type of v.
    cast = np.dtype(str(v)).type
    return lambda v, flip: cast(v ^ cast(flip))


@functools.cache
def flip_argument(kind: int, itemsize: int, unsigned: bool = False) -> int:
    """What the portable loops are passed as ``flip`` for key kind ``kind`` and elements
    of ``itemsize`` bytes, as a signed integer of their width: ``dtypes.flip_mask`` (0
    for ArgMax; -1 or the sign bit for ArgMin), with the top bit flipped too for
    ``unsigned`` integers, which the loops read as signed ones (``v ^ 0x80`` orders the
    bytes 0 to 255 as -128 to 127). So one compiled loop serves both operators and both
    signs. (Kept once computed: calls that are not remembered look it up each time.)"""
    bits = 8 * itemsize
    mask = flip_mask(kind, bits) ^ (1 << (bits - 1) if unsigned else 0)
    return mask - (1 << bits) if mask >> (bits - 1) else mask


def key_function(fmt: int, itemsize: int):
    """The key of one element of format ``fmt`` (``KeyKind.INT`` or a float's) and
    ``itemsize`` bytes, as an inlined numba function of the element and ``flip``
    (``flip_argument``): the element's bits are xor-ed with ``flip`` first, which for
    ArgMin reverses the order (every bit of an integer, a float's sign bit), so that the
    largest key is the smallest element's, NaN's still the largest."""
    fmt = KeyKind(fmt).format
    if fmt == KeyKind.INT:

        def key(v, flip):
            return flipped(v, flip)

        return njit(inline="always")(key)
    width = np.dtype(f"i{itemsize}").type  # the bits' signed integer type
    inf, mask = FLOAT_BITS[fmt]
    magnitude, zero = width(mask), width(0)
    above_inf = width(highest_key(fmt, 8 * itemsize, False))  # every NaN's key
    negative_inf = width(inf - (1 << (8 * itemsize - 1)))  # -inf's bits, as signed

    def key(v, flip):
        # The magnitude, every NaN's made the one above +inf's, negated for the negative
        # numbers but NaN (whose bits, as signed integers, are -inf's or below): the
        # floats' order, as integers. (Cast back to the width at each step: numba would
        # widen it.)
        v = width(v ^ width(flip))
        mag = width(min(width(v & magnitude), above_inf))
        return width(zero - mag) if v <= negative_inf else mag

    return njit(inline="always")(key)


def greatest_key_function(fmt: int, itemsize: int):
    """The greatest key that an element of an array searched with ``key_function(fmt,
    itemsize)`` can have, as an inlined numba function of the array: every NaN's for the
    floats (``dtypes.highest_key``), the greatest integer of the array's type for the
    integers (ArgMin's flipped integers span the same range). No element beats it, so a
    search for its first occurrence is done once it finds it, as the fast kernels' is."""
    fmt = KeyKind(fmt).format
    if fmt == KeyKind.INT:

        def greatest(x):
            return np.iinfo(x.dtype).max

    else:
        nan = np.dtype(f"i{itemsize}").type(highest_key(fmt, 8 * itemsize, False))

        def greatest(x):
            return nan

    return njit(inline="always")(greatest)

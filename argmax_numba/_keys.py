"""Order-preserving integer keys for floating-point bit patterns.

ArgMax on floats needs a total order in which every NaN is the maximum (so the first
NaN wins, as in numpy and onnx's reference implementation) and ``-0.0 == +0.0``.
Mapping the bits ``b`` of a float to ``-(b & MAG)`` for negative numbers, ``b`` for
positive ones, and one value above ``+inf`` for every NaN gives exactly that order as
a signed integer of the same width. Integer compares vectorise where float compares
with NaN rules do not, and float16/bfloat16 (which have no CPU arithmetic in numba)
never need converting.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import errors
from numba.extending import intrinsic, overload

from ._dtypes import KIND_BF16, KIND_F16, KIND_F32, KIND_F64, KIND_INT

__all__ = ["float_key_ir", "key", "key_vector", "lowest_key", "narrow_index", "narrow_span"]

# kind -> (bits of +inf, mask of the magnitude bits)
_FLOAT_BITS = {
    KIND_F16: (0x7C00, 0x7FFF),
    KIND_BF16: (0x7F80, 0x7FFF),
    KIND_F32: (0x7F800000, 0x7FFFFFFF),
    KIND_F64: (0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF),
}


def key(value, kind):
    """Comparison key of one element; ``kind`` must be a compile-time constant."""
    raise NotImplementedError("key() is only callable from compiled code")


def float_key_ir(builder: ir.IRBuilder, bits: ir.Value, kind: int) -> ir.Value:
    """The key of float bits ``bits`` (an integer or a vector of integers) in LLVM IR."""
    inf_bits, mag_mask = _FLOAT_BITS[kind]
    width = bits.type
    zero = ir.Constant(width, 0)
    mag = builder.and_(bits, ir.Constant(width, mag_mask))
    signed = builder.select(builder.icmp_signed("<", bits, zero), builder.neg(mag), mag)
    is_nan = builder.icmp_signed(">", mag, ir.Constant(width, inf_bits))
    return builder.select(is_nan, ir.Constant(width, inf_bits + 1), signed)


def lowest_key(kind: int, bits: int, unsigned: bool) -> int:
    """The least key of ``bits``-wide elements: of -inf for floats, of the least integer."""
    if kind != KIND_INT:
        return -_FLOAT_BITS[kind][0]
    return 0 if unsigned else -(1 << (bits - 1))


@intrinsic(prefer_literal=True)
def _float_key(typingctx, value, kind):
    """The key as LLVM integer ops at the width of ``value`` (numba would widen them)."""
    key_type = getattr(types, f"int{value.bitwidth}")  # signed, as wide as ``value``

    def codegen(context, builder, signature, args):
        bits = args[0]
        width = ir.IntType(value.bitwidth)
        if bits.type != width:  # a float: reinterpret its bits
            bits = builder.bitcast(bits, width)
        return float_key_ir(builder, bits, kind.literal_value)

    return key_type(value, kind), codegen


@overload(key, prefer_literal=True)
def _key_overload(value, kind):
    if not isinstance(kind, types.IntegerLiteral):
        raise errors.TypingError("key(): kind must be a compile-time constant")
    if kind.literal_value == KIND_INT:
        return lambda value, kind: value
    if not (isinstance(value, types.Float) or (isinstance(value, types.Integer) and value.signed)):
        raise errors.TypingError("key(): floats must come as floats or as signed-integer bits")
    return lambda value, kind: _float_key(value, kind)


def key_vector(size, like, kind):
    """An uninitialised vector for ``size`` keys of elements like ``like``'s."""
    raise NotImplementedError("key_vector() is only callable from compiled code")


def narrow_index(size, like):
    """An uninitialised index vector whose integers are as wide as ``like``'s items."""
    raise NotImplementedError("narrow_index() is only callable from compiled code")


def narrow_span(like):
    """How many consecutive row numbers fit ``narrow_index(., like)``, minus a sentinel."""
    raise NotImplementedError("narrow_span() is only callable from compiled code")


def _signed_of(array_type):
    return {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[array_type.dtype.bitwidth]


@overload(key_vector, prefer_literal=True)
def _key_vector_overload(size, like, kind):
    if kind.literal_value == KIND_INT:
        return lambda size, like, kind: np.empty(size, like.dtype)
    dtype = _signed_of(like)
    return lambda size, like, kind: np.empty(size, dtype)


@overload(narrow_index)
def _narrow_index_overload(size, like):
    dtype = _signed_of(like)
    return lambda size, like: np.empty(size, dtype)


@overload(narrow_span)
def _narrow_span_overload(like):
    # Capped so that ``k0 + span`` and range lengths cannot overflow int64.
    span = min(int(np.iinfo(_signed_of(like)).max), 2**31 - 1)
    return lambda like: span

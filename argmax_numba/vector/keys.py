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

from llvmlite import ir
from numba import types
from numba.core import errors
from numba.extending import intrinsic

from ..dtypes import KeyKind
from ..runtime.arrays import vector_codegen

__all__ = [
    "INDEX_BITS",
    "float_key_ir",
    "key",
    "key_vector",
    "lowest_key",
    "narrow_index",
]

# kind -> (bits of +inf, mask of the magnitude bits)
_FLOAT_BITS = {
    KeyKind.F16: (0x7C00, 0x7FFF),
    KeyKind.BF16: (0x7F80, 0x7FFF),
    KeyKind.F32: (0x7F800000, 0x7FFFFFFF),
    KeyKind.F64: (0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF),
}


def float_key_ir(builder: ir.IRBuilder, bits: ir.Value, kind: int) -> ir.Value:
    """The key of float bits ``bits`` (an integer or a vector of integers) in LLVM IR.

    Four vector operations: the magnitude, NaNs' clamped to one (an unsigned minimum),
    and its negation where the bits, as a signed integer, are those of -inf or below
    (negative numbers but NaN). A select for NaN after the sign had made five, and the
    operation saved shows in the gathered tiny blocks and short rows of floats
    (docs/performance.md, "Float keys in four vector operations")."""
    inf_bits, mag_mask = _FLOAT_BITS[kind]
    width = bits.type
    zero = ir.Constant(width, 0)
    mag = builder.and_(bits, ir.Constant(width, mag_mask))
    # Every NaN's magnitude to the one above +inf's.
    top = ir.Constant(width, inf_bits + 1)
    mag = builder.select(builder.icmp_unsigned("<", mag, top), mag, top)
    # Negative numbers other than NaN: the bits of -inf and below, as signed integers.
    negative = builder.icmp_signed("<", bits, ir.Constant(width, (inf_bits | ~mag_mask) + 1))
    return builder.select(negative, builder.sub(zero, mag), mag)


def lowest_key(kind: int, bits: int, unsigned: bool) -> int:
    """The least key of ``bits``-wide elements: of -inf for floats, of the least integer."""
    if kind != KeyKind.INT:
        return -_FLOAT_BITS[kind][0]
    return 0 if unsigned else -(1 << (bits - 1))


@intrinsic(prefer_literal=True)
def key(typingctx, value, kind):
    """Comparison key of one element; ``kind`` must be a compile-time constant.

    Integers are their own keys. Floats come as floats or as signed-integer bits; their
    key is a signed integer as wide, computed at that width (numba would widen it).
    """
    if not isinstance(kind, types.IntegerLiteral):
        raise errors.TypingError("key(): kind must be a compile-time constant")
    kind_value, value = kind.literal_value, types.unliteral(value)
    if kind_value == KeyKind.INT:
        if not isinstance(value, types.Integer):
            raise errors.TypingError("key(): integer keys come from integers")
        return value(value, kind), lambda context, builder, sig, args: args[0]
    if not (isinstance(value, types.Float) or (isinstance(value, types.Integer) and value.signed)):
        raise errors.TypingError("key(): floats must come as floats or as signed-integer bits")

    def codegen(context, builder, sig, args):
        bits = args[0]
        width = ir.IntType(value.bitwidth)
        if bits.type != width:  # a float: reinterpret its bits
            bits = builder.bitcast(bits, width)
        return float_key_ir(builder, bits, kind_value)

    return getattr(types, f"int{value.bitwidth}")(value, kind), codegen


def _signed_of(array_type) -> types.Integer:
    return getattr(types, f"int{array_type.dtype.bitwidth}")


@intrinsic(prefer_literal=True)
def key_vector(typingctx, size, like, kind):
    """An uninitialised vector for ``size`` keys of elements like ``like``'s."""
    if not isinstance(kind, types.IntegerLiteral):
        raise errors.TypingError("key_vector(): kind must be a compile-time constant")
    item = like.dtype if kind.literal_value == KeyKind.INT else _signed_of(like)
    return types.Array(item, 1, "C")(size, like, kind), vector_codegen(item)


# Bits of the row numbers that the column kernels keep beside their running maxima: as
# many as the data's, at most INDEX_BITS. Narrower than 32- and 64-bit data, they cut the
# bytes of running values read and written for each group of rows by a quarter (float32)
# to three eighths (float64), at the cost of a pass over a run's row numbers every 32,760
# rows (120 for 8-bit data). That made 32-bit data faster along both axes, and no slower
# compiled for AVX2 (docs/performance.md, INDEX_BITS).
INDEX_BITS = 16


def _index_bits(array_type) -> int:
    return min(array_type.dtype.bitwidth, INDEX_BITS)


@intrinsic
def narrow_index(typingctx, size, like):
    """An uninitialised vector for ``size`` row numbers of a column kernel over elements
    like ``like``'s: signed integers as wide as they are, at most INDEX_BITS."""
    item = getattr(types, f"int{_index_bits(like)}")
    return types.Array(item, 1, "C")(size, like), vector_codegen(item)

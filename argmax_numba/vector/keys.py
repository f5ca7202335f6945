"""Order-preserving integer keys for floating-point bit patterns.

ArgMax on floats needs a total order in which every NaN is the maximum (so the first
NaN wins, as in numpy and onnx's reference implementation) and ``-0.0 == +0.0``.
Mapping the bits ``b`` of a float to ``-(b & MAG)`` for negative numbers, ``b`` for
positive ones, and one value above ``+inf`` for every NaN gives exactly that order as
a signed integer of the same width. Integer compares vectorise where float compares
with NaN rules do not, and float16/bfloat16 (which have no CPU arithmetic in numba)
never need converting.

ArgMin's key kinds flip each element's bits first (``dtypes.flip_mask``): the kernels
then search for the largest key as for ArgMax, and find the smallest element, NaN still
winning. Every kernel keys the bits it loads with ``key_ir`` (or ``key``), which does
both; ``ordered_ir`` alone serves a search that reads the flipped bits themselves.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import errors
from numba.extending import intrinsic

from ..dtypes import FLOAT_BITS, KeyKind, flip_mask, highest_key
from ..runtime.arrays import vector_codegen

__all__ = [
    "INDEX_BITS",
    "float_key_ir",
    "is_integer",
    "key",
    "key_ir",
    "key_type",
    "key_vector",
    "narrow_index",
    "ordered_ir",
    "top_key",
    "unsigned_keys",
]


def float_key_ir(builder: ir.IRBuilder, bits: ir.Value, kind: int) -> ir.Value:
    """The key of float bits ``bits`` (an integer or a vector of integers) in LLVM IR,
    bits already flipped (``ordered_ir``) for ArgMin's kinds.

    Four vector operations: the magnitude, NaNs' clamped to one (an unsigned minimum),
    and its negation where the bits, as a signed integer, are those of -inf or below
    (negative numbers but NaN). A select for NaN after the sign had made five, and the
    operation saved shows in the gathered tiny blocks and short rows of floats
    (docs/performance.md, "Float keys in four vector operations")."""
    inf_bits, mag_mask = FLOAT_BITS[KeyKind(kind).format]
    width = bits.type
    zero = ir.Constant(width, 0)
    mag = builder.and_(bits, ir.Constant(width, mag_mask))
    # Every NaN's magnitude to the one above +inf's.
    top = ir.Constant(width, inf_bits + 1)
    mag = builder.select(builder.icmp_unsigned("<", mag, top), mag, top)
    # Negative numbers other than NaN: the bits of -inf and below, as signed integers.
    negative = builder.icmp_signed("<", bits, ir.Constant(width, (inf_bits | ~mag_mask) + 1))
    return builder.select(negative, builder.sub(zero, mag), mag)


@intrinsic(prefer_literal=True)
def top_key(typingctx, like, kind):
    """``highest_key`` for the elements of arrays like ``like``, of the type ``key``
    gives their keys: no element beats it, so a search for the first occurrence of the
    maximum is done once it has found it."""
    if not isinstance(kind, types.IntegerLiteral):
        raise errors.TypingError("top_key(): kind must be a compile-time constant")
    kind_value = kind.literal_value
    value = highest_key(kind_value, like.dtype.bitwidth, unsigned_keys(like, kind_value))

    def codegen(context, builder, sig, args):
        return ir.Constant(ir.IntType(like.dtype.bitwidth), value)

    return key_type(like, kind_value)(like, kind), codegen


def is_integer(kind: int) -> bool:
    """Whether key kind ``kind`` compares integers (ArgMax's or ArgMin's)."""
    return KeyKind(kind).format == KeyKind.INT


def _width(value: ir.Value) -> int:
    t = value.type
    return (t.element if isinstance(t, ir.VectorType) else t).width


def ordered_ir(builder: ir.IRBuilder, bits: ir.Value, kind: int) -> ir.Value:
    """Element bits ``bits`` (an integer or a vector) as the kernels of ``kind`` order
    them: unchanged for ArgMax's kinds, flipped for ArgMin's (``dtypes.flip_mask``)."""
    mask = flip_mask(kind, _width(bits))
    return builder.xor(bits, ir.Constant(bits.type, mask)) if mask else bits


def key_ir(builder: ir.IRBuilder, bits: ir.Value, kind: int) -> ir.Value:
    """The comparison keys of element bits ``bits`` (an integer or a vector) as loaded:
    flipped for ArgMin's kinds, then, for floats, keyed by ``float_key_ir``."""
    bits = ordered_ir(builder, bits, kind)
    return bits if is_integer(kind) else float_key_ir(builder, bits, kind)


@intrinsic(prefer_literal=True)
def key(typingctx, value, kind):
    """Comparison key of one element; ``kind`` must be a compile-time constant.

    Integers are their own keys (flipped, for ArgMin's kinds). Floats come as floats or
    as signed-integer bits; their key is a signed integer as wide, computed at that
    width (numba would widen it).
    """
    if not isinstance(kind, types.IntegerLiteral):
        raise errors.TypingError("key(): kind must be a compile-time constant")
    kind_value, value = kind.literal_value, types.unliteral(value)
    if is_integer(kind_value):
        if not isinstance(value, types.Integer):
            raise errors.TypingError("key(): integer keys come from integers")
        return value(value, kind), lambda context, builder, sig, args: key_ir(
            builder, args[0], kind_value
        )
    if not (isinstance(value, types.Float) or (isinstance(value, types.Integer) and value.signed)):
        raise errors.TypingError("key(): floats must come as floats or as signed-integer bits")

    def codegen(context, builder, sig, args):
        bits = args[0]
        width = ir.IntType(value.bitwidth)
        if bits.type != width:  # a float: reinterpret its bits
            bits = builder.bitcast(bits, width)
        return key_ir(builder, bits, kind_value)

    return getattr(types, f"int{value.bitwidth}")(value, kind), codegen


def key_type(array_type, kind: int) -> types.Integer:
    """The numba type of the keys of ``array_type``'s elements for key kind ``kind``: the
    element type for integers, a signed integer as wide for floats (their bits')."""
    if is_integer(kind):
        return array_type.dtype
    return getattr(types, f"int{array_type.dtype.bitwidth}")


def unsigned_keys(array_type, kind: int) -> bool:
    """Whether the keys of ``array_type``'s elements for key kind ``kind`` are unsigned:
    those of unsigned integers are."""
    return not key_type(array_type, kind).signed


@intrinsic(prefer_literal=True)
def key_vector(typingctx, size, like, kind):
    """An uninitialised vector for ``size`` keys of elements like ``like``'s."""
    if not isinstance(kind, types.IntegerLiteral):
        raise errors.TypingError("key_vector(): kind must be a compile-time constant")
    item = key_type(like, kind.literal_value)
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

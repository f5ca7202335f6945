"""Rows of a few elements, searched a vector of rows at a time.

Rows of 2 to 8 elements (12 of 8-bit ones, and of 16-bit ones of an even length) are
too short for a vector each. ``short_group_argmax`` reads as many rows as a vector has
lanes, as consecutive vectors, and deals their elements out into one vector per column
(element ``j`` of every row), so that each row is a lane: the maximum and its position
are then a running maximum over the columns, lane by lane, with no shuffle between
lanes after the deal. 16-bit rows of an even length are dealt out two elements at a
time, as 32-bit lanes, half as many rows at once: each row is then two lanes, its best
even and its best odd element, merged at the end. Shuffles of 16-bit lanes take several
instructions where those of 32-bit lanes take one (``vpermt2w`` against ``vpermt2d``).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

from .ir import key_ir
from .lanes import constants_of, int64_constant, lanes_of

__all__ = ["BYTE_ROW", "SHORT_ROW", "short_group_argmax", "short_group_rows"]

# The longest rows that are searched so (docs/performance.md, SHORT_ROW) ...
SHORT_ROW = 8
# ... and of 8-bit elements, and 16-bit ones of an even length, where the search of rows
# in groups (``vector.row_groups``) was slower; rows a few elements longer are as fast or
# faster in groups. Rows of 8-bit elements in groups also took much longer to compile
# (docs/performance.md, BYTE_ROW).
BYTE_ROW = 12


def _paired(bits: int, n: int) -> bool:
    """Whether rows of ``n`` elements of ``bits`` bits are dealt out two elements at a
    time: 16-bit rows of an even length. This is what lets rows of 10 and 12 such
    elements be dealt out, and for rows of 2 to 8 it is as fast as one element at a
    time (docs/performance.md, "16-bit rows dealt out in pairs")."""
    return bits == 16 and n % 2 == 0


def _group_rows(x, n: int) -> int:
    """Rows that one ``short_group_argmax`` reads from the array type ``x``: a vector's
    lanes, or half as many where they are dealt out in pairs."""
    lanes = lanes_of(x)
    return lanes // 2 if _paired(x.dtype.bitwidth, n) else lanes


@intrinsic(prefer_literal=True)
def short_group_rows(typingctx, like, length):
    """How many rows of the constant ``length`` one ``short_group_argmax`` reads, for
    arrays like ``like``."""
    if not isinstance(length, types.IntegerLiteral):
        raise errors.TypingError("short_group_rows(): length must be a constant")
    return types.int64(like, length), int64_constant(_group_rows(like, length.literal_value))


@intrinsic(prefer_literal=True)
def short_group_argmax(typingctx, x, o, count, out, kind, last, length):
    """Write the position of the maximum of each of the ``count`` rows from ``o`` on of
    the C-contiguous ``x[outer, length]`` into ``out[o:]``, where ``count`` is at most
    ``lane_count(x)``. ``kind``, ``last`` (1: the last occurrence) and ``length`` (2 to
    ``BYTE_ROW``) are constants; the caller makes sure the rows are in the array.

    Fewer rows than a vector's lanes are copied into a vector's worth of memory first,
    and their positions out of one: a loop over them compiled for each length took
    longer to compile (docs/performance.md, "A partial group of short rows copied").
    """
    if not (isinstance(x, types.Array) and x.layout == "C" and x.ndim == 2):
        raise errors.TypingError("short_group_argmax(): x must be a C-contiguous 2-D array")
    if not (isinstance(out, types.Array) and out.layout == "C" and out.ndim == 1):
        raise errors.TypingError("short_group_argmax(): out must be a C-contiguous 1-D array")
    kind_value, last_value, bits, lanes, unsigned = constants_of(
        "short_group_argmax", x, kind, last
    )
    if not (isinstance(length, types.IntegerLiteral) and 2 <= length.literal_value <= BYTE_ROW):
        raise errors.TypingError(
            f"short_group_argmax(): length must be a constant, 2 to {BYTE_ROW}"
        )
    n = length.literal_value
    paired = _paired(bits, n)
    rows = _group_rows(x, n)
    unit, per_row = (2 * bits, n // 2) if paired else (bits, n)  # dealt elements
    signature = types.none(x, o, count, out, kind, last, length)

    def codegen(context, builder, sig, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        ity = ir.IntType(bits)
        vty = ir.VectorType(ity, lanes)
        wide = ir.VectorType(ir.IntType(unit), per_row * rows)  # the rows, one after another
        positions_type = ir.VectorType(i64, rows)
        x_struct = context.make_array(sig.args[0])(context, builder, args[0])
        out_struct = context.make_array(sig.args[3])(context, builder, args[3])
        o, count = args[1], args[2]
        src = builder.gep(x_struct.data, [builder.mul(o, ir.Constant(i64, n))])
        dst = builder.gep(out_struct.data, [o])
        src_at = builder.bitcast(src, wide.as_pointer())
        dst_at = builder.bitcast(dst, positions_type.as_pointer())
        whole = builder.icmp_unsigned("==", count, ir.Constant(count.type, rows))
        rows_copy = cgutils.alloca_once(builder, wide)
        positions_copy = cgutils.alloca_once(builder, positions_type)
        with builder.if_then(builder.not_(whole), likely=False):
            builder.store(ir.Constant(wide, 0), rows_copy)  # defined lanes past the rows
            cgutils.raw_memcpy(
                builder, rows_copy, src, builder.mul(count, ir.Constant(count.type, n)), bits // 8
            )
        block = builder.load(builder.select(whole, src_at, rows_copy), align=bits // 8)
        bigger = builder.icmp_unsigned if unsigned else builder.icmp_signed
        # A later column wins ties only for ``last``.
        beats = ">=" if last_value else ">"

        def column(j):
            # Element j of every row (elements 2j and 2j + 1, where paired).
            picked = ir.Constant(ir.VectorType(i32, rows), [r * per_row + j for r in range(rows)])
            dealt = builder.shuffle_vector(block, block, picked)
            return key_ir(builder, builder.bitcast(dealt, vty) if paired else dealt, kind_value)

        def position(j):
            return ir.Constant(vty, [2 * j, 2 * j + 1] * rows if paired else j)

        best, at = column(0), position(0)
        for j in range(1, per_row):
            k = column(j)
            wins = bigger(beats, k, best)
            best = builder.select(wins, k, best)
            at = builder.select(wins, position(j), at)
        if paired:
            # Each row's best of its even and of its odd elements, in two lanes: the odd
            # one wins where greater, or equal and earlier (``last``: later).
            def lanes_from(v, first):
                picked = ir.Constant(ir.VectorType(i32, rows), list(range(first, lanes, 2)))
                return builder.shuffle_vector(v, v, picked)

            even, odd = lanes_from(best, 0), lanes_from(best, 1)
            even_at, odd_at = lanes_from(at, 0), lanes_from(at, 1)
            nearer = builder.icmp_unsigned(">" if last_value else "<", odd_at, even_at)
            tie = builder.and_(builder.icmp_unsigned("==", odd, even), nearer)
            wins = builder.or_(bigger(">", odd, even), tie)
            at = builder.select(wins, odd_at, even_at)
        positions = builder.zext(at, positions_type)
        builder.store(positions, builder.select(whole, dst_at, positions_copy), align=8)
        with builder.if_then(builder.not_(whole), likely=False):
            cgutils.raw_memcpy(builder, dst, positions_copy, count, 8)
        return context.get_dummy_value()

    return signature, codegen

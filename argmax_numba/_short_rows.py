"""Rows of a few elements, searched a vector of rows at a time.

Rows of 2 to 8 elements (12 of 8-bit ones) are too short for a vector each.
``short_group_argmax`` reads as many rows as a vector has lanes, as consecutive vectors,
and deals their elements out into one vector per column (element ``j`` of every row), so
that each row is a lane: the maximum and its position are then a running maximum over
the columns, lane by lane, with no shuffle between lanes after the deal.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic, register_jitable

from ._ir import key_ir
from ._lanes import constants_of

__all__ = ["BYTE_ROW", "SHORT_ROW", "short_group_argmax", "short_row"]

# The longest rows that are searched so ...
SHORT_ROW = 8
# ... and of 8-bit elements, where the search of rows in groups (``_row_groups``) took up
# to twice as long and compiled in 1.2 s against 0.2 s (Intel Xeon, both threads, the
# output mapped: 8M rows of 10 int8 1.7-1.8x as long, of 12 1.1-1.5x; 64 MiB of rows of
# 9 1.8x, of 11 1.3x, of 13 1.1x, of 15 faster in groups, as 16-bit rows of 10 to 16 and
# float32 rows of 11 to 15 were).
BYTE_ROW = 12


@register_jitable
def short_row(itemsize: int) -> int:
    """The longest rows of ``itemsize``-byte elements searched by ``short_group_argmax``."""
    return BYTE_ROW if itemsize == 1 else SHORT_ROW


@intrinsic(prefer_literal=True)
def short_group_argmax(typingctx, x, o, count, out, kind, last, length):
    """Write the position of the maximum of each of the ``count`` rows from ``o`` on of
    the C-contiguous ``x[outer, length]`` into ``out[o:]``, where ``count`` is at most
    ``lane_count(x)``. ``kind``, ``last`` (1: the last occurrence) and ``length`` (2 to
    ``BYTE_ROW``) are constants; the caller makes sure the rows are in the array.

    Fewer rows than a vector's lanes are copied into a vector's worth of memory first,
    and their positions out of one: a loop over them compiled for each length took
    0.15-0.17 s more to compile (float32 rows of 4).
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
    signature = types.none(x, o, count, out, kind, last, length)

    def codegen(context, builder, sig, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        ity = ir.IntType(bits)
        vty = ir.VectorType(ity, lanes)
        wide = ir.VectorType(ity, n * lanes)  # the rows, one after another
        positions_type = ir.VectorType(i64, lanes)
        x_struct = context.make_array(sig.args[0])(context, builder, args[0])
        out_struct = context.make_array(sig.args[3])(context, builder, args[3])
        o, count = args[1], args[2]
        src = builder.gep(x_struct.data, [builder.mul(o, ir.Constant(i64, n))])
        dst = builder.gep(out_struct.data, [o])
        src_at = builder.bitcast(src, wide.as_pointer())
        dst_at = builder.bitcast(dst, positions_type.as_pointer())
        whole = builder.icmp_unsigned("==", count, ir.Constant(count.type, lanes))
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
            picked = ir.Constant(ir.VectorType(i32, lanes), [r * n + j for r in range(lanes)])
            return key_ir(builder, builder.shuffle_vector(block, block, picked), kind_value)

        best, at = column(0), ir.Constant(vty, 0)
        for j in range(1, n):
            k = column(j)
            wins = bigger(beats, k, best)
            best = builder.select(wins, k, best)
            at = builder.select(wins, ir.Constant(vty, j), at)
        positions = builder.zext(at, positions_type)
        builder.store(positions, builder.select(whole, dst_at, positions_copy), align=8)
        with builder.if_then(builder.not_(whole), likely=False):
            cgutils.raw_memcpy(builder, dst, positions_copy, count, 8)
        return context.get_dummy_value()

    return signature, codegen

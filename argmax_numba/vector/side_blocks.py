"""Blocks narrower than a vector, their rows read side by side or gathered, in registers.

``side_task`` (``kernels.columns``) reads a block ``x[o]`` of ``n`` rows of ``inner`` elements,
fewer than a vector holds, as wide rows of ``m`` consecutive rows each. Where ``inner``
divides the lanes of a vector, a wide row is one vector, and where the block's wide rows
can be numbered in the lanes' own width, ``side_block`` folds the whole block with its
running maxima and wide-row numbers in registers, then merges the ``m`` lanes of each
column with a few shuffles. Nothing goes through memory between rows, and a block needs
no setup: the general path, which keeps that state in arrays, loads and stores it for
every group of rows, and merges the lanes with loops over ``inner`` columns, is much
slower (docs/performance.md, "Blocks folded whole in registers").

Blocks with too few rows to read side by side go to ``each_task``, where
``gather_blocks`` reads the same 8 (or 4) bytes of a row of 8 (or 16) blocks at once,
gathered into one vector (or loads 16 bytes of a row of 4 blocks and puts them side by
side), rather than searching each column on its own, an element at a time, as before
(docs/performance.md, GATHER_BYTES).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

from ..dtypes import lowest_key
from .ir import VECTOR_BYTES, key_ir, lane_of, masked_store, prefetch, resize, splat, vector_at
from .lanes import FOLD_AHEAD_BYTES, constants_of, fold_lanes

__all__ = [
    "GATHER_BYTES",
    "GATHER_ROWS",
    "SHORT_GATHER_BYTES",
    "WIDE_GATHER_BYTES",
    "gather_blocks",
    "side_block",
]

# ``gather_blocks`` reads this many bytes of each row of a block at once for as many
# blocks as make a vector, VECTOR_BYTES // GATHER_BYTES (docs/performance.md,
# GATHER_BYTES) ...
GATHER_BYTES = 8
# ... or this many, for rows of at most this many bytes: twice the blocks a gather, where
# a gather costs about the same per element. Longer rows keep GATHER_BYTES: in two such
# gathers they were slower (docs/performance.md, SHORT_GATHER_BYTES).
SHORT_GATHER_BYTES = 4
# ... or this many, for rows longer than GATHER_BYTES up to this many bytes of elements of
# two bytes or more: not gathered but loaded, a whole piece of a row of each of half as
# many blocks, and put side by side, fewer loads than gathers. 8-bit rows keep their
# gathers, and rows longer than this, which would take two such pieces, were slower so
# (docs/performance.md, WIDE_GATHER_BYTES).
WIDE_GATHER_BYTES = 16
# The most rows of a block that ``gather_blocks`` numbers, in at least 16 bits
# (docs/performance.md, GATHER_ROWS).
GATHER_ROWS = 2**15 - 1
# ``gather_blocks`` fetches the blocks this many groups of GATHER_BYTES on ahead (a group
# of wide pieces holds half as many blocks), a cache line of LINE_BYTES a row
# (docs/performance.md, GATHER_AHEAD).
GATHER_AHEAD = 2
LINE_BYTES = 64


@intrinsic(prefer_literal=True)
def side_block(typingctx, x, first, rows, inner, best, at, kind, last):
    """Fold ``rows`` wide rows of the C-contiguous ``x``, one vector each, from flat index
    ``first`` on, and write each of the ``inner`` columns' maximum key into ``best[c]`` and
    its row in the block (the row at ``first`` is row 0) into ``at[c]``.

    A wide row holds ``m = lane_count(x) // inner`` consecutive rows of ``inner``
    elements; ``inner`` must be a power of two below ``lane_count(x)``, and ``rows`` at
    most ``planning.wide_row_span(x.itemsize)``, so that wide-row numbers fit the lanes.
    Ties go to the first row (``last`` = 1: the last). ``kind`` and ``last`` are
    constants.
    """
    for name, array in (("x", x), ("best", best), ("at", at)):
        if not (isinstance(array, types.Array) and array.layout == "C"):
            raise errors.TypingError(f"side_block(): {name} must be C-contiguous")
    if at.dtype != types.int64:
        raise errors.TypingError("side_block(): at must hold int64")
    kind_value, last_value, bits, lanes, unsigned = constants_of("side_block", x, kind, last)
    signature = types.none(x, first, rows, inner, best, at, kind, last)

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        ity = ir.IntType(bits)
        vty = ir.VectorType(ity, lanes)
        # Actual row numbers, wide row * m + the lane's row in it, at twice the data's
        # width: enough for ``wide_row_span`` wide rows of at most ``lanes`` rows each.
        rty = ir.IntType(min(2 * bits, 64))
        rvty = ir.VectorType(rty, lanes)
        x_data = context.make_array(sig.args[0])(context, builder, args[0]).data
        first, count, inner = args[1], args[2], args[3]
        zero, one = ir.Constant(i64, 0), ir.Constant(i64, 1)
        per_row = ir.Constant(i64, lanes)
        ahead = ir.Constant(i64, FOLD_AHEAD_BYTES * 8 // bits)
        load_row = vector_at(builder, x_data, vty)

        top_ptr = cgutils.alloca_once_value(
            builder, ir.Constant(vty, lowest_key(kind_value, bits, unsigned))
        )
        number_ptr = cgutils.alloca_once_value(builder, ir.Constant(vty, 0))
        # Every key is at or above the start, so that a column's lanes that hold only
        # the lowest key keep wide row 0 (``last``: take the last such row).
        with cgutils.for_range_slice(builder, zero, count, one) as (r, _):
            index = builder.add(first, builder.mul(r, per_row))
            value = key_ir(builder, load_row(index), kind_value)
            prefetch(builder, builder.gep(x_data, [builder.add(index, ahead)]))
            fold_lanes(builder, unsigned, last_value, top_ptr, number_ptr, value, r)

        # Lane q holds row q // inner of its wide row, column q % inner.
        shift = lane_of(builder, inner, False)  # log2(inner): its lowest set bit
        to_rows = builder.sub(ir.Constant(i64, lanes.bit_length() - 1), shift)  # log2(m)
        lane = ir.Constant(rvty, list(range(lanes)))
        in_row = builder.lshr(lane, splat(builder, resize(builder, shift, rty), lanes))
        numbers = resize(builder, builder.load(number_ptr), rvty)
        wide = builder.shl(numbers, splat(builder, resize(builder, to_rows, rty), lanes))
        row_ptr = cgutils.alloca_once_value(builder, builder.or_(wide, in_row))

        # Halve the lanes that hold a column until one is left: lanes q and q + half
        # hold the same column while half >= inner.
        bigger = builder.icmp_unsigned if unsigned else builder.icmp_signed
        half = lanes // 2
        while half >= 1:
            with builder.if_then(builder.icmp_unsigned(">=", ir.Constant(i64, half), inner)):
                down = ir.Constant(
                    ir.VectorType(ir.IntType(32), lanes), [(q + half) % lanes for q in range(lanes)]
                )
                top, row = builder.load(top_ptr), builder.load(row_ptr)
                other_top = builder.shuffle_vector(top, top, down)
                other_row = builder.shuffle_vector(row, row, down)
                later = builder.icmp_unsigned(">" if last_value else "<", other_row, row)
                wins = builder.or_(
                    bigger(">", other_top, top),
                    builder.and_(builder.icmp_unsigned("==", other_top, top), later),
                )
                builder.store(builder.select(wins, other_top, top), top_ptr)
                builder.store(builder.select(wins, other_row, row), row_ptr)
            half //= 2

        tops = builder.bitcast(top_ptr, ity.as_pointer())
        found = builder.bitcast(row_ptr, rty.as_pointer())
        best_data = context.make_array(sig.args[4])(context, builder, args[4]).data
        at_data = context.make_array(sig.args[5])(context, builder, args[5]).data
        with cgutils.for_range_slice(builder, zero, inner, one) as (c, _):
            builder.store(builder.load(builder.gep(tops, [c])), builder.gep(best_data, [c]))
            row = resize(builder, builder.load(builder.gep(found, [c])), i64)
            builder.store(row, builder.gep(at_data, [c]))
        return context.get_dummy_value()

    return signature, codegen


@intrinsic(prefer_literal=True)
def gather_blocks(typingctx, x, o, c0, out, kind, last, slot):
    """Write the rows of the maxima of columns ``c0`` on (``slot`` bytes of them, or up
    to ``inner``) of ``VECTOR_BYTES // slot`` blocks ``x[o]``, ``x[o + 1]``, ... of the
    C-contiguous ``x[outer, n, inner]`` into ``out[o:, c0:]``.

    For blocks of few, short rows, too few to read side by side: the same ``slot`` bytes
    of a row of every block are gathered into one vector (loaded a block at a time where
    ``slot`` is WIDE_GATHER_BYTES), and the n rows are folded into running maxima and
    row numbers in registers. A gather may read past the row's end, into the next row,
    so the caller makes sure that such bytes lie in ``x`` (the last block of ``x`` is not
    read here unless its rows are whole multiples of ``slot`` long), and that ``n`` is
    at most GATHER_ROWS. ``kind``, ``last`` and ``slot`` (GATHER_BYTES,
    SHORT_GATHER_BYTES or WIDE_GATHER_BYTES; an element, where that is longer) are
    constants.
    """
    if not (isinstance(x, types.Array) and x.layout == "C" and x.ndim == 3):
        raise errors.TypingError("gather_blocks(): x must be a C-contiguous 3-D array")
    if not (isinstance(out, types.Array) and out.layout == "C" and out.ndim == 2):
        raise errors.TypingError("gather_blocks(): out must be a C-contiguous 2-D array")
    kind_value, last_value, bits, lanes, unsigned = constants_of("gather_blocks", x, kind, last)
    if not isinstance(slot, types.IntegerLiteral):
        raise errors.TypingError("gather_blocks(): slot must be a constant")
    slot_bytes = max(slot.literal_value, bits // 8)  # at least one element
    count = VECTOR_BYTES // slot_bytes  # blocks a gather
    signature = types.none(x, o, c0, out, kind, last, slot)

    def codegen(context, builder, sig, args):
        i64, i32 = ir.IntType(64), ir.IntType(32)
        ity = ir.IntType(bits)
        vty = ir.VectorType(ity, lanes)
        sit = ir.IntType(8 * slot_bytes)
        sty = ir.VectorType(sit, count)
        pty = ir.VectorType(sit.as_pointer(), count)
        x_struct = context.make_array(sig.args[0])(context, builder, args[0])
        _, n, inner = cgutils.unpack_tuple(builder, x_struct.shape, 3)
        zero, one = ir.Constant(i64, 0), ir.Constant(i64, 1)
        size = ir.Constant(i64, bits // 8)
        row_bytes = builder.mul(inner, size)
        block_bytes = builder.mul(n, row_bytes)
        # The address of block o, and of column c0 in its first row.
        base = builder.add(builder.ptrtoint(x_struct.data, i64), builder.mul(args[1], block_bytes))
        start = builder.add(base, builder.mul(args[2], size))
        wide = slot_bytes > GATHER_BYTES  # loaded, not gathered
        if not wide:
            # The rows' addresses in the blocks, then one row on each step.
            apart = builder.mul(
                splat(builder, block_bytes, count),
                ir.Constant(ir.VectorType(i64, count), list(range(count))),
            )
            address = cgutils.alloca_once_value(
                builder, builder.add(splat(builder, start, count), apart)
            )
            step = splat(builder, row_bytes, count)
            fnty = ir.FunctionType(sty, [pty, i32, ir.VectorType(ir.IntType(1), count), sty])
            name = f"llvm.masked.gather.v{count}i{sit.width}.v{count}p0"
            gather = cgutils.get_or_insert_function(builder.module, fnty, name)
            every = ir.Constant(ir.VectorType(ir.IntType(1), count), [1] * count)

        top_ptr = cgutils.alloca_once_value(
            builder, ir.Constant(vty, lowest_key(kind_value, bits, unsigned))
        )
        # Row numbers at least 16 bits wide (GATHER_ROWS rows).
        nty = ir.IntType(max(bits, 16))
        number_ptr = cgutils.alloca_once_value(builder, ir.Constant(ir.VectorType(nty, lanes), 0))
        # The blocks GATHER_AHEAD groups on are fetched ahead, a line a step (the rows of
        # the blocks, read a piece at a time, make as many streams, too short for the
        # hardware's stream detection).
        pieces_before = builder.udiv(builder.mul(args[2], size), ir.Constant(i64, slot_bytes))
        blocks_ahead = GATHER_AHEAD * VECTOR_BYTES // min(slot_bytes, GATHER_BYTES)
        ahead = builder.add(
            base,
            builder.add(
                builder.mul(block_bytes, ir.Constant(i64, blocks_ahead)),
                builder.mul(builder.mul(pieces_before, n), ir.Constant(i64, LINE_BYTES)),
            ),
        )
        with cgutils.for_range_slice(builder, zero, n, one) as (k, _):
            line = builder.add(ahead, builder.mul(k, ir.Constant(i64, LINE_BYTES)))
            prefetch(builder, builder.inttoptr(line, ir.IntType(8).as_pointer()))
            if wide:
                first = builder.add(start, builder.mul(k, row_bytes))
                rows = _side_by_side(builder, first, block_bytes, vty)
            else:
                at = builder.load(address)
                pointers = builder.inttoptr(at, pty)
                rows = builder.call(
                    gather, [pointers, ir.Constant(i32, 1), every, ir.Constant(sty, ir.Undefined)]
                )
                builder.store(builder.add(at, step), address)
            value = key_ir(builder, builder.bitcast(rows, vty), kind_value)
            fold_lanes(builder, unsigned, last_value, top_ptr, number_ptr, value, k)

        # Lane g * per_block + c holds block o + g's column c0 + c.
        per_block = slot_bytes * 8 // bits
        numbers = builder.bitcast(number_ptr, nty.as_pointer())
        out_data = context.make_array(sig.args[3])(context, builder, args[3]).data
        first = builder.add(builder.mul(args[1], inner), args[2])
        left = builder.sub(inner, args[2])
        width = builder.select(
            builder.icmp_signed("<", left, ir.Constant(i64, per_block)),
            left,
            ir.Constant(i64, per_block),
        )

        def into(g):
            return builder.add(first, builder.mul(ir.Constant(i64, g), inner))

        if per_block > 1:
            # Each block's ``width`` row numbers as int64s in one masked store: scalar
            # stores, lane by lane, were a noticeable part of the time of small blocks
            # (docs/performance.md, "Gathered row numbers in one masked store").
            rows = resize(builder, builder.load(number_ptr), ir.VectorType(i64, lanes))
            part_type = ir.VectorType(i64, per_block)
            columns = ir.Constant(part_type, list(range(per_block)))
            inside = builder.icmp_signed("<", columns, splat(builder, width, per_block))
            for g in range(count):
                of_block = ir.Constant(
                    ir.VectorType(i32, per_block), list(range(g * per_block, (g + 1) * per_block))
                )
                part = builder.shuffle_vector(rows, rows, of_block)
                at = builder.bitcast(builder.gep(out_data, [into(g)]), part_type.as_pointer())
                masked_store(builder, part, at, inside)
        else:
            for g in range(count):
                with cgutils.for_range_slice(builder, zero, width, one) as (c, _):
                    row = resize(
                        builder,
                        builder.load(builder.gep(numbers, [builder.add(ir.Constant(i64, g), c)])),
                        i64,
                    )
                    builder.store(row, builder.gep(out_data, [builder.add(into(g), c)]))
        return context.get_dummy_value()

    return signature, codegen


def _side_by_side(builder, first: ir.Value, apart: ir.Value, vty: ir.VectorType) -> ir.Value:
    """A vector of type ``vty`` made of the WIDE_GATHER_BYTES at the address ``first`` (an
    i64) and at every ``apart`` bytes on: unaligned loads, put side by side."""
    i32, i64 = ir.IntType(32), ir.IntType(64)
    count = VECTOR_BYTES // WIDE_GATHER_BYTES
    piece = ir.VectorType(vty.element, vty.count // count).as_pointer()
    parts = []
    for g in range(count):
        at = builder.add(first, builder.mul(apart, ir.Constant(i64, g)))
        parts.append(builder.load(builder.inttoptr(at, piece), align=1))
    while len(parts) > 1:  # pairs joined, then pairs of those
        lanes = 2 * parts[0].type.count
        both = ir.Constant(ir.VectorType(i32, lanes), list(range(lanes)))
        parts = [
            builder.shuffle_vector(a, b, both) for a, b in zip(parts[::2], parts[1::2], strict=True)
        ]
    return parts[0]

"""Short rows searched many at once.

A row of a few dozen bytes is read in one vector, but turning that vector's lanes into
its maximum and position costs more than reading it. ``group_argmax`` takes up to as
many rows as a vector has lanes and reduces all their vectors together in a tree of
shuffles and maxima: each step pairs two vectors into one that holds twice as many
rows in half as many lanes each, until one vector holds a lane per row.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

from ..dtypes import lowest_key
from .ir import (
    VECTOR_BYTES,
    equal_to,
    key_ir,
    lane_of,
    opaque_pointer,
    prefetch,
    resize,
    splat,
    vector_at,
)
from .keys import is_integer, ordered_ir, unsigned_keys
from .lanes import constants_of, int64_constant, lanes_of

__all__ = [
    "CHUNK_ROW_BYTES",
    "GROUP_ROW_BYTES",
    "INT_GROUP_ROWS",
    "chunk_group_argmax",
    "group_argmax",
    "group_size",
    "rows_of_group",
]

# Rows up to this long are searched many at a time (``group_argmax``), each as one
# vector of one or two registers: much faster than one row at a time, where the
# horizontal steps of each row cost more than reading it. Longer rows were slower in
# such groups, as loops over chunks (docs/performance.md, GROUP_ROW_BYTES).
GROUP_ROW_BYTES = 2 * VECTOR_BYTES
# Vectors ahead of the one read that the row groups fetch: 8 KiB. Rows read from memory
# are faster so (docs/performance.md, PREFETCH).
PREFETCH = 128


def _tree(builder, rows: list[tuple], beats) -> tuple:
    """The tree of shuffles that reduces ``rows`` (a power of two of them, at most as
    many as a vector has lanes; each a tuple of vectors, such as keys and their
    positions) into one tuple with a lane per row, the first lanes: each step pairs
    vectors that hold k rows in lanes/k lanes each into one that holds 2k rows in half
    as many lanes each, keeping of each two lanes of a row the one where ``beats(u, v)``
    (tuples of vectors), else the other. With fewer rows than lanes, the one vector left
    is paired with itself until a row has one lane."""
    lanes = rows[0][0].type.count
    index = ir.VectorType(ir.IntType(32), lanes)
    width = lanes
    while width > 1:
        if len(rows) == 1:
            rows = rows * 2
        half = width // 2
        low = [(p // half) * width + p % half for p in range(lanes)]  # of a, then b
        low_at, high_at = ir.Constant(index, low), ir.Constant(index, [i + half for i in low])
        paired = []
        for a, b in zip(rows[::2], rows[1::2], strict=True):
            u = tuple(builder.shuffle_vector(p, q, low_at) for p, q in zip(a, b, strict=True))
            v = tuple(builder.shuffle_vector(p, q, high_at) for p, q in zip(a, b, strict=True))
            wins = beats(u, v)
            paired.append(tuple(builder.select(wins, q, p) for p, q in zip(u, v, strict=True)))
        rows, width = paired, half
    return rows[0]


# Integer rows are searched at most this many at a time: their tree's vectors then fit
# in registers. That is faster than groups of a register's lanes (64 int8, 32 int16) and
# than groups of 8. Float rows in smaller groups were faster at some lengths and slower
# at others, so they keep a register's lanes (docs/performance.md, INT_GROUP_ROWS).
INT_GROUP_ROWS = 16


def rows_of_group(kind: int, wide: int, lanes: int) -> int:
    """Rows that one ``group_argmax`` searches, of ``wide`` vectors of ``lanes`` lanes
    (their halves folded before the tree): ``lanes``, and for integer rows at most
    INT_GROUP_ROWS. (Rows of two registers are folded because whole rows in the tree, in
    groups of twice as many, were slower, for integer rows (docs/performance.md,
    INT_GROUP_ROWS) and for float rows (docs/performance.md, "Float rows of two registers
    folded for the tree"). Float rows keep their whole keys to be compared: read again, as
    integer rows are, they were slower.)"""
    return min(lanes, INT_GROUP_ROWS) if is_integer(kind) else lanes


@intrinsic(prefer_literal=True)
def group_size(typingctx, like, kind, wide):
    """``rows_of_group`` for arrays like ``like``, a constant of the compiled code."""
    if not all(isinstance(v, types.IntegerLiteral) for v in (kind, wide)):
        raise errors.TypingError("group_size(): kind and wide must be constants")
    count = rows_of_group(kind.literal_value, wide.literal_value, lanes_of(like))
    return types.int64(like, kind, wide), int64_constant(count)


@intrinsic(prefer_literal=True)
def group_argmax(typingctx, x, o, out, kind, last, wide):
    """Write the position of the maximum of each of the rows ``o`` to ``o + count - 1``
    of the C-contiguous ``x[outer, n]`` into ``out[o:]``, where ``count =
    rows_of_group(kind, wide, lane_count(x))`` and a row has at most ``wide *
    lane_count(x)`` elements.

    For short rows, where a horizontal reduction per row costs more than reading the
    row: each row is one vector of ``wide * VECTOR_BYTES`` bytes (its lanes past the row
    set to the lowest key), and a tree of shuffles and maxima reduces the vectors of all
    the rows together into one with a lane per row; each row's vector is then compared
    with its maximum. Rows of two halves are folded into one vector lane by lane for the
    tree (integer ones are read again to be compared, float ones' whole keys kept); a
    group of integer rows is at most INT_GROUP_ROWS of them. The caller makes sure that
    every row's vector load stays in the array. ``kind`` is a constant, as for
    ``lane_argmax``, and so is ``wide``, 1 or 2; ``last`` (1: the last occurrence of the
    maximum) need not be.
    """
    if not (isinstance(x, types.Array) and x.layout == "C" and x.ndim == 2):
        raise errors.TypingError("group_argmax(): x must be a C-contiguous 2-D array")
    if not (isinstance(out, types.Array) and out.layout == "C" and out.ndim == 1):
        raise errors.TypingError("group_argmax(): out must be a C-contiguous 1-D array")
    if not all(isinstance(v, types.IntegerLiteral) for v in (kind, wide)):
        raise errors.TypingError("group_argmax(): kind and wide must be constants")
    if not isinstance(last, types.Integer):
        raise errors.TypingError("group_argmax(): last must be an integer")
    kind_value = kind.literal_value
    bits = x.dtype.bitwidth
    part = lanes_of(x)  # lanes of a vector
    halves = wide.literal_value
    lanes = halves * part  # lanes of a row's vector
    again = is_integer(kind_value)
    count = rows_of_group(kind_value, halves, part)
    unsigned = unsigned_keys(x, kind_value)
    signature = types.none(x, o, out, kind, last, wide)

    def codegen(context, builder, sig, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        ity = ir.IntType(bits)
        vty, pty = ir.VectorType(ity, lanes), ir.VectorType(ity, part)
        mty = ir.IntType(lanes)  # a bit per lane
        zero, one = ir.Constant(i64, 0), ir.Constant(i64, 1)
        rows = ir.Constant(i64, count)
        x_struct = context.make_array(sig.args[0])(context, builder, args[0])
        out_struct = context.make_array(sig.args[2])(context, builder, args[2])
        n = cgutils.unpack_tuple(builder, x_struct.shape, 2)[1]
        lowest = ir.Constant(vty, lowest_key(kind_value, bits, unsigned))
        bigger = builder.icmp_unsigned if unsigned else builder.icmp_signed
        load_row = vector_at(builder, x_struct.data, vty)
        lane = ir.Constant(vty, list(range(lanes)))
        in_row = builder.icmp_unsigned("<", lane, splat(builder, resize(builder, n, ity), lanes))
        is_last = builder.icmp_unsigned("!=", args[4], ir.Constant(args[4].type, 0))
        first_row = builder.mul(args[1], n)

        def folded(key):  # the larger of a row's halves, lane by lane
            if halves == 1:
                return key
            low, high = (
                builder.shuffle_vector(key, key, ir.Constant(ir.VectorType(i32, part), at))
                for at in (list(range(part)), list(range(part, lanes)))
            )
            return builder.select(bigger(">", high, low), high, low)

        # Every row's keys, folded for the tree; whole ones kept too to be compared, but
        # for integer rows (the values, read again where they are compared).
        kept = cgutils.alloca_once(builder, pty if again else vty, size=count)
        tree_in = kept if again or halves == 1 else cgutils.alloca_once(builder, pty, size=count)
        with cgutils.for_range_slice(builder, zero, rows, one) as (r, _):
            row = builder.add(first_row, builder.mul(r, n))
            value = load_row(row)
            # Fetched ahead (PREFETCH); without it, integer rows of a few dozen bytes
            # were much slower than float ones of the same bytes.
            for k in range(halves):
                ahead = builder.add(row, ir.Constant(i64, (PREFETCH + k) * part))
                prefetch(builder, builder.gep(x_struct.data, [ahead]))
            key = builder.select(in_row, key_ir(builder, value, kind_value), lowest)
            builder.store(folded(key) if again else key, builder.gep(kept, [r]))
            if tree_in is not kept:
                builder.store(folded(key), builder.gep(tree_in, [r]))

        vectors = [
            (builder.load(builder.gep(tree_in, [ir.Constant(i64, r)])),) for r in range(count)
        ]
        top = _tree(builder, vectors, lambda u, v: bigger(">", v[0], u[0]))[0]
        # Each row's maximum is read back from memory, not picked out of the register: a
        # shuffle per row otherwise, on the port the tree's shuffles and the compares
        # need too (docs/performance.md, "Each row's maximum read back from memory").
        tops_at = opaque_pointer(builder, cgutils.alloca_once_value(builder, top))
        tops = builder.bitcast(tops_at, ity.as_pointer())

        # Each row's keys compared with its maximum: the first (last) lane that holds it.
        # An integer's key is its bits, flipped for ArgMin's kinds (a flip is its own
        # inverse), so integer rows are read again and compared as they are, with their
        # maximum flipped back once: no flip per element.
        with cgutils.for_range_slice(builder, zero, rows, one) as (r, _):
            top = builder.load(builder.gep(tops, [r]))
            if again:
                keys = load_row(builder.add(first_row, builder.mul(r, n)))
                top = ordered_ir(builder, top, kind_value)
            else:
                keys = builder.load(builder.gep(kept, [r]))
            hits = builder.and_(equal_to(builder, top, lanes)(keys), in_row)
            at = lane_of(builder, builder.bitcast(hits, mty), is_last)
            builder.store(at, builder.gep(out_struct.data, [builder.add(args[1], r)]))
        return context.get_dummy_value()

    return signature, codegen


# Rows longer than GROUP_ROW_BYTES, up to this long, are searched many at a time too
# (``chunk_group_argmax``), their vectors folded lane by lane first. From cache, rows of
# a few vectors gain most over one row at a time. Longer rows are searched faster one at
# a time from cache, where the fold's compare and two selects per vector cost more than
# the search's running maxima, and as fast from memory; for every item size
# (docs/performance.md, CHUNK_ROW_BYTES). Positions in such rows fit 16 bits.
CHUNK_ROW_BYTES = 1 << 11


@intrinsic(prefer_literal=True)
def chunk_group_argmax(typingctx, x, o, count, out, kind, last):
    """Write the position of the maximum of each of the ``count`` rows from ``o`` on of
    the C-contiguous ``x[outer, n]`` into ``out[o:]``, where ``count`` is at most
    ``lane_count(x)``, a row has more than ``lane_count(x)`` elements, and positions in
    a row fit 16 bits.

    For rows of a few vectors, where a horizontal reduction per row costs more than
    reading the row: each row's vectors are folded lane by lane into the maximum key of
    each lane and its position, and the tree of ``group_argmax``, carrying positions
    along, reduces all the rows' lanes together into one vector with a lane per row.
    A row's last, partial vector is read whole (its lanes past the row are the next
    row's), except in the array's last row, whose last elements are copied into a
    vector's worth of memory first; the positions of fewer rows than a vector's lanes
    are copied out of one. So it reads only inside the array and serves any rows,
    with no search of single rows beside it (in one task with that search, the first
    call would compile both). ``kind`` and ``last`` (1: the last occurrence) are
    constants (a ``last`` known only at run time is slower per row); docs/performance.md,
    "Row groups without the search of single rows".
    """
    if not (isinstance(x, types.Array) and x.layout == "C" and x.ndim == 2):
        raise errors.TypingError("chunk_group_argmax(): x must be a C-contiguous 2-D array")
    if not (isinstance(out, types.Array) and out.layout == "C" and out.ndim == 1):
        raise errors.TypingError("chunk_group_argmax(): out must be a C-contiguous 1-D array")
    if not isinstance(count, types.Integer):
        raise errors.TypingError("chunk_group_argmax(): count must be an integer")
    constants = constants_of("chunk_group_argmax", x, kind, last)
    kind_value, last_value, bits, lanes, unsigned = constants
    signature = types.none(x, o, count, out, kind, last)

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        vty = ir.VectorType(ir.IntType(bits), lanes)
        # Positions in a row, as wide as the keys but at least 16 bits.
        pty = ir.VectorType(ir.IntType(max(bits, 16)), lanes)
        zero, one = ir.Constant(i64, 0), ir.Constant(i64, 1)
        step = ir.Constant(i64, lanes)
        x_struct = context.make_array(sig.args[0])(context, builder, args[0])
        out_struct = context.make_array(sig.args[3])(context, builder, args[3])
        o = args[1]
        count = context.cast(builder, args[2], sig.args[2], types.int64)
        outer, n = cgutils.unpack_tuple(builder, x_struct.shape, 2)
        full = builder.udiv(n, step)  # whole vectors of a row
        rest = builder.sub(n, builder.mul(full, step))
        lane = ir.Constant(pty, list(range(lanes)))
        inside = builder.icmp_unsigned(
            "<", lane, splat(builder, resize(builder, rest, pty.element), lanes)
        )
        bigger = builder.icmp_unsigned if unsigned else builder.icmp_signed
        load = vector_at(builder, x_struct.data, vty)
        best_ptr, at_ptr = cgutils.alloca_once(builder, vty), cgutils.alloca_once(builder, pty)

        def wins(k, have, at, have_at):
            # k at positions ``at`` beats ``have`` at ``have_at``: greater, or equal and
            # earlier (``last``: later).
            nearer = builder.icmp_unsigned(">" if last_value else "<", at, have_at)
            tie = builder.and_(builder.icmp_unsigned("==", k, have), nearer)
            return builder.or_(bigger(">", k, have), tie)

        tail_copy = cgutils.alloca_once(builder, vty)

        def take(row, c, mask=None, final=None):
            at = builder.add(row, builder.mul(c, step))
            ahead = builder.add(at, ir.Constant(i64, PREFETCH * lanes))
            prefetch(builder, builder.gep(x_struct.data, [ahead]))
            if final is None:
                value = load(at)
            else:  # read from a copy of its elements in the array's last row
                src = builder.gep(x_struct.data, [at])
                with builder.if_then(final, likely=False):
                    builder.store(ir.Constant(vty, None), tail_copy)
                    cgutils.raw_memcpy(builder, tail_copy, src, rest, bits // 8)
                copy = builder.bitcast(tail_copy, src.type)
                value = vector_at(builder, builder.select(final, copy, src), vty)(zero)
            k = key_ir(builder, value, kind_value)
            have, have_at = builder.load(best_ptr), builder.load(at_ptr)
            # Later vectors of a row hold later positions: ties go to them only for ``last``.
            win = bigger(">=" if last_value else ">", k, have)
            if mask is not None:
                win = builder.and_(win, mask)
            here = builder.add(
                lane, splat(builder, resize(builder, builder.mul(c, step), pty.element), lanes)
            )
            builder.store(builder.select(win, k, have), best_ptr)
            builder.store(builder.select(win, here, have_at), at_ptr)

        # Every row's lanes folded: each lane's maximum key and its position, from the
        # lowest key at the first vector's (which that vector then takes or ties).
        # (Lanes of rows past ``count`` keep the lowest key: the tree pairs only lanes of
        # the same row, and their positions are not written.)
        kept = cgutils.alloca_once(builder, vty, size=lanes)
        kept_at = cgutils.alloca_once(builder, pty, size=lanes)
        lowest = ir.Constant(vty, lowest_key(kind_value, bits, unsigned))
        first_row = builder.mul(o, n)
        last_row = builder.sub(outer, one)
        with cgutils.for_range_slice(builder, zero, step, one) as (r, _):
            row = builder.add(first_row, builder.mul(r, n))
            builder.store(lowest, best_ptr)
            builder.store(lane, at_ptr)
            with builder.if_then(builder.icmp_unsigned("<", r, count), likely=True):
                with cgutils.for_range_slice(builder, zero, full, one) as (c, _):
                    take(row, c)
                with builder.if_then(builder.icmp_unsigned(">", rest, zero)):
                    final = builder.icmp_unsigned("==", builder.add(o, r), last_row)
                    take(row, full, inside, final)
            builder.store(builder.load(best_ptr), builder.gep(kept, [r]))
            builder.store(builder.load(at_ptr), builder.gep(kept_at, [r]))

        # The tree of ``group_argmax``, with each lane's position carried along.
        rows = [
            (
                builder.load(builder.gep(kept, [ir.Constant(i64, r)])),
                builder.load(builder.gep(kept_at, [ir.Constant(i64, r)])),
            )
            for r in range(lanes)
        ]
        found = _tree(builder, rows, lambda u, v: wins(v[0], u[0], v[1], u[1]))
        positions = builder.zext(found[1], ir.VectorType(i64, lanes))
        dst = builder.gep(out_struct.data, [o])
        whole = builder.icmp_unsigned("==", count, step)
        positions_copy = cgutils.alloca_once(builder, positions.type)
        dst_at = builder.bitcast(dst, positions.type.as_pointer())
        builder.store(positions, builder.select(whole, dst_at, positions_copy), align=8)
        with builder.if_then(builder.not_(whole), likely=False):
            cgutils.raw_memcpy(builder, dst, positions_copy, count, 8)
        return context.get_dummy_value()

    return signature, codegen

"""Searches for the maximum and its position with whole vectors, in LLVM IR.

A loop that carries a scalar maximum and its index from element to element does not
vectorise. ``lane_argmax`` reads a contiguous run of a row as chunks of ``VECTOR_BYTES``
bytes, one vector each, in two passes. The first keeps only running maxima, one
instruction per chunk and lane set (three for floats, whose order it reads off their
bits; two once the best so far is above zero), apart for each block of ``BLOCK_CHUNKS``
chunks, and reduces them to the run's maximum. Where that beats the best of the row so
far, the second finds the first (or last) block that holds it from those maxima, reads
that block again, from cache, and finds the chunk and lane that hold it; each of its
scans stops at its first hit. (Short rows are searched many at once:
``vector.row_groups``.)
``emit_rows_fold`` works across rows instead, for each column of a block: a group of
rows is folded into running maxima and row numbers that stay in registers meanwhile.
Both are written in LLVM IR (numba would keep such lane state in memory), with vector
types that LLVM maps onto whatever SIMD width the CPU has.
"""

from __future__ import annotations

from typing import NamedTuple

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

from ..dtypes import lowest_key
from .ir import (
    SPLIT_VECTOR,
    VECTOR_BYTES,
    equal_to,
    key_ir,
    lane_of,
    loaded,
    masked_load,
    prefetch,
    reduce,
    resize,
    splat,
)
from .keys import is_integer, key_type, ordered_ir, unsigned_keys

__all__ = [
    "BLOCK_CHUNKS",
    "FAR_FOLD_ROWS",
    "FAR_ROW_BYTES",
    "FOLD_AHEAD_BYTES",
    "FOLD_ROWS",
    "RUN_BYTES",
    "VECTOR_BYTES",
    "Fold",
    "constants_of",
    "emit_rows_fold",
    "fold_lanes",
    "fold_rows",
    "fold_spec",
    "int64_constant",
    "lane_argmax",
    "lane_count",
    "lane_slots",
    "lane_span",
    "lanes_of",
]

# Bytes one ``lane_argmax`` call reads: its second pass reads them again, from L1
# (docs/performance.md, RUN_BYTES).
RUN_BYTES = 1 << 14
# Chunks whose running maxima ``lane_argmax`` keeps apart, as a block: its second pass
# reads only the block that holds the maximum, not the whole run, which matters most for
# long rows read from cache (docs/performance.md, BLOCK_CHUNKS).
BLOCK_CHUNKS = 16
# ``lane_argmax`` does not fetch ahead: its rows, longer than ``CHUNK_ROW_BYTES``, and
# pieces of them are left to the hardware's stream detection, as fetching ahead made them
# slower (docs/performance.md, "Long rows not fetched ahead").

# Rows per call of ``emit_rows_fold`` that it unrolls, so that their loads are issued
# together: faster than a loop over the rows (docs/performance.md, FOLD_ROWS) ...
FOLD_ROWS = 8
# ... and for rows at least FAR_ROW_BYTES apart, which are read faster fewer at a time,
# as fewer streams of reads at once (docs/performance.md, FAR_FOLD_ROWS, FAR_ROW_BYTES);
# nearer rows are faster with FOLD_ROWS.
FAR_FOLD_ROWS = 4
FAR_ROW_BYTES = 4096
# Where a vector takes several registers (AVX2 and narrower), rows of at least
# ALONG_ROW_BYTES (and under FAR_ROW_BYTES) are folded one at a time, in the order of
# their bytes in memory, the running maxima read from cache and written back for each row:
# faster than a group of rows read a vector of columns at a time, where the rows are long
# enough; shorter rows are faster in groups. The same where one register holds a vector
# but its instructions run in halves (``SPLIT_VECTOR``, AMD Zen 4). With whole 512-bit
# units, groups are fast, so other CPUs keep them (docs/performance.md,
# ALONG_ROW_BYTES).
ALONG_ROW_BYTES = 192
# ``emit_rows_fold`` fetches near rows this many bytes on (at least the next group of rows):
# where that is more than one group, rows under 1 KiB, it was faster than fetching the next
# group (docs/performance.md, FOLD_AHEAD_BYTES) ...
FOLD_AHEAD_BYTES = 8192
# ... twice as far for rows of LONG_FOLD_ROW_BYTES or more: where memory is fast, two
# cores read rows 1 KiB apart faster so, and it costs nothing where memory is slower;
# farther still was worse. Shorter rows keep FOLD_AHEAD_BYTES, as they are slower fetched
# twice as far (docs/performance.md, LONG_FOLD_ROW_BYTES).
LONG_FOLD_ROW_BYTES = 1024
# Groups of FAR_FOLD_ROWS rows (rows FAR_ROW_BYTES or more apart) fetch their own rows this
# far on, and near the end of the width the next group's rows from their start, in the
# order the rows are read; rows of a partial group (the last of a block) fetch their own
# rows as far on. Fetching the next group at the same columns instead, a whole pass over
# the width ahead, let the lines fall out of L1 before their turn (and fetched each line
# twice, along and ahead). Nearer and farther distances were slower
# (docs/performance.md, FAR_ALONG_BYTES). These lines are fetched into L2, not L1: from
# memory, the groups read faster so, while near rows (fetched into L1) read slower
# (docs/performance.md, "Far rows fetched into L2").
FAR_ALONG_BYTES = 2048


def fold_rows(builder, row_bytes: ir.Value) -> ir.Value:
    """Rows one ``emit_rows_fold`` should fold, for rows ``row_bytes`` apart (i64s)."""
    i64 = ir.IntType(64)

    def at_least(limit: int, rows: int, otherwise: ir.Value) -> ir.Value:
        return builder.select(
            builder.icmp_signed(">=", row_bytes, i64(limit)), i64(rows), otherwise
        )

    near = at_least(ALONG_ROW_BYTES, 1, i64(FOLD_ROWS)) if SPLIT_VECTOR else i64(FOLD_ROWS)
    return at_least(FAR_ROW_BYTES, FAR_FOLD_ROWS, near)


# ``lane_slots`` is an intrinsic, not a compiled function of its own, which added to
# the first call of a column layout (docs/performance.md, "A partial last vector in a
# slot of its own").
@intrinsic
def lane_slots(typingctx, width, lanes):
    """Elements of ``best`` and ``hit`` that ``emit_rows_fold`` uses for ``width``
    columns, ``lanes`` to a vector: a partial last vector gets a whole one of its own.
    Overlapping the vector before it, its maxima were read right after that vector's were
    written for each row folded, which stalled the loads, most where rows are folded one
    at a time (docs/performance.md, "A partial last vector in a slot of its own")."""

    def codegen(context, builder, sig, args):
        size, count = (
            context.cast(builder, v, t, types.int64) for v, t in zip(args, sig.args, strict=True)
        )
        whole = builder.mul(builder.sdiv(size, count), count)
        partial = builder.icmp_signed("<", whole, size)
        return builder.select(partial, builder.add(whole, count), size)

    return types.int64(width, lanes), codegen


def lanes_of(array_type) -> int:
    """Elements per vector for numba array type ``array_type``."""
    return VECTOR_BYTES * 8 // array_type.dtype.bitwidth


def constants_of(name: str, x, kind, last) -> tuple[int, int, int, int, bool]:
    """What an intrinsic over the array type ``x`` is compiled for: the key kind, whether
    it takes the last occurrence, bits per element, lanes per vector and whether the keys
    are unsigned. ``kind`` and ``last`` must be constants (a TypingError naming
    ``name`` otherwise)."""
    if not (isinstance(kind, types.IntegerLiteral) and isinstance(last, types.IntegerLiteral)):
        raise errors.TypingError(f"{name}(): kind and last must be constants")
    kind_value = kind.literal_value
    unsigned = unsigned_keys(x, kind_value)
    return kind_value, last.literal_value, x.dtype.bitwidth, lanes_of(x), unsigned


def int64_constant(value: int):
    """The code generator of an intrinsic that returns the int64 ``value``."""

    def codegen(context, builder, sig, args):
        return context.get_constant(types.int64, value)

    return codegen


@intrinsic
def lane_count(typingctx, like):
    """Elements per vector of ``lane_argmax`` and ``emit_rows_fold`` for arrays like
    ``like``."""
    return types.int64(like), int64_constant(lanes_of(like))


@intrinsic
def lane_span(typingctx, like):
    """The most elements one ``lane_argmax`` call may search for arrays like ``like``."""
    return types.int64(like), int64_constant(RUN_BYTES * 8 // like.dtype.bitwidth)


def fold_lanes(builder, unsigned: bool, last: int, best_ptr, number_ptr, value, number) -> None:
    """Where the keys ``value`` beat the running maxima at ``best_ptr`` (``last``: or tie
    them), take them, and the integer ``number`` into the lanes at ``number_ptr``."""
    cmp = builder.icmp_unsigned if unsigned else builder.icmp_signed
    best = builder.load(best_ptr)
    take = cmp(">=" if last else ">", value, best)
    builder.store(builder.select(take, value, best), best_ptr)
    lanes = builder.load(number_ptr)
    number = splat(builder, resize(builder, number, lanes.type.element), lanes.type.count)
    builder.store(builder.select(take, number, lanes), number_ptr)


class _Run:
    """``count`` elements of an array from flat index ``first`` on, in LLVM IR: as
    whole chunks of ``lanes`` elements and a tail of the ``rest`` after them, with the
    mask ``inside`` of the tail's lanes that hold elements."""

    def __init__(self, builder, array_struct, vty: ir.VectorType, first, count):
        i64 = ir.IntType(64)
        self.builder, self.array_struct, self.vty = builder, array_struct, vty
        self.lanes = lanes = vty.count
        self.first, self.count = first, count
        self.base = builder.bitcast(builder.gep(array_struct.data, [first]), vty.as_pointer())
        self.full = builder.udiv(count, ir.Constant(i64, lanes))
        self.rest = builder.sub(count, builder.mul(self.full, ir.Constant(i64, lanes)))
        self.has_tail = builder.icmp_unsigned(">", self.rest, ir.Constant(i64, 0))
        rests = splat(builder, resize(builder, self.rest, vty.element), lanes)
        self.inside = builder.icmp_unsigned("<", ir.Constant(vty, list(range(lanes))), rests)

    def chunk(self, c):
        return self.builder.load(
            self.builder.gep(self.base, [c]), align=self.vty.element.width // 8
        )

    def tail(self):
        """The tail as one vector, its lanes past the end undefined: loaded directly, or
        with a masked load near the end of the array, where the load would leave it; a
        copy through memory instead was slower for small arrays, whose last rows all end
        that near (docs/performance.md, "The last vector of a row read with a masked
        load")."""
        builder, i64 = self.builder, ir.IntType(64)
        buffer = cgutils.alloca_once(builder, self.vty)
        end = builder.add(builder.add(self.first, self.count), ir.Constant(i64, self.lanes - 1))
        with builder.if_else(builder.icmp_signed("<=", end, self.array_struct.nitems)) as (
            load,
            near_end,
        ):
            with load:
                builder.store(self.chunk(self.full), buffer)
            with near_end:
                start = builder.gep(self.base, [self.full])
                builder.store(masked_load(builder, start, self.inside), buffer)
        return loaded(builder, builder.load(buffer))

    def search(self, matches, last: int, block) -> ir.Value:
        """The first (``last``: last) position in block ``block`` (chunks from ``block *
        BLOCK_CHUNKS`` on, and the tail if it is in that block) whose lanes
        ``matches(vector)`` (an i64); there must be one. The block's chunks are read in
        order (from its end, for ``last``) up to the first that holds it, then that
        chunk's lanes are searched."""
        builder, i64, lanes = self.builder, ir.IntType(64), self.lanes
        mty = ir.IntType(lanes)  # a bit per lane
        size = ir.Constant(i64, BLOCK_CHUNKS)
        lo = builder.mul(block, size)
        hi = _smaller(builder, builder.add(lo, size), self.full)
        with_tail = builder.and_(
            self.has_tail, builder.icmp_signed("<", self.full, builder.add(lo, size))
        )

        def tail_hits():
            return builder.and_(matches(self.tail()), self.inside)

        def chunk_hits(c):
            hits = builder.bitcast(matches(self.chunk(c)), mty)
            return builder.icmp_unsigned("!=", hits, ir.Constant(mty, 0))

        c = _chosen(builder, lo, hi, chunk_hits, last)
        # The tail comes after the chunks: it is the first hit only where no chunk has
        # one, and the last hit wherever it has one.
        tail_ptr = cgutils.alloca_once_value(builder, ir.Constant(mty, 0))
        with builder.if_then(with_tail):
            builder.store(builder.bitcast(tail_hits(), mty), tail_ptr)
        tail_mask = builder.load(tail_ptr)
        tail_hit = builder.icmp_unsigned("!=", tail_mask, ir.Constant(mty, 0))
        in_tail = builder.and_(tail_hit, builder.icmp_signed("<", c, lo)) if not last else tail_hit
        mask_ptr = cgutils.alloca_once(builder, mty)
        with builder.if_else(in_tail, likely=False) as (tail, whole):
            with tail:
                builder.store(tail_mask, mask_ptr)
            with whole:
                builder.store(builder.bitcast(matches(self.chunk(c)), mty), mask_ptr)
        c = builder.select(in_tail, self.full, c)
        lane = lane_of(builder, builder.load(mask_ptr), bool(last))
        return builder.add(builder.mul(c, ir.Constant(i64, lanes)), lane)


def _smaller(builder, a: ir.Value, b: ir.Value) -> ir.Value:
    return builder.select(builder.icmp_signed("<", a, b), a, b)


def _float_top(builder, high, low, high_unsigned, inf_bits: int) -> ir.Value:
    """The largest float key among elements of which ``high``, ``low`` and
    ``high_unsigned`` are the signed maximum, signed minimum and unsigned maximum of
    the bits (integers, or vectors of them lane by lane): the largest float where any
    element is not negative, else the negative float nearest zero; NaN's key where a NaN
    shows as bits above those of +inf (signed) or of -inf (unsigned)."""
    t = high.type
    sign = 1 << ((t.element if isinstance(t, ir.VectorType) else t).width - 1)
    nan = builder.or_(
        builder.icmp_signed(">", high, ir.Constant(t, inf_bits)),
        builder.icmp_unsigned(">", high_unsigned, ir.Constant(t, sign | inf_bits)),
    )
    nearest_zero = builder.neg(builder.and_(low, ir.Constant(t, sign - 1)))
    not_negative = builder.icmp_signed(">=", high, ir.Constant(t, 0))
    return builder.select(
        nan, ir.Constant(t, inf_bits + 1), builder.select(not_negative, high, nearest_zero)
    )


def _chosen(builder, lo: ir.Value, hi: ir.Value, hit, last: int) -> ir.Value:
    """The first (``last``: last) ``i`` in ``[lo, hi)`` where the i1 ``hit(i)`` holds, or
    ``lo - 1`` where none does. The scan stops at that ``i``: faster than a scan of every
    ``i`` with no branch on the hits, even though the branch out is mispredicted once a
    call (docs/performance.md, "The second pass stops at its first hit")."""
    i64 = ir.IntType(64)
    one = ir.Constant(i64, 1)
    none = builder.sub(lo, one)
    at_ptr = cgutils.alloca_once(builder, i64)
    next_ptr = cgutils.alloca_once(builder, i64)
    builder.store(none, at_ptr)
    # From high to low for the last hit, from low to high for the first.
    builder.store(builder.sub(hi, one) if last else lo, next_ptr)
    check = builder.append_basic_block("chosen.check")
    test = builder.append_basic_block("chosen.test")
    done = builder.append_basic_block("chosen.done")
    builder.branch(check)
    builder.position_at_end(check)
    i = builder.load(next_ptr)
    inside = builder.icmp_signed(">=", i, lo) if last else builder.icmp_signed("<", i, hi)
    builder.cbranch(inside, test, done)
    builder.position_at_end(test)
    found = hit(i)
    builder.store(builder.select(found, i, none), at_ptr)
    builder.store(builder.sub(i, one) if last else builder.add(i, one), next_ptr)
    builder.cbranch(found, done, check)
    builder.position_at_end(done)
    return builder.load(at_ptr)


@intrinsic(prefer_literal=True)
def lane_argmax(typingctx, x, start, length, kind, last, floor):
    """``(key, position)`` of the maximum among ``length`` elements of the C-contiguous
    array ``x`` from flat index ``start`` on, where it beats ``floor``.

    ``length`` is in ``[1, lane_span(x)]``; ``kind`` and ``last`` are constants. The
    position counts from ``start``; ``last`` = 1 picks the last occurrence of the
    maximum. Where the maximum key is below ``floor`` (or equal to it, with ``last`` =
    0) its position is not searched for and is returned as -1.
    """
    if not (isinstance(x, types.Array) and x.layout == "C"):
        raise errors.TypingError("lane_argmax(): x must be a C-contiguous array")
    kind_value, last_value, bits, lanes, unsigned = constants_of("lane_argmax", x, kind, last)
    if not (isinstance(floor, types.Integer) and floor.bitwidth == bits):
        raise errors.TypingError(f"lane_argmax(): floor must be a {bits}-bit key")
    signature = types.Tuple((key_type(x, kind_value), types.int64))(
        x, start, length, kind, last, floor
    )

    def codegen(context, builder, sig, args):
        array, first, count, floor_key = args[0], args[1], args[2], args[5]
        i64 = ir.IntType(64)
        ity = ir.IntType(bits)
        vty = ir.VectorType(ity, lanes)
        array_struct = context.make_array(x)(context, builder, array)
        run = _Run(builder, array_struct, vty, first, count)
        zero, one = ir.Constant(i64, 0), ir.Constant(i64, 1)

        # Pass 1: the maximum key, with no positions to carry: running extremes of the
        # chunks in every lane, one instruction each per chunk.
        if is_integer(kind_value):
            low = lowest_key(kind_value, bits, unsigned)
            extremes = [("umax" if unsigned else "smax", low)]
        else:
            # Of float bits: the signed maximum is the largest float where any element
            # is not negative, else the signed minimum is (the negative float nearest
            # zero); a NaN shows as bits above those of +inf (signed) or of -inf
            # (unsigned). No keys are needed.
            sign = 1 << (bits - 1)
            extremes = [("smax", -sign), ("smin", sign - 1), ("umax", 0)]
        pads = [ir.Constant(vty, v) for _, v in extremes]
        running = [cgutils.alloca_once_value(builder, pad) for pad in pads]  # of the run
        block = [cgutils.alloca_once_value(builder, pad) for pad in pads]  # of a block
        # The extremes of each block, for pass 2.
        nmarks = RUN_BYTES // VECTOR_BYTES // BLOCK_CHUNKS
        marks = [cgutils.alloca_once(builder, vty, size=nmarks) for _ in extremes]
        size = ir.Constant(i64, BLOCK_CHUNKS)

        def extend(op, ptr, value):
            compare = builder.icmp_unsigned if op == "umax" else builder.icmp_signed
            have = builder.load(ptr)
            wins = compare("<" if op == "smin" else ">", value, have)
            builder.store(builder.select(wins, value, have), ptr)

        def first_pass(kept):
            """Pass 1, folding only the extremes numbered ``kept``: the others are
            given the signed maximum's values (see ``positive_floor``)."""
            sources = [i if i in kept else 0 for i in range(len(extremes))]

            def take(value, padded):
                for i in kept:
                    op, ptr, pad = extremes[i][0], block[i], pads[i]
                    extend(op, ptr, builder.select(run.inside, value, pad) if padded else value)

            def close(b):  # block ``b`` done: its extremes into ``marks`` and ``running``
                values = [builder.load(block[i]) for i in sources]
                for (op, _), value, mark, total in zip(
                    extremes, values, marks, running, strict=True
                ):
                    builder.store(value, builder.gep(mark, [b]))
                    extend(op, total, value)
                for i in kept:
                    builder.store(pads[i], block[i])

            def chunk(c):
                take(ordered_ir(builder, run.chunk(c), kind_value), False)

            whole_blocks = builder.udiv(run.full, size)
            with cgutils.for_range_slice(builder, zero, whole_blocks, one) as (b, _):
                with cgutils.for_range_slice(builder, zero, size, one) as (k, _):
                    chunk(builder.add(builder.mul(b, size), k))
                close(b)
            start = builder.mul(whole_blocks, size)
            with cgutils.for_range_slice(builder, start, run.full, one) as (c, _):
                chunk(c)
            with builder.if_then(run.has_tail):
                take(ordered_ir(builder, run.tail(), kind_value), True)
            with builder.if_then(builder.icmp_unsigned("<", whole_blocks, nblocks)):
                close(whole_blocks)

        slots = builder.add(run.full, builder.zext(run.has_tail, i64))  # chunks and tail
        nblocks = builder.udiv(builder.add(slots, ir.Constant(i64, BLOCK_CHUNKS - 1)), size)
        if is_integer(kind_value):
            first_pass((0,))
        else:
            # Where the floor's key is above zero's (or equal to it, for the first
            # occurrence, where a tie does not win), no negative float, -0.0 included,
            # can be the maximum searched for, so the signed minimum is not needed: two
            # instructions per chunk, not three, which makes long float rows faster
            # (docs/performance.md, "Two instructions per vector once the best is above
            # zero"). A block whose signed maximum is negative then shows a key below
            # the floor, or NaN's.
            positive_floor = builder.icmp_signed(
                ">" if last_value else ">=", floor_key, ir.Constant(ity, 0)
            )
            with builder.if_else(positive_floor, likely=True) as (two, three):
                with two:
                    first_pass((0, 2))
                with three:
                    first_pass((0, 1, 2))
        reduced = [
            reduce(builder, op, builder.load(ptr))
            for (op, _), ptr in zip(extremes, running, strict=True)
        ]
        if is_integer(kind_value):
            top = reduced[0]
        else:
            inf_bits = -lowest_key(kind_value, bits, False)
            top = _float_top(builder, *reduced, inf_bits)

        # Pass 2, only where the maximum beats ``floor``: where it is, the block that
        # holds it read again (from cache).
        at_ptr = cgutils.alloca_once_value(builder, ir.Constant(i64, -1))

        def block_keys(b):
            # Each lane's maximum key in block ``b``, from its extremes as for ``top``.
            extremes_b = [builder.load(builder.gep(mark, [b])) for mark in marks]
            if is_integer(kind_value):
                return extremes_b[0]
            return _float_top(builder, *extremes_b, inf_bits)

        def search(matches):
            mty = ir.IntType(lanes)

            def holds_top(b):
                hits = builder.icmp_unsigned("==", block_keys(b), splat(builder, top, lanes))
                return builder.icmp_unsigned("!=", builder.bitcast(hits, mty), ir.Constant(mty, 0))

            b_ptr = cgutils.alloca_once_value(builder, zero)
            with builder.if_then(builder.icmp_unsigned(">", nblocks, one), likely=False):
                builder.store(_chosen(builder, zero, nblocks, holds_top, last_value), b_ptr)
            builder.store(run.search(matches, last_value, builder.load(b_ptr)), at_ptr)

        def lanes_equal_to(target):
            # The lanes whose bits as ordered (flipped, for ArgMin's kinds) are
            # ``target``: whose bits are ``target`` flipped back, once (a flip is its own
            # inverse), rather than each element's flipped.
            return equal_to(builder, ordered_ir(builder, target, kind_value), lanes)

        cmp = builder.icmp_unsigned if unsigned else builder.icmp_signed
        with builder.if_then(cmp(">=" if last_value else ">", top, floor_key)):
            if is_integer(kind_value):
                search(lanes_equal_to(top))
            else:
                # Every key but that of zero (+0.0 and -0.0) and that of NaN (every NaN)
                # has one bit pattern: compare bits, not keys, where it can.
                nan_key = ir.Constant(ity, inf_bits + 1)
                one_pattern = builder.and_(
                    builder.icmp_unsigned("!=", top, ir.Constant(ity, 0)),
                    builder.icmp_unsigned("!=", top, nan_key),
                )
                negative = builder.icmp_signed("<", top, ir.Constant(ity, 0))
                pattern = builder.select(
                    negative, builder.or_(builder.neg(top), ir.Constant(ity, sign)), top
                )
                with builder.if_else(one_pattern, likely=True) as (by_bits, by_key):
                    with by_bits:
                        search(lanes_equal_to(pattern))
                    with by_key:
                        key_is_top = equal_to(builder, top, lanes)
                        search(lambda v: key_is_top(key_ir(builder, v, kind_value)))
        return context.make_tuple(builder, sig.return_type, [top, builder.load(at_ptr)])

    return signature, codegen


class Fold(NamedTuple):
    """What the folds of ``emit_rows_fold`` are compiled for (``fold_spec``)."""

    kind: int
    last: int
    bits: int  # of an element
    lanes: int  # per vector
    unsigned: bool  # keys
    hit_bits: int  # of a row number


def fold_spec(name: str, x, hit, kind, last) -> Fold:
    """The ``Fold`` of an intrinsic over the array types ``x`` and ``hit`` (row numbers),
    for the constants ``kind`` and ``last`` (a TypingError naming ``name`` otherwise)."""
    return Fold(*constants_of(name, x, kind, last), hit.dtype.bitwidth)


def emit_rows_fold(
    builder, spec: Fold, x_data, first, step, count, size, best_data, hit_data, row0
):
    """Fold ``count`` rows of ``size`` elements into running maxima at ``best_data``
    and their row numbers at ``hit_data``, vector by vector, in LLVM IR (all integers
    i64).

    Row ``r`` starts at flat index ``first + r * step`` of the C-contiguous array whose
    data ``x_data`` points to, and is numbered ``row0 + r`` (which must fit the row
    numbers' ``spec.hit_bits``). Where ``size`` is not a multiple of a vector, the last
    vector of columns ends at the last column, overlapping the one before it (or, for
    fewer columns than a vector, the elements before the first: they must be in the
    array), and its maxima are kept apart, in a whole vector of their own after the
    others: ``best`` and ``hit`` hold ``lane_slots`` elements, column ``j`` of the last
    vector at ``j + lane_slots(size, lanes) - size``. A row replaces the running maximum
    where it is greater (``last`` = 1: greater or equal). Each vector of ``best`` and
    ``hit`` is read and written once per call, so callers pass as many rows as
    ``fold_rows`` says (``FOLD_ROWS``, ``FAR_FOLD_ROWS`` or 1: the cases that are
    unrolled) where they can.
    """
    kind_value, last_value, bits, lanes, unsigned, hit_bits = spec
    i64 = ir.IntType(64)
    vty = ir.VectorType(ir.IntType(bits), lanes)
    base = builder.gep(x_data, [first])
    hit_vty = ir.VectorType(ir.IntType(hit_bits), lanes)
    top_ptr = cgutils.alloca_once(builder, vty)
    row_ptr = cgutils.alloca_once(builder, hit_vty)
    zero, one = ir.Constant(i64, 0), ir.Constant(i64, 1)
    per_vector = ir.Constant(i64, lanes)
    whole = builder.udiv(size, per_vector)
    partial = builder.icmp_unsigned("!=", builder.mul(whole, per_vector), size)
    # Near rows fetched ahead: FOLD_AHEAD_BYTES of the column on (twice that for rows
    # of LONG_FOLD_ROW_BYTES or more), and at least the next group.
    row_bytes = builder.mul(step, ir.Constant(i64, bits // 8))
    long_rows = builder.icmp_unsigned(">=", row_bytes, ir.Constant(i64, LONG_FOLD_ROW_BYTES))
    span = builder.select(
        long_rows, ir.Constant(i64, 2 * FOLD_AHEAD_BYTES), ir.Constant(i64, FOLD_AHEAD_BYTES)
    )
    ahead = builder.udiv(span, row_bytes)
    ahead = builder.select(builder.icmp_unsigned("<", ahead, count), count, ahead)

    def fold(r, value):
        value = key_ir(builder, value, kind_value)
        number = builder.add(row0, r)
        fold_lanes(builder, unsigned, last_value, top_ptr, row_ptr, value, number)

    def fold_columns(index, rows, slot=None):
        # The rows' vector of columns from ``index`` on, into their running maxima at
        # ``slot`` (``index`` if None): ``rows`` at once, unrolled, or (None) a plain
        # loop over the rows, as for a partial last vector, whose lines the vector
        # before it has just read (its own copy of the groups took longer to compile, and
        # was no faster: docs/performance.md, "A partial last vector in a slot of its
        # own").
        slot = index if slot is None else slot
        best_at = builder.bitcast(builder.gep(best_data, [slot]), vty.as_pointer())
        hit_at = builder.bitcast(builder.gep(hit_data, [slot]), hit_vty.as_pointer())
        builder.store(builder.load(best_at, align=bits // 8), top_ptr)
        builder.store(builder.load(hit_at, align=hit_bits // 8), row_ptr)
        column = builder.gep(base, [index])

        def row(r):
            at = builder.bitcast(builder.gep(column, [builder.mul(r, step)]), vty.as_pointer())
            return builder.load(at, align=bits // 8)

        def group(rows: int):  # unrolled, so that the loads are issued together
            numbers = [ir.Constant(i64, r) for r in range(rows)]
            for r, value in [(r, row(r)) for r in numbers]:
                fold(r, value)
            if rows == FAR_FOLD_ROWS:  # the rows read, or the next group: FAR_ALONG_BYTES
                on = along()
                wrapped = builder.add(builder.sub(on, size), builder.mul(count, step))
                on = builder.select(builder.icmp_unsigned("<", on, size), on, wrapped)
                for r in range(rows):
                    at = builder.add(builder.mul(ir.Constant(i64, r), step), on)
                    prefetch(builder, builder.gep(base, [at]), into_l1=False)
                return
            # Near rows: the same vector of rows ``ahead`` on, fetched ahead (short rows
            # are too short for the hardware's stream detection).
            for r in range(rows):
                later = builder.add(ahead, ir.Constant(i64, r))
                prefetch(builder, builder.gep(column, [builder.mul(later, step)]))

        def along():  # the column FAR_ALONG_BYTES on from ``index``
            return builder.add(index, ir.Constant(i64, FAR_ALONG_BYTES // (bits // 8)))

        def each_row():
            on = along()
            with cgutils.for_range_slice(builder, zero, count, one) as (r, _):
                fold(r, row(r))
                prefetch(builder, builder.gep(base, [builder.add(builder.mul(r, step), on)]))

        if rows is None:
            each_row()
        else:
            group(rows)
        builder.store(builder.load(top_ptr), best_at, align=bits // 8)
        builder.store(builder.load(row_ptr), hit_at, align=hit_bits // 8)

    def is_group(rows: int):
        return builder.icmp_unsigned("==", count, ir.Constant(i64, rows))

    def by_group(index):  # the group's rows unrolled where there are as many as that
        with builder.if_else(is_group(FOLD_ROWS), likely=True) as (near, other):
            with near:
                fold_columns(index, FOLD_ROWS)
            with other:
                with builder.if_else(is_group(FAR_FOLD_ROWS)) as (far, rest):
                    with far:
                        fold_columns(index, FAR_FOLD_ROWS)
                    with rest:
                        fold_columns(index, None)

    def vectors(fold):  # ``fold(index)`` for every whole vector
        with cgutils.for_range_slice(builder, zero, whole, one) as (s, _):
            fold(builder.mul(s, per_vector))

    # The whole vectors, then a partial one as a whole one that ends at ``width``, into
    # a slot of its own (``lane_slots``), its rows in a plain loop (unrolled for a
    # single row, it was no faster). One row (``fold_rows``) has a loop of its own, its
    # vectors fetched ahead as a group's (a third choice in the loop for groups was
    # slower); the groups keep theirs, chosen for each vector (a loop for each group size
    # was slower for rows FAR_ROW_BYTES or more apart). Only where a vector's
    # instructions run in pieces does ``fold_rows`` fold one row at a time; elsewhere a
    # single row is the last of a block, and the plain loop takes it, as the loop of its
    # own would only add to a first compile (docs/performance.md, "A loop of its own for
    # single rows").
    if SPLIT_VECTOR:
        with builder.if_else(is_group(1)) as (single, several):
            with single:
                vectors(lambda index: fold_columns(index, 1))
            with several:
                vectors(by_group)
    else:
        vectors(by_group)
    with builder.if_then(partial, likely=False):
        fold_columns(builder.sub(size, per_vector), None, builder.mul(whole, per_vector))

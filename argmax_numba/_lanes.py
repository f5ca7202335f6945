"""Searches for the maximum and its position with whole vectors, in LLVM IR.

A loop that carries a scalar maximum and its index from element to element does not
vectorise. ``lane_argmax`` reads a contiguous run of a row as chunks of
``VECTOR_BYTES`` bytes, one vector each, in two passes. The first keeps only running
maxima, one instruction per chunk and lane set (three for floats, whose order it reads
off their bits), and reduces them to the run's maximum. Where that beats the best of
the row so far, the second reads the run again, from cache, and finds the first (or
last) chunk and lane that hold it, without a branch on the data. ``group_argmax``
searches as many short rows at once as a vector has lanes, so that their horizontal
reductions are shared. ``lane_rows_update`` works across rows instead, for each column
of a block: a group of rows is folded into running maxima and row numbers that stay in
registers meanwhile. All are written in LLVM IR (numba would keep such lane state in
memory), with vector types that LLVM maps onto whatever SIMD width the CPU has.
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.binding import get_process_triple
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic, overload

from ._dtypes import KIND_INT
from ._keys import float_key_ir, lowest_key

__all__ = [
    "FAR_FOLD_ROWS",
    "FAR_ROW_BYTES",
    "FOLD_ROWS",
    "GROUP_ROW_BYTES",
    "VECTOR_BYTES",
    "group_argmax",
    "lane_argmax",
    "lane_count",
    "lane_rows_update",
    "lane_span",
]

# Bytes per vector: one 512-bit register, or two 256-bit ones.
VECTOR_BYTES = 64
# Bytes one ``lane_argmax`` call reads: its second pass reads them again, from L1.
RUN_BYTES = 1 << 14
# Chunks ahead of the one read that ``lane_argmax`` fetches: 8 KiB. Measured on 64 MiB in
# rows of 512 bytes to 64 KiB: 1.05-1.2 of the read bound, against 1.2-1.4 without.
PREFETCH = 128
# Rows up to this long are searched many at a time (``group_argmax``), each as one
# vector of one or two registers. Measured on 64 MiB, against one row at a time: rows
# of 10-16 float32 1.4-1.6 of the read bound instead of 3.5-7, rows of 16 int8 2.5-3.2
# instead of 20, rows of 10 float64 1.3-2.0 instead of 3.2-3.7; rows of 200-256 bytes
# were slower in groups (as loops over chunks).
GROUP_ROW_BYTES = 2 * VECTOR_BYTES
# Rows per call of ``lane_rows_update`` that it unrolls (measured on float64 columns of
# 1 KiB: 2x faster than a loop over the rows) ...
FOLD_ROWS = 8
# ... and for rows at least FAR_ROW_BYTES apart, which are read faster fewer at a time
# (fewer streams: measured on 64 MiB of float32 and int8, rows 4-256 KiB apart, 1.3-1.5
# of the read bound instead of 1.5-1.75; rows 1 KiB apart are faster with 8).
FAR_FOLD_ROWS = 4
FAR_ROW_BYTES = 4096


def lane_count(like):
    """Elements per vector of ``lane_argmax`` and ``lane_rows_update`` for arrays like
    ``like``."""
    raise NotImplementedError("lane_count() is only callable from compiled code")


def lane_span(like):
    """The most elements one ``lane_argmax`` call may search for arrays like ``like``."""
    raise NotImplementedError("lane_span() is only callable from compiled code")


def _lanes(array_type) -> int:
    return VECTOR_BYTES * 8 // array_type.dtype.bitwidth


@overload(lane_count)
def _lane_count_overload(like):
    lanes = _lanes(like)
    return lambda like: lanes


@overload(lane_span)
def _lane_span_overload(like):
    span = RUN_BYTES * 8 // like.dtype.bitwidth
    return lambda like: span


def _reduce(builder: ir.IRBuilder, op: str, vector: ir.Value) -> ir.Value:
    vty = vector.type
    name = f"llvm.vector.reduce.{op}.v{vty.count}i{vty.element.width}"
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vty.element, [vty]), name)
    return builder.call(fn, [vector])


def _prefetch(builder: ir.IRBuilder, pointer: ir.Value) -> None:
    i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
    fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
    # read, keep in all cache levels, data
    args = [
        builder.bitcast(pointer, i8p),
        ir.Constant(i32, 0),
        ir.Constant(i32, 3),
        ir.Constant(i32, 1),
    ]
    builder.call(fn, args)


def _splat(builder: ir.IRBuilder, value: ir.Value, count: int) -> ir.Value:
    i32 = ir.IntType(32)
    undefined = ir.Constant(ir.VectorType(value.type, count), ir.Undefined)
    one = builder.insert_element(undefined, value, ir.Constant(i32, 0))
    return builder.shuffle_vector(one, undefined, ir.Constant(ir.VectorType(i32, count), 0))


def _resize(builder: ir.IRBuilder, value: ir.Value, to: ir.Type) -> ir.Value:
    """An unsigned integer (or vector) ``value`` at another width."""
    have = (value.type.element if isinstance(value.type, ir.VectorType) else value.type).width
    want = (to.element if isinstance(to, ir.VectorType) else to).width
    if have < want:
        return builder.zext(value, to)
    return builder.trunc(value, to) if have > want else value


def _key_ir(builder: ir.IRBuilder, value: ir.Value, kind: int) -> ir.Value:
    return value if kind == KIND_INT else float_key_ir(builder, value, kind)


def _fold(builder, unsigned: bool, last: int, best_ptr, number_ptr, value, number) -> None:
    """Where the keys ``value`` beat the running maxima at ``best_ptr`` (``last``: or tie
    them), take them, and the integer ``number`` into the lanes at ``number_ptr``."""
    cmp = builder.icmp_unsigned if unsigned else builder.icmp_signed
    best = builder.load(best_ptr)
    take = cmp(">=" if last else ">", value, best)
    builder.store(builder.select(take, value, best), best_ptr)
    lanes = builder.load(number_ptr)
    number = _splat(builder, _resize(builder, number, lanes.type.element), lanes.type.count)
    builder.store(builder.select(take, number, lanes), number_ptr)


def _count_zeros(builder: ir.IRBuilder, mask: ir.Value, leading: bool) -> ir.Value:
    """Leading (or trailing) zero bits of the integer ``mask``, as an i64."""
    name = f"llvm.{'ctlz' if leading else 'cttz'}.i{mask.type.width}"
    fnty = ir.FunctionType(mask.type, [mask.type, ir.IntType(1)])
    fn = cgutils.get_or_insert_function(builder.module, fnty, name)
    zeros = builder.call(fn, [mask, ir.Constant(ir.IntType(1), 0)])
    return _resize(builder, zeros, ir.IntType(64))


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
        rests = _splat(builder, _resize(builder, self.rest, vty.element), lanes)
        self.inside = builder.icmp_unsigned("<", ir.Constant(vty, list(range(lanes))), rests)

    def chunk(self, c):
        return self.builder.load(
            self.builder.gep(self.base, [c]), align=self.vty.element.width // 8
        )

    def tail(self):
        """The tail as one vector, its lanes past the end undefined: loaded directly, or
        copied first near the end of the array, where the load would leave it."""
        builder, i64 = self.builder, ir.IntType(64)
        loaded = cgutils.alloca_once(builder, self.vty)
        end = builder.add(builder.add(self.first, self.count), ir.Constant(i64, self.lanes - 1))
        with builder.if_else(builder.icmp_signed("<=", end, self.array_struct.nitems)) as (
            load,
            copy,
        ):
            with load:
                builder.store(self.chunk(self.full), loaded)
            with copy:
                builder.store(ir.Constant(self.vty, 0), loaded)
                start = builder.gep(self.base, [self.full])
                cgutils.raw_memcpy(builder, loaded, start, self.rest, self.vty.element.width // 8)
        return _loaded(builder, builder.load(loaded))

    def search(self, matches, last: int) -> ir.Value:
        """The first (``last``: last) position whose lanes ``matches(vector)`` (an i64);
        there must be one. Which chunk holds it is found with no branch on the data (a
        branch mispredicted once a row stalls the reads of the rows after it), then
        that chunk's lanes."""
        builder, i64, lanes = self.builder, ir.IntType(64), self.lanes
        zero, one = ir.Constant(i64, 0), ir.Constant(i64, 1)
        mty = ir.IntType(lanes)  # a bit per lane
        hit_ptr = cgutils.alloca_once_value(builder, ir.Constant(i64, -1))

        def tail_hits():
            return builder.and_(matches(self.tail()), self.inside)

        def take(c, hits):
            any_hit = builder.icmp_unsigned("!=", builder.bitcast(hits, mty), ir.Constant(mty, 0))
            builder.store(builder.select(any_hit, c, builder.load(hit_ptr)), hit_ptr)

        def take_tail():
            with builder.if_then(self.has_tail):
                take(self.full, tail_hits())

        # Positions from high to low for the first occurrence, so that the last hit
        # taken is the first one; low to high for the last occurrence.
        if not last:
            take_tail()
        with cgutils.for_range_slice(builder, zero, self.full, one) as (i, _):
            c = i if last else builder.sub(builder.sub(self.full, one), i)
            take(c, matches(self.chunk(c)))
        if last:
            take_tail()
        c = builder.load(hit_ptr)
        mask_ptr = cgutils.alloca_once(builder, mty)
        whole_chunk = builder.icmp_signed("<", c, self.full)
        with builder.if_else(whole_chunk, likely=True) as (whole, part):
            with whole:
                builder.store(builder.bitcast(matches(self.chunk(c)), mty), mask_ptr)
            with part:
                builder.store(builder.bitcast(tail_hits(), mty), mask_ptr)
        zeros = _count_zeros(builder, builder.load(mask_ptr), leading=bool(last))
        lane = builder.sub(ir.Constant(i64, lanes - 1), zeros) if last else zeros
        return builder.add(builder.mul(c, ir.Constant(i64, lanes)), lane)


# Constraint of a vector register in inline assembly, by processor (none: elsewhere).
_VECTOR_REGISTER = {"x86_64": "v", "aarch64": "w"}.get(get_process_triple().split("-")[0])


def _loaded(builder, value: ir.Value) -> ir.Value:
    """``value``, a vector just loaded, kept in a register: an empty inline assembly
    block stops LLVM from merging the load into a masked instruction (a blend or compare
    that reads memory under a mask), which took twice the time on 64 MiB of int32 rows
    of 16 (AMD Zen 5)."""
    if _VECTOR_REGISTER is None:
        return value
    fnty = ir.FunctionType(value.type, [value.type])
    return builder.asm(fnty, "", f"={_VECTOR_REGISTER},0", [value], False)


def _vector_at(builder, data: ir.Value, vty: ir.VectorType):
    """A loader of the vector at a flat element index of an array's ``data`` (read as
    registers of ``VECTOR_BYTES``, put together)."""
    part = ir.VectorType(vty.element, min(vty.count, VECTOR_BYTES * 8 // vty.element.width))

    def load(index):
        parts = []
        for k in range(vty.count // part.count):
            at = builder.add(index, ir.Constant(index.type, k * part.count))
            pointer = builder.bitcast(builder.gep(data, [at]), part.as_pointer())
            parts.append(_loaded(builder, builder.load(pointer, align=vty.element.width // 8)))
        while len(parts) > 1:
            count = 2 * parts[0].type.count
            joined = ir.Constant(ir.VectorType(ir.IntType(32), count), list(range(count)))
            pairs = zip(parts[::2], parts[1::2], strict=True)
            parts = [builder.shuffle_vector(a, b, joined) for a, b in pairs]
        return parts[0]

    return load


def _equal_to(builder, target: ir.Value, lanes: int):
    return lambda v: builder.icmp_unsigned("==", v, _splat(builder, target, lanes))


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
    if not (isinstance(kind, types.IntegerLiteral) and isinstance(last, types.IntegerLiteral)):
        raise errors.TypingError("lane_argmax(): kind and last must be constants")
    kind_value, last_value = kind.literal_value, last.literal_value
    bits = x.dtype.bitwidth
    if not (isinstance(floor, types.Integer) and floor.bitwidth == bits):
        raise errors.TypingError(f"lane_argmax(): floor must be a {bits}-bit key")
    lanes = _lanes(x)
    unsigned = kind_value == KIND_INT and not x.dtype.signed
    key_type = x.dtype if kind_value == KIND_INT else getattr(types, f"int{bits}")
    signature = types.Tuple((key_type, types.int64))(x, start, length, kind, last, floor)

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
        if kind_value == KIND_INT:
            low = lowest_key(kind_value, bits, unsigned)
            extremes = [("umax" if unsigned else "smax", low)]
        else:
            # Of float bits: the signed maximum is the largest float where any element
            # is not negative, else the signed minimum is (the negative float nearest
            # zero); a NaN shows as bits above those of +inf (signed) or of -inf
            # (unsigned). No keys are needed.
            sign = 1 << (bits - 1)
            extremes = [("smax", -sign), ("smin", sign - 1), ("umax", 0)]
        running = [cgutils.alloca_once_value(builder, ir.Constant(vty, v)) for _, v in extremes]

        def take(value, padded):
            for (op, pad), ptr in zip(extremes, running, strict=True):
                if padded:
                    value_here = builder.select(run.inside, value, ir.Constant(vty, pad))
                else:
                    value_here = value
                compare = builder.icmp_unsigned if op == "umax" else builder.icmp_signed
                have = builder.load(ptr)
                wins = compare("<" if op == "smin" else ">", value_here, have)
                builder.store(builder.select(wins, value_here, have), ptr)

        with cgutils.for_range_slice(builder, zero, run.full, one) as (c, _):
            value = run.chunk(c)
            # Far enough ahead for the memory's latency: rows of a few hundred bytes
            # are too short for the hardware's stream detection to keep up.
            ahead = builder.gep(run.base, [builder.add(c, ir.Constant(i64, PREFETCH))])
            _prefetch(builder, ahead)
            take(value, False)
        with builder.if_then(run.has_tail):
            take(run.tail(), True)
        reduced = [
            _reduce(builder, op, builder.load(ptr))
            for (op, _), ptr in zip(extremes, running, strict=True)
        ]
        if kind_value == KIND_INT:
            top = reduced[0]
        else:
            high, low, high_unsigned = reduced
            inf_bits = -lowest_key(kind_value, bits, False)
            nan = builder.or_(
                builder.icmp_signed(">", high, ir.Constant(ity, inf_bits)),
                builder.icmp_unsigned(">", high_unsigned, ir.Constant(ity, sign | inf_bits)),
            )
            nearest_zero = builder.neg(builder.and_(low, ir.Constant(ity, sign - 1)))
            not_negative = builder.icmp_signed(">=", high, ir.Constant(ity, 0))
            top = builder.select(
                nan,
                ir.Constant(ity, inf_bits + 1),
                builder.select(not_negative, high, nearest_zero),
            )

        # Pass 2, only where the maximum beats ``floor``: where it is, every chunk read
        # again (from cache).
        at_ptr = cgutils.alloca_once_value(builder, ir.Constant(i64, -1))

        def search(matches):
            builder.store(run.search(matches, last_value), at_ptr)

        def equal_to(target):
            return _equal_to(builder, target, lanes)

        cmp = builder.icmp_unsigned if unsigned else builder.icmp_signed
        with builder.if_then(cmp(">=" if last_value else ">", top, floor_key)):
            if kind_value == KIND_INT:
                search(equal_to(top))
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
                        search(equal_to(pattern))
                    with by_key:
                        key_is_top = equal_to(top)
                        search(lambda v: key_is_top(_key_ir(builder, v, kind_value)))
        return context.make_tuple(builder, sig.return_type, [top, builder.load(at_ptr)])

    return signature, codegen


@intrinsic(prefer_literal=True)
def group_argmax(typingctx, x, o, out, kind, last, wide):
    """Write the position of the maximum of each of the rows ``o`` to ``o + lanes - 1``
    of the C-contiguous ``x[outer, n]`` into ``out[o:]``, where ``lanes = wide *
    lane_count(x)`` and a row has at most ``lanes`` elements.

    For short rows, where a horizontal reduction per row costs more than reading the
    row: each row is one vector of ``wide * VECTOR_BYTES`` bytes (its lanes past the row
    set to the lowest key), and a tree of shuffles and maxima reduces the vectors of all
    the rows together into one with a lane per row; each row's vector is then compared
    with its maximum. The caller makes sure that every row's vector load stays in the
    array. ``kind`` is a constant, as for ``lane_argmax``, and so is ``wide``, 1 or 2;
    ``last`` (1: the last occurrence of the maximum) need not be.
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
    lanes = wide.literal_value * _lanes(x)
    unsigned = kind_value == KIND_INT and not x.dtype.signed
    signature = types.none(x, o, out, kind, last, wide)

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        ity = ir.IntType(bits)
        vty = ir.VectorType(ity, lanes)
        mty = ir.IntType(lanes)  # a bit per lane
        zero, one = ir.Constant(i64, 0), ir.Constant(i64, 1)
        rows = ir.Constant(i64, lanes)
        x_struct = context.make_array(sig.args[0])(context, builder, args[0])
        out_struct = context.make_array(sig.args[2])(context, builder, args[2])
        n = cgutils.unpack_tuple(builder, x_struct.shape, 2)[1]
        lowest = ir.Constant(vty, lowest_key(kind_value, bits, unsigned))
        bigger = builder.icmp_unsigned if unsigned else builder.icmp_signed
        vector_at = _vector_at(builder, x_struct.data, vty)
        lane = ir.Constant(vty, list(range(lanes)))
        in_row = builder.icmp_unsigned("<", lane, _splat(builder, _resize(builder, n, ity), lanes))
        is_last = builder.icmp_unsigned("!=", args[4], ir.Constant(args[4].type, 0))

        # Every row's keys.
        kept = cgutils.alloca_once(builder, vty, size=lanes)
        first_row = builder.mul(args[1], n)
        part = _lanes(x)  # elements per register
        with cgutils.for_range_slice(builder, zero, rows, one) as (r, _):
            row = builder.add(first_row, builder.mul(r, n))
            value = vector_at(row)
            # Fetched ahead, as in ``lane_argmax``; without it, integer rows of 80-96
            # bytes took twice as long as float ones of the same bytes.
            for k in range(wide.literal_value):
                ahead = builder.add(row, ir.Constant(i64, (PREFETCH + k) * part))
                _prefetch(builder, builder.gep(x_struct.data, [ahead]))
            key = builder.select(in_row, _key_ir(builder, value, kind_value), lowest)
            builder.store(key, builder.gep(kept, [r]))

        # The tree: each step pairs vectors that hold the maxima of k rows in lanes/k
        # lanes each into one that holds 2k rows in half as many lanes each.
        vectors = [builder.load(builder.gep(kept, [ir.Constant(i64, r)])) for r in range(lanes)]
        width = lanes
        index = ir.VectorType(ir.IntType(32), lanes)
        while len(vectors) > 1:
            half = width // 2
            low = [(p // half) * width + p % half for p in range(lanes)]  # of a, then b
            high = [i + half for i in low]
            paired = []
            for a, b in zip(vectors[::2], vectors[1::2], strict=True):
                u = builder.shuffle_vector(a, b, ir.Constant(index, low))
                v = builder.shuffle_vector(a, b, ir.Constant(index, high))
                paired.append(builder.select(bigger(">", u, v), u, v))
            vectors, width = paired, half
        tops = builder.bitcast(cgutils.alloca_once_value(builder, vectors[0]), ity.as_pointer())

        # Each row's keys compared with its maximum: the first (last) lane that holds it.
        with cgutils.for_range_slice(builder, zero, rows, one) as (r, _):
            is_top = _equal_to(builder, builder.load(builder.gep(tops, [r])), lanes)
            hits = builder.and_(is_top(builder.load(builder.gep(kept, [r]))), in_row)
            mask = builder.bitcast(hits, mty)
            leading = _count_zeros(builder, mask, leading=True)
            first = _count_zeros(builder, mask, leading=False)
            at = builder.select(is_last, builder.sub(ir.Constant(i64, lanes - 1), leading), first)
            builder.store(at, builder.gep(out_struct.data, [builder.add(args[1], r)]))
        return context.get_dummy_value()

    return signature, codegen


@intrinsic(prefer_literal=True)
def lane_rows_update(typingctx, x, start, stride, nrows, width, best, hit, row0, kind, last):
    """Fold ``nrows`` rows of ``width`` elements into running maxima ``best[:width]``
    and their row numbers ``hit[:width]``, vector by vector.

    Row ``r`` starts at flat index ``start + r * stride`` of the C-contiguous ``x`` and
    is numbered ``row0 + r`` (which must fit ``hit``'s integers); ``width`` is a
    multiple of ``lane_count(x)``. A row replaces the running maximum where it is
    greater (``last`` = 1: greater or equal). Each vector of ``best`` and ``hit`` is
    read and written once per call, so callers pass groups of ``FOLD_ROWS`` or
    ``FAR_FOLD_ROWS`` rows (the cases that are unrolled) where they can.
    """
    for name, array in (("x", x), ("best", best), ("hit", hit)):
        if not (isinstance(array, types.Array) and array.layout == "C"):
            raise errors.TypingError(f"lane_rows_update(): {name} must be C-contiguous")
    if not (isinstance(kind, types.IntegerLiteral) and isinstance(last, types.IntegerLiteral)):
        raise errors.TypingError("lane_rows_update(): kind and last must be constants")
    kind_value, last_value = kind.literal_value, last.literal_value
    bits = x.dtype.bitwidth
    lanes = _lanes(x)
    unsigned = kind_value == KIND_INT and not x.dtype.signed
    signature = types.none(x, start, stride, nrows, width, best, hit, row0, kind, last)

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        ity = ir.IntType(bits)
        vty = ir.VectorType(ity, lanes)
        first, step, count, size = args[1], args[2], args[3], args[4]

        def data(i):
            return context.make_array(sig.args[i])(context, builder, args[i]).data

        base = builder.gep(data(0), [first])
        best_vectors = builder.bitcast(data(5), vty.as_pointer())
        hit_vectors = builder.bitcast(data(6), vty.as_pointer())
        top_ptr = cgutils.alloca_once(builder, vty)
        row_ptr = cgutils.alloca_once(builder, vty)
        zero, one = ir.Constant(i64, 0), ir.Constant(i64, 1)
        nvectors = builder.udiv(size, ir.Constant(i64, lanes))

        def fold(r, value):
            value = _key_ir(builder, value, kind_value)
            number = builder.add(args[7], r)
            _fold(builder, unsigned, last_value, top_ptr, row_ptr, value, number)

        with cgutils.for_range_slice(builder, zero, nvectors, one) as (s, _):
            builder.store(builder.load(builder.gep(best_vectors, [s]), align=bits // 8), top_ptr)
            builder.store(builder.load(builder.gep(hit_vectors, [s]), align=bits // 8), row_ptr)
            column = builder.gep(base, [builder.mul(s, ir.Constant(i64, lanes))])

            def row(r):
                at = builder.bitcast(builder.gep(column, [builder.mul(r, step)]), vty.as_pointer())
                return builder.load(at, align=bits // 8)

            def group(rows: int):  # unrolled, so that the loads are issued together
                numbers = [ir.Constant(i64, r) for r in range(rows)]
                for r, value in [(r, row(r)) for r in numbers]:
                    fold(r, value)
                # The same vector of the next group of rows, fetched ahead: short rows are
                # too short for the hardware's stream detection.
                for r in range(rows, 2 * rows):
                    at = builder.gep(column, [builder.mul(ir.Constant(i64, r), step)])
                    _prefetch(builder, at)

            def is_group(rows: int):
                return builder.icmp_unsigned("==", count, ir.Constant(i64, rows))

            with builder.if_else(is_group(FOLD_ROWS), likely=True) as (near, other):
                with near:
                    group(FOLD_ROWS)
                with other:
                    with builder.if_else(is_group(FAR_FOLD_ROWS)) as (far, rest):
                        with far:
                            group(FAR_FOLD_ROWS)
                        with rest:
                            with cgutils.for_range_slice(builder, zero, count, one) as (r, _):
                                fold(r, row(r))
            builder.store(builder.load(top_ptr), builder.gep(best_vectors, [s]), align=bits // 8)
            builder.store(builder.load(row_ptr), builder.gep(hit_vectors, [s]), align=bits // 8)
        return context.get_dummy_value()

    return signature, codegen

"""Searches for the maximum and its position with whole vectors, in LLVM IR.

A loop that carries a scalar maximum and its index from element to element does not
vectorise. ``lane_argmax`` reads a contiguous run as chunks of ``VECTOR_BYTES`` bytes,
one vector each, and every lane keeps its own maximum key and the number of the chunk
that gave it, in registers; a horizontal step at the end turns the lanes into the
first (or last) position of the maximum. ``lane_rows_update`` does the same across
rows, for each column of a block: a group of rows is folded into running maxima and
row numbers that stay in registers meanwhile. Both are written in LLVM IR (numba would
keep such lane state in memory), with vector types that LLVM maps onto whatever SIMD
width the CPU has.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic, overload

from ._dtypes import KIND_INT
from ._keys import float_key_ir, lowest_key

__all__ = [
    "FAR_FOLD_ROWS",
    "FAR_ROW_BYTES",
    "FOLD_ROWS",
    "VECTOR_BYTES",
    "lane_argmax",
    "lane_count",
    "lane_rows_update",
    "lane_span",
]

# Bytes per chunk: one 512-bit vector, or two 256-bit ones.
VECTOR_BYTES = 64
# Rows per call of ``lane_rows_update`` that it unrolls (measured on float64 columns of
# 1 KiB: 2x faster than a loop over the rows) ...
FOLD_ROWS = 8
# ... and for rows at least FAR_ROW_BYTES apart, which are read faster fewer at a time
# (fewer streams: measured on 64 MiB of float32 and int8, rows 4-256 KiB apart, 1.3-1.5
# of the read bound instead of 1.5-1.75; rows 1 KiB apart are faster with 8).
FAR_FOLD_ROWS = 4
FAR_ROW_BYTES = 4096


def lane_count(like):
    """Elements per chunk of ``lane_argmax`` for arrays like ``like``."""
    raise NotImplementedError("lane_count() is only callable from compiled code")


def lane_span(like):
    """The most chunks one ``lane_argmax`` call may search for arrays like ``like``."""
    raise NotImplementedError("lane_span() is only callable from compiled code")


def _lanes(array_type) -> int:
    return VECTOR_BYTES * 8 // array_type.dtype.bitwidth


@overload(lane_count)
def _lane_count_overload(like):
    lanes = _lanes(like)
    return lambda like: lanes


@overload(lane_span)
def _lane_span_overload(like):
    # Chunk numbers are kept in lanes as wide as the elements, unsigned; positions
    # within a run are computed in 32 bits.
    span = min(2**like.dtype.bitwidth - 1, 2**31 // _lanes(like) - 1)
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


@intrinsic(prefer_literal=True)
def lane_argmax(typingctx, x, start, length, kind, last):
    """``(key, position)`` of the maximum among ``length`` elements of the C-contiguous
    array ``x`` from flat index ``start`` on.

    ``length`` is in ``[1, lanes * lane_span(x)]``, with ``lanes = lane_count(x)``;
    ``kind`` and ``last`` are constants. The position counts from ``start``; ``last`` =
    1 picks the last occurrence of the maximum.
    """
    if not (isinstance(x, types.Array) and x.layout == "C"):
        raise errors.TypingError("lane_argmax(): x must be a C-contiguous array")
    if not (isinstance(kind, types.IntegerLiteral) and isinstance(last, types.IntegerLiteral)):
        raise errors.TypingError("lane_argmax(): kind and last must be constants")
    kind_value, last_value = kind.literal_value, last.literal_value
    dtype = x.dtype
    bits = dtype.bitwidth
    lanes = _lanes(x)
    unsigned = kind_value == KIND_INT and not dtype.signed
    key_type = dtype if kind_value == KIND_INT else getattr(types, f"int{bits}")
    signature = types.Tuple((key_type, types.int64))(x, start, length, kind, last)

    def codegen(context, builder, sig, args):
        array, first, count = args[0], args[1], args[2]
        i64, i32 = ir.IntType(64), ir.IntType(32)
        ity = ir.IntType(bits)
        vty = ir.VectorType(ity, lanes)
        array_struct = context.make_array(x)(context, builder, array)
        base = builder.bitcast(builder.gep(array_struct.data, [first]), vty.as_pointer())
        lowest = ir.Constant(vty, lowest_key(kind_value, bits, unsigned))

        def keys(v):
            return _key_ir(builder, v, kind_value)

        best_ptr = cgutils.alloca_once(builder, vty)
        chunk_ptr = cgutils.alloca_once(builder, vty)
        builder.store(lowest, best_ptr)
        builder.store(ir.Constant(vty, 0), chunk_ptr)

        def update(c, value):
            _fold(builder, unsigned, last_value, best_ptr, chunk_ptr, value, c)

        # Whole chunks: the first one sets every lane, the others update them.
        full = builder.udiv(count, ir.Constant(i64, lanes))
        with builder.if_then(builder.icmp_unsigned(">", full, ir.Constant(i64, 0))):
            builder.store(keys(builder.load(base, align=bits // 8)), best_ptr)
        one = ir.Constant(i64, 1)
        with cgutils.for_range_slice(builder, one, full, one) as (c, _):
            update(c, keys(builder.load(builder.gep(base, [c]), align=bits // 8)))
        # The elements after the last whole chunk: one vector load, its lanes past the end
        # set to the lowest key; near the end of the array (where the load would leave
        # it) the elements are first copied into a vector.
        rest = builder.sub(count, builder.mul(full, ir.Constant(i64, lanes)))
        with builder.if_then(builder.icmp_unsigned(">", rest, ir.Constant(i64, 0))):
            tail = builder.gep(base, [full])
            loaded = cgutils.alloca_once(builder, vty)
            end = builder.add(builder.add(first, count), ir.Constant(i64, lanes - 1))
            in_array = builder.icmp_signed("<=", end, array_struct.nitems)
            with builder.if_else(in_array) as (inside, near_end):
                with inside:
                    builder.store(builder.load(tail, align=bits // 8), loaded)
                with near_end:
                    builder.store(ir.Constant(vty, 0), loaded)
                    cgutils.raw_memcpy(builder, loaded, tail, rest, bits // 8)
            lane = ir.Constant(vty, list(range(lanes)))
            inside = builder.icmp_unsigned(
                "<", lane, _splat(builder, _resize(builder, rest, ity), lanes)
            )
            update(full, builder.select(inside, keys(builder.load(loaded)), lowest))

        best = builder.load(best_ptr)
        top = _reduce(builder, "umax" if unsigned else "smax", best)
        # Position of each lane's best: chunk number * lanes + lane. Lanes past the end
        # can hold the lowest key too, so only positions inside the run count.
        p32 = ir.VectorType(i32, lanes)
        number = _resize(builder, builder.load(chunk_ptr), p32)
        position = builder.add(
            builder.mul(number, ir.Constant(p32, lanes)), ir.Constant(p32, list(range(lanes)))
        )
        hit = builder.and_(
            builder.icmp_unsigned("==", best, _splat(builder, top, lanes)),
            builder.icmp_signed("<", position, _splat(builder, builder.trunc(count, i32), lanes)),
        )
        miss = ir.Constant(p32, -1 if last_value else 2**31 - 1)
        at = _reduce(builder, "smax" if last_value else "smin", builder.select(hit, position, miss))
        return context.make_tuple(builder, sig.return_type, [top, builder.sext(at, i64)])

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

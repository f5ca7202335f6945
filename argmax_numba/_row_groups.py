"""Short rows searched many at once.

A row of a few dozen bytes is read in one vector, but turning that vector's lanes into
its maximum and position costs more than reading it. ``group_argmax`` takes as many
rows as a vector has lanes and reduces all their vectors together in a tree of
shuffles and maxima: each step pairs two vectors into one that holds twice as many
rows in half as many lanes each, until one vector holds a lane per row.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

from ._dtypes import KIND_INT
from ._ir import VECTOR_BYTES, equal_to, key_ir, lane_of, prefetch, resize, splat, vector_at
from ._keys import lowest_key
from ._lanes import PREFETCH, lanes_of

__all__ = ["GROUP_ROW_BYTES", "group_argmax"]

# Rows up to this long are searched many at a time (``group_argmax``), each as one
# vector of one or two registers. Measured on 64 MiB, against one row at a time: rows
# of 10-16 float32 1.4-1.6 of the read bound instead of 3.5-7, rows of 16 int8 2.5-3.2
# instead of 20, rows of 10 float64 1.3-2.0 instead of 3.2-3.7; rows of 200-256 bytes
# were slower in groups (as loops over chunks).
GROUP_ROW_BYTES = 2 * VECTOR_BYTES


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
    lanes = wide.literal_value * lanes_of(x)
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
        load_row = vector_at(builder, x_struct.data, vty)
        lane = ir.Constant(vty, list(range(lanes)))
        in_row = builder.icmp_unsigned("<", lane, splat(builder, resize(builder, n, ity), lanes))
        is_last = builder.icmp_unsigned("!=", args[4], ir.Constant(args[4].type, 0))

        # Every row's keys.
        kept = cgutils.alloca_once(builder, vty, size=lanes)
        first_row = builder.mul(args[1], n)
        part = lanes_of(x)  # elements per register
        with cgutils.for_range_slice(builder, zero, rows, one) as (r, _):
            row = builder.add(first_row, builder.mul(r, n))
            value = load_row(row)
            # Fetched ahead, as in ``lane_argmax``; without it, integer rows of 80-96
            # bytes took twice as long as float ones of the same bytes.
            for k in range(wide.literal_value):
                ahead = builder.add(row, ir.Constant(i64, (PREFETCH + k) * part))
                prefetch(builder, builder.gep(x_struct.data, [ahead]))
            key = builder.select(in_row, key_ir(builder, value, kind_value), lowest)
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
            is_top = equal_to(builder, builder.load(builder.gep(tops, [r])), lanes)
            hits = builder.and_(is_top(builder.load(builder.gep(kept, [r]))), in_row)
            at = lane_of(builder, builder.bitcast(hits, mty), is_last)
            builder.store(at, builder.gep(out_struct.data, [builder.add(args[1], r)]))
        return context.get_dummy_value()

    return signature, codegen

"""One block of columns folded over all its rows, in LLVM IR (``fold_block``).

The column kernels keep, for each column of a block, a running maximum and the row
that holds it. Written as numba loops around the fold of groups of rows
(``emit_rows_fold``, then an intrinsic of its own), the setup of the running values
and the pass that turns row numbers into output took LLVM longer to optimise than the
fold itself (LLVM vectorised each of those loops with an epilogue, and numba's
indexing guards negative indices), and the column task's first compile was slow. Written
here with whole vectors, it is one loop nest around the fold, which compiles in much
less time (docs/performance.md, "The column fold in LLVM IR").
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

from ..dtypes import lowest_key
from .ir import masked_load, masked_store, splat
from .lanes import FOLD_ROWS, emit_rows_fold, fold_rows, fold_spec

__all__ = ["fold_block"]


@intrinsic(prefer_literal=True)
def fold_block(typingctx, x, first, n, stride, width, best, hit, out, at, kind, last):
    """Write to ``out[at : at + width]`` the row (0 to ``n - 1``) of the maximum of each
    of ``width`` columns: row ``r`` of the block starts at flat index ``first + r *
    stride`` of the C-contiguous ``x``. The first row holding the maximum, or with
    ``last`` = 1 the last one.

    ``best`` and ``hit`` are scratch for ``lane_slots(width, lane_count(x))`` keys and
    row numbers (``key_vector``, ``narrow_index``). Where ``width`` is not a multiple of
    a vector, the last vector of columns ends at the block's last column and overlaps
    the one before it, or, for a block narrower than a vector, the elements before the
    block, which must be in ``x``: ``first + width`` at least ``lane_count(x)``.
    Afterwards ``best`` holds each column's maximum key (in its slot).
    """
    for name, array in (("x", x), ("best", best), ("hit", hit), ("out", out)):
        if not (isinstance(array, types.Array) and array.layout == "C"):
            raise errors.TypingError(f"fold_block(): {name} must be C-contiguous")
    if out.dtype != types.int64:
        raise errors.TypingError("fold_block(): out must hold int64")
    spec = fold_spec("fold_block", x, hit, kind, last)
    signature = types.none(x, first, n, stride, width, best, hit, out, at, kind, last)

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        lanes = spec.lanes
        x_data, best_data, hit_data, out_data = (
            context.make_array(sig.args[i])(context, builder, args[i]).data for i in (0, 5, 6, 7)
        )
        first, n, stride, width, at = (
            context.cast(builder, args[i], sig.args[i], types.int64) for i in (1, 2, 3, 4, 8)
        )
        key_vty = ir.VectorType(ir.IntType(spec.bits), lanes)
        hit_vty = ir.VectorType(ir.IntType(spec.hit_bits), lanes)
        row_vty = ir.VectorType(i64, lanes)
        per_vector = i64(lanes)
        whole = builder.udiv(width, per_vector)
        partial = builder.icmp_unsigned("!=", builder.mul(whole, per_vector), width)
        vectors = builder.add(whole, builder.zext(partial, i64))
        no_row = ir.Constant(hit_vty, -1)

        def slot(data, vty, v):  # the v-th vector of ``best`` or ``hit``
            return builder.bitcast(
                builder.gep(data, [builder.mul(v, per_vector)]), vty.as_pointer()
            )

        # Each column's running maximum starts at the least key, at or below every key,
        # so the first row is folded with the others: a row equal to it is taken only for
        # ``last``; otherwise every row so far equals it and the output keeps row 0. (A
        # start of row 0's keys left n - 1 rows, and a group of them folded one row at a
        # time, which was slower: docs/performance.md, "Running maxima start below every
        # key".)
        least = ir.Constant(key_vty, lowest_key(spec.kind, spec.bits, spec.unsigned))
        with cgutils.for_range(builder, vectors) as loop:
            builder.store(least, slot(best_data, key_vty, loop.index), align=spec.bits // 8)
            builder.store(no_row, slot(hit_data, hit_vty, loop.index), align=spec.hit_bits // 8)
        rows_out = builder.gep(out_data, [at])
        cgutils.memset(builder, rows_out, builder.mul(width, i64(8)), 0)

        def take_rows(k0, v, column, inside=None):
            # The row numbers in slot v of the stretch from row k0, where it has one, into
            # the output from ``column`` on (only the lanes ``inside``, if given); the
            # slot cleared. (A select, not a branch: for 8-bit data, whose stretches are
            # of 120 rows, a loop of selects is faster than one of branches;
            # docs/performance.md, "Row numbers taken with selects".)
            hit_at = slot(hit_data, hit_vty, v)
            hits = builder.load(hit_at, align=spec.hit_bits // 8)
            out_at = builder.bitcast(builder.gep(rows_out, [column]), row_vty.as_pointer())
            old = (
                builder.load(out_at, align=8)
                if inside is None
                else masked_load(builder, out_at, inside)
            )
            rows = builder.add(builder.sext(hits, row_vty), splat(builder, k0, lanes))
            new = builder.select(
                builder.icmp_signed(">=", hits, ir.Constant(hit_vty, 0)), rows, old
            )
            if inside is None:
                builder.store(new, out_at, align=8)
            else:
                masked_store(builder, new, out_at, inside)
            builder.store(no_row, hit_at, align=spec.hit_bits // 8)

        # Row numbers within a stretch of ``span`` rows fit ``hit``'s integers (the data's
        # width, at most 16 bits), so the fold compares vectors no wider than the data's;
        # whole groups of rows.
        span = i64((2 ** (spec.hit_bits - 1) - 1) // FOLD_ROWS * FOLD_ROWS)
        fold = fold_rows(builder, builder.mul(stride, i64(spec.bits // 8)))
        partial_column = builder.sub(width, per_vector)  # negative for a narrow block
        lane = ir.Constant(row_vty, list(range(lanes)))
        inside = builder.icmp_signed(
            ">=", builder.add(lane, splat(builder, partial_column, lanes)), ir.Constant(row_vty, 0)
        )
        with cgutils.for_range_slice(builder, i64(0), n, span) as (k0, _):
            k1 = builder.select(
                builder.icmp_signed("<", builder.add(k0, span), n), builder.add(k0, span), n
            )
            # ``fold`` rows at a time (``fold_rows``) into the running maxima ...
            with cgutils.for_range_slice(builder, k0, k1, fold) as (k, _):
                left = builder.sub(k1, k)
                count = builder.select(builder.icmp_signed("<", fold, left), fold, left)
                start = builder.add(first, builder.mul(k, stride))
                emit_rows_fold(
                    builder,
                    spec,
                    x_data,
                    start,
                    stride,
                    count,
                    width,
                    best_data,
                    hit_data,
                    builder.sub(k, k0),
                )
            # ... then their row numbers into the output: the whole vectors', then the
            # partial one's, in a slot of its own after them.
            with cgutils.for_range(builder, whole) as loop:
                take_rows(k0, loop.index, builder.mul(loop.index, per_vector))
            with builder.if_then(partial, likely=False):
                take_rows(k0, whole, partial_column, inside)
        return context.get_dummy_value()

    return signature, codegen

"""Merging a candidate (key, index) into a running (maximum, index), branch-free.

numba compiles a conditional expression to branches, which LLVM does not always turn
back into selects, and then the loops around it do not vectorise; these helpers emit
selects and masks directly. They are intrinsics rather than numba functions because
each numba function is compiled on its own, which adds to a first call
(docs/performance.md, "Helpers as intrinsics").
``merge_candidates`` merges the candidates of tasks that each searched a piece.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

__all__ = ["choose", "merge_candidates", "take_first", "take_last"]


def _taker(last: bool):
    def typer(typingctx, best, at, value, index):
        if not all(isinstance(t, types.Integer) for t in (best, at, value, index)):
            raise errors.TypingError("taking a candidate: keys and indices are integers")
        best, at = types.unliteral(best), types.unliteral(at)

        def codegen(context, builder, sig, args):
            old, held = args[0], args[1]
            new = context.cast(builder, args[2], sig.args[2], best)
            index = context.cast(builder, args[3], sig.args[3], at)
            compare = builder.icmp_signed if best.signed else builder.icmp_unsigned
            wins = compare(">=" if last else ">", new, old)
            mask = builder.sext(wins, held.type)
            held = builder.or_(builder.and_(held, builder.not_(mask)), builder.and_(index, mask))
            return context.make_tuple(
                builder, sig.return_type, (builder.select(wins, new, old), held)
            )

        return types.Tuple((best, at))(best, at, value, index), codegen

    typer.__name__ = "take_last" if last else "take_first"
    return intrinsic(typer)


# ``take_first(best, at, value, index)``: the running maximum and index after ``value``,
# where a strictly greater value wins ...
take_first = _taker(last=False)
# ... and ``take_last``: where a greater or equal value wins.
take_last = _taker(last=True)


@intrinsic
def choose(typingctx, cond, a, b):
    """``a`` where ``cond`` holds, else ``b``."""
    if not isinstance(cond, types.Boolean) or types.unliteral(a) != types.unliteral(b):
        raise errors.TypingError("choose(): takes a boolean and two values of one type")
    item = types.unliteral(a)

    def codegen(context, builder, sig, args):
        return builder.select(args[0], args[1], args[2])

    return item(cond, item, item), codegen


@intrinsic
def merge_candidates(typingctx, out, keys, rows, nsplit, last):
    """Write to each element ``(o, c)`` of the C-contiguous 2-d ``out`` the row in
    ``rows`` of the best of its ``nsplit`` candidates, which ``keys`` and ``rows`` hold in
    (o, split, c) order: the greatest key, the earliest split on ties (``last`` nonzero,
    a run-time value: the latest).

    (In LLVM IR: as a numba function inlined into a driver, with numba's index guards,
    it added much to the driver's first compile; docs/performance.md, "Helpers as
    intrinsics".)"""
    arrays = (out, keys, rows)
    if not all(isinstance(a, types.Array) and a.layout == "C" for a in arrays):
        raise errors.TypingError("merge_candidates(): out, keys and rows must be C-contiguous")
    if out.ndim != 2 or out.dtype != types.int64 or rows.dtype != types.int64:
        raise errors.TypingError("merge_candidates(): out is 2-d, out and rows hold int64")
    if not isinstance(keys.dtype, types.Integer):
        raise errors.TypingError("merge_candidates(): keys are integers")
    compare_signed = keys.dtype.signed

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        out_a, keys_a, rows_a = (
            context.make_array(sig.args[i])(context, builder, args[i]) for i in range(3)
        )
        outer, inner = cgutils.unpack_tuple(builder, out_a.shape, 2)
        nsplit = context.cast(builder, args[3], sig.args[3], types.int64)
        last_value = context.cast(builder, args[4], sig.args[4], types.int64)
        latest = builder.icmp_signed("!=", last_value, i64(0))
        compare = builder.icmp_signed if compare_signed else builder.icmp_unsigned
        best_ptr = cgutils.alloca_once(builder, keys_a.data.type.pointee)
        row_ptr = cgutils.alloca_once(builder, i64)
        with cgutils.for_range(builder, builder.mul(outer, inner)) as element:
            o = builder.sdiv(element.index, inner)
            c = builder.sub(element.index, builder.mul(o, inner))
            first = builder.add(builder.mul(builder.mul(o, nsplit), inner), c)
            builder.store(builder.load(builder.gep(keys_a.data, [first])), best_ptr)
            builder.store(builder.load(builder.gep(rows_a.data, [first])), row_ptr)
            with cgutils.for_range_slice(builder, i64(1), nsplit, i64(1)) as (s, _):
                at = builder.add(first, builder.mul(s, inner))
                key = builder.load(builder.gep(keys_a.data, [at]))
                best = builder.load(best_ptr)
                greater = compare(">", key, best)
                wins = builder.or_(
                    greater, builder.and_(latest, builder.icmp_signed("==", key, best))
                )
                builder.store(builder.select(wins, key, best), best_ptr)
                row = builder.load(builder.gep(rows_a.data, [at]))
                builder.store(builder.select(wins, row, builder.load(row_ptr)), row_ptr)
            builder.store(builder.load(row_ptr), builder.gep(out_a.data, [element.index]))
        return context.get_dummy_value()

    return types.none(out, keys, rows, nsplit, last), codegen

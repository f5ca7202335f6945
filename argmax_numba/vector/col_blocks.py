"""One block of columns folded over all its rows, in LLVM IR (``fold_block``).

The column kernels keep, for each column of a block, a running maximum and the row
that holds it. Written as numba loops around the fold of groups of rows
(``emit_rows_fold``, then an intrinsic of its own), the setup of the running values
and the pass that turns row numbers into output took LLVM longer to optimise than the
fold itself (LLVM vectorised each of those loops with an epilogue, and numba's
indexing guards negative indices), and the column task's first compile was slow. Written
here with whole vectors, it is one loop nest around the fold, which compiles in much
less time (docs/performance.md, "The column fold in LLVM IR").

``fold_float_block`` folds blocks of floats in cache with the running values in
registers instead of memory, where ``float_fold`` says it takes them.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

from ..dtypes import KeyKind, lowest_key
from .ir import HALVED_REGISTER, key_ir, masked_load, masked_store, splat
from .lanes import FOLD_ROWS, Fold, emit_rows_fold, fold_rows, fold_spec, lanes_of

__all__ = [
    "FLOAT_FOLD_BYTES",
    "FLOAT_FOLD_VECTORS",
    "float_fold",
    "fold_block",
    "fold_float_block",
]

# Blocks of float32 or float64 of inputs of at most FLOAT_FOLD_BYTES (in cache), of a
# chunk of FLOAT_FOLD_VECTORS whole vectors or more, are folded a chunk at a time over a
# stretch of rows, the running maxima and row numbers in registers and the elements
# compared as floats, where one register runs a vector's instructions in halves
# (``HALVED_REGISTER``, AMD Zen 4): there, the fold that keeps them in memory and compares
# keys pays for their loads and stores and for the keys' four operations on every vector
# (docs/performance.md, "Float blocks folded in registers"). A chunk whose rows hold a
# NaN is folded again comparing keys.
FLOAT_FOLD_BYTES = 1 << 20
FLOAT_FOLD_VECTORS = 4


def _floats_in_registers(kind: int) -> bool:
    """Whether blocks of key kind ``kind`` may be folded in registers (``float_fold``)."""
    return HALVED_REGISTER and KeyKind(kind).format in (KeyKind.F32, KeyKind.F64)


@intrinsic(prefer_literal=True)
def float_fold(typingctx, x, width, kind):
    """Whether ``fold_float_block`` takes blocks ``width`` columns wide of ``x`` (keys of
    kind ``kind``, a compile-time constant): float32 or float64, on AMD Zen 4 with
    AVX-512, an input of at most FLOAT_FOLD_BYTES (in cache), and a block of at least a
    chunk of FLOAT_FOLD_VECTORS whole vectors (fewer gain nothing)."""
    if not isinstance(kind, types.IntegerLiteral):
        raise errors.TypingError("float_fold(): kind must be a constant")
    bits, lanes = x.dtype.bitwidth, lanes_of(x)

    def codegen(context, builder, sig, args):
        if not _floats_in_registers(kind.literal_value):
            return ir.Constant(ir.IntType(1), 0)
        i64 = ir.IntType(64)
        items = context.make_array(sig.args[0])(context, builder, args[0]).nitems
        columns = context.cast(builder, args[1], sig.args[1], types.int64)
        return builder.and_(
            builder.icmp_unsigned("<=", items, i64(FLOAT_FOLD_BYTES // (bits // 8))),
            builder.icmp_signed(">=", columns, i64(FLOAT_FOLD_VECTORS * lanes)),
        )

    return types.boolean(x, width, kind), codegen


def _block_fold(name: str, registers: bool):
    """The intrinsic ``fold_block`` (``registers`` False) or ``fold_float_block``."""

    def typer(typingctx, x, first, n, stride, width, best, hit, out, at, kind, last):
        for arg, array in (("x", x), ("best", best), ("hit", hit), ("out", out)):
            if not (isinstance(array, types.Array) and array.layout == "C"):
                raise errors.TypingError(f"{name}(): {arg} must be C-contiguous")
        if out.dtype != types.int64:
            raise errors.TypingError(f"{name}(): out must hold int64")
        spec = fold_spec(name, x, hit, kind, last)
        signature = types.none(x, first, n, stride, width, best, hit, out, at, kind, last)
        if registers and not _floats_in_registers(spec.kind):
            # (never called: ``float_fold`` is False for these; no code to compile)
            return signature, lambda context, builder, sig, args: context.get_dummy_value()
        return signature, _block_codegen(spec, registers)

    typer.__name__ = typer.__qualname__ = name
    return intrinsic(prefer_literal=True)(typer)


def _block_codegen(spec: Fold, registers: bool):
    """The code of ``fold_block`` (``fold_float_block`` where ``registers``)."""

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

        # Each stretch of rows folded into the running maxima: ``fold`` rows at a time
        # (``fold_rows``) in memory, or with ``registers``, floats in registers
        # (``_fold_floats``) ...
        with cgutils.for_range_slice(builder, i64(0), n, span) as (k0, _):
            k1 = builder.select(
                builder.icmp_signed("<", builder.add(k0, span), n), builder.add(k0, span), n
            )
            if registers:
                stretch = builder.add(first, builder.mul(k0, stride))
                rows = builder.sub(k1, k0)
                _fold_floats(
                    builder,
                    spec,
                    x_data,
                    stretch,
                    stride,
                    rows,
                    best_data,
                    hit_data,
                    (whole, partial, partial_column),
                )
            else:
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
            # ... then their row numbers into the output: the whole vectors', then
            # the partial one's, in a slot of its own after them.
            with cgutils.for_range(builder, whole) as loop:
                take_rows(k0, loop.index, builder.mul(loop.index, per_vector))
            with builder.if_then(partial, likely=False):
                take_rows(k0, whole, partial_column, inside)
        return context.get_dummy_value()

    return codegen


def _fold_floats(builder, spec: Fold, x_data, start, stride, rows, best, hit, block) -> None:
    """A stretch of ``rows`` rows of a block of floats, row ``r`` from flat index ``start
    + r * stride``, folded in registers a chunk of FLOAT_FOLD_VECTORS vectors at a time
    (``_fold_float_chunk``): the whole vectors, then those left over and the partial one
    in one chunk more, whose vectors past its last repeat it. A chunk whose floats held a
    NaN is folded again comparing keys. ``block`` is the block's whole vectors (at least
    a chunk's), whether it has a partial one, and that one's first column."""
    i64 = ir.IntType(64)
    whole, partial, partial_column = block
    lanes, size = spec.lanes, FLOAT_FOLD_VECTORS
    chunks = builder.udiv(whole, i64(size))
    left_over = builder.urem(whole, i64(size))  # whole vectors after the chunks
    left = builder.add(left_over, builder.zext(partial, i64))  # and the partial one
    more = builder.zext(builder.icmp_unsigned(">", left, i64(0)), i64)
    last = builder.sub(left, i64(1))  # the last of those
    with cgutils.for_range(builder, builder.add(chunks, more)) as loop:
        c = loop.index
        base = builder.mul(c, i64(size * lanes))
        rest = builder.icmp_unsigned("==", c, chunks)  # the chunk of those left
        vectors = []
        for v in range(size):
            repeat = builder.and_(rest, builder.icmp_unsigned(">", i64(v), last))
            at = builder.select(repeat, last, i64(v))
            slot = builder.add(base, builder.mul(at, i64(lanes)))
            is_partial = builder.and_(
                builder.and_(rest, partial), builder.icmp_unsigned("==", at, left_over)
            )
            vectors.append((builder.select(is_partial, partial_column, slot), slot))
        met = _fold_float_chunk(builder, spec, x_data, start, stride, rows, best, hit, vectors)
        with builder.if_then(met, likely=False):
            _fold_float_chunk(
                builder, spec, x_data, start, stride, rows, best, hit, vectors, exact=True
            )


def _fold_float_chunk(
    builder, spec: Fold, x_data, start, stride, rows, best_data, hit_data, vectors, exact=False
) -> ir.Value:
    """Fold ``rows`` rows (at least one) of vectors of floats into running maxima (keys)
    and row numbers: for each ``(column, slot)`` of ``vectors``, the vector at ``column``
    of every row into the slot at ``slot`` of ``best_data`` and ``hit_data``, which holds
    no row number yet (-1). Row ``r`` starts at flat index ``start + r * stride`` and is
    numbered ``r``. Two vectors may share a column and a slot (they are stored alike).

    The running values stay in registers. The floats are compared as floats, which
    order them as their keys do but for NaN; where the rows hold a NaN, the slots are
    left as they were, and the fold returns True (an i1). With ``exact``, their keys are
    compared instead, which takes NaN too (and the fold returns False)."""
    i64 = ir.IntType(64)
    lanes, count = spec.lanes, len(vectors)
    kind = KeyKind(spec.kind)
    key_vty = ir.VectorType(ir.IntType(spec.bits), lanes)
    hit_vty = ir.VectorType(ir.IntType(spec.hit_bits), lanes)
    mask_ty = ir.VectorType(ir.IntType(1), lanes)
    no_nan = ir.Constant(mask_ty, [0] * lanes)
    if exact:
        value_ty = key_vty

        def value(bits):
            return key_ir(builder, bits, spec.kind)

        def takes(v, t):  # a key greater than the maximum's (``last``: or equal)
            return builder.icmp_signed(">=" if spec.last else ">", v, t)

        def nan_in(values, met):
            return met

    else:
        value_ty = ir.VectorType(ir.FloatType() if spec.bits == 32 else ir.DoubleType(), lanes)
        # A float greater than the maximum (ArgMin: less), or with ``last`` equal too.
        op = ("<" if kind.reversed else ">") + ("=" if spec.last else "")

        def value(bits):
            return builder.bitcast(bits, value_ty)

        def takes(v, t):
            return builder.fcmp_ordered(op, v, t)

        def nan_in(values, met):  # (a test of two vectors at once)
            for a, b in zip(values[::2], values[1::2] + values[-1:], strict=False):
                met = builder.or_(met, builder.fcmp_unordered("uno", a, b))
            return met

    def load_row(r):
        row = builder.gep(x_data, [builder.add(start, builder.mul(r, stride))])
        pointers = [
            builder.bitcast(builder.gep(row, [c]), key_vty.as_pointer()) for c, _ in vectors
        ]
        return [value(builder.load(p, align=spec.bits // 8)) for p in pointers]

    top = load_row(i64(0))
    hits = [ir.Constant(hit_vty, 0)] * count
    met = nan_in(top, no_nan)
    before = builder.block
    body = builder.append_basic_block("float_rows")
    done = builder.append_basic_block("float_rows_done")
    builder.cbranch(builder.icmp_signed(">", rows, i64(1)), body, done)
    builder.position_at_end(body)
    r = builder.phi(i64)
    top_phis = [builder.phi(value_ty) for _ in range(count)]
    hit_phis = [builder.phi(hit_vty) for _ in range(count)]
    met_phi = builder.phi(mask_ty)
    r.add_incoming(i64(1), before)
    for phi, start_value in zip(top_phis + hit_phis + [met_phi], top + hits + [met], strict=True):
        phi.add_incoming(start_value, before)
    values = load_row(r)
    number = splat(builder, builder.trunc(r, hit_vty.element), lanes)
    taken = [takes(v, t) for v, t in zip(values, top_phis, strict=True)]
    new_top = [builder.select(c, v, t) for c, v, t in zip(taken, values, top_phis, strict=True)]
    new_hits = [builder.select(c, number, h) for c, h in zip(taken, hit_phis, strict=True)]
    new_met = nan_in(values, met_phi)
    following = builder.add(r, i64(1))
    end = builder.block
    r.add_incoming(following, end)
    for phi, end_value in zip(
        top_phis + hit_phis + [met_phi], new_top + new_hits + [new_met], strict=True
    ):
        phi.add_incoming(end_value, end)
    builder.cbranch(builder.icmp_signed("<", following, rows), body, done)
    builder.position_at_end(done)
    top = [_joined(builder, value_ty, a, b, before, end) for a, b in zip(top, new_top, strict=True)]
    hits = [
        _joined(builder, hit_vty, a, b, before, end) for a, b in zip(hits, new_hits, strict=True)
    ]
    met = _joined(builder, mask_ty, met, new_met, before, end)
    any_nan = builder.icmp_unsigned(
        "!=", builder.bitcast(met, ir.IntType(lanes)), ir.IntType(lanes)(0)
    )
    # The stretch's maxima, as keys, taken into the running ones where they beat them:
    # every slot read before any is written, as two vectors may share one.
    with builder.if_then(builder.not_(any_nan), likely=True):
        no_row = ir.Constant(hit_vty, -1)
        merged = []
        for (_, slot), found, rows_at in zip(vectors, top, hits, strict=True):
            best_at = builder.bitcast(builder.gep(best_data, [slot]), key_vty.as_pointer())
            hit_at = builder.bitcast(builder.gep(hit_data, [slot]), hit_vty.as_pointer())
            keys = found if exact else key_ir(builder, builder.bitcast(found, key_vty), spec.kind)
            best = builder.load(best_at, align=spec.bits // 8)
            take = builder.icmp_signed(">=" if spec.last else ">", keys, best)
            merged.append((best_at, builder.select(take, keys, best), spec.bits))
            merged.append((hit_at, builder.select(take, rows_at, no_row), spec.hit_bits))
        for at, merged_value, bits in merged:
            builder.store(merged_value, at, align=bits // 8)
    return any_nan


def _joined(builder, ty, one_row, more_rows, before, end):
    """The value after a stretch: ``one_row`` from ``before`` (a stretch of one row),
    ``more_rows`` from the loop's ``end``."""
    phi = builder.phi(ty)
    phi.add_incoming(one_row, before)
    phi.add_incoming(more_rows, end)
    return phi


# Write to ``out[at : at + width]`` the row (0 to ``n - 1``) of the maximum of each of
# ``width`` columns: row ``r`` of the block starts at flat index ``first + r * stride`` of
# the C-contiguous ``x``. The first row holding the maximum, or with ``last`` = 1 the last
# one. ``best`` and ``hit`` are scratch for ``lane_slots(width, lane_count(x))`` keys and
# row numbers (``key_vector``, ``narrow_index``). Where ``width`` is not a multiple of a
# vector, the last vector of columns ends at the block's last column and overlaps the one
# before it, or, for a block narrower than a vector, the elements before the block, which
# must be in ``x``: ``first + width`` at least ``lane_count(x)``. Afterwards ``best``
# holds each column's maximum key (in its slot).
fold_block = _block_fold("fold_block", registers=False)
# ``fold_block`` with the running maxima in registers, for the blocks that ``float_fold``
# takes (it does nothing for others). A task chooses once which of the two its blocks go
# to: with both in one loop, the other blocks' fold ran slower (docs/performance.md,
# "Float blocks folded in registers").
fold_float_block = _block_fold("fold_float_block", registers=True)

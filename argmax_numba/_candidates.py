"""Merging a candidate (key, index) into a running (maximum, index), branch-free.

numba compiles a conditional expression to branches, which LLVM does not always turn
back into selects, and then the loops around it do not vectorise; these helpers emit
selects and masks directly. They are intrinsics rather than numba functions because
each numba function is compiled on its own, about 0.05 s of a first call.
"""

from __future__ import annotations

from numba import types
from numba.core import errors
from numba.extending import intrinsic

__all__ = ["choose", "take_first", "take_last"]


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

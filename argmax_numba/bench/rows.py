"""Measuring one table row: ours, numpy, onnxruntime, the read bound, the write bound
and the pass bound (both in one pass) on one input.

All of them are warmed up (compiled, sessions built) before anything is timed, and the
warm-up results are checked against a numpy reference, so that a fast but wrong
kernel shows up in the row's notes instead of passing silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .cases import Case
from .ort import OrtCompetitor
from .read import flat_unsigned, pass_bound, read_bound, write_bound
from .timing import InState, calls_per_sample, median, round_robin

__all__ = ["COMPETITORS", "PORTABLE_RATIOS", "RATIOS", "Row", "measure"]

COMPETITORS = ("ours", "portable", "argmin", "numpy", "ort", "read", "write", "pass")
# Competitors timed first in each repeat, in this order; the others follow, the first of
# them in turn. What runs before a call slows it unequally, which the flush of the caches
# before each sample (``cache_flusher``) is there to stop: numpy's copy of the input
# (along a non-last axis) writes as many bytes again, and an input may be left in a
# large cache or not. With one fixed order (ours, numpy, onnxruntime, read, write, pass)
# and no flush, ours came right after the pass and the read bound after onnxruntime and
# numpy: ours/read came out at 0.67-0.81 where it was 0.89-1.12 with ours and the bounds
# in turn after onnxruntime or each other (64 MiB, float32 along axes 0 and 1, int8
# along axis 2; 9 repeats each way, twice; Intel Xeon).
LEAD = ("numpy", "ort")
# The ratios a row reports: ours / each of these (read+write: the sum of both bounds) ...
RATIOS = ("numpy", "ort", "read", "read+write", "pass")
# ... and the portable tier's / each of these.
PORTABLE_RATIOS = ("numpy", "read", "ours")
# ``argmin`` is our ArgMin on the same input, reported as argmin / ours (ArgMax's time):
# the two share their kernels, so it should stay within noise of 1.


@dataclass
class Row:
    """The measurements of one case (times in seconds per call; None: not available)."""

    case: Case
    times: dict[str, float | None] = field(default_factory=dict)
    samples: dict[str, list[float]] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def ratio(self, other: str, of: str = "ours") -> float | None:
        """``of`` (ours, or the portable tier) / ``other`` (one of ``RATIOS``), or None
        where a time is missing."""
        parts = [self.times.get(name) for name in other.split("+")]
        ours = self.times.get(of)
        if ours is None or any(t is None for t in parts) or sum(parts) <= 0:
            return None
        return ours / sum(parts)

    def pass_over_read(self) -> float | None:
        """pass / read: the least ours / read that any ArgMax could reach on this row."""
        one_pass, read = self.times.get("pass"), self.times.get("read")
        return one_pass / read if one_pass is not None and read else None

    def as_dict(self) -> dict:
        """Raw numbers for ``--json``."""
        c = self.case
        return {
            "case": c.kind,
            "dtype": c.dtype,
            "shape": list(c.shape),
            "order": c.order,
            "axis": c.axis,
            "select_last_index": c.last,
            "seconds_per_call": self.times,
            "samples": self.samples,
            "calls_per_sample": self.calls,
            "ratios": {
                **{f"ours/{o}": self.ratio(o) for o in RATIOS},
                **{f"portable/{o}": self.ratio(o, "portable") for o in PORTABLE_RATIOS},
                "argmin/ours": self.ratio("ours", "argmin"),
                "pass/read": self.pass_over_read(),
            },
            "notes": self.notes,
        }


def _reference(x: np.ndarray, axis: int, last: int, numpy_function=np.argmax) -> np.ndarray:
    """ONNX ArgMax (``numpy_function=np.argmin``: ArgMin) with keepdims=1, from numpy
    (the last occurrence via a flipped view)."""
    if not last:
        return numpy_function(x, axis=axis, keepdims=True)
    flipped = numpy_function(np.flip(x, axis), axis=axis, keepdims=True)
    return x.shape[axis] - 1 - flipped


def _on_the_portable_tier(argmax, x: np.ndarray, axis: int, last: int) -> InState:
    """A call of ``argmax`` on the portable tier, in the same process as the fast tier's
    calls. The tier is switched around each sample, not each call, with a store of
    remembered calls of the portable tier's own, so that a small call costs what it
    costs in a process on the portable tier."""
    from .. import api, tiers

    own_plans: dict = {}
    portable = tiers.Tier.PORTABLE
    return InState(lambda: argmax(x, axis, 1, last), lambda: api.on_tier(portable, own_plans))


def _competitors(case: Case, x: np.ndarray, argmax, argmin, row: Row) -> dict[str, Callable]:
    """The zero-argument calls of this case (missing ones noted in ``row``)."""
    axis, last = case.axis, case.last
    buf = flat_unsigned(x)
    nout = x.size // x.shape[axis]
    fns = {
        "ours": (lambda: argmax(x, axis, 1, last)) if argmax is not None else None,
        "portable": _on_the_portable_tier(argmax, x, axis, last) if argmax is not None else None,
        "argmin": (lambda: argmin(x, axis, 1, last)) if argmin is not None else None,
        "numpy": lambda: np.argmax(x, axis=axis, keepdims=True),
        "ort": None,
        "read": lambda: read_bound(buf),
        "write": lambda: write_bound(nout),
        "pass": lambda: pass_bound(buf, nout),
    }
    if argmax is None:
        row.notes.append("ours not importable")
    if last:
        row.notes.append("numpy: first index (has no select_last_index)")
    ort = OrtCompetitor(x, axis, 1, last)
    fns["ort"] = ort.call
    row.notes += ort.notes if ort.call is not None else [ort.why]
    return fns


def _warm_up(fns: dict[str, Callable | None], calls: int, row: Row) -> dict[str, object]:
    """Call everything ``calls`` times (compile, sessions, caches); drop those that raise."""
    results = {}
    for name, fn in list(fns.items()):
        if fn is None:
            continue
        try:
            results[name] = fn()
            for _ in range(calls - 1):
                fn()
        except Exception as exc:
            row.notes.append(f"{name} failed: {type(exc).__name__}: {str(exc)[:80]}")
            fns[name] = None
    return results


def _check(case: Case, x: np.ndarray, results: dict[str, object], row: Row) -> None:
    """Note any disagreement of ours or onnxruntime with the numpy reference."""
    ref = _reference(x, case.axis, case.last)
    refs = {"argmin": _reference(x, case.axis, case.last, np.argmin)}
    for name in ("ours", "portable", "argmin", "ort"):
        got = results.get(name)
        if got is None:
            continue
        want = refs.get(name, ref)
        got = np.asarray(got)
        if got.dtype != np.int64 or got.shape != want.shape or not np.array_equal(got, want):
            row.notes.append(f"{name} MISMATCH vs numpy reference")


def measure(
    case: Case,
    x: np.ndarray,
    argmax,
    repeats: int,
    sample_seconds: float,
    flush: Callable[[], object] | None = None,
    argmin=None,
) -> Row:
    """Time one case: interleaved samples of every available competitor (``argmin``,
    our ArgMin, where given), medians; ``flush`` (the caches), if given, before each
    sample."""
    row = Row(case)
    fns = _competitors(case, x, argmax, argmin, row)
    results = _warm_up(fns, 3 if case.small else 1, row)
    _check(case, x, results, row)
    del results
    live = {name: fn for name, fn in fns.items() if fn is not None}
    if case.small:
        row.calls = {name: calls_per_sample(fn, sample_seconds) for name, fn in live.items()}
    else:
        row.calls = dict.fromkeys(live, 1)
    row.samples = round_robin(live, repeats, row.calls, rotate=True, lead=LEAD, before=flush)
    row.times = {name: None for name in COMPETITORS}
    row.times.update({name: median(s) for name, s in row.samples.items()})
    return row

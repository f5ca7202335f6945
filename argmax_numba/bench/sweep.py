"""The cost curve: ours, numpy and the read bound over total sizes from 1 KiB to 256 MiB.

A curve is one layout and dtype: 2-D inputs reduced along the last axis with rows of
about 1,000 or 32,000 elements, or along the first axis of a square matrix; in float32,
float16 and int8. Each point doubles the total size. Inputs smaller than the last-level
cache are timed in it, many calls per sample; larger ones (and one as large: it cannot
stay there beside everything else) after a flush of the caches, one call per sample.
Every competitor's samples are interleaved as in the table.

Each point has goals (``goals``) on ours/numpy and ours/read; the summary names the
worst point of every curve against each goal, and ``write_sweep_plot`` draws both
ratios against size with the goals and the cache sizes marked.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .cases import DTYPES, Case, make_input
from .read import cache_sizes, flat_unsigned, read_bound
from .report import fmt_ratio
from .timing import calls_per_sample, median, round_robin

__all__ = [
    "CURVES",
    "SWEEP_DTYPES",
    "Curve",
    "Goal",
    "Point",
    "goals",
    "measure_point",
    "sweep_section",
    "sweep_sizes",
    "write_sweep_plot",
]

KIB, MIB = 1 << 10, 1 << 20
SWEEP_DTYPES = ("float32", "float16", "int8")
# The sizes: SMALLEST to LARGEST in steps of 2x (QUICK_LARGEST and steps of 4x quick).
SMALLEST, LARGEST, QUICK_LARGEST = KIB, 256 * MIB, 16 * MIB


@dataclass(frozen=True)
class Curve:
    """A layout of the sweep: the reduced axis of a 2-D input, and its rows' length."""

    name: str
    axis: int
    row: int = 0
    """Elements per row for the last axis (fewer where the whole input holds fewer);
    0: a square matrix."""

    def shape(self, nbytes: int, itemsize: int) -> tuple[int, int]:
        """The 2-D shape of about ``nbytes`` (never more) of ``itemsize``-byte elements."""
        elems = max(1, nbytes // itemsize)
        if not self.row:
            side = max(1, math.isqrt(elems))
            return side, side
        row = min(self.row, elems)
        return elems // row, row


CURVES = (
    Curve("last axis, rows of 1000", 1, 1000),
    Curve("last axis, rows of 32000", 1, 32000),
    Curve("first axis, square", 0),
)


@dataclass(frozen=True)
class Goal:
    """An upper bound on one ratio (``ours/numpy`` or ``ours/read``) at one point."""

    key: str
    limit: float


# ours/numpy along the last axis: at most LAST_AXIS[i][1] from LAST_AXIS[i][0] bytes up.
LAST_AXIS = ((0, 1.0), (512 * KIB, 0.8), (8 * MIB, 0.6))
# ours/numpy along any other axis, from OTHER_AXES_FROM bytes up.
OTHER_AXES, OTHER_AXES_FROM = 0.2, 64 * KIB
# ours/read, from READ_FROM bytes up.
READ, READ_FROM = 1.3, 32 * MIB


def goals(curve: Curve, nbytes: int) -> list[Goal]:
    """The goals of ``curve``'s point of ``nbytes``."""
    out = []
    if curve.axis == 1:
        out.append(Goal("ours/numpy", [limit for size, limit in LAST_AXIS if nbytes >= size][-1]))
    elif nbytes >= OTHER_AXES_FROM:
        out.append(Goal("ours/numpy", OTHER_AXES))
    if nbytes >= READ_FROM:
        out.append(Goal("ours/read", READ))
    return out


def sweep_sizes(quick: bool = False) -> list[int]:
    """The total sizes of the sweep, in bytes."""
    step, largest = (4, QUICK_LARGEST) if quick else (2, LARGEST)
    sizes, size = [], SMALLEST
    while size <= largest:
        sizes.append(size)
        size *= step
    return sizes


@dataclass
class Point:
    """One point of a curve: seconds per call of each competitor (None: failed)."""

    curve: Curve
    dtype: str
    nbytes: int
    shape: tuple[int, int]
    flushed: bool
    times: dict[str, float | None] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.curve.name}, {self.dtype}"

    def ratio(self, key: str) -> float | None:
        """``ours/numpy``, ``ours/read`` or ``read/numpy`` (the least ours/numpy that one
        pass over the input could reach), or None where a time is missing."""
        ours, other = (self.times.get(name) for name in key.split("/"))
        return ours / other if ours is not None and other else None

    def as_dict(self) -> dict:
        return {
            "curve": self.curve.name,
            "axis": self.curve.axis,
            "dtype": self.dtype,
            "bytes": self.nbytes,
            "shape": list(self.shape),
            "flushed": self.flushed,
            "seconds_per_call": self.times,
            "calls_per_sample": self.calls,
            "ratios": {key: self.ratio(key) for key in ("ours/numpy", "ours/read", "read/numpy")},
            "goals": {g.key: g.limit for g in goals(self.curve, self.nbytes)},
            "notes": self.notes,
        }


def measure_point(
    curve: Curve,
    dtype: str,
    nbytes: int,
    argmax,
    repeats: int,
    sample_seconds: float,
    flush: Callable[[], object] | None = None,
) -> Point:
    """Time ours, numpy and the read bound on ``curve``'s input of ``nbytes``: many calls
    per sample without ``flush``, one call after ``flush`` with it. Ours is checked
    against numpy first (a mismatch is noted and its time dropped)."""
    shape = curve.shape(nbytes, DTYPES[dtype].itemsize)
    point = Point(curve, dtype, nbytes, shape, flush is not None)
    x = make_input(Case("sweep", dtype, shape, curve.axis, 0))
    buf, axis = flat_unsigned(x), curve.axis
    fns = {
        "ours": lambda: argmax(x, axis, 1, 0),
        "numpy": lambda: np.argmax(x, axis=axis, keepdims=True),
        "read": lambda: read_bound(buf),
    }
    got, want = fns["ours"](), fns["numpy"]()
    # The read bound's first call at a size may compile it or start its threads:
    # ``calls_per_sample`` and the samples take warm functions.
    fns["read"]()
    if got.dtype != np.int64 or not np.array_equal(got, want):
        point.notes.append("ours MISMATCH vs numpy")
        del fns["ours"]
    if flush is None:
        point.calls = {name: calls_per_sample(fn, sample_seconds) for name, fn in fns.items()}
    else:
        point.calls = dict.fromkeys(fns, 1)
    samples = round_robin(fns, repeats, point.calls, rotate=True, before=flush)
    point.times = {"ours": None, "numpy": None, "read": None}
    point.times.update({name: median(s) for name, s in samples.items()})
    return point


def _by_curve(points: list[Point]) -> dict[str, list[Point]]:
    """``points`` grouped by curve and dtype (``Point.label``), in order."""
    groups: dict[str, list[Point]] = {}
    for p in points:
        groups.setdefault(p.label, []).append(p)
    return groups


def _missed(p: Point, goal: Goal) -> bool:
    """Whether ``p``'s ratio is above ``goal`` (a missing ratio misses nothing)."""
    return (p.ratio(goal.key) or 0) > goal.limit


def _worst(points: list[Point]) -> list[tuple[Goal, Point, float]]:
    """For each goal key, the point of ``points`` furthest above (or least below) its
    goal: (goal, point, ratio)."""
    worst: dict[str, tuple[Goal, Point, float]] = {}
    for p in points:
        for g in goals(p.curve, p.nbytes):
            ratio = p.ratio(g.key)
            if ratio is None:
                continue
            best = worst.get(g.key)
            if best is None or ratio / g.limit > best[2] / best[0].limit:
                worst[g.key] = (g, p, ratio)
    return list(worst.values())


def fmt_bytes(nbytes: int) -> str:
    """1 KiB, 512 KiB, 16 MiB."""
    return f"{nbytes // MIB} MiB" if nbytes >= MIB else f"{nbytes // KIB} KiB"


def sweep_checks(points: list[Point]) -> list[tuple[str, bool, str]]:
    """For every curve and goal, the worst point against the goal, as summary checks."""
    checks = []
    for label, curve_points in _by_curve(points).items():
        for goal, p, ratio in _worst(curve_points):
            missed = sum(
                1
                for q in curve_points
                for g in goals(q.curve, q.nbytes)
                if g.key == goal.key and _missed(q, g)
            )
            detail = (
                f"worst {ratio:.2f} at {fmt_bytes(p.nbytes)} {p.shape[0]}x{p.shape[1]} "
                f"against {goal.limit}; {missed} points above their goal"
            )
            floor = p.ratio("read/numpy") if goal.key == "ours/numpy" else None
            if floor is not None and floor > goal.limit:
                detail += f"; there the read bound alone takes {floor:.2f} of numpy"
            checks.append((f"sweep {label}: {goal.key}", ratio <= goal.limit, detail))
    wrong = [f"{p.label} {fmt_bytes(p.nbytes)}" for p in points if p.notes]
    if wrong:
        checks.append(("sweep answers", False, "mismatch at " + ", ".join(wrong)))
    return checks


def sweep_section(
    argmax,
    repeats: int,
    sample_seconds: float,
    quick: bool = False,
    dtypes: list[str] | None = None,
    plot: str | None = None,
):
    """The whole sweep, printed point by point (``dtypes``: a subset of SWEEP_DTYPES;
    ``plot``: a PNG to draw); returns its data and summary checks."""
    from .read import cache_flusher

    caches = cache_sizes()
    last_level = max(caches.values(), default=0)
    names = [d for d in SWEEP_DTYPES if not dtypes or d in dtypes]
    flush, flushed = cache_flusher()
    print(
        f"\n[sweep] ours, numpy and the read bound by total size; inputs as large as the "
        f"last-level cache ({fmt_bytes(last_level)}) or larger timed after reading "
        f"{fmt_bytes(flushed)}"
    )
    print(
        f"  {'curve':<36} {'size':>8} {'shape':>14} {'ours/numpy':>10} {'ours/read':>9} "
        f"{'read/numpy':>10}"
    )
    points = []
    for curve in CURVES:
        for dtype in names:
            for nbytes in sweep_sizes(quick):
                before = flush if last_level and nbytes >= last_level else None
                p = measure_point(curve, dtype, nbytes, argmax, repeats, sample_seconds, before)
                points.append(p)
                marks = " ".join(
                    f"{g.key} goal {g.limit}{' MISSED' if _missed(p, g) else ''}"
                    for g in goals(curve, nbytes)
                )
                shape = f"{p.shape[0]}x{p.shape[1]}"
                numpy_ratio, read_ratio = p.ratio("ours/numpy"), p.ratio("ours/read")
                print(
                    f"  {p.label:<36} {fmt_bytes(nbytes):>8} {shape:>14} "
                    f"{fmt_ratio(numpy_ratio):>10} {fmt_ratio(read_ratio):>9} "
                    f"{fmt_ratio(p.ratio('read/numpy')):>10}  {marks} {' '.join(p.notes)}",
                    flush=True,
                )
    if plot and points:
        write_sweep_plot(plot, points, caches)
        print(f"  sweep plot written to {plot}")
    data = {"caches": caches, "points": [p.as_dict() for p in points]}
    return data, sweep_checks(points)


def write_sweep_plot(path: str, points: list[Point], caches: dict[str, int]) -> None:
    """A PNG of ours/numpy and ours/read against total size (log-log), one line per
    curve, the goals dashed and the cache sizes as vertical lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(15, 6), sharex=True)
    styles = {c.name: s for c, s in zip(CURVES, ("-", "--", ":"), strict=True)}
    colors = dict(zip(SWEEP_DTYPES, ("tab:blue", "tab:orange", "tab:green"), strict=True))
    by_curve = _by_curve(points)
    for ax, key in zip(axes, ("ours/numpy", "ours/read"), strict=True):
        for label, curve_points in by_curve.items():
            xs = [p.nbytes for p in curve_points]
            ys = [p.ratio(key) or math.nan for p in curve_points]
            first = curve_points[0]
            ax.plot(
                xs,
                ys,
                styles[first.curve.name],
                color=colors.get(first.dtype, "black"),
                marker="o",
                markersize=3,
                label=label,
            )
        _draw_goals(ax, key, max(p.nbytes for p in points))
        for name, size in caches.items():
            ax.axvline(size, color="grey", linewidth=0.8)
            ax.text(size, 1.02, name, transform=ax.get_xaxis_transform(), ha="center")
        ax.set_xscale("log", base=2)
        ticks = [size for size in sweep_sizes() if size.bit_length() % 4 == 3]  # 1 KiB, 16 KiB..
        ax.set_xticks(ticks, [fmt_bytes(size) for size in ticks])
        ax.set_yscale("log")
        ax.set_xlabel("total input size")
        ax.set_ylabel(f"{key} (lower is better; dashed: goals)")
        ax.grid(True, which="major", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("argmax_numba.argmax by input size: against numpy and a one-pass read", y=1.0)
    fig.tight_layout()
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def _draw_goals(ax, key: str, largest: int) -> None:
    """The goals of ``key`` as dashed steps (last axis) and lines (other axes)."""
    if key == "ours/read":
        ax.hlines(READ, READ_FROM, largest, colors="black", linestyles="--", linewidth=1)
        return
    edges = [max(SMALLEST, size) for size, _ in LAST_AXIS] + [largest]
    for (_, limit), lo, hi in zip(LAST_AXIS, edges, edges[1:], strict=False):
        ax.hlines(limit, lo, hi, colors="black", linestyles="--", linewidth=1)
    ax.hlines(OTHER_AXES, OTHER_AXES_FROM, largest, colors="black", linestyles=":", linewidth=1)

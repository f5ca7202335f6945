"""Output of the benchmark: the text and markdown tables, the summary, the plot, JSON.

The plain table is printed row by row while the benchmark runs (fixed column widths),
so that a long run shows progress; the markdown table is printed once at the end.
"""

from __future__ import annotations

import json
import math

from .rows import COMPETITORS, PORTABLE_RATIOS, RATIOS, Row

__all__ = [
    "TARGETS",
    "markdown_table",
    "summary_lines",
    "table_header",
    "table_row",
    "write_json",
    "write_plot",
]

# Upper bounds on ours / competitor for the large-input rows; against numpy the bound is
# LAST_AXIS_NUMPY where the reduced axis is the last one (numpy is fast there, one pass).
TARGETS = {"ours/numpy": 0.2, "ours/ort": 0.8, "ours/read": 1.3}
LAST_AXIS_NUMPY = 0.8
# The portable tier's: against numpy on every row (1.0 on the last axis), against the
# read bound on the large rows.
PORTABLE_TARGETS = {"portable/numpy": 0.2, "portable/read": 3.0}
PORTABLE_LAST_AXIS_NUMPY = 1.0


def _limit(row: Row, key: str) -> float:
    """The target of ``row`` for ``key``."""
    last_axis = row.case.axis == len(row.case.shape) - 1
    if key == "ours/numpy" and last_axis:
        return LAST_AXIS_NUMPY
    if key == "portable/numpy" and last_axis:
        return PORTABLE_LAST_AXIS_NUMPY
    return {**TARGETS, **PORTABLE_TARGETS}[key]


_COLUMNS = (
    ("case", 12, "<"),
    ("dtype", 8, "<"),
    ("shape", 14, "<"),
    ("axis", 4, ">"),
    ("last", 4, ">"),
    ("ours ms", 9, ">"),
    ("portable ms", 11, ">"),
    ("argmin ms", 9, ">"),
    ("numpy ms", 9, ">"),
    ("ort ms", 9, ">"),
    ("read ms", 9, ">"),
    ("write ms", 9, ">"),
    ("pass ms", 9, ">"),
    ("ours/numpy", 10, ">"),
    ("ours/ort", 8, ">"),
    ("ours/read", 9, ">"),
    ("ours/(read+write)", 17, ">"),
    ("ours/pass", 9, ">"),
    ("pass/read", 9, ">"),
    ("portable/numpy", 14, ">"),
    ("portable/read", 13, ">"),
    ("portable/ours", 13, ">"),
    ("argmin/ours", 11, ">"),
    ("notes", 0, "<"),
)


def fmt_ms(seconds: float | None) -> str:
    """Milliseconds with three significant digits and no exponent; "n/a" for None."""
    if seconds is None:
        return "n/a"
    ms = seconds * 1e3
    if ms <= 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(ms)))
    return f"{ms:.{digits}f}"


def fmt_ratio(ratio: float | None) -> str:
    """A ratio with two decimals (one above 10); "n/a" for None."""
    if ratio is None:
        return "n/a"
    return f"{ratio:.1f}" if ratio >= 10 else f"{ratio:.2f}"


def _cells(row: Row) -> list[str]:
    c = row.case
    shape = "x".join(map(str, c.shape)) + (" F" if c.order == "F" else "")
    times = [fmt_ms(row.times.get(k)) for k in COMPETITORS]
    ratios = [fmt_ratio(row.ratio(k)) for k in RATIOS] + [fmt_ratio(row.pass_over_read())]
    ratios += [fmt_ratio(row.ratio(k, "portable")) for k in PORTABLE_RATIOS]
    ratios.append(fmt_ratio(row.ratio("ours", "argmin")))
    notes = "; ".join(row.notes)
    return [c.kind, c.dtype, shape, str(c.axis), str(c.last), *times, *ratios, notes]


def _line(cells: list[str]) -> str:
    parts = []
    for text, (_, width, align) in zip(cells, _COLUMNS, strict=True):
        parts.append(f"{text:{align}{width}}" if width else text)
    return " ".join(parts).rstrip()


def table_header() -> str:
    """The plain table's header and rule."""
    head = _line([name for name, _, _ in _COLUMNS])
    return head + "\n" + "-" * len(head)


def table_row(row: Row) -> str:
    """One plain table line."""
    return _line(_cells(row))


def markdown_table(rows: list[Row]) -> str:
    """The whole table in markdown (for the README)."""
    names = [name for name, _, _ in _COLUMNS]
    rule = ["---:" if align == ">" else "---" for _, _, align in _COLUMNS]
    lines = ["| " + " | ".join(names) + " |", "|" + "|".join(rule) + "|"]
    for row in rows:
        cells = [cell.replace("|", "\\|") for cell in _cells(row)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _misses(rows: list[Row], key: str) -> tuple[list[str], int]:
    """Labels (with ratio) of the rows above their target, and how many were compared."""
    missed, compared = [], 0
    for row in rows:
        of, other = key.split("/")
        ratio = row.ratio(other, of)
        if ratio is None:
            continue
        compared += 1
        if ratio > _limit(row, key):
            extra = ""
            if other == "read":  # (ours or the portable tier)
                to_pass, least = row.ratio("pass", of), row.pass_over_read()
                if to_pass is not None and least is not None:
                    extra = f"; {to_pass:.2f} of the pass, which takes {least:.2f} of read"
                    if least > _limit(row, key):
                        extra += ": out of reach"
            elif other == "numpy" and not row.case.small:
                # One pass over the input, on every thread, against numpy's time.
                least = row.ratio("numpy", "read")
                if least is not None:
                    extra = f"; the read bound takes {least:.2f} of numpy"
                    if least > _limit(row, key):
                        extra += ": out of reach"
            missed.append(f"{row.case.label} ({ratio:.2f}{extra})")
    return missed, compared


# ArgMin's time over ArgMax's on the same row beyond which a row is listed: they share
# their kernels, so anything above is noise or a fault to look into.
ARGMIN_LIMIT = 1.1


def _argmin_lines(rows: list[Row]) -> list[str]:
    """ArgMin against ArgMax: the spread of argmin / ours, and the rows above the limit."""
    pairs = [(r.ratio("ours", "argmin"), r) for r in rows]
    pairs = [(v, r) for v, r in pairs if v is not None]
    if not pairs:
        return []
    values = sorted(v for v, _ in pairs)
    median = values[len(values) // 2]
    above = [f"{r.case.label} ({v:.2f})" for v, r in pairs if v > ARGMIN_LIMIT]
    head = (
        f"  argmin/ours (ArgMin's time / ArgMax's): median {median:.2f}, "
        f"{values[0]:.2f}-{values[-1]:.2f} over {len(values)} rows; "
        f"{len(values) - len(above)}/{len(values)} within {ARGMIN_LIMIT}"
    )
    return [head + (", above it:" if above else "")] + [f"    {a}" for a in above]


def summary_lines(rows: list[Row], section_checks: list[tuple[str, bool, str]]) -> list[str]:
    """For each target, the rows (or section measurements) that miss it."""
    if not rows:  # (--sweep alone)
        return ["Summary", *_check_lines(section_checks)]
    large = [r for r in rows if not r.case.small]
    lines = ["Summary (targets on the large-input rows; small rows measure latency only)"]
    for key, limit in TARGETS.items():
        missed, compared = _misses(large, key)
        if not compared:
            lines.append(f"  {key} <= {limit}: no large rows with both times")
            continue
        bound = f"{limit} ({LAST_AXIS_NUMPY} on the last axis)" if key == "ours/numpy" else limit
        head = f"  {key} <= {bound}: {compared - len(missed)}/{compared} rows meet it"
        lines.append(head + (", missed by:" if missed else ""))
        lines += [f"    {m}" for m in missed]
    lines.append("The portable tier (numpy: every row; read: the large rows)")
    for key, limit in PORTABLE_TARGETS.items():
        chosen = rows if key == "portable/numpy" else large
        missed, compared = _misses(chosen, key)
        if not compared:
            continue
        bound = (
            f"{limit} ({PORTABLE_LAST_AXIS_NUMPY} on the last axis)" if "numpy" in key else limit
        )
        head = f"  {key} <= {bound}: {compared - len(missed)}/{compared} rows meet it"
        lines.append(head + (", missed by:" if missed else ""))
        lines += [f"    {m}" for m in missed]
    lines += _argmin_lines(rows)
    small = [r for r in rows if r.case.small and r.ratio("numpy") is not None]
    if small:
        worst = max(small, key=lambda r: r.ratio("numpy"))
        lines.append(
            f"  small inputs: worst ours/numpy {worst.ratio('numpy'):.2f} ({worst.case.label})"
        )
    wrong = [r.case.label for r in rows if any("MISMATCH" in n or "failed" in n for n in r.notes)]
    if wrong:
        lines.append("  rows with wrong results or failures: " + ", ".join(wrong))
    return lines + _check_lines(section_checks)


def _check_lines(section_checks: list[tuple[str, bool, str]]) -> list[str]:
    """One line per section check."""
    return [
        f"  {name}: {'meets' if ok else 'MISSES'} ({detail})" for name, ok, detail in section_checks
    ]


def write_json(path: str, meta: dict, rows: list[Row], sections: dict, summary: list[str]):
    """Every raw number of the run, for later analysis."""
    doc = {
        "meta": meta,
        "rows": [r.as_dict() for r in rows],
        "sections": sections,
        "summary": summary,
    }
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1, default=str)


def _plot_panel(ax, rows: list[Row]) -> None:
    """Grouped bars of the three ratios for ``rows`` on one log-scaled axis."""
    colors = {"ours/numpy": "tab:blue", "ours/ort": "tab:orange", "ours/read": "tab:green"}
    width = 0.27
    for i, (key, color) in enumerate(colors.items()):
        values = [row.ratio(key.split("/")[1]) for row in rows]
        xs = [j + (i - 1) * width for j in range(len(rows))]
        ax.bar(xs, [math.nan if v is None else v for v in values], width, color=color, label=key)
        ax.axhline(TARGETS[key], color=color, linestyle="--", linewidth=1)
        if key == "ours/numpy":
            ax.axhline(LAST_AXIS_NUMPY, color=color, linestyle=":", linewidth=1)
    # Over each ours/read bar, the pass bound's own ratio: the least any ArgMax can reach.
    least = [row.pass_over_read() for row in rows]
    ax.scatter(
        [j + width for j in range(len(rows))],
        [math.nan if v is None else v for v in least],
        marker="_",
        s=60,
        color="black",
        label="pass/read (the least reachable ours/read)",
    )
    ax.set_yscale("log")
    ax.set_ylabel("ours / other (dashed: targets)")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r.case.label for r in rows], rotation=90, fontsize=7)
    ax.set_xlim(-0.6, PLOT_ROWS_PER_PANEL - 0.4)


PLOT_ROWS_PER_PANEL = 40


def write_plot(path: str, rows: list[Row]) -> None:
    """A PNG bar chart of the three ratios per row (log scale) with the target lines,
    and the pass bound's ratio to the read bound as a mark over each ours/read bar.

    Rows are spread over stacked panels of at most ``PLOT_ROWS_PER_PANEL`` so that the
    labels stay readable.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    chunks = [rows[i : i + PLOT_ROWS_PER_PANEL] for i in range(0, len(rows), PLOT_ROWS_PER_PANEL)]
    fig, axes = plt.subplots(len(chunks), 1, figsize=(15, 5.5 * len(chunks)), squeeze=False)
    for ax, chunk in zip(axes[:, 0], chunks, strict=True):
        _plot_panel(ax, chunk)
    axes[0, 0].legend(loc="upper left")
    axes[0, 0].set_title("argmax_numba.argmax vs numpy, onnxruntime and a one-pass read")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)

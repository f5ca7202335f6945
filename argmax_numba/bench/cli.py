"""Benchmark of ``argmax_numba.argmax``: ``python -m argmax_numba.bench [options]``.

Every row times, interleaved round-robin over the repeats so that machine noise hits
all alike (numpy and onnxruntime first in each repeat, then the others, each first in
turn: what runs before a call can slow it), and reports the medians of: ours
(``argmax_numba.argmax``), ``numpy.argmax`` on the same axis with ``keepdims=True``,
onnxruntime's ArgMax-13 on its CPU provider (one intra-op thread per core, spinning
off), a read bound (one parallel pass over the same bytes), a write bound (filling a
new int64 array of the output's size) and a pass bound (both in one pass, as an ArgMax
must), with the ratios of ours to each of the first three, to read plus write and to
the pass, and of the pass to the read bound: where that is above the target, no
implementation can meet it. Each row also times the portable tier and our ArgMin
(``argmax_numba.argmin``) on the same input, as ratios to ours. Then optional sections:
calls from ``@njit`` code, peak memory, start-up time, the first call of users'
``@njit`` functions that call ``argmax`` (``callers``), dask, and the cost curve
(``sweep``: ours, numpy and the read bound from 1 KiB to 256 MiB). A summary lists what
misses its target. ``--quick`` is a short run on smaller inputs, without the sweep;
``--sweep`` runs the sweep alone; ``--help`` lists the rest.

Only ``python -m argmax_numba.bench`` imports this module; ``import argmax_numba``
does not, so the benchmark's helpers, onnxruntime and matplotlib stay unloaded.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import sys
from dataclasses import dataclass

from .subproc import STARTUP_LAYOUTS

__all__ = ["main"]

MIB = 1 << 20
# Optional sections, in the order they run; the sweep has an option of its own.
SECTIONS = ("njit", "memory", "startup", "callers", "dask", "sweep")


@dataclass(frozen=True)
class Settings:
    """Sizes and repeat counts of one run (full by default, smaller with --quick)."""

    large_bytes: int
    repeats: int
    small_repeats: int
    sample_seconds: float
    memory_bytes: int
    cold_runs: int
    warm_runs: int
    startup_layouts: int
    caller_runs: int

    @classmethod
    def from_args(cls, args) -> Settings:
        size = args.size_mib if args.size_mib is not None else (16 if args.quick else 64)
        repeats = args.repeats or (3 if args.quick else 5)
        return cls(
            large_bytes=max(1, int(size * MIB)),
            repeats=repeats,
            small_repeats=repeats + 2,
            sample_seconds=0.005 if args.quick else 0.02,
            memory_bytes=max(MIB, int(16 * size * MIB)),
            cold_runs=1 if args.quick else 2,
            warm_runs=1 if args.quick else 5,
            startup_layouts=1 if args.quick else len(STARTUP_LAYOUTS),
            caller_runs=1 if args.quick else 3,
        )

    @property
    def dask_shape(self) -> tuple[int, int]:
        """(n, chunk): n x n float32 of 4x the large size (8192 and 1024 at 64 MiB)."""
        n = max(64, 1 << round(math.log2(math.sqrt(self.large_bytes))))
        return n, n // 8


def _csv(text: str | None) -> list[str] | None:
    return [t.strip() for t in text.split(",") if t.strip()] if text else None


def parse_args(argv=None) -> argparse.Namespace:
    """The command line (see ``--help``)."""
    from .cases import DTYPES, KINDS

    p = argparse.ArgumentParser(
        prog="python -m argmax_numba.bench",
        description="Time argmax_numba.argmax against numpy, onnxruntime and a read bound.",
    )
    p.add_argument("--quick", action="store_true", help="smaller inputs, fewer repeats")
    p.add_argument("--size-mib", type=float, help="bytes of each large input (64; quick: 16)")
    p.add_argument("--repeats", type=int, help="timing samples per row (5; quick: 3)")
    p.add_argument("--dtype", help=f"comma-separated subset of: {','.join(DTYPES)}")
    p.add_argument("--case", help=f"comma-separated (parts of) case names: {','.join(KINDS)}")
    p.add_argument("--plot", metavar="PNG", help="write a bar chart of the ratios")
    p.add_argument("--markdown", action="store_true", help="also print a markdown table")
    p.add_argument("--json", metavar="FILE", help="write every raw number as JSON")
    p.add_argument(
        "--sweep",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run only the cost-curve sweep, 1 KiB to 256 MiB (16 MiB quick); the full run "
        "ends with it, --no-sweep leaves it out",
    )
    p.add_argument("--sweep-plot", metavar="PNG", help="write the sweep's plot")
    for name in (s for s in SECTIONS if s != "sweep"):
        p.add_argument(
            f"--{name}",
            action=argparse.BooleanOptionalAction,
            default=True,
            help=f"run the {name} section (default: yes)",
        )
    args = p.parse_args(argv)
    args.dtypes, args.kinds = _csv(args.dtype), _csv(args.case)
    args.sweep_only = args.sweep is True
    if args.sweep is None:
        args.sweep = not args.quick
    bad = [d for d in args.dtypes or () if d not in DTYPES]
    bad += [k for k in args.kinds or () if not any(k in kind for kind in KINDS)]
    if bad:
        p.error(f"unknown dtype or case: {', '.join(bad)}")
    return args


def _our_argmax():
    """``argmax_numba.argmax``, or None (rows then say so) where it cannot be imported."""
    try:
        from argmax_numba import argmax
    except ImportError as exc:
        print(f"argmax_numba.argmax is not importable: {exc}", file=sys.stderr)
        return None
    return argmax


def _our_argmin():
    """``argmax_numba.argmin``, or None (its column then stays empty)."""
    try:
        from argmax_numba import argmin
    except ImportError:
        return None
    return argmin


def _cpu() -> str:
    """The CPU as LLVM names it, and its widest vectors: results differ most by these
    (the kernels' 64-byte vectors are one register with AVX-512, two with AVX2)."""
    from ..runtime.target import host_cpu

    name, features = host_cpu()
    widest = next((f for f in ("avx512f", "avx2") if f in features), "no avx2")
    return f"{name} ({widest})"


def _meta(settings: Settings) -> dict:
    """Versions and machine facts printed above the table and stored in the JSON."""
    import ml_dtypes
    import numba
    import numpy as np

    from .ort import ort_version

    return {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cpus",
        "cpu": _cpu(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "numba_threads": numba.get_num_threads(),
        "threading_layer": numba.threading_layer(),
        "onnxruntime": ort_version(),
        "ml_dtypes": ml_dtypes.__version__,
        "large_input_mib": settings.large_bytes / MIB,
        "repeats": settings.repeats,
    }


def run_table(args, settings: Settings, argmax) -> tuple[list, int]:
    """Measure and print every selected case, holding one input array at a time; returns
    the rows and the bytes read to flush the caches before each sample (0: no flush)."""
    from .cases import build_cases, group_by_input, make_input
    from .read import FLUSH_FROM_BYTES, cache_flusher
    from .report import table_header, table_row
    from .rows import measure

    cases = build_cases(settings.large_bytes, args.dtypes, args.kinds)
    flush, size = None, 0
    if any(c.nbytes >= FLUSH_FROM_BYTES for c in cases):
        flush, size = cache_flusher()
        least = f"{FLUSH_FROM_BYTES / MIB:g} MiB"
        print(f"before each sample of an input of {least} or more: {size / MIB:.0f} MiB read")
    print(table_header(), flush=True)
    argmin = _our_argmin()
    rows = []
    for _, group in group_by_input(cases):
        x = make_input(group[0])
        for case in group:
            repeats = settings.small_repeats if case.small else settings.repeats
            before = flush if case.nbytes >= FLUSH_FROM_BYTES else None
            rows.append(measure(case, x, argmax, repeats, settings.sample_seconds, before, argmin))
            print(table_row(rows[-1]), flush=True)
        del x
    return rows, size


def run_sections(args, settings: Settings, argmax) -> tuple[dict, list]:
    """The optional sections that are switched on (only the sweep with ``--sweep``);
    their data and target checks."""
    from .callers import callers_section
    from .sections import dask_section, njit_section
    from .subproc import memory_section, startup_section
    from .sweep import sweep_section

    data, checks = {}, []
    runs = {
        "njit": lambda: njit_section(argmax, settings.large_bytes, settings.repeats),
        "memory": lambda: memory_section(settings.memory_bytes),
        "startup": lambda: startup_section(
            settings.cold_runs, settings.warm_runs, settings.startup_layouts
        ),
        "callers": lambda: callers_section(settings.caller_runs),
        "dask": lambda: dask_section(*settings.dask_shape, settings.repeats),
        "sweep": lambda: sweep_section(
            argmax,
            settings.small_repeats,
            settings.sample_seconds,
            args.quick,
            args.dtypes,
            args.sweep_plot,
        ),
    }
    for name in SECTIONS:
        if not getattr(args, name) or (args.sweep_only and name != "sweep"):
            continue
        if argmax is None and name != "dask":
            print(f"\n[{name}] skipped: argmax_numba.argmax is not importable")
            continue
        data[name], section_checks = runs[name]()
        checks += section_checks
        sys.stdout.flush()
    return data, checks


def main(argv=None) -> int:
    """Run the benchmark; returns the process exit status (0 unless it could not run)."""
    args = parse_args(argv)
    settings = Settings.from_args(args)
    argmax = _our_argmax()  # first: the package chooses numba's threading layer on import
    meta = _meta(settings)
    print("argmax_numba benchmark: " + ", ".join(f"{k} {v}" for k, v in meta.items()))
    print(
        "times are medians per call; ratios are ours / other (lower is better); read: one "
        "pass over the input's bytes; write: filling a new int64 array of the output's size; "
        "pass: both in one pass\n"
    )
    rows, flushed = run_table(args, settings, argmax) if not args.sweep_only else ([], 0)
    meta["cache_flush_mib"] = flushed / MIB
    sections, checks = run_sections(args, settings, argmax)

    from .report import markdown_table, summary_lines, write_json, write_plot

    if args.markdown:
        print("\n" + markdown_table(rows))
    summary = summary_lines(rows, checks)
    print("\n" + "\n".join(summary))
    if args.plot and rows:
        write_plot(args.plot, rows)
        print(f"plot written to {args.plot}")
    if args.json:
        write_json(args.json, meta, rows, sections, summary)
        print(f"raw numbers written to {args.json}")
    return 0

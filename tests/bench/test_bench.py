"""Smoke tests of ``python -m argmax_numba.bench``: it runs and produces sane rows.

These check the harness, not the speed: no timing is asserted.
"""

from __future__ import annotations

import contextlib
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from llvmlite.binding import get_host_cpu_name

import argmax_numba
from argmax_numba import bench
from argmax_numba.bench import sweep
from argmax_numba.bench.cases import Case
from argmax_numba.bench.read import (
    cache_flusher,
    cache_sizes,
    flat_unsigned,
    largest_cache_bytes,
    pass_bound,
    read_bound,
    write_bound,
)
from argmax_numba.bench.report import summary_lines
from argmax_numba.bench.rows import Row
from argmax_numba.bench.timing import InState, round_robin

TINY = ["--quick", "--size-mib", "0.0625", "--repeats", "2"]


def _run(tmp_path, *extra):
    out = tmp_path / "bench.json"
    status = bench.main([*TINY, "--json", str(out), *extra])
    assert status == 0
    return json.loads(out.read_text())


def _finite(value) -> bool:
    return value is not None and math.isfinite(value) and value > 0


@pytest.mark.slow
def test_quick_table_has_finite_ratios(tmp_path, capsys):
    doc = _run(
        tmp_path,
        "--dtype",
        "float32,int16",
        "--no-njit",
        "--no-memory",
        "--no-startup",
        "--no-callers",
        "--no-dask",
        "--markdown",
    )
    rows = doc["rows"]
    assert doc["meta"]["cache_flush_mib"] == 0  # inputs under 1 MiB: timed in cache
    # The CPU and its widest vectors (which the ratios depend on), as LLVM reads them.
    cpu = doc["meta"]["cpu"]
    assert cpu.startswith(get_host_cpu_name() + " (")
    assert cpu.endswith(("(avx512f)", "(avx2)", "(no avx2)"))
    kinds = {r["case"] for r in rows}
    assert {"axis-first", "axis-mid", "axis-last", "long-row", "tall-narrow"} <= kinds
    assert {"short-rows", "few-columns", "tiny-blocks", "uneven", "matrix"} <= kinds
    assert {"fortran", "small-10x10", "small-1000"} <= kinds
    assert {r["select_last_index"] for r in rows} == {0, 1}
    for r in rows:
        assert _finite(r["ratios"]["ours/numpy"]), r
        assert _finite(r["ratios"]["ours/read"]), r
        times = r["seconds_per_call"]
        both = times["read"] + times["write"]
        assert r["ratios"]["ours/read+write"] == pytest.approx(times["ours"] / both)
        assert r["ratios"]["ours/pass"] == pytest.approx(times["ours"] / times["pass"])
        assert r["ratios"]["pass/read"] == pytest.approx(times["pass"] / times["read"])
        assert not any("MISMATCH" in n or "failed" in n for n in r["notes"]), r
        ort = r["ratios"]["ours/ort"]
        assert _finite(ort) or any("ort" in n for n in r["notes"]), r
    # onnxruntime has no int16 ArgMax: those rows must say n/a, not fail.
    assert all(r["ratios"]["ours/ort"] is None for r in rows if r["dtype"] == "int16")
    text = capsys.readouterr().out
    assert "ours/numpy" in text and "| case | dtype |" in text and "Summary" in text


@pytest.mark.slow
def test_filters_and_njit_section(tmp_path):
    doc = _run(
        tmp_path,
        "--dtype",
        "bfloat16",
        "--case",
        "axis-mid",
        "--no-memory",
        "--no-startup",
        "--no-callers",
        "--no-dask",
    )
    assert [(r["dtype"], r["case"]) for r in doc["rows"]] == [("bfloat16", "axis-mid")] * 2
    njit = doc["sections"]["njit"]
    assert njit["axis0"]["same_result"] and njit["rows_of_4"]["same_result"]
    assert set(njit["rows_of_4"]["faults"]) == {"python", "njit"}


def test_a_miss_names_its_bound_and_whether_it_is_out_of_reach():
    # A miss of ours/read or portable/read names the time over the pass bound (one read
    # and the output's write) and the pass's over the read bound: above the target, no
    # ArgMax could meet it on that row. Likewise the read bound's time against numpy's.
    times = {"ours": 4.0, "portable": 12.0, "numpy": 50.0, "read": 2.0, "pass": 8.0}
    wide = Row(Case("tall-narrow", "int8", (1 << 24, 4), 1, 0), times=times)
    short = Row(Case("short-rows", "float32", (1 << 20, 10), 1, 0), times={**times, "pass": 2.4})
    lines = [line.strip() for line in summary_lines([wide, short], [])]
    reach = "which takes 4.00 of read: out of reach"
    assert f"tall-narrow/int8/ax1/L0 (2.00; 0.50 of the pass, {reach})" in lines
    assert f"tall-narrow/int8/ax1/L0 (6.00; 1.50 of the pass, {reach})" in lines
    assert "short-rows/float32/ax1/L0 (2.00; 1.67 of the pass, which takes 1.20 of read)" in lines
    assert "short-rows/float32/ax1/L0 (6.00; 5.00 of the pass, which takes 1.20 of read)" in lines

    # And a miss against numpy names the read bound's time over numpy's.
    times = {"ours": 0.9, "portable": 1.2, "numpy": 1.0, "read": 0.85, "pass": 0.9}
    matrix = Row(Case("matrix", "float64", (2048, 4096), 1, 0), times=times)
    first = Row(Case("axis-first", "int8", (256, 256, 1024), 0, 0), times=times)
    lines = [line.strip() for line in summary_lines([matrix, first], [])]
    assert "matrix/float64/ax1/L0 (0.90; the read bound takes 0.85 of numpy: out of reach)" in lines
    assert (
        "axis-first/int8/ax0/L0 (0.90; the read bound takes 0.85 of numpy: out of reach)" in lines
    )
    assert "matrix/float64/ax1/L0 (1.20; the read bound takes 0.85 of numpy)" in lines


@pytest.mark.parametrize("rotate", [False, True])
def test_round_robin_order(rotate):
    order = []
    fns = {name: (lambda name=name: order.append(name)) for name in "abc"}
    samples = round_robin(fns, 4, rotate=rotate)
    assert {name: len(v) for name, v in samples.items()} == {"a": 4, "b": 4, "c": 4}
    firsts = [order[i] for i in range(0, 12, 3)]
    assert firsts == (["a", "b", "c", "a"] if rotate else ["a"] * 4)
    assert all(sorted(order[i : i + 3]) == ["a", "b", "c"] for i in range(0, 12, 3))


@pytest.mark.slow
def test_inputs_of_a_mib_or_more_are_timed_after_a_flush(tmp_path, capsys):
    path = tmp_path / "bench.json"
    out = bench.main(
        [*TINY[:1], "--size-mib", "1", "--repeats", "2", "--dtype", "float32"]
        + ["--case", "axis-last", "--no-njit", "--no-memory", "--no-startup", "--no-callers"]
        + ["--no-dask"]
        + ["--json", str(path)]
    )
    text = capsys.readouterr().out
    assert out == 0
    assert "before each sample of an input of 1 MiB or more:" in text
    assert "MISMATCH" not in text and "failed" not in text
    assert json.loads(path.read_text())["meta"]["cache_flush_mib"] >= 1


def test_round_robin_leads_then_rotates_the_rest():
    order = []
    fns = {name: (lambda name=name: order.append(name)) for name in "abcd"}
    round_robin(fns, 3, rotate=True, lead=("c", "x", "a"))
    repeats = ["".join(order[i : i + 4]) for i in range(0, 12, 4)]
    assert repeats == ["cabd", "cadb", "cabd"]


def test_round_robin_calls_before_ahead_of_every_sample():
    order = []
    fns = {name: (lambda name=name: order.append(name)) for name in "ab"}
    round_robin(fns, 2, before=lambda: order.append("-"))
    assert "".join(order) == "-a-b-a-b"


def test_a_competitor_in_a_state_enters_it_once_a_sample():
    # The portable tier's calls run with the tier switched: around each sample of many
    # calls, not around each call (which would add the switch to a small call's time);
    # a warm-up call on its own still runs in the state.
    order = []

    @contextlib.contextmanager
    def state():
        order.append("(")
        yield
        order.append(")")

    fns = {"s": InState(lambda: order.append("s"), state), "p": lambda: order.append("p")}
    round_robin(fns, 2, calls={"s": 3, "p": 2})
    assert "".join(order) == "(sss)pp(sss)pp"
    order.clear()
    fns["s"]()
    assert "".join(order) == "(s)"


def test_largest_cache_from_sysfs(tmp_path):
    for index, size in enumerate(["48K", "2048K", "307200K", "7M"]):
        (tmp_path / f"index{index}").mkdir()
        (tmp_path / f"index{index}" / "size").write_text(size + "\n")
    assert largest_cache_bytes(str(tmp_path)) == 307200 << 10
    assert largest_cache_bytes(str(tmp_path / "none")) == 0


def test_cache_flusher_reads_its_own_buffer():
    flush, size = cache_flusher(1 << 20)
    assert size == 1 << 20 and flush() == 1


def test_plot_is_written(tmp_path):
    png = tmp_path / "bench.png"
    _run(
        tmp_path,
        "--dtype",
        "uint8",
        "--case",
        "small-1000",
        "--plot",
        str(png),
        "--no-njit",
        "--no-memory",
        "--no-startup",
        "--no-callers",
        "--no-dask",
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_subprocess_sections(tmp_path):
    doc = _run(tmp_path, "--case", "small-1000", "--dtype", "float32", "--no-njit", "--no-callers")
    memory = doc["sections"]["memory"]
    assert set(memory) == {"C0", "C1", "C2", "F0", "F1", "F2"}
    assert all(m["extra"] >= 0 and m["out"] > 0 for m in memory.values())
    startup = doc["sections"]["startup"]
    assert startup["cold"] and startup["warm"] and startup["python_import_numba"] > 0
    assert startup["numba_floor"] > 0
    # The floor runs in turn with the warm runs, one each: their pairs' median difference.
    pairs = [w["import"] + w["first"] for w in startup["warm"]]
    assert len(pairs) == 1
    assert startup["warm_above_floor"] == pytest.approx(pairs[0] - startup["numba_floor"])


def test_startup_counts_the_median_of_each_layouts_warm_runs(monkeypatch):
    # The worst layout decides the warm-start target, so a layout's one slow run must not;
    # the layouts' warm runs take turns, so that a slow spell falls on several of them.
    from argmax_numba.bench import subproc as sub

    main, second, third = sub.STARTUP_LAYOUTS[:3]
    firsts = {  # each layout's first calls, in the order of its runs: cold, then warm
        main: iter([0.9, 0.05]),
        second: iter([1.0, 0.31, 0.05, 0.07]),
        third: iter([1.1, 0.04, 0.06, 0.30]),
    }
    order = []

    def startup_one(cache_dir, layout=main):
        order.append(layout)
        return {"import": 0.3, "first": next(firsts[layout]), "from_start": 1.0}

    monkeypatch.setattr(sub, "WARM_LAYOUT_RUNS", 3)
    monkeypatch.setattr(sub, "_startup_one", startup_one)
    monkeypatch.setattr(sub, "_numba_floor", lambda: contextlib.nullcontext(lambda: 0.4))
    monkeypatch.setattr(sub, "_wall", lambda args, env=None: 0.2)
    monkeypatch.setattr(sub.compileall, "compile_dir", lambda *a, **k: True)
    data, checks = sub.startup_section(cold_runs=1, warm_runs=1, layouts=3)
    assert order == [main, main, second, third, *[second, third] * 3]
    two, three = sub._layout_name(second), sub._layout_name(third)
    assert data["cold_layouts"] == {two: 1.0, three: 1.1}
    assert data["warm_layouts"] == {two: pytest.approx(0.37), three: pytest.approx(0.36)}
    warm_check = [ok for label, ok, _ in checks if label.startswith("warm")]
    # The medians of the mocked warm runs pass, where their slow single runs would not
    # (docs/performance.md, WARM_LAYOUT_RUNS).
    assert warm_check == [True]


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, np.uint64])
@pytest.mark.parametrize("size", [5, 1 << 18])
def test_read_bound_is_max_of_unsigned_bytes(dtype, size):
    x = np.random.default_rng(1).integers(0, 100, size=size).astype(dtype)
    x = np.asfortranarray(x.reshape(-1, 1) if size % 2 else x.reshape(2, -1))
    buf = flat_unsigned(x)
    assert buf.nbytes == x.nbytes and np.shares_memory(buf, x)
    assert read_bound(buf) == buf.max()


@pytest.mark.parametrize("size", [5, 1 << 18])
def test_write_bound_writes_a_new_output(size):
    a, b = write_bound(size), write_bound(size)
    assert a.dtype == np.int64 and a.shape == (size,) and not np.shares_memory(a, b)
    np.testing.assert_array_equal(a, np.ones(size, np.int64))


@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.uint64])
@pytest.mark.parametrize(("size", "nout"), [(5, 5), (1 << 18, 1), (1 << 18, 3), (1 << 20, 4096)])
def test_pass_bound_reads_everything_and_writes_a_new_output(dtype, size, nout):
    x = np.random.default_rng(2).integers(0, 100, size=size).astype(dtype)
    buf = flat_unsigned(x)
    # The maximum, with the top bit set (as a negative float's), in the first thread's part.
    expected = np.iinfo(buf.dtype).max
    buf[size // 3] = expected
    top, a = pass_bound(buf, nout)
    _, b = pass_bound(buf, nout)
    assert top == expected
    assert a.dtype == np.int64 and a.shape == (nout,) and not np.shares_memory(a, b)
    # Every element written, with a maximum of a stretch of the input as its bits: none of
    # np.empty's leftovers; the first thread's part (which holds the maximum) always has
    # an output.
    bits = a.view(np.uint64)
    assert np.isin(bits, buf.astype(np.uint64)).all()
    assert bits.max() == expected


def test_import_does_not_load_the_benchmark():
    code = (
        "import sys, argmax_numba; "
        "print(sorted(m for m in ('onnxruntime', 'matplotlib', 'argmax_numba.bench') "
        "if m in sys.modules))"
    )
    root = Path(bench.__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert out.stdout.strip() == "[]"


def test_callers_section_takes_the_medians_of_each_state(monkeypatch):
    # Each caller's first call in each state of the cache, in turn; the section checks
    # the medians against the targets (the children's times scripted here).
    from argmax_numba.bench import callers

    # Per caller, its first calls in order: empty cache, kernels cached, filling its own
    # cache, loaded from it; the second round's all 0.01 s longer.
    times = {"ours": [4.0, 1.1, 0.9, 0.7], "numpy": [8.0, 8.1, 0.9, 0.68], "bare": [0.7] * 4}
    calls: list[str] = []

    def first_call(folder, module, cache_dir):
        name = module.split("_")[1]
        calls.append(name)
        return times[name][calls.count(name) - 1 & 3] + 0.01 * (len(calls) > 12)

    monkeypatch.setattr(callers, "_first_call", first_call)
    data, checks = callers.callers_section(runs=2)
    assert calls[:4] == ["ours"] * 4 and len(calls) == 2 * 3 * 4
    med = data["medians"]
    assert med["empty"]["ours"] == pytest.approx(4.005)
    assert med["kernels"]["bare"] == pytest.approx(0.705)
    passed = {name.split(":")[0].split(", ")[1]: ok for name, ok, _ in checks}
    # 4.005 / 8.005 <= 1.0; 1.105 - 0.705 <= 0.5 s; but 0.705 s > 0.2 s.
    assert passed == {"empty cache": True, "kernels cached": True, "cache=True": False}


@pytest.mark.slow
def test_a_callers_child_runs_and_checks_its_answer(tmp_path):
    # The child compiles and calls the caller in a fresh process, loads it from the disk
    # cache in the next, and refuses a caller whose answer is not numpy's.
    from argmax_numba.bench import callers

    callers.write_callers(
        str(tmp_path), {"ours": callers.CALLERS["ours"], "bad": "np.argmin(s, axis)"}
    )
    cache = str(tmp_path / "cache")
    for _ in range(2):
        assert callers._first_call(str(tmp_path), "caller_ours_1", cache) > 0
    with pytest.raises(RuntimeError, match="wrong answer"):
        callers._first_call(str(tmp_path), "caller_bad_1", cache)


def test_sweep_shapes_sizes_and_goals():
    last, long_rows, first = sweep.CURVES
    assert sweep.sweep_sizes()[0] == 1 << 10 and sweep.sweep_sizes()[-1] == 256 << 20
    assert len(sweep.sweep_sizes()) == 19 and len(sweep.sweep_sizes(quick=True)) == 8
    assert last.shape(1 << 10, 4) == (1, 256)  # fewer elements than a row: one row
    assert last.shape(1 << 20, 4) == (262, 1000)
    assert long_rows.shape(256 << 20, 1) == (8388, 32000)
    assert first.shape(1 << 20, 4) == (512, 512)
    for curve in sweep.CURVES:
        for nbytes in sweep.sweep_sizes():
            rows, cols = curve.shape(nbytes, 2)
            assert 0.9 * nbytes <= rows * cols * 2 <= nbytes

    def limits(curve, nbytes):
        return {g.key: g.limit for g in sweep.goals(curve, nbytes)}

    assert limits(last, 256 << 10) == {"ours/numpy": 1.0}
    assert limits(last, 512 << 10) == {"ours/numpy": 0.8}
    assert limits(last, 8 << 20) == {"ours/numpy": 0.6}
    assert limits(last, 32 << 20) == {"ours/numpy": 0.6, "ours/read": 1.3}
    assert limits(first, 32 << 10) == {}
    assert limits(first, 64 << 10) == {"ours/numpy": 0.2}


def test_sweep_checks_name_each_curves_worst_point():
    last, _, first = sweep.CURVES

    def point(curve, nbytes, ours, numpy=1.0):
        p = sweep.Point(curve, "float32", nbytes, (1, 1), False)
        p.times = {"ours": ours, "numpy": numpy, "read": 1.0}
        return p

    points = [
        point(last, 1 << 10, 0.9),
        point(last, 1 << 20, 0.85),  # 0.85 against 0.8: the worst, above its goal
        point(last, 16 << 20, 0.5),
        point(first, 1 << 10, 5.0),  # no goal below 64 KiB
        point(first, 1 << 20, 0.1),
    ]
    checks = {name: (ok, detail) for name, ok, detail in sweep.sweep_checks(points)}
    ok, detail = checks["sweep last axis, rows of 1000, float32: ours/numpy"]
    assert not ok and detail.startswith("worst 0.85 at 1 MiB") and "1 points above" in detail
    ok, detail = checks["sweep first axis, square, float32: ours/numpy"]
    assert ok and detail.startswith("worst 0.10 at 1 MiB")
    assert len(checks) == 2


def test_sweep_point_checks_ours_against_numpy():
    curve = sweep.CURVES[0]
    good = sweep.measure_point(curve, "int8", 1 << 12, argmax_numba.argmax, 2, 0.001)
    assert good.notes == [] and good.shape == (4, 1000)
    assert all(_finite(good.ratio(key)) for key in ("ours/numpy", "ours/read"))
    assert good.calls["ours"] > 1 and not good.flushed

    def wrong(x, axis, keepdims, last):
        return np.zeros_like(argmax_numba.argmax(x, axis, keepdims, last))

    flushes = []
    bad = sweep.measure_point(curve, "int8", 1 << 12, wrong, 2, 0.001, lambda: flushes.append(1))
    assert bad.notes == ["ours MISMATCH vs numpy"] and bad.times["ours"] is None
    assert bad.flushed and bad.calls == {"numpy": 1, "read": 1} and len(flushes) == 4


def test_sweep_point_sizes_its_samples_with_warm_functions(monkeypatch):
    # Every competitor has run once before its calls per sample are counted, so that a
    # first call's compile or thread start does not make a sample of one call.
    reads, warm_at_count = [], []
    monkeypatch.setattr(sweep, "read_bound", lambda buf: reads.append(1))

    def counted(fn, sample_seconds):
        warm_at_count.append(len(reads))
        return 1

    monkeypatch.setattr(sweep, "calls_per_sample", counted)
    sweep.measure_point(sweep.CURVES[0], "int8", 1 << 12, argmax_numba.argmax, 1, 0.001)
    assert warm_at_count == [1, 1, 1]


def test_sweep_alone_writes_its_points_and_plot(tmp_path, monkeypatch, capsys):
    # Two sizes, and a last-level cache of 2 KiB: the 4 KiB points are timed after a flush.
    monkeypatch.setattr(sweep, "QUICK_LARGEST", 4 << 10)
    monkeypatch.setattr(sweep, "cache_sizes", lambda: {"L1d": 1 << 10, "L3": 2 << 10})
    png = tmp_path / "sweep.png"
    doc = _run(tmp_path, "--sweep", "--dtype", "float16", "--sweep-plot", str(png))
    assert doc["rows"] == [] and set(doc["sections"]) == {"sweep"}
    points = doc["sections"]["sweep"]["points"]
    assert [(p["curve"], p["bytes"]) for p in points] == [
        (curve.name, size) for curve in sweep.CURVES for size in (1 << 10, 4 << 10)
    ]
    assert all(p["flushed"] == (p["bytes"] > 2 << 10) for p in points)
    assert all(p["dtype"] == "float16" and not p["notes"] for p in points)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = capsys.readouterr().out
    assert "[sweep]" in text and "sweep first axis, square, float16: ours/numpy" not in text
    assert "sweep last axis, rows of 1000, float16: ours/numpy" in text


def test_cache_sizes_from_sysfs(tmp_path):
    caches = [("1", "Data", "48K"), ("1", "Instruction", "32K"), ("2", "Unified", "2048K")]
    for index, (level, kind, size) in enumerate([*caches, ("3", "Unified", "96M")]):
        folder = tmp_path / f"index{index}"
        folder.mkdir()
        for name, text in (("level", level), ("type", kind), ("size", size)):
            (folder / name).write_text(text + "\n")
    assert cache_sizes(str(tmp_path)) == {"L1d": 48 << 10, "L2": 2 << 20, "L3": 96 << 20}
    assert cache_sizes(str(tmp_path / "none")) == {}

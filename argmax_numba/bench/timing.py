"""Interleaved timing of several competitors.

Every repeat times each competitor once, in turn (round-robin), so that slow phases of
a shared machine hit all of them alike; the reported time is the median over repeats.
A competitor whose single call is short is called many times per sample and the
sample is divided by the count: that measures per-call latency, not timer overhead.
The garbage collector is off while a sample runs. A competitor that needs a state of
the process to run in (``InState``: the portable tier, in the process that times the
fast one) has it set up around each sample, untimed, not around each call.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

__all__ = ["InState", "calls_per_sample", "median", "round_robin"]


@dataclass(frozen=True)
class InState:
    """A competitor whose calls run in a state of the process that ``state()`` enters
    and leaves. Called as it is (a warm-up, a check), it enters the state for that one
    call; timed, once around each sample's calls."""

    call: Callable[[], object]
    state: Callable[[], AbstractContextManager]

    def __call__(self) -> object:
        with self.state():
            return self.call()


def _sample(fn: Callable[[], object], calls: int) -> float:
    """Seconds per call over ``calls`` back-to-back calls (in ``fn``'s state, if it is
    an ``InState``)."""
    if isinstance(fn, InState):
        with fn.state():
            return _sample(fn.call, calls)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def calls_per_sample(fn: Callable[[], object], sample_seconds: float) -> int:
    """How many calls of the (already warm) ``fn`` fill about ``sample_seconds``."""
    calls = 1
    while True:
        elapsed = _sample(fn, calls) * calls
        if elapsed >= sample_seconds / 4 or calls >= 1 << 20:
            break
        calls *= 8
    per_call = max(elapsed / calls, 1e-9)
    return max(1, min(1 << 22, round(sample_seconds / per_call)))


def round_robin(
    fns: dict[str, Callable[[], object]],
    repeats: int,
    calls: dict[str, int] | None = None,
    rotate: bool = False,
    lead: tuple[str, ...] = (),
    before: Callable[[], object] | None = None,
) -> dict[str, list[float]]:
    """Per-call seconds of every competitor, ``repeats`` interleaved samples each.

    ``rotate``: each repeat starts with the next competitor, so that none always runs
    first, right after the previous repeat's last (which may leave it memory to reuse).
    ``lead``: competitors that run first in every repeat, in that order, before the
    others (which ``rotate`` rotates among themselves). ``before``: called, untimed,
    before every sample (such as a flush of the caches).
    """
    calls = calls or {}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    first = [name for name in lead if name in fns]
    names = [name for name in fns if name not in first]
    enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(repeats):
            k = r % len(names) if rotate and names else 0
            for name in first + names[k:] + names[:k]:
                if before is not None:
                    before()
                samples[name].append(_sample(fns[name], calls.get(name, 1)))
    finally:
        if enabled:
            gc.enable()
    return samples


def median(values: list[float]) -> float:
    """The median (the statistic the tables report)."""
    return statistics.median(values)

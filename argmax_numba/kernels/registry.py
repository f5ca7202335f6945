"""The kernels' registry: for each ``planning.Kernel``, its driver and its task, compiled
on first use per key kind, dtype and ``last``.

A kernel is a *driver* and a *task*. The task is the work on one part of the input
(``rows`` and ``columns`` hold their bodies). The driver splits the input into tasks and
runs them, serially or split between numba's threads (``runtime.parallel``), and merges
per-task candidates where a task searched only part of a row. One driver serves every
kernel that runs its tasks the same way, so a layout whose driver another layout has
compiled compiles only its task.

The driver receives the compiled task's address at run time and calls through it
(``runtime.calls``): a driver that called its task by name would carry and re-optimise
its own copy of it, and so would every user's function that calls ``argmax``
(docs/performance.md, "Tasks called through their address").

Each task is compiled for one value of ``last`` (``select_last_index``), a constant of
its code: a first call compiles the search for the first occurrence only, or for the
last only. The drivers take ``last`` at run time and are given the task compiled for it
(docs/performance.md, "Tasks compiled per value of select_last_index").

Drivers and tasks take the input typed read-only, whatever its flag: they never write
it, and numba types a writeable and a read-only array apart (in the same machine
representation), so that an input that differed only in that flag compiled them again
(docs/performance.md, "The fast kernels compiled once for writeable and read-only
inputs").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numba import from_dtype, types

from ..dtypes import KeyKind
from ..planning import Kernel, Plan, rows_per_task
from ..runtime.arrays import c_view, empty
from ..runtime.calls import entry_point, task_address, thread_count
from ..runtime.parallel import parallel_tasks, serial_tasks
from ..vector.candidates import merge_candidates
from ..vector.keys import key_type, key_vector
from ..vector.short_rows import BYTE_ROW
from .columns import column_tasks
from .compiling import TaskSet, compile_function
from .rows import row_tasks

__all__ = ["KERNELS", "KERNEL_SETS", "KernelCode", "KernelSet", "Ranks", "tasks_of"]


# --- drivers: run the tasks serially or in parallel --------------------------------------

# Every driver runs its tasks as ``run_tasks(ntasks, where, head, tail)``, which calls
# ``task(*head, t, *tail)`` for each task number t: ``where`` is the task's address,
# ``run_tasks`` the serial or the parallel loop (``runtime.parallel``). ``PARALLEL`` is
# whether the driver is the parallel one; ``per_task`` is ``planning.rows_per_task``,
# inlined (a call of a function of its own costs a first call more compile time:
# docs/performance.md, "Helpers as intrinsics").
# ``KIND`` is the key kind of the driver's tasks. ``_build`` binds all four.
KIND = PARALLEL = per_task = run_tasks = None


def rows(x, out, last, where):
    # ``x`` of any rank, its rows along the last axis, and ``out`` of any rank holding
    # one element per row: Python passes a small input and its result as they are, since
    # reshaping them in Python would cost a small call more than the search
    # (docs/performance.md, "Small calls: the arrays' own shapes").
    n = x.shape[-1]
    outer = x.size // n
    rows_of_x, out_flat = c_view(x, 0, (outer, n)), c_view(out, 0, outer)
    per = per_task(outer, n, x.itemsize, thread_count() if PARALLEL else 1)
    run_tasks((outer + per - 1) // per, where, (rows_of_x, out_flat), (per,))


def row_pieces(x, out, last, nchunks, where):
    outer, n = x.shape
    chunk = (n + nchunks - 1) // nchunks
    nchunks = (n + chunk - 1) // chunk
    part_key, part_at = key_vector(outer * nchunks, x, KIND), empty(outer * nchunks, np.int64)
    run_tasks(outer * nchunks, where, (x, part_key, part_at), (nchunks, chunk))
    merge_candidates(c_view(out, 0, (outer, 1)), part_key, part_at, nchunks, last)


def cols(x, out, last, block, where):
    outer, inner = x.shape[0], x.shape[2]
    nblocks = (inner + block - 1) // block
    per = block // inner if nblocks == 1 else 1  # whole blocks x[o] to a task
    run_tasks((outer + per - 1) // per * nblocks, where, (x, out), (nblocks, block))


def narrow(x, out, last, m, nsplit, where):
    outer, n, inner = x.shape
    per = (n + nsplit - 1) // nsplit
    per = (per + m - 1) // m * m  # rows per task, a multiple of m
    nsplit = (n + per - 1) // per
    ntasks = outer * nsplit
    part_key, part_at = key_vector(ntasks * inner, x, KIND), empty(ntasks * inner, np.int64)
    run_tasks(ntasks, where, (x, part_key, part_at), (nsplit, per, m))
    merge_candidates(out, part_key, part_at, nsplit, last)


class Ranks(NamedTuple):
    """The ranks of a driver's input and output, where it takes others than its own."""

    x: int
    out: int


class _Shape(NamedTuple):
    """How a kernel's driver and task are called."""

    driver: Any  # one of the driver functions above
    task: str  # the name of its task in ``tasks_of``
    ndim: int  # of ``x``: 2 (rows) or 3 (columns); ``out`` has one less
    any_rank: bool  # whether the driver also takes ``x`` and ``out`` of other ranks
    parts: bool  # whether the task writes per-task candidates (``merge_candidates``)
    ints: int  # the task's integer arguments, after its arrays
    plan_args: tuple[str, ...]  # fields of ``Plan`` the driver takes between last and where


_ROW = (2, True, False, 2, ())
_COLUMN = (3, False, False, 3, ("block",))
SHAPES: dict[Kernel, _Shape] = {
    Kernel.ROWS: _Shape(rows, "rows_task", *_ROW),
    Kernel.ROW_PIECES: _Shape(row_pieces, "row_piece_task", 2, False, True, 3, ("splits",)),
    # (Python callers get a task per row length: ``KernelSet.for_python``.)
    Kernel.SHORT_ROWS: _Shape(rows, "short_any_task", *_ROW),
    Kernel.GROUP_ROWS: _Shape(rows, "group_rows_task", *_ROW),
    Kernel.CHUNK_ROWS: _Shape(rows, "chunk_rows_task", *_ROW),
    Kernel.COLS: _Shape(cols, "col_task", *_COLUMN),
    Kernel.SIDE_COLS: _Shape(cols, "side_task", *_COLUMN),
    Kernel.BLOCK_COLS: _Shape(cols, "block_task", *_COLUMN),
    Kernel.EACH_COLS: _Shape(cols, "each_task", *_COLUMN),
    Kernel.EACH_SHORT_COLS: _Shape(cols, "each_short_task", *_COLUMN),
    Kernel.EACH_WIDE_COLS: _Shape(cols, "each_wide_task", *_COLUMN),
    Kernel.NARROW: _Shape(narrow, "narrow_task", 3, False, True, 4, ("side_rows", "splits")),
}
"""How each kernel is called; the same for every key kind."""


class KernelCode(NamedTuple):
    """One kernel of one key kind: its driver, ``driver(x, out, last, *extra, where)``,
    compiled serial or parallel, and the task it runs, one for each ``last``."""

    driver: Any  # numba dispatcher
    shape: _Shape
    kind: int
    task: str  # the name of its tasks in ``tasks_of``
    addresses: dict  # (dtype, last) -> the task's address, once compiled
    entries: dict  # (dtype, ranks) -> the driver's ``entry``, once compiled

    @property
    def ndim(self) -> int:
        return self.shape.ndim

    @property
    def tasks(self) -> tuple[Any, Any]:
        """The task for ``last`` 0 and for ``last`` 1."""
        return self.task_of(0), self.task_of(1)

    def task_of(self, last: int) -> Any:
        """The task for ``last`` (only its key kind's tasks for that ``last`` are made)."""
        return tasks_of(self.kind, last)[self.task]

    def extra_args(self, plan: Plan) -> tuple[int, ...]:
        """The driver's arguments between ``last`` and ``where``, taken from ``plan``."""
        return tuple(getattr(plan, name) for name in self.shape.plan_args)

    def task_types(self, dtype: np.dtype) -> tuple:
        """The types the driver calls its task with, for inputs of ``dtype``."""
        x_type = types.Array(from_dtype(dtype), self.ndim, "C", readonly=True)
        if self.shape.parts:
            keys = types.Array(key_type(x_type, self.kind), 1, "C")
            arrays = (x_type, keys, types.Array(types.int64, 1, "C"))
        else:
            arrays = (x_type, types.Array(types.int64, self.ndim - 1, "C"))
        return arrays + (types.int64,) * self.shape.ints

    def driver_types(self, dtype: np.dtype, ranks: Ranks | None = None) -> tuple:
        """The types of the driver's arguments, for inputs of ``dtype`` (writeable or
        not: the input's type is read-only), and of ``ranks`` where the driver takes
        others (``_Shape.any_rank``)."""
        x_ndim, out_ndim = ranks or (self.ndim, self.ndim - 1)
        x_type = types.Array(from_dtype(dtype), x_ndim, "C", readonly=True)
        out_type = types.Array(types.int64, out_ndim, "C")
        return (x_type, out_type) + (types.int64,) * (len(self.shape.plan_args) + 2)

    def address(self, dtype: np.dtype, last: int) -> int:
        """``where`` for inputs of ``dtype``: the address of the task compiled for them
        and ``last``."""
        where = self.addresses.get((dtype, last))
        if where is None:
            where = task_address(self.task_of(last), self.task_types(dtype))
            self.addresses[(dtype, last)] = where
        return where

    def entry(self, dtype: np.dtype, ranks: Ranks | None = None) -> Any:
        """The driver compiled for inputs of ``dtype`` (and ``ranks``), as Python calls it
        without numba's dispatch on the arguments' types, which the caller must make
        ``driver_types`` (but for the input's flag: a writeable input is read as the
        read-only one it is typed as, the same data). (Dispatch types an array of a new
        kind in Python, and numba's typing of arrays imports ``numpy.ma``: a noticeable
        part of a first call; docs/performance.md, "The driver's entry point called
        without dispatch".)"""
        found = self.entries.get((dtype, ranks))
        if found is None:
            found = entry_point(self.driver, self.driver_types(dtype, ranks))
            self.entries[(dtype, ranks)] = found
        return found

    def driver_address(self, dtype: np.dtype) -> int:
        """The address of the driver compiled for inputs of ``dtype`` (compiled code
        calls it there, with ``driver_types``; only looked up while compiling)."""
        return task_address(self.driver, self.driver_types(dtype))


@dataclass(frozen=True)
class KernelSet:
    """The kernels of one key kind, serial or parallel (compiled on first use)."""

    kernels: dict[Kernel, KernelCode]
    """For compiled callers: ``SHORT_ROWS`` searches every short length in one task."""
    short_rows: tuple[KernelCode, ...]
    """For Python callers: ``SHORT_ROWS`` of 2, 3, ..., BYTE_ROW elements, a task each."""

    def __getitem__(self, kernel: Kernel) -> KernelCode:
        return self.kernels[kernel]

    def all_codes(self) -> tuple[KernelCode, ...]:
        """Every kernel's code, the short rows' of each length too."""
        return (*self.kernels.values(), *self.short_rows)

    def for_python(self, kernel: Kernel, n: int) -> KernelCode:
        """The code of ``kernel`` for rows of ``n`` elements, as Python callers run it."""
        if kernel == Kernel.SHORT_ROWS:
            return self.short_rows[n - 2]
        return self.kernels[kernel]


def _build(kind: int, parallel: bool) -> KernelSet:
    mode = "par" if parallel else "ser"
    loop = parallel_tasks if parallel else serial_tasks
    bound = {"KIND": kind, "PARALLEL": parallel, "per_task": _PER_TASK, "run_tasks": loop}
    drivers = {
        fn: compile_function(fn, f"{fn.__name__}_k{kind}_{mode}", bound, driver=True)
        for fn in (rows, row_pieces, cols, narrow)
    }

    def code(shape: _Shape, task: str) -> KernelCode:
        return KernelCode(drivers[shape.driver], shape, kind, task, {}, {})

    kernels = {k: code(shape, shape.task) for k, shape in SHAPES.items()}
    short = SHAPES[Kernel.SHORT_ROWS]
    lengths = range(2, BYTE_ROW + 1)
    return KernelSet(kernels, tuple(code(short, f"short_rows_task{m}") for m in lengths))


@functools.cache
def tasks_of(kind: int, last: int) -> TaskSet:
    """The tasks of key kind ``kind`` for ``last``, each compiled on first use."""
    kind = int(kind)
    specs = row_tasks(kind, last) | column_tasks(kind, last)
    return TaskSet(specs, f"k{kind}_l{last}")


_PER_TASK = compile_function(rows_per_task, "rows_per_task_inline", {}, inline="always")


class _KernelSets(dict):
    """The kernels of each (key kind, parallel), created on first use (numba's
    dispatchers for all of them at import would slow ``import argmax_numba``). A dict, so
    that a lookup costs what a dict's does (docs/performance.md, "Tasks and drivers made
    on first use")."""

    def __missing__(self, key: tuple[int, bool]) -> KernelSet:
        if key not in KERNEL_SETS:
            raise KeyError(key)
        self[key] = kernels = _build(int(key[0]), key[1])
        return kernels


KERNEL_SETS = tuple((k, p) for k in KeyKind for p in (True, False))
"""The keys of ``KERNELS``, which holds only the sets created so far."""
KERNELS: dict[tuple[int, bool], KernelSet] = _KernelSets()
"""The kernels of ``argmax``, keyed by (key kind, parallel)."""

"""Which kernel reduces an input, and with which parameters: the one place that decides.

Every input reaches the kernels as a C-contiguous ``(outer, n, inner)`` array whose
middle axis is reduced. ``plan`` looks only at those extents, the item size and the
number of threads, and returns a ``Plan``: the ``Kernel`` to run and its parameters.
The Python wrapper (``api``) and compiled callers (``jit``) both call it, so both run the
same kernel for the same input. ``serial`` decides whether the calling thread works
alone.

The thresholds below were tuned by measurement; each comment names its section of
``docs/performance.md``, where the candidates measured and their ratios are kept. Tests
change them (``monkeypatch``) to reach every kernel on small inputs, so the functions
read them as module globals at every call from Python.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from numba.extending import register_jitable

from .vector.ir import VECTOR_BYTES
from .vector.row_groups import CHUNK_ROW_BYTES, GROUP_ROW_BYTES
from .vector.short_rows import BYTE_ROW, SHORT_ROW
from .vector.side_blocks import GATHER_BYTES, SHORT_GATHER_BYTES, WIDE_GATHER_BYTES

__all__ = [
    "Kernel",
    "Plan",
    "chunk_row_bytes",
    "is_short",
    "plan",
    "rows_per_task",
    "serial",
    "wide_row_span",
]

# Inputs of fewer bytes than this are reduced on the calling thread: waking the pool
# costs about what one thread takes to read this much from cache
# (docs/performance.md, SERIAL_BELOW_BYTES).
SERIAL_BELOW_BYTES = 3 << 19
# Bytes of each row that one task of ``COLS`` reads as one stretch: longer stretches are
# read faster, and the running maxima of a block stay in L2 (docs/performance.md,
# COL_BLOCK_BYTES).
COL_BLOCK_BYTES = 1 << 16
# Inner extents under this many bytes use ``NARROW`` where there are few blocks x[o]: it
# reads rows side by side as one row of about LANE_BYTES (docs/performance.md,
# NARROW_BYTES, LANE_BYTES).
NARROW_BYTES = 256
LANE_BYTES = 1024
# On one thread, few blocks of rows under NARROW_SERIAL_BYTES go to the column kernels
# instead (for elements wider than 8 bits, only in inputs under NARROW_SERIAL_INPUT
# bytes): ``NARROW``'s rows side by side pay off where they are split between threads,
# and on one thread its merge of the lanes cost more than the column kernels' reads
# (docs/performance.md, NARROW_SERIAL_BYTES).
NARROW_SERIAL_BYTES = 192
NARROW_SERIAL_INPUT = 128 << 10
# ``COLS`` splits the columns of a few blocks between tasks; in inputs of at least
# NARROW_SPLIT_BYTES, pieces narrower than NARROW_PIECE_BYTES are read slower than rows
# split between tasks by ``NARROW``; smaller inputs, read from cache, are as fast in
# ``COLS`` (docs/performance.md, NARROW_PIECE_BYTES, NARROW_SPLIT_BYTES).
NARROW_PIECE_BYTES = 4096
NARROW_SPLIT_BYTES = 8 << 20
# Whole blocks narrower than a vector are read as rows side by side where that makes at
# least SIDE_GROUPS wide rows; fewer are faster gathered (docs/performance.md,
# SIDE_GROUPS) ...
SIDE_GROUPS = 4
# ... and, where a wide row takes several vectors, only where the wide rows times the
# gathers a row takes are more than GATHERED_ROWS (docs/performance.md, GATHERED_ROWS).
GATHERED_ROWS = 16
# A row is split across tasks only into pieces of at least this many elements
# (docs/performance.md, MIN_ROW_CHUNK).
MIN_ROW_CHUNK = 1 << 15
# Rows of 8-bit elements are searched in groups only up to this many bytes, not
# CHUNK_ROW_BYTES: a group keeps 16-bit positions beside 8-bit keys, two registers of
# positions to one of keys, and longer rows were searched faster one at a time, from
# cache and from memory (docs/performance.md, BYTE_CHUNK_ROW_BYTES).
BYTE_CHUNK_ROW_BYTES = 512
# Whole rows of about this many elements in all make one task of the row kernels
# (docs/performance.md, ROW_TASK_ELEMENTS) ...
ROW_TASK_ELEMENTS = 1 << 16
# ... or a group of rows, where the row kernels search them so and that leaves every
# thread at least this many tasks (each thread takes an equal count of tasks)
# (docs/performance.md, GROUP_TASKS).
GROUP_TASKS = 4


class Kernel(IntEnum):
    """The kernels, by the layout each one reduces (``kernels.registry`` holds their code)."""

    ROWS = 0
    """Rows (``inner == 1``) longer than ``chunk_row_bytes``, whole rows to a task."""
    ROW_PIECES = 1
    """A few long rows, each split into ``splits`` pieces so that every core has work."""
    SHORT_ROWS = 2
    """Rows of a few elements (``is_short``), a vector of rows at a time."""
    GROUP_ROWS = 3
    """Rows of up to GROUP_ROW_BYTES, a group of rows at a time."""
    CHUNK_ROWS = 4
    """Rows of up to ``chunk_row_bytes``, a group at a time, where every task holds a group."""
    COLS = 5
    """The middle axis, ``block`` inner positions to a task, rows of at least a vector."""
    SIDE_COLS = 6
    """Whole blocks x[o] narrower than a vector, consecutive rows read side by side."""
    BLOCK_COLS = 7
    """``SIDE_COLS`` where a wide row is one vector: the whole block in registers."""
    EACH_COLS = 8
    """Whole blocks narrower than a vector, GATHER_BYTES of a row of each gathered."""
    EACH_SHORT_COLS = 9
    """``EACH_COLS`` for rows of at most SHORT_GATHER_BYTES."""
    EACH_WIDE_COLS = 10
    """``EACH_COLS`` for rows of up to WIDE_GATHER_BYTES, loaded rather than gathered."""
    NARROW = 11
    """A few narrow blocks of many rows: ``side_rows`` rows read as one wide row, the
    rows split into ``splits`` ranges."""


class Plan(NamedTuple):
    """What ``plan`` chose: the kernel and the parameters it takes (0 where unused)."""

    kernel: Kernel
    block: int = 0
    """Column kernels: inner positions to a task (whole blocks x[o] where it spans them)."""
    side_rows: int = 0
    """``NARROW``: consecutive rows read side by side as one wide row."""
    splits: int = 0
    """``ROW_PIECES``: pieces of each row; ``NARROW``: ranges of each block's rows."""


@register_jitable
def serial(outer: int, n: int, inner: int, itemsize: int) -> bool:
    """Whether reducing ``(outer, n, inner)`` is faster on one thread than on the pool
    (docs/performance.md, SERIAL_BELOW_BYTES)."""
    return outer * n * inner * itemsize < SERIAL_BELOW_BYTES


@register_jitable
def is_short(n: int, itemsize: int) -> bool:
    """Whether rows of ``n`` elements of ``itemsize`` bytes go to ``SHORT_ROWS`` (rows of
    one whole vector, 8 float64 or int64, are searched faster in groups:
    docs/performance.md, "Rows of one whole vector searched in groups")."""
    if n < 2 or n * itemsize >= VECTOR_BYTES:
        return False
    if itemsize == 1 or (itemsize == 2 and n % 2 == 0):
        return n <= BYTE_ROW
    return n <= SHORT_ROW


@register_jitable
def wide_row_span(itemsize: int) -> int:
    """How many wide rows ``BLOCK_COLS`` numbers in lanes of ``itemsize`` bytes: as many
    as signed integers that wide hold, minus a sentinel (capped at 2**31 - 1, so that
    row numbers times the rows of a wide row cannot overflow int64)."""
    return (1 << (8 * itemsize - 1)) - 1 if itemsize < 4 else (1 << 31) - 1


@register_jitable
def chunk_row_bytes(itemsize: int) -> int:
    """The longest rows, in bytes, of ``itemsize``-byte elements that ``CHUNK_ROWS``
    searches a group at a time (longer ones go one at a time)."""
    return BYTE_CHUNK_ROW_BYTES if itemsize == 1 else CHUNK_ROW_BYTES


@register_jitable
def rows_per_task(outer: int, n: int, itemsize: int, threads: int) -> int:
    """Whole rows of ``n`` elements per task of the row kernels, for ``outer`` rows on
    ``threads`` threads: about ROW_TASK_ELEMENTS elements; rows of up to
    ``chunk_row_bytes``, searched a group at a time, need a group in a task, and where
    that still leaves every thread GROUP_TASKS tasks, a task takes one (``plan`` sends
    them to ``CHUNK_ROWS`` only where every task then holds a group)."""
    per = max(1, ROW_TASK_ELEMENTS // n)
    group = VECTOR_BYTES // itemsize
    if per < group and n * itemsize <= chunk_row_bytes(itemsize):
        if outer >= GROUP_TASKS * threads * group:
            per = group
    return per


@register_jitable
def plan(outer: int, n: int, inner: int, itemsize: int, threads: int) -> Plan:
    """The kernel that reduces ``(outer, n, inner)`` of ``itemsize``-byte elements on
    ``threads`` threads (1 for the serial drivers), and its parameters."""
    if inner == 1:
        return _plan_rows(outer, n, itemsize, threads)
    return _plan_columns(outer, n, inner, itemsize, threads)


@register_jitable
def _plan_rows(outer: int, n: int, itemsize: int, threads: int) -> Plan:
    if is_short(n, itemsize):
        return Plan(Kernel.SHORT_ROWS, 0, 0, 0)
    if n * itemsize <= GROUP_ROW_BYTES:
        return Plan(Kernel.GROUP_ROWS, 0, 0, 0)
    nchunks = 1
    if threads > 1 and outer < 2 * threads:  # split rows so that every core has work
        nchunks = max(1, min(-(-4 * threads // outer), n // MIN_ROW_CHUNK))
    # Rows of up to ``chunk_row_bytes`` in groups where every task of the driver holds whole
    # groups: fewer rows, read from cache, are searched faster one at a time
    # (docs/performance.md, "Rows too few for a group in each task searched one at a
    # time").
    group = VECTOR_BYTES // itemsize
    held = outer >= group and rows_per_task(outer, n, itemsize, threads) >= group
    if nchunks == 1 and n * itemsize <= chunk_row_bytes(itemsize) and held:
        return Plan(Kernel.CHUNK_ROWS, 0, 0, 0)
    if nchunks > 1:
        return Plan(Kernel.ROW_PIECES, 0, 0, nchunks)
    return Plan(Kernel.ROWS, 0, 0, 0)


@register_jitable
def _gathered(row_bytes: int, itemsize: int) -> tuple[int, Kernel]:
    """The gather kernel for whole blocks of rows of ``row_bytes``, and its slot: as few
    bytes of a row of each block in a vector as hold a row."""
    if row_bytes <= SHORT_GATHER_BYTES:
        return SHORT_GATHER_BYTES, Kernel.EACH_SHORT_COLS
    if GATHER_BYTES < row_bytes <= WIDE_GATHER_BYTES and itemsize > 1:
        return WIDE_GATHER_BYTES, Kernel.EACH_WIDE_COLS
    return GATHER_BYTES, Kernel.EACH_COLS


@register_jitable
def _plan_columns(outer: int, n: int, inner: int, itemsize: int, threads: int) -> Plan:
    row_bytes = inner * itemsize
    nbytes = outer * n * row_bytes
    slot, gathered = _gathered(row_bytes, itemsize)
    # Rows read side by side by ``NARROW``: at least a vector's worth.
    m = max(-(-VECTOR_BYTES // row_bytes), LANE_BYTES // row_bytes)
    # Few blocks x[o], whose rows ``NARROW`` splits between the cores. Many blocks go to
    # the column kernels whole, large ones too (docs/performance.md, "Many blocks go to
    # `cols`, not `narrow`").
    few = outer < 4 * threads
    narrow = row_bytes < NARROW_BYTES and few
    if threads == 1 and row_bytes < NARROW_SERIAL_BYTES:
        narrow = narrow and itemsize > 1 and nbytes >= NARROW_SERIAL_INPUT
    block = max(VECTOR_BYTES, COL_BLOCK_BYTES) // itemsize  # (``COLS`` reads whole vectors)
    # Too few blocks for the cores: narrower ones, as few as give every thread an equal
    # share (docs/performance.md, "Column runs: an equal share per thread") ...
    split = threads > 1 and outer * -(-inner // block) < 2 * threads
    if split:
        pieces = 1
        while outer * pieces < threads or outer * pieces % threads:
            pieces += 1
        block = max(64, -(-inner // pieces))
        # ... but not narrower than NARROW_PIECE_BYTES (a quarter of that for 8-bit data,
        # whose row numbers restart more often in ``NARROW``) in inputs read from memory:
        # there, the rows are split (docs/performance.md, NARROW_PIECE_BYTES).
        least = NARROW_PIECE_BYTES // 4 if itemsize == 1 else NARROW_PIECE_BYTES
        large = nbytes >= NARROW_SPLIT_BYTES
        narrow = narrow or (large and block * itemsize < least)
    if narrow and n >= 4 * m:
        nsplit = 1
        if threads > 1:
            nsplit = max(1, min(-(-4 * threads // outer), n // (64 * m)))
        return Plan(Kernel.NARROW, 0, m, nsplit)
    if threads > 1 and block < inner:
        # Blocks of equal width, as many as make a multiple of the threads in all: the
        # parallel loop gives every thread an equal count of tasks (docs/performance.md,
        # "Column blocks of equal width, a multiple of the threads").
        nblocks = -(-inner // block)
        while outer * nblocks % threads:
            nblocks += 1
        # (At least a vector each: ``COLS`` reads a block as whole vectors.)
        block = max(-(-inner // nblocks), VECTOR_BYTES // itemsize)
    if not split and block >= inner:
        # Whole blocks x[o] to a task, as many as make COL_BLOCK_BYTES (a task per small
        # block cost more than reading it), at least four tasks per thread
        # (docs/performance.md, COL_BLOCK_BYTES).
        per = max(1, COL_BLOCK_BYTES // (n * row_bytes))
        if threads > 1:
            per = max(1, min(per, -(-outer // (4 * threads))))
        block = per * inner
        lanes = VECTOR_BYTES // itemsize
        if inner < lanes:
            # (``lanes // min(inner & -inner, lanes)`` is ``lanes // gcd(inner, lanes)``, for
            # lanes a power of two: the rows ``SIDE_COLS`` reads side by side.)
            m = lanes // min(inner & -inner, lanes)
            whole = m * inner == lanes  # a wide row is one vector
            gathers = n // m * -(-row_bytes // GATHER_BYTES)
            if n // m >= SIDE_GROUPS and (whole or gathers > GATHERED_ROWS):
                # Rows side by side, in registers where a wide row is one vector and the
                # wide rows are numbered in the lanes (docs/performance.md, "Blocks folded
                # whole in registers").
                if whole and n // m <= wide_row_span(itemsize):
                    return Plan(Kernel.BLOCK_COLS, block, 0, 0)
                return Plan(Kernel.SIDE_COLS, block, 0, 0)
            # Whole groups of gathered blocks to a task: the blocks after a task's last
            # group are searched one by one, ungathered (docs/performance.md, "Whole
            # groups of gathered blocks to a task").
            group = VECTOR_BYTES // slot  # blocks a gather
            if per >= group:
                block = per // group * group * inner
            return Plan(gathered, block, 0, 0)
    if row_bytes < VECTOR_BYTES:
        # ``COLS`` reads rows of at least a vector. Narrower ones split between threads get
        # here only for inputs too small for the threads (``serial``): a block to a task.
        return Plan(gathered, inner, 0, 0)
    return Plan(Kernel.COLS, block, 0, 0)

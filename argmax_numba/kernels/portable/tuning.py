"""The portable loops' tuned sizes: of blocks, chunks, tasks, short rows and tiles, and
the integer types of the row numbers and places they keep. Each is read as a constant
when a loop is compiled, and by ``choice`` where it chooses a loop; where a size was
measured, its comment names the section of docs/performance.md. One depends on the CPU
that numba compiles for: FIXED_ROWS."""

from __future__ import annotations

from typing import NamedTuple

import llvmlite.binding as llvm
import numba
import numpy as np

__all__ = [
    "ACROSS_ROWS",
    "BLOCK_BYTES",
    "CHUNK",
    "FEW_ELEMENTS",
    "FIXED_COLUMNS",
    "FIXED_ROWS",
    "FLOAT_ROWS",
    "HALVED_ROWS",
    "INTEGER_ROWS",
    "NARROW_WIDTH",
    "PAIRED_BYTES",
    "PART_ROWS",
    "PART_WIDTH",
    "PIECE",
    "PIECES",
    "PLACES",
    "ROW_NUMBERS",
    "STRETCH",
    "STRETCH_BYTES",
    "TASK_ELEMENTS",
    "TILE_BYTES",
    "TILE_LANES",
    "TILE_ROWS",
    "ShortRows",
    "fixed_rows",
    "paired_width",
]

# Bytes of a block of a long row, whose largest key is found before its place is looked
# for (docs/performance.md, "The portable tier's rows searched a block at a time") ...
BLOCK_BYTES = 512
# ... and elements of a chunk of blocks, after which a search may stop (a multiple of a
# block's elements, whatever their size).
CHUNK = 4096


class ShortRows(NamedTuple):
    """The longest rows, by item size, that ``reduce_rows`` searches in one plain pass
    each (on numba's threads, rows of floats: ``reduce_rows_across``, across the rows);
    longer ones go to ``search_row``, a block at a time."""

    serial: dict[int, int]  # on one thread (inputs in cache)
    threads: dict[int, int]  # on numba's threads (inputs from memory)


# docs/performance.md, "The portable tier's rows searched a block at a time" and "The
# portable tier's places found in integers as wide as the keys"; on numba's threads, rows
# of 8-byte integers, "The portable tier's short rows of 64-bit integers searched".
INTEGER_ROWS = ShortRows(serial={1: 31, 2: 15, 4: 15, 8: 15}, threads={1: 31, 2: 31, 4: 15, 8: 8})
FLOAT_ROWS = ShortRows(serial={2: 15, 4: 15, 8: 7}, threads={2: 31, 4: 23, 8: 7})


def _x86_features() -> set[str] | None:
    """The CPU features numba compiles for, where it compiles for x86-64 (from
    ``NUMBA_CPU_FEATURES`` where that is set, else the host's, none of AVX's where
    ``NUMBA_ENABLE_AVX`` turns them off, as numba takes them); None elsewhere, or where
    llvmlite cannot tell the host's."""
    try:
        if llvm.get_process_triple().split("-")[0] != "x86_64":
            return None
        features = numba.config.CPU_FEATURES
        if not features:
            if not numba.config.ENABLE_AVX:
                return set()
            features = llvm.get_host_cpu_features().flatten()
    except RuntimeError:  # (llvmlite cannot tell this host's features)
        return None
    return set(features.split(","))


def fixed_rows(features: set[str] | None) -> dict[int, int]:
    """The longest rows, by the elements' item size, that go on numba's threads to
    ``reduce_fixed_rows``, compiled for their length, where numba compiles for a CPU of
    ``features`` (``_x86_features``); 0: none. LLVM unrolls the loop along the row and
    vectorises the loop across the rows. Rows of 1- and 2-byte elements: up to 16
    everywhere (LLVM unrolls rows of up to 20 to 31 of them, by type; longer rows took
    longer than the loops for rows of any length). Rows of 4- and 8-byte elements: on a
    CPU with AVX2, where LLVM loads their lanes interleaved, up to 16; with AVX-512,
    where it gathers rows of more than 8 and 7 of them, up to 8 and 7 (docs/performance.md,
    "The portable tier's short rows indexed by unsigned integers"). Elsewhere, untried,
    none."""
    avx2 = features is not None and "+avx2" in features
    avx512 = avx2 and "+avx512f" in features
    return {
        1: 16,
        2: 16,
        4: 8 if avx512 else 16 if avx2 else 0,
        8: 7 if avx512 else 16 if avx2 else 0,
    }


FIXED_ROWS = fixed_rows(_x86_features())
# On numba's threads, rows of floats of an even length above FIXED_ROWS[itemsize], up to
# twice that and at most HALVED_ROWS, go to ``reduce_fixed_halves``: with AVX-512, rows of
# 10 to 16 float32 and of 8 to 14 float64. Longer ones were not measured
# (docs/performance.md, "The portable tier's rows of floats searched as halves").
HALVED_ROWS = 16
# Rows that a task of ``reduce_rows_across`` folds side by side (docs/performance.md,
# "The portable tier's short rows of floats folded across the rows").
ACROSS_ROWS = 256
# Elements of a piece of a row at least, where long rows are too few to share out ...
PIECE = 1 << 16
# ... whole: fewer than this many, which is also about how many pieces they are cut into
# (enough for 16 threads; the loop cannot ask numba for the number of threads and stay
# in the disk cache).
PIECES = 16
# Inner positions a task of ``reduce_middle`` owns: at least STRETCH, and more where the
# input still makes PIECES tasks, up to STRETCH_BYTES' worth: each row of a task's stretch
# is one run of memory, and longer runs were read faster (docs/performance.md, "The
# portable tier's middle axis in longer stretches").
STRETCH = 1024
STRETCH_BYTES = 1 << 14
# Fewer than PIECES blocks of at most PART_WIDTH inner positions, and at least
# 2 * PART_ROWS rows, go to ``reduce_middle_parts`` where they are shared out among
# numba's threads (serial calls, on inputs in cache, gain nothing by it); its parts have
# at least PART_ROWS rows (docs/performance.md, "The portable tier's few blocks cut into
# parts of rows").
PART_WIDTH = 1 << 14
PART_ROWS = 16
# The middle-axis loops fold a block's rows two at a time across a task's positions
# where their running keys and row numbers take at least PAIRED_BYTES (``paired_width``):
# those no longer fit in the first-level cache beside the rows, and a pair of rows loads
# and stores them once. Narrower tasks fold a row at a time, which took less time for
# them (docs/performance.md, "The portable tier's wide rows folded two at a time").
PAIRED_BYTES = 24 << 10
# Blocks of fewer inner positions than this go to ``reduce_narrow`` ...
NARROW_WIDTH = 64
# ... which, like the short rows of ``reduce_rows``, takes about this many elements a task.
TASK_ELEMENTS = 1 << 14
# Short rows of integers read with a flip (unsigned, or ArgMin's) are copied flipped
# before their search, but in a task of at most this many elements, where allocating the
# copy costs more than the xor in the search (docs/performance.md, "The portable tier's
# unsigned integers read as signed").
FEW_ELEMENTS = 128

# Narrow blocks of at most TILE_ROWS rows (by the elements' item size) and TILE_BYTES
# bytes go to ``reduce_tiles``, whose tiles are TILE_LANES elements wide
# (docs/performance.md, "Narrow blocks of few rows copied into tiles").
TILE_ROWS = {1: 64, 2: 64, 4: 32, 8: 16}
TILE_BYTES = 2048
TILE_LANES = 512
# On numba's threads, tiled blocks of 2 to FIXED_COLUMNS[itemsize] columns go to
# ``reduce_tiles`` compiled for their width, whose copy LLVM unrolls; for wider blocks
# the loop of any width, whose copy of a row LLVM vectorises, took less time
# (docs/performance.md, "The portable tier's tiles compiled for their blocks' width").
FIXED_COLUMNS = {1: 15, 2: 7, 4: 4, 8: 4}

# Row numbers within a group of ``reduce_middle`` (and of ``reduce_narrow``'s wide rows,
# but beside 8-byte elements), by the elements' item size.
# 32 bits for 64-bit elements too: fewer bytes to carry, and a group of 2**31 - 1 rows
# (docs/performance.md, "Narrow blocks of few rows copied into tiles").
ROW_NUMBERS = {1: np.int16, 2: np.int16, 4: np.int32, 8: np.int32}


def paired_width(itemsize: int) -> int:
    """The least number of positions that the middle-axis loops fold two rows at a time
    (``middle.fold_rows``), for elements of ``itemsize`` bytes: where a key and a row
    number (ROW_NUMBERS) for each position take PAIRED_BYTES."""
    return -(-PAIRED_BYTES // (itemsize + np.dtype(ROW_NUMBERS[itemsize]).itemsize))


# Places within a block of BLOCK_BYTES (``find_key``), by the elements' item size: as wide
# as the keys, so that a vector holds as many places as keys, and at least 16 bits, which
# count a block of BLOCK_BYTES one-byte elements.
PLACES = {1: np.int16, 2: np.int16, 4: np.int32, 8: np.int64}

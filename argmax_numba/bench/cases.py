"""The benchmark's cases and their input data.

A case is one row of the table: a dtype, a shape, a memory order, the reduced axis and
``select_last_index``. Cases that share dtype, shape and order share one input array,
generated once from a seeded RNG, so that the benchmark holds one large input at a
time and never generates data inside a timed region.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from math import prod

import ml_dtypes
import numpy as np

__all__ = ["DTYPES", "KINDS", "Case", "build_cases", "group_by_input", "make_input"]

DTYPES = {
    "float64": np.dtype(np.float64),
    "float32": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
}

# Case kinds, in table order. ``--case`` filters on these names.
KINDS = (
    "axis-first",
    "axis-mid",
    "axis-last",
    "long-row",
    "tall-narrow",
    "short-rows",
    "few-columns",
    "tiny-blocks",
    "uneven",
    "matrix",
    "fortran",
    "small-10x10",
    "small-1000",
)

# The dtypes of the shape-specific cases (the 3-D cases cover every dtype).
SHAPE_DTYPES = ("float64", "float32", "float16", "int8", "int64")
FORTRAN_DTYPES = ("float32", "uint16")
SMALL_DTYPES = ("float64", "float32", "float16", "bfloat16", "int8", "int64", "uint64")

MIB = 1 << 20
# The long row and the tall tensor have 16 Mi rows/elements at the full 64 MiB size.
FULL_LARGE_BYTES = 64 * MIB
FULL_LONG = 16 << 20


@dataclass(frozen=True)
class Case:
    """One benchmark row."""

    kind: str
    dtype: str
    shape: tuple[int, ...]
    axis: int
    last: int
    order: str = "C"

    @property
    def small(self) -> bool:
        """Small cases measure per-call latency (many calls per timing sample)."""
        return self.kind.startswith("small")

    @property
    def nbytes(self) -> int:
        """Bytes of the input."""
        return prod(self.shape) * DTYPES[self.dtype].itemsize

    @property
    def label(self) -> str:
        """A short unique name, used in the summary and on the plot."""
        return f"{self.kind}/{self.dtype}/ax{self.axis}/L{self.last}"

    @property
    def input_key(self) -> tuple:
        """Cases with equal keys run on the same input array."""
        return (self.dtype, self.shape, self.order)


def cube_shape(nbytes: int, itemsize: int) -> tuple[int, int, int]:
    """A 3-D shape ``(d, d, n)`` of at least ``nbytes``: (256, 256, N) at full size.

    ``d`` shrinks for tiny sizes so that every axis keeps at least 16 elements.
    """
    elems = max(1, -(-nbytes // itemsize))
    d = 256
    while d > 4 and elems // (d * d) < 16:
        d //= 2
    return (d, d, max(1, -(-elems // (d * d))))


def _cube_cases(dtypes, nbytes: int, lasts) -> list[Case]:
    kinds = ("axis-first", "axis-mid", "axis-last")
    cases = []
    for name in dtypes:
        shape = cube_shape(nbytes, DTYPES[name].itemsize)
        for last, (axis, kind) in itertools.product(lasts, enumerate(kinds)):
            cases.append(Case(kind, name, shape, axis, last))
    return cases


# Elements per row of the short-rows case: the scores of ten classes.
SHORT_ROW = 10
# Blocks (rows, columns) of the few-columns case, reduced along its rows (axis 1).
FEW_COLUMNS = (64, 16)
# Blocks of the tiny-blocks case, reduced along axis 1: too few rows of too few columns to
# read several rows as one vector (such as scores of 16 classes at 3 positions).
TINY_BLOCKS = (16, 3)
# The last two extents of the uneven case, reduced along each axis: no extent a power of
# two, rows and runs of columns that end inside a vector.
UNEVEN = (100, 100)
# Columns of the matrix case, reduced along each axis: (4096, 4096) float32 at full size,
# too few rows of blocks to share out whole, and rows of a few KiB.
MATRIX_COLUMNS = 4096


def _shape_cases(dtypes, nbytes: int) -> list[Case]:
    n = max(16, FULL_LONG * nbytes // FULL_LARGE_BYTES)
    cases = []
    for name in dtypes:
        rows = max(16, -(-nbytes // (SHORT_ROW * DTYPES[name].itemsize)))
        cases.append(Case("long-row", name, (1, n), 1, 0))
        cases.append(Case("tall-narrow", name, (n, 4), 1, 0))
        cases.append(Case("short-rows", name, (rows, SHORT_ROW), 1, 0))
        blocks = max(16, -(-nbytes // (prod(FEW_COLUMNS) * DTYPES[name].itemsize)))
        cases.append(Case("few-columns", name, (blocks, *FEW_COLUMNS), 1, 0))
        blocks = max(16, -(-nbytes // (prod(TINY_BLOCKS) * DTYPES[name].itemsize)))
        cases.append(Case("tiny-blocks", name, (blocks, *TINY_BLOCKS), 1, 0))
        outer = max(16, -(-nbytes // (prod(UNEVEN) * DTYPES[name].itemsize)))
        cases += [Case("uneven", name, (outer, *UNEVEN), axis, 0) for axis in range(3)]
        rows = max(16, -(-nbytes // (MATRIX_COLUMNS * DTYPES[name].itemsize)))
        cases += [Case("matrix", name, (rows, MATRIX_COLUMNS), axis, 0) for axis in range(2)]
    return cases


def _fortran_cases(dtypes, nbytes: int) -> list[Case]:
    cases = []
    for name in dtypes:
        shape = cube_shape(nbytes, DTYPES[name].itemsize)
        cases += [Case("fortran", name, shape, axis, 0, "F") for axis in range(3)]
    return cases


def _small_cases(dtypes) -> list[Case]:
    cases = []
    for name in dtypes:
        cases.append(Case("small-10x10", name, (10, 10), 1, 0))
        cases.append(Case("small-1000", name, (1000,), 0, 0))
    return cases


def build_cases(nbytes: int, dtypes=None, kinds=None) -> list[Case]:
    """Every case for a large-input size of ``nbytes``, filtered by dtype and kind names.

    The 3-D cases run with ``select_last_index`` 0 and 1 on every dtype; the others
    cover a few representative dtypes (all of them if ``dtypes`` names them).
    """
    want = set(dtypes) if dtypes else None

    def pick(names):
        return [n for n in names if want is None or n in want]

    cases = (
        _cube_cases(pick(DTYPES), nbytes, (0, 1))
        + _shape_cases(pick(SHAPE_DTYPES) if want is None else pick(DTYPES), nbytes)
        + _fortran_cases(pick(FORTRAN_DTYPES) if want is None else pick(DTYPES), nbytes)
        + _small_cases(pick(SMALL_DTYPES) if want is None else pick(DTYPES))
    )
    if kinds:
        cases = [c for c in cases if any(k in c.kind for k in kinds)]
    return cases


def group_by_input(cases: list[Case]) -> list[tuple[tuple, list[Case]]]:
    """Cases grouped by input array (dtype, shape, order), in first-appearance order."""
    groups: dict[tuple, list[Case]] = {}
    for c in cases:
        groups.setdefault(c.input_key, []).append(c)
    return list(groups.items())


def make_input(case: Case, seed: int = 0) -> np.ndarray:
    """The seeded random input of ``case``: full-range integers, floats in [-1, 1)."""
    dtype = DTYPES[case.dtype]
    rng = np.random.default_rng([seed, _name_seed(case.dtype), *case.shape])
    shape = case.shape[::-1] if case.order == "F" else case.shape
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    else:
        work = rng.random(shape, dtype=np.float64 if dtype == np.float64 else np.float32)
        work *= 2
        work -= 1
        x = work.astype(dtype, copy=False)
    return x.T if case.order == "F" else x


def _name_seed(text: str) -> int:
    """A stable small integer for a name (``hash`` is salted per process)."""
    return sum((i + 1) * ord(ch) for i, ch in enumerate(text)) % 65521

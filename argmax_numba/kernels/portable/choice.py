"""The portable kernels of one element format and item size (``PortableKernels``): its
loops bound and compiled on first use, and the one place that chooses which loop runs
an input (``PortableKernels.choose``) and what a call from Python runs
(``PortableKernels.entry``)."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from ...dtypes import KeyKind
from .compiling import Loop, add_leading_axis, bind, read_signed, read_signed_add_leading_axis
from .keys import greatest_key_function, key_function
from .middle import (
    fold_row,
    fold_row_pair,
    fold_rows,
    reduce_middle,
    reduce_middle_parts,
    reduce_narrow,
    reduce_tiles,
    take_run,
)
from .rows import (
    find_key,
    reduce_fixed_halves,
    reduce_fixed_rows,
    reduce_row_pieces,
    reduce_rows,
    reduce_rows_across,
    search_fixed_row,
    search_row,
    search_short_row,
)
from .tuning import (
    BLOCK_BYTES,
    FIXED_COLUMNS,
    FIXED_ROWS,
    FLOAT_ROWS,
    HALVED_ROWS,
    INTEGER_ROWS,
    NARROW_WIDTH,
    PART_ROWS,
    PART_WIDTH,
    PIECE,
    PIECES,
    PLACES,
    ROW_NUMBERS,
    TASK_ELEMENTS,
    TILE_BYTES,
    TILE_ROWS,
    paired_width,
)

__all__ = ["PortableCall", "PortableKernels", "halved", "portable_kernels", "tiled"]


def tiled(n: int, inner: int, itemsize: int) -> bool:
    """Whether blocks ``x[o]`` of ``n`` rows of ``inner`` elements of ``itemsize`` bytes go
    to ``reduce_tiles``: narrow ones of so few rows that ``reduce_narrow`` would fold few
    wide rows, if any, and merge the rest one element at a time."""
    return inner < NARROW_WIDTH and n <= TILE_ROWS[itemsize] and n * inner * itemsize <= TILE_BYTES


def halved(n: int, itemsize: int) -> bool:
    """Whether rows of ``n`` floats of ``itemsize`` bytes on numba's threads go to
    ``reduce_fixed_halves``: too long for ``reduce_fixed_rows`` (FIXED_ROWS, by the CPU),
    of an even length up to twice as long, and at most HALVED_ROWS."""
    most = FIXED_ROWS[itemsize]
    return n % 2 == 0 and most < n <= min(2 * most, HALVED_ROWS)


class PortableCall(NamedTuple):
    """A portable loop chosen for an input (``PortableKernels.choose``) and the shapes
    it takes the input and the result in. ``PortableKernels.entry`` gives what a call
    from Python runs, ``entry(x, out, last, flip)``, ``last`` an int (0 or 1) and
    ``flip`` one too (``flip_argument``): one compiled version for every caller and
    both operators."""

    loop: Loop
    leading: bool  # whether the loop takes the input with a leading axis of 1 it lacks
    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]


class PortableKernels:
    """The portable loops for one element format (``KeyKind.INT`` or a float's: ArgMax's
    and ArgMin's kinds of it share them, told apart by ``flip``) and item size, serial
    and parallel (compiled by numba on first use)."""

    def __init__(self, fmt: int, itemsize: int):
        self.itemsize = itemsize
        # The element type the loops are compiled for: floats and unsigned integers are
        # read as these signed integers of their width.
        self.signed = np.dtype(f"i{itemsize}")
        self.float_keys = fmt != KeyKind.INT
        # The longest rows searched in one pass (or, floats on numba's threads, across
        # the rows), serially and on numba's threads.
        limits = FLOAT_ROWS if self.float_keys else INTEGER_ROWS
        self.short_row = {False: limits.serial[itemsize], True: limits.threads[itemsize]}
        numbers = ROW_NUMBERS[itemsize]
        key_fn = key_function(fmt, itemsize)
        greatest_fn = greatest_key_function(fmt, itemsize)
        tag = self._tag = f"k{fmt}_b{itemsize}"
        # The loops fold rows with ``fold_fn``, numbered in ``numbers`` (or, in
        # ``reduce_narrow`` beside 8-byte keys, in 64 bits: then BLEND is False).
        blend = {"key": key_fn, "row_number": numbers, "BLEND": numbers is np.int16}
        fold_fn = njit(inline="always")(bind(fold_row, f"portable_fold_{tag}", blend))
        pair_fn = njit(inline="always")(bind(fold_row_pair, f"portable_pair_{tag}", blend))
        find_fn = njit(inline="always")(
            bind(find_key, f"portable_find_{tag}", {"key": key_fn, "place": PLACES[itemsize]})
        )
        short_fn = njit(inline="always")(
            bind(search_short_row, f"portable_short_{tag}", {"key": key_fn})
        )
        fixed_fn = njit(inline="always")(
            bind(search_fixed_row, f"portable_fixed_row_{tag}", {"key": key_fn})
        )
        search_fn = njit(inline="always")(
            bind(
                search_row,
                f"portable_search_{tag}",
                {
                    "key": key_fn,
                    "greatest": greatest_fn,
                    "find": find_fn,
                    "BLOCK": BLOCK_BYTES // itemsize,
                },
            )
        )
        bound = {
            "key": key_fn,
            "fold": fold_fn,
            "pair": pair_fn,
            "PAIRED_WIDTH": paired_width(itemsize),
            "search": search_fn,
            "short_row": short_fn,
            "fixed_row": fixed_fn,
            "take": njit(inline="always")(take_run),
            "row_number": numbers,
            "GROUP": int(np.iinfo(numbers).max),
        }
        bound["fold_rows"] = njit(nogil=True)(bind(fold_rows, f"portable_fold_rows_{tag}", bound))
        self._bound = bound
        rows_bound = {"INTEGERS": not self.float_keys}
        self.rows = {
            p: self._loop("rows", reduce_rows, {**rows_bound, "SHORT": self.short_row[p]}, p, 2)
            for p in (False, True)
        }
        self.row_pieces = {
            p: self._loop("pieces", reduce_row_pieces, {}, p, 2) for p in (False, True)
        }
        # Loops compiled for a length of rows or a width of blocks (``_compiled_for``).
        self._fixed: dict[tuple[Any, int], Loop] = {}
        # (on numba's threads only: serial calls keep ``reduce_rows``)
        self.rows_across = self._loop("across", reduce_rows_across, {}, True, 2)
        self.middle = {p: self._loop("middle", reduce_middle, {}, p, 3) for p in (False, True)}
        # (on numba's threads only: serial calls keep ``reduce_middle``)
        self.middle_parts = self._loop("parts", reduce_middle_parts, {}, True, 3)
        narrow = {"WIDE": itemsize == 8}
        self.narrow = {p: self._loop("narrow", reduce_narrow, narrow, p, 3) for p in (False, True)}
        self.tiles = {
            p: self._loop("tiles", reduce_tiles, {"INNER": 0}, p, 3) for p in (False, True)
        }
        # What calls from Python run for a chosen loop and element type (``entry``).
        self._entries: dict[tuple[Loop, bool, np.dtype], Any] = {}

    def _loop(self, kind: str, fn, extra: dict, parallel: bool, ndim: int) -> Loop:
        """``fn`` bound to this format's functions and ``extra``, as a ``Loop`` named for
        ``kind``, the format and ``parallel``, taking inputs of ``ndim`` axes."""
        name = f"portable_{kind}_{self._tag}_{'par' if parallel else 'ser'}"
        return Loop(fn, name, {**self._bound, **extra}, parallel, ndim)

    def choose(
        self, outer: int, n: int, inner: int, parallel: bool, shape: tuple[int, ...] = ()
    ) -> PortableCall:
        """The loop for a C-contiguous input (float16 and bfloat16 as int16) seen as
        ``(outer, n, inner)``, serial or on numba's threads, and how to call it. A 1-D
        input of ``shape`` (its own), which the serial loop of rows takes with a leading
        axis of 1, the call takes as it is."""
        # Loops compiled for a length of rows or a width of blocks only for inputs of more
        # than one task's elements: a smaller one (on numba's threads only where a caller's
        # thresholds send it there) would spend more on compiling the loop than it saves.
        fixed = parallel and outer * n * inner > TASK_ELEMENTS
        if inner == 1:
            if fixed and 2 <= n <= FIXED_ROWS[self.itemsize]:
                loop = self.fixed_rows(n)
            elif fixed and self.float_keys and halved(n, self.itemsize):
                # (floats only: integer rows of these lengths took about as long in
                # ``reduce_rows``)
                loop = self.fixed_halves(n // 2)
            elif parallel and self.float_keys and n <= self.short_row[True]:
                # (floats only: an integer is its own key, and ``reduce_rows`` is as fast)
                loop = self.rows_across
            elif outer < PIECES and n >= 2 * PIECE:
                loop = self.row_pieces[parallel]
            else:
                loop = self.rows[parallel]
            if not parallel and shape == (n,):
                # (serial calls of 1-D inputs only: on small inputs the view in Python is
                # a share of the call worth saving, but each function bound to a loop makes
                # LLVM optimise the loop again when first compiled)
                return PortableCall(loop, True, shape, (outer,))
            in_shape, out_shape = (outer, n), (outer,)
        else:
            if tiled(n, inner, self.itemsize):
                if fixed and inner <= FIXED_COLUMNS[self.itemsize]:
                    loop = self.fixed_tiles(inner)
                else:
                    loop = self.tiles[parallel]
            elif inner < NARROW_WIDTH:
                loop = self.narrow[parallel]
            elif parallel and outer < PIECES and inner <= PART_WIDTH and n >= 2 * PART_ROWS:
                loop = self.middle_parts
            else:
                loop = self.middle[parallel]
            in_shape, out_shape = (outer, n, inner), (outer, inner)
        return PortableCall(loop, False, in_shape, out_shape)

    def fixed_rows(self, n: int) -> Loop:
        """``reduce_fixed_rows`` compiled for rows of ``n`` elements."""
        return self._compiled_for(reduce_fixed_rows, "LENGTH", n, 2)

    def fixed_halves(self, half: int) -> Loop:
        """``reduce_fixed_halves`` compiled for rows of ``2 * half`` elements."""
        return self._compiled_for(reduce_fixed_halves, "HALF", half, 2)

    def fixed_tiles(self, inner: int) -> Loop:
        """``reduce_tiles`` compiled for blocks of ``inner`` columns."""
        return self._compiled_for(reduce_tiles, "INNER", inner, 3)

    def _compiled_for(self, fn, constant: str, value: int, ndim: int) -> Loop:
        """``fn`` with its global ``constant`` set to ``value``, on numba's threads,
        taking inputs of ``ndim`` axes: made on first use, one for each pair."""
        loop = self._fixed.get((fn, value))
        if loop is None:
            kind = f"{fn.__name__}_{constant.lower()}{value}"
            loop = self._fixed[fn, value] = self._loop(kind, fn, {constant: value}, True, ndim)
        return loop

    def entry(self, call: PortableCall, element: np.dtype):
        """What a call from Python runs for ``call`` on an input of ``element`` (float16
        and bfloat16 as int16): the loop itself, or a small compiled function bound to it
        that views float32, float64 and unsigned integers as the signed integers of their
        width (``read_signed``), adds the leading axis of 1 that the input lacks
        (``add_leading_axis``), or both (``read_signed_add_leading_axis``); compiled for
        ``element`` the first time. The loop is compiled for signed integers only, so
        that an unsigned type runs the signed one's (passed its ``flip_argument``)."""
        key = (call.loop, call.leading, element)
        entry = self._entries.get(key)
        if entry is None:
            if element != self.signed:
                fn = read_signed_add_leading_axis if call.leading else read_signed
            else:
                fn = add_leading_axis if call.leading else None
            entry = call.loop.compiled(self.signed)
            if fn is not None:
                entry = self._adapter(fn, call, entry).compiled(element)
            self._entries[key] = entry
        return entry

    def _adapter(self, fn, call: PortableCall, compiled) -> Loop:
        """``fn`` (``read_signed``, ``add_leading_axis`` or both) bound to ``compiled``,
        what runs ``call.loop`` for one element type. (Made once for each: ``entry``
        keeps what it compiles.)"""
        name = f"portable_{fn.__name__}_{call.loop.py_func.__name__}"
        bound = {"loop": compiled, "bits": self.signed.type}
        return Loop(fn, name, bound, False, call.loop.ndim - call.leading)


@functools.cache
def portable_kernels(kind: int, itemsize: int) -> PortableKernels:
    """The portable kernels of key kind ``kind`` for elements of ``itemsize`` bytes: the
    same for ArgMax's and ArgMin's kinds of a format, which pass ``flip_argument``."""
    return _kernels_of_format(KeyKind(kind).format, itemsize)


@functools.cache
def _kernels_of_format(fmt: KeyKind, itemsize: int) -> PortableKernels:
    return PortableKernels(fmt, itemsize)

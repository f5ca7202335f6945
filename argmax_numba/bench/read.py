"""The benchmark's yardsticks: the time to read a buffer once, and to write an output.

``read_bound(x)`` takes the maximum of ``x``'s bytes viewed as unsigned integers of
the same width, in one pass. An unsigned max vectorises to a single SIMD instruction
per register on x86 (``vpmaxu*``; emulated but still cheap for 64 bits), so the pass
is limited by memory bandwidth, not by arithmetic, and it reads exactly the bytes an
ArgMax has to read. Each thread streams one contiguous part of the buffer with a
serial inner loop that numba compiles to vector code. Below ``SERIAL_BELOW_BYTES``
the serial loop alone is used: waking the thread pool would cost more than reading.

``write_bound(n)`` fills a new int64 array of ``n`` elements, as every ArgMax must
write its result: for a large array that is mostly the operating system handing out
and zeroing fresh pages. Where the output is large next to the input (a tall, narrow
tensor), read plus write is the least an ArgMax can take.

``pass_bound(buf, nout)`` does both in one pass, as an ArgMax does: each thread reads
its part of the input a block at a time and, after each block, writes its share of a
new int64 output of ``nout`` elements (the running maximum). No ArgMax can be faster,
so where this pass alone takes more than 1.3 read bounds, that target is out of reach
for any implementation.

``cache_flusher()`` reads a buffer twice the size of the largest cache, so that every
timed call can start from the same state: none of the input in cache, no dirty lines of
what ran before (numpy's copy of its input, a bound's output) left to write back.

Only the benchmark imports this module.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numba
import numpy as np

__all__ = [
    "FLUSH_FROM_BYTES",
    "PASS_BLOCK_BYTES",
    "SERIAL_BELOW_BYTES",
    "cache_flusher",
    "cache_sizes",
    "largest_cache_bytes",
    "pass_bound",
    "read_bound",
    "write_bound",
]

# Inputs smaller than this are read on the calling thread only.
SERIAL_BELOW_BYTES = 256 * 1024

# Bytes of input that ``pass_bound`` reads before it writes the output they map to.
PASS_BLOCK_BYTES = 64 * 1024

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@numba.njit(nogil=True)
def _max_serial(buf):
    """Maximum of a contiguous 1-D unsigned buffer (vectorised loop)."""
    m = buf[0]
    for i in range(1, buf.size):
        m = max(m, buf[i])
    return m


@numba.njit(inline="always")
def _part(n, nparts, p):
    """The bounds ``(lo, hi)`` of part ``p`` of ``nparts`` equal contiguous parts of
    ``n`` elements (the last ones may be shorter, or empty)."""
    step = (n + nparts - 1) // nparts
    return min(n, p * step), min(n, (p + 1) * step)


@numba.njit(parallel=True, nogil=True)
def _max_parallel(buf, nparts):
    """Maximum of ``buf``, one contiguous part per thread."""
    partial = np.zeros(nparts, dtype=buf.dtype)
    for p in numba.prange(nparts):
        lo, hi = _part(buf.size, nparts, p)
        if lo < hi:
            partial[p] = _max_serial(buf[lo:hi])
    return partial.max()


def flat_unsigned(x: np.ndarray) -> np.ndarray:
    """``x``'s memory as a 1-D unsigned array of the same item width (no copy)."""
    if not (x.flags.c_contiguous or x.flags.f_contiguous):
        raise ValueError("the read bound needs a contiguous input (C or Fortran order)")
    return x.ravel(order="K").view(_UNSIGNED[x.dtype.itemsize])


def read_bound(buf: np.ndarray) -> int:
    """One pass over ``buf`` (from ``flat_unsigned``); returns its maximum."""
    if buf.nbytes < SERIAL_BELOW_BYTES:
        return _max_serial(buf)
    return _max_parallel(buf, numba.get_num_threads())


@numba.njit(parallel=True, nogil=True)
def _fill_parallel(out, nparts):
    """Write every element of ``out``, one contiguous part per thread."""
    for p in numba.prange(nparts):
        lo, hi = _part(out.size, nparts, p)
        out[lo:hi] = 1


def write_bound(n: int) -> np.ndarray:
    """A new int64 array of ``n`` elements, every one written (in parallel if large)."""
    out = np.empty(n, dtype=np.int64)
    if out.nbytes < SERIAL_BELOW_BYTES:
        out.fill(1)
    else:
        _fill_parallel(out, numba.get_num_threads())
    return out


@numba.njit(nogil=True)
def _pass_part(buf, out, block):
    """``buf`` (not empty), ``block`` elements at a time, each block followed by its share
    of ``out``; returns the maximum of ``buf``."""
    blocks = (buf.size + block - 1) // block
    m = buf[0]
    for b in range(blocks):
        m = max(m, _max_serial(buf[b * block : min(buf.size, (b + 1) * block)]))
        # The b-th of ``blocks`` equal slices of the output: the last one ends ``out``, so
        # that it holds the maximum (as bits: 64-bit ones above int64's range wrap).
        out[b * out.size // blocks : (b + 1) * out.size // blocks] = m
    return m


@numba.njit(parallel=True, nogil=True)
def _pass_parallel(buf, out, nparts, block):
    """Each part's input, ``block`` elements at a time, each block followed by its share of
    the part's output; returns the maximum of ``buf``."""
    partial = np.zeros(nparts, dtype=buf.dtype)
    for p in numba.prange(nparts):
        lo, hi = _part(buf.size, nparts, p)
        out_lo, out_hi = _part(out.size, nparts, p)
        if lo < hi:
            partial[p] = _pass_part(buf[lo:hi], out[out_lo:out_hi], block)
    return partial.max()


def pass_bound(buf: np.ndarray, nout: int) -> tuple[int, np.ndarray]:
    """One pass that reads ``buf`` (from ``flat_unsigned``) and writes a new int64 array of
    ``nout`` elements; returns the maximum of ``buf`` and the array."""
    out = np.empty(nout, dtype=np.int64)
    block = max(1, PASS_BLOCK_BYTES // buf.itemsize)
    if buf.nbytes < SERIAL_BELOW_BYTES:
        return _pass_part(buf, out, block), out
    return _pass_parallel(buf, out, numba.get_num_threads(), block), out


# Inputs of at least this many bytes get the cache flushed before each timed call;
# smaller ones are meant to be timed in cache.
FLUSH_FROM_BYTES = 1 << 20
# Bounds on the flush buffer: where no cache size is known, and at most.
_FLUSH_DEFAULT_BYTES = 256 << 20
_FLUSH_MAX_BYTES = 1 << 30


def largest_cache_bytes(root: str = "/sys/devices/system/cpu/cpu0/cache") -> int:
    """The size of the CPU's largest cache as Linux reports it, or 0 where unknown."""
    sizes = [_parse_size(entry.read_text()) for entry in Path(root).glob("index*/size")]
    return max(sizes, default=0)


def cache_sizes(root: str = "/sys/devices/system/cpu/cpu0/cache") -> dict[str, int]:
    """The data caches of one core as Linux reports them, by level ("L1d", "L2", "L3"):
    empty where unknown."""
    sizes = {}
    for entry in sorted(Path(root).glob("index*")):
        try:
            kind = (entry / "type").read_text().strip()
            level = (entry / "level").read_text().strip()
            size = _parse_size((entry / "size").read_text())
        except OSError:
            continue
        if kind != "Instruction" and size:
            sizes[f"L{level}" + ("d" if kind == "Data" else "")] = size
    return sizes


def _parse_size(text: str) -> int:
    """Bytes of a sysfs cache size such as "32K" (0 where unreadable)."""
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    digits = text.rstrip("KMG")
    return int(digits) * scale if digits.isdigit() else 0


def cache_flusher(nbytes: int | None = None) -> tuple[Callable[[], int], int]:
    """A call that reads a buffer of ``nbytes`` (twice the largest cache by default), and
    that size. The buffer is written once, so that its pages are its own."""
    if nbytes is None:
        cache = largest_cache_bytes()
        nbytes = min(_FLUSH_MAX_BYTES, 2 * cache) if cache else _FLUSH_DEFAULT_BYTES
    scratch = np.ones(max(1, nbytes // 8), dtype=np.uint64)
    return (lambda: read_bound(scratch)), scratch.nbytes

"""ArgMax of an array larger than memory, block by block, with ``argmax_numba.dask``.

A float32 array of ``--gib`` GiB (4 by default) is generated chunk by chunk by dask's
random generator and reduced along axis 0, across all its row blocks, without ever
being held in memory whole. The result is checked against ``dask.array.argmax`` on the
same lazy array (both run in one pass, so each block is generated once), and the peak
resident memory of the process is compared with the array's size.

Usage: ``python examples/dask_big_argmax.py [--gib 4] [--chunk-mib 64] [--cols 4096]``
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import dask
import dask.array as da
import numpy as np
from dask.diagnostics import ProgressBar

from argmax_numba.dask import argmax

MIB = 1 << 20
GIB = 1 << 30


def peak_rss_bytes() -> int:
    """Peak resident memory of this process (``ru_maxrss`` is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=4.0, help="array size in GiB")
    parser.add_argument("--chunk-mib", type=float, default=64.0, help="block size in MiB")
    parser.add_argument("--cols", type=int, default=4096, help="columns (the kept axis)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    itemsize = np.dtype(np.float32).itemsize
    rows = max(1, int(args.gib * GIB) // (itemsize * args.cols))
    block_rows = max(1, min(rows, int(args.chunk_mib * MIB) // (itemsize * args.cols)))
    x = da.random.default_rng(args.seed).random(
        (rows, args.cols), dtype=np.float32, chunks=(block_rows, args.cols)
    )
    print(
        f"array {x.shape} float32 = {x.nbytes / GIB:.2f} GiB "
        f"in {x.numblocks[0]} blocks of {block_rows * args.cols * itemsize / MIB:.1f} MiB"
    )

    ours = argmax(x, axis=0, keepdims=0)  # lazy: nothing is generated yet
    theirs = da.argmax(x, axis=0)
    start = time.perf_counter()
    with ProgressBar():
        got, expected = dask.compute(ours, theirs)
    elapsed = time.perf_counter() - start

    assert got.dtype == np.int64 and got.shape == (args.cols,)
    np.testing.assert_array_equal(got, expected)
    peak = peak_rss_bytes()
    print(f"argmax over axis 0 equals dask.array.argmax for all {args.cols} columns")
    print(f"rows of the first maxima: {got[:5].tolist()} ...")
    print(
        f"time {elapsed:.1f} s; peak RSS {peak / MIB:.0f} MiB = "
        f"{100 * peak / x.nbytes:.0f}% of the {x.nbytes / MIB:.0f} MiB array"
    )
    if x.nbytes >= 2 * GIB:
        assert peak < x.nbytes, "the array should never have been held whole"


if __name__ == "__main__":
    main()

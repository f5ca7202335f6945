"""The portable kernels: plain ``@njit(parallel=True)`` loops over the canonical layout.

They use only numba's public API (``numba.njit``, ``numba.prange``), so they work on any
numba, CPU and Python that numba supports, and under ``NUMBA_DISABLE_JIT=1`` they run as
plain Python. They are also the slow, obvious twin that the fast kernels are tested
against.

Nine loops serve every layout of the canonical C-contiguous ``(outer, n, inner)`` view,
each a plain function of ``(x, out, last, flip)``:

``rows``
    The last axis (``inner == 1``): short rows in one pass each, longer ones a block at a
    time (``reduce_rows``); short rows compiled for their length (``reduce_fixed_rows``),
    or for half of it (``reduce_fixed_halves``), or folded across the rows
    (``reduce_rows_across``); few long rows cut into pieces (``reduce_row_pieces``).
``middle``
    Every other axis: a block's rows folded into running keys and row numbers, a stretch
    of positions to a task (``reduce_middle``); few blocks cut into parts of rows
    (``reduce_middle_parts``); narrow blocks read with rows side by side
    (``reduce_narrow``); narrow blocks of few rows copied side by side into tiles
    (``reduce_tiles``).
``keys``
    The integer keys the loops compare, exactly as the fast kernels' (every NaN above
    +inf, ``-0.0 == +0.0``), and ``flip``, which makes one compiled loop serve ArgMax and
    ArgMin, and both signs of an integer width.
``tuning``
    The sizes of blocks, tasks, short rows and tiles (docs/performance.md has the
    measurements behind most of them).
``compiling``
    How a loop is bound to one element format's functions and compiled on first use.
``choice``
    ``PortableKernels``: one format's loops, and the one place that chooses which runs
    an input (``PortableKernels.choose``).

Calls from Python take the loop that ``PortableKernels.choose`` chooses; users' compiled
functions call ``reduce_rows`` and ``reduce_middle`` only, as every loop they call is
compiled with them (``jit.py``). A serial call from Python passes a 1-D input as it
is: the loop's leading axis of 1 is added in compiled code (``add_leading_axis``).

The loops take floats and unsigned integers as the signed integers of their width:
serial calls from Python pass them through a small compiled function that makes that
view, ``read_signed``; calls on numba's threads pass a view made in Python (``api``).
Keys are computed at the elements' own width, so that the vectorised loops take as many
elements at once as the data allows.
"""

from __future__ import annotations

from .choice import PortableCall, PortableKernels, halved, portable_kernels, tiled
from .compiling import Loop
from .keys import flip_argument

__all__ = [
    "Loop",
    "PortableCall",
    "PortableKernels",
    "flip_argument",
    "halved",
    "portable_kernels",
    "tiled",
]

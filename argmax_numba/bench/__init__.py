"""The benchmark: ``python -m argmax_numba.bench [options]`` (``--help`` lists them).

Only the benchmark imports this subpackage; ``import argmax_numba`` does not, so its
helpers, onnxruntime and matplotlib stay unloaded. ``cli`` parses the options and runs
the sections; ``cases`` builds the inputs, ``rows`` times them against numpy,
onnxruntime (``ort``) and the memory bounds (``read``), ``sections`` and ``subproc``
time calls from ``@njit`` code, memory, start-up and dask, and ``report`` prints the
tables and draws the plot.
"""

from __future__ import annotations

from .cli import main

__all__ = ["main"]

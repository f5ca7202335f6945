"""ONNX ArgMax and ArgMin (opsets 12 and 13) as parallel Numba kernels.

``argmax(data, axis=0, keepdims=1, select_last_index=0)`` and ``argmin`` (the same
arguments) follow the ONNX operators exactly and are callable both from Python and from
``@numba.njit`` functions.
``kernel_tier()`` tells which kernels this process runs: ``"fast"`` or ``"portable"``.
"""

from __future__ import annotations

from . import tiers as _tiers
from .runtime import parallel as _parallel

_parallel.configure()
_tiers.choose()

from . import jit as _jit  # noqa: E402, F401  (registers both for numba-compiled callers)
from .api import argmax, argmin  # noqa: E402
from .dtypes import SUPPORTED as SUPPORTED_DTYPES  # noqa: E402
from .tiers import kernel_tier  # noqa: E402

__all__ = ["SUPPORTED_DTYPES", "argmax", "argmin", "kernel_tier"]
__version__ = "0.1.0"

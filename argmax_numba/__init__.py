"""ONNX ArgMax (opsets 12 and 13) as a parallel Numba kernel.

``argmax(data, axis=0, keepdims=1, select_last_index=0)`` follows the ONNX operator
exactly and is callable both from Python and from ``@numba.njit`` functions.
"""

from __future__ import annotations

from .runtime import parallel as _parallel

_parallel.configure()

from . import jit as _jit  # noqa: E402, F401  (registers argmax for numba-compiled callers)
from .api import argmax  # noqa: E402
from .dtypes import SUPPORTED as SUPPORTED_DTYPES  # noqa: E402

__all__ = ["SUPPORTED_DTYPES", "argmax"]
__version__ = "0.1.0"

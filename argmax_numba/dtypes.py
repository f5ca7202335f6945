"""The element types ArgMax accepts, and how each one is reduced.

Integers are compared as they are. Floating-point types are compared through an
order-preserving signed-integer key of their bits (see ``vector.keys``). float16 and
bfloat16, which numba cannot load as floats, reach the kernel as int16 views.

bfloat16 is ``ml_dtypes.bfloat16``, looked up only once a dtype is not found among the
others: importing ml_dtypes is slow (numpy registers its ufunc loops), and an array of
it can only exist once ml_dtypes has been imported (docs/performance.md, "ml_dtypes
imported only when a bfloat16 array appears").
"""

from __future__ import annotations

import sys
from enum import IntEnum

import numpy as np

__all__ = ["KINDS", "SUPPORTED", "KeyKind", "kernel_view"]


class KeyKind(IntEnum):
    """How the elements of a dtype are compared: as integers, or through the integer key
    of a float format's bits (``vector.keys``). Kernels are compiled once per key kind."""

    INT = 0
    F16 = 1
    BF16 = 2
    F32 = 3
    F64 = 4


# dtype -> (key kind, dtype of the view the kernel reads); bfloat16 joins on first use.
KINDS: dict[np.dtype, tuple[KeyKind, np.dtype]] = {
    np.dtype(np.float64): (KeyKind.F64, np.dtype(np.float64)),
    np.dtype(np.float32): (KeyKind.F32, np.dtype(np.float32)),
    np.dtype(np.float16): (KeyKind.F16, np.dtype(np.int16)),
}
_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
for _name in _INTS:
    KINDS[np.dtype(_name)] = (KeyKind.INT, np.dtype(_name))

SUPPORTED: tuple[str, ...] = ("float64", "float32", "float16", "bfloat16", *_INTS)


def _add_bfloat16() -> bool:
    """Put bfloat16 into ``KINDS`` if ml_dtypes is loaded; whether it is there now."""
    ml_dtypes = sys.modules.get("ml_dtypes")
    bfloat16 = getattr(ml_dtypes, "bfloat16", None)
    if bfloat16 is None:
        return False
    KINDS[np.dtype(bfloat16)] = (KeyKind.BF16, np.dtype(np.int16))
    return True


def kernel_view(dtype: np.dtype) -> tuple[KeyKind, np.dtype]:
    """Return ``(kind, view dtype)`` for a supported ``dtype`` in native byte order.

    Raises TypeError naming the dtype and the supported ones otherwise.
    """
    try:
        return KINDS[dtype]
    except KeyError:
        if dtype.name == "bfloat16" and _add_bfloat16() and dtype in KINDS:
            return KINDS[dtype]
    except TypeError:  # unhashable oddities
        pass
    raise TypeError(
        f"argmax: unsupported input dtype {dtype!s}; ONNX ArgMax accepts {', '.join(SUPPORTED)}"
    )

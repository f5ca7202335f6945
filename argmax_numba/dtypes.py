"""The element types ArgMax and ArgMin accept, and how each one is reduced.

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
from enum import Enum, IntEnum

import numpy as np

__all__ = [
    "FLOAT_BITS",
    "KINDS",
    "SUPPORTED",
    "VIEWS",
    "Extreme",
    "KeyKind",
    "flip_mask",
    "highest_key",
    "kernel_view",
    "lowest_key",
]


class Extreme(Enum):
    """Which extreme an operator looks for: ArgMax's maximum or ArgMin's minimum."""

    MAX = "ArgMax"
    MIN = "ArgMin"

    @property
    def op_type(self) -> str:
        """The ONNX operator's name, e.g. ``"ArgMax"``."""
        return self.value

    @property
    def function(self) -> str:
        """The Python function's name, e.g. ``"argmax"``."""
        return self.value.lower()


class KeyKind(IntEnum):
    """How the elements of a dtype are compared: as integers, or through the integer key
    of a float format's bits (``vector.keys``). The fast kernels are compiled once per key
    kind; the portable ones once per format, the flip passed to them as an argument
    (``kernels.portable.flip_argument``).

    ArgMin's kinds (``*_MIN``) are ArgMax's in reverse order: the kernels search their
    keys for the maximum all the same, after each element's bits are flipped (every bit
    of an integer, the sign bit of a float), which reverses the order of the integers and
    of the numbers, leaves ``-0.0 == +0.0`` and keeps every NaN a NaN, still the
    largest. One kernel family serves both operators."""

    INT = 0
    F16 = 1
    BF16 = 2
    F32 = 3
    F64 = 4
    INT_MIN = 8
    F16_MIN = 9
    BF16_MIN = 10
    F32_MIN = 11
    F64_MIN = 12

    @property
    def format(self) -> KeyKind:
        """The element format, ArgMax's kind of it (``F32`` for ``F32_MIN``)."""
        return KeyKind(self & 7)

    @property
    def reversed(self) -> bool:
        """Whether this is one of ArgMin's kinds, whose elements are flipped first."""
        return bool(self & 8)

    def of(self, extreme: Extreme) -> KeyKind:
        """This kind's format, for the operator that looks for ``extreme``."""
        return KeyKind(self.format | (8 if extreme is Extreme.MIN else 0))


# Bits of +inf and mask of the magnitude bits, by float format.
FLOAT_BITS: dict[KeyKind, tuple[int, int]] = {
    KeyKind.F16: (0x7C00, 0x7FFF),
    KeyKind.BF16: (0x7F80, 0x7FFF),
    KeyKind.F32: (0x7F800000, 0x7FFFFFFF),
    KeyKind.F64: (0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF),
}


def flip_mask(kind: int, bits: int) -> int:
    """What the bits of a ``bits``-wide element of key kind ``kind`` are xor-ed with
    before they are keyed: 0 for ArgMax's kinds; for ArgMin's, every bit of an integer
    (``~v`` reverses both the signed and the unsigned order) or a float's sign bit."""
    kind = KeyKind(kind)
    if not kind.reversed:
        return 0
    return (1 << bits) - 1 if kind.format == KeyKind.INT else 1 << (bits - 1)


def lowest_key(kind: int, bits: int, unsigned: bool) -> int:
    """The least key of ``bits``-wide elements: of -inf for floats, of the least integer
    (the same for ArgMin's kinds, whose flipped bits span the same range)."""
    kind = KeyKind(kind).format
    if kind != KeyKind.INT:
        return -FLOAT_BITS[kind][0]
    return 0 if unsigned else -(1 << (bits - 1))


def highest_key(kind: int, bits: int, unsigned: bool) -> int:
    """The greatest key of ``bits``-wide elements, as a signed integer of that width
    (all ones for unsigned integers): every NaN's for floats, the greatest integer's
    (the same for ArgMin's kinds, whose flipped bits span the same range)."""
    kind = KeyKind(kind).format
    if kind != KeyKind.INT:
        return FLOAT_BITS[kind][0] + 1
    return -1 if unsigned else (1 << (bits - 1)) - 1


# dtype -> (key kind, dtype of the view the kernel reads); bfloat16 joins on first use.
KINDS: dict[np.dtype, tuple[KeyKind, np.dtype]] = {
    np.dtype(np.float64): (KeyKind.F64, np.dtype(np.float64)),
    np.dtype(np.float32): (KeyKind.F32, np.dtype(np.float32)),
    np.dtype(np.float16): (KeyKind.F16, np.dtype(np.int16)),
}
_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
for _name in _INTS:
    KINDS[np.dtype(_name)] = (KeyKind.INT, np.dtype(_name))

# For each operator: dtype -> (key kind, view dtype), filled by ``kernel_view`` as dtypes
# are met, for the wrapper's lookup of a dtype seen before.
VIEWS: dict[Extreme, dict[np.dtype, tuple[KeyKind, np.dtype]]] = {e: {} for e in Extreme}

SUPPORTED: tuple[str, ...] = ("float64", "float32", "float16", "bfloat16", *_INTS)


def _add_bfloat16() -> bool:
    """Put bfloat16 into ``KINDS`` if ml_dtypes is loaded; whether it is there now."""
    ml_dtypes = sys.modules.get("ml_dtypes")
    bfloat16 = getattr(ml_dtypes, "bfloat16", None)
    if bfloat16 is None:
        return False
    KINDS[np.dtype(bfloat16)] = (KeyKind.BF16, np.dtype(np.int16))
    return True


def kernel_view(dtype: np.dtype, extreme: Extreme = Extreme.MAX) -> tuple[KeyKind, np.dtype]:
    """Return ``(kind, view dtype)`` for a supported ``dtype`` in native byte order, the
    kind for the operator that looks for ``extreme``.

    Raises TypeError naming the dtype, the operator and the supported dtypes otherwise.
    """
    try:
        found = KINDS[dtype]
    except KeyError:
        found = None
        if dtype.name == "bfloat16" and _add_bfloat16():
            found = KINDS.get(dtype)
    except TypeError:  # unhashable oddities
        found = None
    if found is None:
        raise TypeError(
            f"{extreme.function}: unsupported input dtype {dtype!s}; ONNX {extreme.op_type} "
            f"accepts {', '.join(SUPPORTED)}"
        )
    kind, view = found
    VIEWS[extreme][dtype] = result = (kind.of(extreme), view)
    return result

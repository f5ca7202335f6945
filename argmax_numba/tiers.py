"""Which kernels run in this process: the fast tier or the portable one.

The **fast** tier (``kernels.registry``, ``vector``, ``runtime``) is hand-written LLVM IR
run through numba internals; it is used only where it is known to work: the numba
releases it was tested with, on the CPUs and systems it was tried on. Everything else
gets the **portable** tier (``kernels.portable``): plain ``@njit(parallel=True)`` loops
that use only numba's public API, right on any numba, CPU and Python numba supports,
and slower.

The choice is made once, when the package is imported, and ``kernel_tier()`` tells it.
``ARGMAX_NUMBA_TIER=portable`` or ``=fast`` in the environment overrides it (``fast`` on
an untried numba or CPU warns, and obeys). Where the fast tier fails at run time (a numba
internal moved, a disk cache written by another numba), the process falls back to the
portable tier, with one warning, and the call that failed still returns the right
answer. Under ``NUMBA_DISABLE_JIT=1`` the portable kernels run as plain Python.
"""

from __future__ import annotations

import os
import platform
import sys
import warnings
from enum import Enum

import numba

__all__ = ["FAST_NUMBA", "STATE", "Tier", "current", "fall_back", "kernel_tier"]

ENVIRONMENT = "ARGMAX_NUMBA_TIER"
# The first and last numba releases (major, minor) the fast tier was tested with.
FAST_NUMBA = ((0, 63), (0, 68))
# The systems and processors the fast tier was tried on (its vector code needs AVX2 at
# least on x86-64).
_TRIED_SYSTEMS = ("linux",)
_TRIED_MACHINES = ("x86_64", "amd64")
_TRIED_FEATURE = "+avx2"


class Tier(str, Enum):
    """The two sets of kernels."""

    FAST = "fast"
    PORTABLE = "portable"


class State:
    """This process's tier, and whether its fallback has warned."""

    tier: Tier = Tier.PORTABLE
    warned: bool = False


STATE = State()
"""Read by the wrapper on every call (an attribute, cheaper than a call); changed only
by ``choose``, ``fall_back`` and ``use``."""


def kernel_tier() -> str:
    """The kernels this process runs: ``"fast"`` or ``"portable"`` (see the module)."""
    return STATE.tier.value


def current() -> Tier:
    """The tier this process runs."""
    return STATE.tier


def _warn(message: str) -> None:
    warnings.warn(message, RuntimeWarning, stacklevel=3)


def untried_reason() -> str | None:
    """Why the fast tier is not known to work here, or None where it is."""
    if numba.config.DISABLE_JIT:
        return "NUMBA_DISABLE_JIT is set"
    version = tuple(numba.version_info.short)
    (first, last) = FAST_NUMBA
    tested = f"{first[0]}.{first[1]}-{last[0]}.{last[1]}"
    if version > last:
        return (
            f"numba {numba.__version__} is newer than the fast kernels were tested with ({tested})"
        )
    if version < first:
        return (
            f"numba {numba.__version__} is older than the fast kernels were tested with ({tested})"
        )
    system, machine = sys.platform, platform.machine().lower()
    if not system.startswith(_TRIED_SYSTEMS) or machine not in _TRIED_MACHINES:
        return f"the fast kernels were not tried on {system} {platform.machine()}"
    try:
        from .runtime.target import compile_target

        cpu, features = compile_target()
    except Exception as exc:  # an internal moved: untried in effect
        return f"the CPU numba compiles for could not be read ({type(exc).__name__}: {exc})"
    if _TRIED_FEATURE not in features:
        return f"the fast kernels need AVX2, which the CPU numba compiles for ({cpu}) lacks"
    return None


def choose() -> Tier:
    """Choose this process's tier (once, at import) and warn where it is not the one
    asked for or expected."""
    asked = os.environ.get(ENVIRONMENT, "").strip().lower()
    reason = untried_reason()
    if asked not in ("", Tier.FAST.value, Tier.PORTABLE.value):
        _warn(f"{ENVIRONMENT}={asked!r} is neither 'fast' nor 'portable'; ignored")
        asked = ""
    if asked == Tier.PORTABLE.value:
        tier = Tier.PORTABLE
    elif reason is None:
        tier = Tier.FAST
    elif numba.config.DISABLE_JIT:
        tier = Tier.PORTABLE  # what the user asked numba for: no warning
    elif asked == Tier.FAST.value:
        _warn(f"{reason}; using the fast kernels, as {ENVIRONMENT}=fast asks")
        tier = Tier.FAST
    else:
        _warn(f"{reason}; using the portable kernels")
        tier = Tier.PORTABLE
    STATE.tier = tier
    return tier


def fall_back(exc: BaseException) -> None:
    """Switch this process to the portable tier after the fast one failed with ``exc``,
    with one warning."""
    STATE.tier = Tier.PORTABLE
    if not STATE.warned:
        STATE.warned = True
        _warn(
            f"argmax: the fast kernels failed ({type(exc).__name__}: {exc}); "
            "using the portable kernels from now on"
        )


def use(tier: Tier) -> None:
    """Run ``tier`` from now on (tests switch tiers with it; Python callers only:
    compiled callers keep the tier they were compiled with)."""
    STATE.tier = Tier(tier)

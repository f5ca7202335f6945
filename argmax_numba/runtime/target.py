"""The CPU that numba compiles for: its name and features, as LLVM knows them."""

from __future__ import annotations

__all__ = ["compile_target", "host_cpu"]


def compile_target() -> tuple[str, list[str]]:
    """The CPU name and features numba compiles for (as set by ``NUMBA_CPU_NAME`` and
    ``NUMBA_CPU_FEATURES``, or read off the host); no name or features off x86-64, or
    where numba's internals that tell them have moved."""
    try:
        from llvmlite.binding import get_host_cpu_name, get_process_triple
        from numba.core import config
        from numba.core.codegen import get_host_cpu_features
    except ImportError:
        return "", []
    if get_process_triple().split("-")[0] != "x86_64":
        return "", []
    features = config.CPU_FEATURES
    if features is None:
        features = get_host_cpu_features()
    return config.CPU_NAME or get_host_cpu_name(), features.split(",")


def host_cpu() -> tuple[str, set[str]]:
    """The host CPU's name and the features it has (as LLVM names them)."""
    from llvmlite.binding import get_host_cpu_features as host_features
    from llvmlite.binding import get_host_cpu_name

    features = host_features()
    return get_host_cpu_name(), {name for name in features if features[name]}

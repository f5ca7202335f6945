"""Choice of numba's threading layer, and what to do after ``fork()``.

numba's default layer on Linux is GNU OpenMP, which aborts a child process forked
after the parent has used it ("fork() called from a process already using GNU
OpenMP") -- exactly what multiprocessing and process pools do. The TBB layer is safe
with both threads and fork, but pip installs ``libtbb`` where the dynamic loader does
not look, so numba reports it unavailable. This module loads it from the ``tbb``
distribution's own files and selects it, unless the user chose a layer through
``NUMBA_THREADING_LAYER`` or numba's threads are already running.

Where TBB still cannot be had, the wrapper falls back to the serial kernels in a
child forked after the parent ran parallel code under OpenMP, and serialises calls
under the ``workqueue`` layer, which is not thread-safe.
"""

from __future__ import annotations

import ctypes
import os
import threading
from importlib import metadata

import numba
from numba.np.ufunc import parallel as _numba_parallel

__all__ = ["configure", "layer_lock", "parallel_allowed"]

_state = {"forked_after_omp": False}
_lock = threading.Lock()


def _tbb_library() -> str | None:
    """Path of ``libtbb.so.12`` as installed by the ``tbb`` distribution, if any."""
    try:
        files = metadata.files("tbb") or []
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name.startswith("libtbb.so.12"):
            path = str(f.locate())
            if os.path.exists(path):
                return path
    return None


def _load_tbb() -> bool:
    try:
        from numba.np.ufunc import tbbpool

        return True
    except ImportError:
        pass
    path = _tbb_library()
    if path is None:
        return False
    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        from numba.np.ufunc import tbbpool  # noqa: F401
    except (OSError, ImportError):
        return False
    return True


def _launched_layer() -> str | None:
    if not _numba_parallel._is_initialized:
        return None
    return numba.threading_layer()


def _after_fork_in_child() -> None:
    if _launched_layer() == "omp":
        _state["forked_after_omp"] = True


def configure() -> None:
    """Select TBB where the user has not chosen a layer and threads are not yet running."""
    if "NUMBA_THREADING_LAYER" not in os.environ and _launched_layer() is None:
        if numba.config.THREADING_LAYER == "default" and _load_tbb():
            numba.config.THREADING_LAYER = "tbb"
    os.register_at_fork(after_in_child=_after_fork_in_child)


def parallel_allowed() -> bool:
    """False in a child forked after its parent ran OpenMP threads."""
    return not _state["forked_after_omp"]


def layer_lock() -> threading.Lock | None:
    """A lock to hold around parallel calls where the layer is not thread-safe."""
    return _lock if _launched_layer() in (None, "workqueue") else None

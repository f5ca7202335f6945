"""numba's disk cache of the package's compiled code: fresh for the whole package, and
quick to load.

numba finds a cached function by the source file that defines it, and takes the cache
for fresh while that one file is unchanged. The package's tasks are written in one
module but made of LLVM IR that others generate (a float's key, the folds, the gathers),
so a change to one of those alone, in a source checkout or an editable install, would
leave numba loading code compiled from the old IR: wrong results, or a crash. The
package's functions are therefore found by locators whose freshness stamp is a hash of
every module of the package (but the benchmark's), computed once a process
(docs/performance.md, "The disk cache stamped with a hash of every module").

Before it loads a function, numba fills its typing and lowering registries, importing
much of itself: a large part of a first call with a warm cache. Loaded code needs only
numba's runtime to run, so the package's functions load without the rest; numba's
compiler fills the registries itself when something is next compiled
(docs/performance.md, "Compiled code loaded without numba's registries").
"""

from __future__ import annotations

import functools
import hashlib
import os
from typing import ClassVar

from numba.core import caching
from numba.core.runtime import rtsys

__all__ = ["PACKAGE", "enable", "source_stamp"]

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Folders of the package whose modules compiled code is never made of.
_NOT_COMPILED = ("bench", "__pycache__")


@functools.cache
def source_stamp() -> str | None:
    """A hash of the package's modules (but the benchmark's), or None where they are not
    plain files."""
    digest = hashlib.sha256()
    try:
        for folder, subfolders, files in os.walk(PACKAGE):
            subfolders[:] = sorted(d for d in subfolders if d not in _NOT_COMPILED)
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    with open(path, "rb") as f:
                        relative = os.path.relpath(path, PACKAGE).encode()
                        digest.update(relative + b"\0" + f.read())
    except OSError:
        return None
    return digest.hexdigest()


def _stamped(base: type) -> type:
    """A locator like ``base`` whose freshness stamp is ``source_stamp``."""

    class Locator(base):
        def get_source_stamp(self):
            stamp = source_stamp()
            return super().get_source_stamp() if stamp is None else ("package", stamp)

    Locator.__name__ = Locator.__qualname__ = f"Package{base.__name__.lstrip('_')}"
    return Locator


class _PackageImpl(caching.CompileResultCacheImpl):
    _locator_classes: ClassVar[list[type]] = [
        _stamped(c) for c in caching.CompileResultCacheImpl._locator_classes
    ]


class PackageCache(caching.FunctionCache):
    """numba's disk cache of one of the package's functions."""

    _impl_class = _PackageImpl

    def load_overload(self, sig, target_context):
        rtsys.initialize(target_context)  # numba's runtime: all that loaded code needs
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)


def enable(dispatcher) -> None:
    """Cache ``dispatcher``, a function of the package, on disk (as ``cache=True`` does,
    with ``PackageCache``)."""
    dispatcher._cache = PackageCache(dispatcher.py_func)

"""numba's disk cache of the package's compiled code, kept fresh for the whole package.

numba finds a cached function by the source file that defines it, and takes the cache
for fresh while that one file is unchanged. The package's tasks are written in one
module but made of LLVM IR that others generate (a float's key, the folds, the gathers),
so a change to one of those alone, in a source checkout or an editable install, would
leave numba loading code compiled from the old IR: wrong results, or a crash. The
package's functions are therefore found by locators whose freshness stamp is a hash of
every module of the package (but the benchmark's), computed once a process (0.6 ms
on the Intel Xeon); other functions keep numba's own locators.
"""

from __future__ import annotations

import functools
import hashlib
import os

from numba.core import caching

__all__ = ["PACKAGE", "install", "source_stamp"]

PACKAGE = os.path.dirname(os.path.abspath(__file__))


@functools.cache
def source_stamp() -> str | None:
    """A hash of the package's modules, or None where they are not plain files."""
    digest = hashlib.sha256()
    try:
        names = sorted(os.listdir(PACKAGE))
        for name in names:
            if name.endswith(".py") and not name.startswith(("bench", "_bench")):
                with open(os.path.join(PACKAGE, name), "rb") as f:
                    digest.update(name.encode() + b"\0" + f.read())
    except OSError:
        return None
    return digest.hexdigest()


def _of_package(base: type) -> type:
    """A locator like ``base`` for the package's functions only, stamped by
    ``source_stamp``."""

    class Locator(base):
        def get_source_stamp(self):
            stamp = source_stamp()
            return super().get_source_stamp() if stamp is None else ("package", stamp)

        @classmethod
        def from_function(cls, py_func, py_file):
            if os.path.dirname(os.path.abspath(py_file)) != PACKAGE:
                return None
            return super().from_function(py_func, py_file)

    Locator.__name__ = Locator.__qualname__ = f"Package{base.__name__.lstrip('_')}"
    Locator.of_package = True
    return Locator


def install() -> None:
    """Put the package's locators before numba's own (once). Without numba's list of
    locator classes (numba 0.63-0.68 have it), numba's own stay in use."""
    classes = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    if classes is None or any(getattr(c, "of_package", False) for c in classes):
        return
    classes[:0] = [_of_package(c) for c in classes]

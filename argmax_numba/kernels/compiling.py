"""How the kernels' Python functions become compiled code: lazily, once per key kind,
``last`` and dtype, and cached on disk."""

from __future__ import annotations

from types import FunctionType
from typing import Any, NamedTuple

from numba import njit

from ..runtime.disk_cache import enable as enable_disk_cache

__all__ = ["TaskSet", "TaskSpec", "compile_function"]

_OPTIONS = {"error_model": "numpy", "nogil": True}


class TaskSpec(NamedTuple):
    """What one task is made of, before it is compiled."""

    function: Any  # the Python function, a closure over ``kind`` and ``last``
    name: str  # its name in numba's disk cache (with the key kind and ``last``)
    helpers: dict  # global name -> inline helper function it calls
    constants: dict  # global name -> constant of its code


def compile_function(
    fn, name: str, bound: dict, inline: str = "never", driver: bool = False
) -> Any:
    """``fn`` compiled lazily under ``name``, with ``bound`` as extra globals, and cached
    on disk (``runtime.disk_cache``).

    Compiled functions reach each other as globals, never as closure cells (only the
    integer kind and ``last`` are ones), so that numba can cache them; the unique name
    keeps the cache entries of the different instances apart.
    """
    bound_fn = FunctionType(
        fn.__code__, {**fn.__globals__, **bound}, name, fn.__defaults__, fn.__closure__
    )
    bound_fn.__qualname__ = name
    # Only drivers are called from Python; nothing calls a C function pointer of either.
    wrappers = {"no_cpython_wrapper": not driver, "no_cfunc_wrapper": True}
    compiled = njit(inline=inline, **wrappers, **_OPTIONS)(bound_fn)
    enable_disk_cache(compiled)
    return compiled


class TaskSet(dict):
    """The compiled tasks of one key kind and ``last``, by name, each made on first use:
    a first call needs one of them, and numba's dispatchers for all of them at once would
    slow it (docs/performance.md, "Tasks and drivers made on first use")."""

    def __init__(self, specs: dict[str, TaskSpec], tag: str):
        super().__init__()
        self.specs = specs
        self.tag = tag
        self.helpers: dict = {}

    @property
    def names(self) -> tuple[str, ...]:
        """The names of all the tasks (those made so far are the keys)."""
        return tuple(self.specs)

    def _inlined(self, fn) -> Any:
        helper = self.helpers.get(fn)
        if helper is None:
            helper = compile_function(fn, f"{fn.__name__}_{self.tag}", {}, inline="always")
            self.helpers[fn] = helper
        return helper

    def __missing__(self, name: str) -> Any:
        spec = self.specs[name]  # KeyError for an unknown task
        bound = {g: self._inlined(h) for g, h in spec.helpers.items()} | spec.constants
        self[name] = task = compile_function(spec.function, f"{spec.name}_{self.tag}", bound)
        return task

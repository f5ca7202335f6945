"""The ArgMax kernels: what runs once ``planning.plan`` has chosen a ``Kernel``.

Every input reaches a kernel as a C-contiguous ``(outer, n, inner)`` array whose middle
axis is reduced (``(outer, n)`` where ``inner`` is 1). A kernel is a *task*, the work on
one part of the input, and a *driver*, which splits the input into tasks and runs them.

``rows``
    Task bodies for the last axis (``inner == 1``).
``columns``
    Task bodies for the middle axis.
``registry``
    The drivers, and for each ``Kernel`` its driver and task, compiled on first use
    per key kind, dtype and ``select_last_index`` (``KERNELS``).
``compiling``
    How a task or driver becomes a cached numba function.
``portable``
    The portable tier: plain ``prange`` loops with numba's public API only, which run
    where the fast kernels above were not tested, and are their twin in the tests.

The tasks are written once, in plain numba code, for every dtype; the vector work they
share is in ``argmax_numba.vector``.
"""

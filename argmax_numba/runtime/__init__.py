"""Everything that relies on numba, llvmlite or CPython internals, and nothing else.

The rest of the package extends numba only through its public API (``numba.njit``,
``numba.extending``, ``numba.types``, ``numba.core.errors``, ``numba.core.cgutils``,
``llvmlite.ir`` and the target context's documented lowering methods). What needs more
lives here, so that a new numba release that moves one of these breaks one folder, and
the list below says what to check. Each was kept because it measurably pays for itself;
the figures are in ``docs/performance.md`` under the heading named. Tested with numba
0.63.0 to 0.68.1 (llvmlite 0.46 to 0.50) on Python 3.10 to 3.13.

``parallel`` -- the threading layer and the task loops
    * ``numba_parallel_for``, the threading layer's C entry point that ``prange`` loops
      end in, called with a C signature declared here, and the kernel it runs built in
      LLVM IR; ``get_num_threads`` called by its symbol name;
      ``numba.np.ufunc.parallel._launch_threads`` to start the layer and define those
      symbols, and its ``_is_initialized`` flag. Why: a parallel driver without a
      ``prange`` loop compiles in about half the time, and runs as fast ("Parallel loop
      over the threading layer instead of prange").
    * CPython's ``_PyThreadState_UncheckedGet`` (``PyThreadState_GetUnchecked`` from
      3.13) and ``PyGILState_GetThisThreadState``, through numba's private
      ``PythonAPI._get_function``: the parallel loop releases the GIL only where the
      calling thread holds it (a user's ``@njit`` function without ``nogil``), as
      ``prange`` loops do.
    * ``numba.np.ufunc.tbbpool`` imported after loading the ``tbb`` wheel's library, to
      select the TBB layer: the only layer safe both with threads and after ``fork()``.
``calls`` -- calls of compiled code through its address
    * The target context's calling convention (``context.call_conv``), a dispatcher's
      compiled ``library``, ``fndesc`` and ``entry_point`` (the drivers are called from
      Python without numba's dispatch: "The driver's entry point called without
      dispatch"), and ``context.active_code_library
      ._reload_init`` (numba's hook that runs when cached code is loaded). Why: a driver
      that called its task by name would link and optimise a copy of it, and so would
      every user's function that calls ``argmax`` ("Tasks called through their
      address").
``table`` -- the kernel addresses that users' compiled code reads
    * ``llvmlite.binding.add_symbol`` for the table's symbol, and ``_reload_init`` to
      fill the table when a user's cached function is loaded.
``disk_cache`` -- numba's disk cache of the package's code
    * ``numba.core.caching.FunctionCache`` and ``CompileResultCacheImpl`` with locators
      whose freshness stamp is a hash of the whole package, set on a dispatcher's
      ``_cache``: without it, a change to a module that generates IR would leave numba
      serving code built from the old IR ("The disk cache stamped with a hash of every
      module").
    * ``rtsys.initialize`` and ``FunctionCache._load_overload`` to load cached code with
      numba's runtime only, not its typing and lowering registries ("Compiled code
      loaded without numba's registries").
``arrays`` -- scratch vectors and views made in LLVM IR
    * ``numba.np.arrayobj.populate_array``, ``numba.core.imputils.impl_ret_borrowed``,
      the context's ``nrt`` allocator; ``numba.np.numpy_support.as_dtype`` and
      ``numba.np.unsafe.ndarray.to_fixed_tuple``. Why: numba's ``np.empty`` and
      ``reshape`` compile helpers per call site ("Helpers as intrinsics").
``target`` -- the CPU numba compiles for
    * ``numba.core.config.CPU_NAME``/``CPU_FEATURES``, ``numba.core.codegen
      .get_host_cpu_features`` and llvmlite's host CPU queries: the vector code is laid
      out for the CPU's vector width (``vector.ir``).
"""

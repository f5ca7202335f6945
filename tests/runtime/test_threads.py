"""Concurrency: Python threads, fork() after use, and numba's thread count."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from conftest import use_thresholds

import argmax_numba.api as api
import argmax_numba.planning as planning
from argmax_numba import argmax

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=300,
        cwd=ROOT,
    )


def test_eight_threads_at_once(tier):
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((2800 + i, 300)).astype(np.float32) for i in range(8)]
    expected = [np.argmax(x, axis=i % 2) for i, x in enumerate(inputs)]
    # The parallel kernels run concurrently, along either axis.
    assert not planning.serial(1, 2800, 300, 4) and not planning.serial(2800, 300, 1, 4)

    def work(i):
        return [argmax(inputs[i], i % 2, 0, 0) for _ in range(20)]

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(8)))
    for i, runs in enumerate(results):
        for got in runs:
            np.testing.assert_array_equal(got, expected[i])


def test_first_calls_from_threads_at_once():
    # A fresh process whose first calls come from several threads at once: the kernels'
    # numba functions are created, and compiled or loaded, on first use, and every call
    # must still find its own task (rows, columns, gathered blocks, a few columns).
    proc = _run_python(
        """
        import threading
        import numpy as np
        from argmax_numba import argmax

        rng = np.random.default_rng(3)
        cases = [((600, 700), 1), ((700, 600), 0), ((20000, 3), 0), ((4000, 16, 3), 1)]
        inputs = [rng.standard_normal(shape) for shape, _ in cases]
        results = [None] * len(cases)
        start = threading.Barrier(len(cases))

        def work(i):
            start.wait()
            results[i] = argmax(inputs[i], cases[i][1], 0)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(cases))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        same = [np.array_equal(r, np.argmax(x, a)) for r, x, (_, a) in zip(results, inputs, cases)]
        print(same)
        """
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[True, True, True, True]"


FORK_CHILD = """
    import multiprocessing as mp
    import numpy as np
    from argmax_numba import argmax

    def child(seed):
        # Along axis 0, and along axis 1 as the parent's call, which the child inherits
        # remembered.
        x = np.random.default_rng(seed).standard_normal((1400, 300))
        return all(bool((argmax(x, a, 0) == np.argmax(x, a)).all()) for a in (0, 1, 1))

    if __name__ == "__main__":
        import argmax_numba, os
        assert argmax_numba.kernel_tier() == os.environ["ARGMAX_NUMBA_TIER"]
        x = np.random.default_rng(0).standard_normal((1400, 300))
        for _ in range(2):  # the parent uses the parallel kernel, then its remembered call
            assert (argmax(x, 1, 0) == np.argmax(x, 1)).all()
        ctx = mp.get_context("fork")
        with ctx.Pool(2) as pool:
            print("children ok:", all(pool.map(child, range(4))))
"""


@pytest.mark.parametrize("tier_name", ["fast", "portable"])
@pytest.mark.parametrize("layer", ["default", "omp"])
def test_fork_after_parallel_call(layer, tier_name, tmp_path):
    script = tmp_path / "fork_child.py"
    script.write_text(textwrap.dedent(FORK_CHILD))
    env = {"ARGMAX_NUMBA_TIER": tier_name}
    if layer != "default":
        env["NUMBA_THREADING_LAYER"] = layer
    full_env = {**os.environ, "PYTHONPATH": ROOT, **env}
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=full_env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "children ok: True" in proc.stdout


def test_default_layer_is_tbb():
    proc = _run_python(
        """
        import numpy as np, numba
        from argmax_numba import argmax
        argmax(np.ones((1400, 300)), 0)  # large enough for the thread pool
        print(numba.threading_layer())
        """
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "tbb"


def test_honours_numba_num_threads():
    proc = _run_python(
        """
        import numpy as np, numba
        from argmax_numba import argmax
        x = np.random.default_rng(1).standard_normal((512, 512))
        assert (argmax(x, 0, 0) == np.argmax(x, 0)).all()
        print(numba.get_num_threads(), numba.config.NUMBA_NUM_THREADS)
        """,
        NUMBA_NUM_THREADS="1",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["1", "1"]


def test_set_num_threads_is_respected(monkeypatch, fast_tier):
    import numba

    seen = []
    real = numba.get_num_threads
    monkeypatch.setattr(api.numba, "get_num_threads", lambda: seen.append(real()) or real())
    x = np.random.default_rng(2).standard_normal((1, 1 << 19))  # above the serial threshold
    numba.set_num_threads(1)
    try:
        assert argmax(x, 1, 0)[0] == np.argmax(x[0])
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert seen == [1]


def test_a_parallel_call_is_remembered_for_its_thread_count(monkeypatch, tier):
    # A call on the pool is remembered as a serial one is, and repeated without planning
    # again while numba gives the calling thread as many threads as it was planned for,
    # and parallel code may run in the process (not in a child forked after OpenMP ran);
    # otherwise it is planned again.
    import numba

    import argmax_numba.runtime.parallel as parallel

    use_thresholds(monkeypatch, SERIAL_BELOW_BYTES=0)
    planned = []
    real = api._reduce
    monkeypatch.setattr(api, "_reduce", lambda *a: planned.append(a) or real(*a))
    x = np.random.default_rng(6).standard_normal((40, 300)).astype(np.float32)
    key = (x.shape, x.dtype, 1, 0, 0, "argmax")
    for _ in range(3):
        np.testing.assert_array_equal(argmax(x, 1, 0), np.argmax(x, 1))
    assert len(planned) == 1
    remembered = api._PLANS[key]
    assert remembered.threads == numba.get_num_threads()
    # Planned for another count of threads: planned again, for this one.
    api._PLANS[key] = remembered._replace(threads=remembered.threads + 1)
    np.testing.assert_array_equal(argmax(x, 1, 0), np.argmax(x, 1))
    assert len(planned) == 2
    assert api._PLANS[key].threads == numba.get_num_threads()
    # In a child forked after OpenMP ran: the serial loop, remembered in its place.
    monkeypatch.setitem(parallel._state, "forked_after_omp", True)
    for _ in range(2):
        np.testing.assert_array_equal(argmax(x, 1, 0), np.argmax(x, 1))
    assert len(planned) == 3
    assert api._PLANS[key].threads == 0

"""Kernels compiled for CPUs other than the one running the tests.

numba compiles for the CPU that ``NUMBA_CPU_NAME`` and ``NUMBA_CPU_FEATURES`` name (by
default the host's). Some code generation depends on it: on AMD Zen with AVX-512 the
row loads are kept apart from masked instructions by an inline assembly block whose
register must hold a whole 64-byte vector, which other CPUs cannot do. A child process
compiles for an AVX2 CPU (the instructions run on any x86-64 CPU that has AVX2) and
checks the row searches against numpy.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap

import pytest
from llvmlite.binding import get_host_cpu_features

# These tests check the fast kernels: they run on them whatever tier the process chose.
pytestmark = pytest.mark.usefixtures("fast_tier")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HASWELL = (
    "+64bit,+avx,+avx2,+bmi,+bmi2,+cmov,+cx16,+f16c,+fma,+fxsr,+lzcnt,+mmx,+movbe,"
    "+popcnt,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3,+xsave"
)

CHECK = textwrap.dedent(
    """
    import numpy as np
    from argmax_numba import argmax
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.int8):
        # Rows in groups of one and two registers (int8 rows of 10 dealt out into a
        # vector per column), rows in two passes, columns, blocks of 4 columns with rows
        # side by side, blocks of 3 rows of 2, gathered, blocks of 3 rows of 3 (float32:
        # loaded 16 bytes a row), and columns of rows of 300 bytes or more along axis 1,
        # folded a row at a time.
        shapes = (
            (1000, 10), (1000, 20), (300, 100), (64, 3000), (300, 64, 4), (300, 3, 2),
            (300, 3, 3), (40, 50, 300),
        )
        # Rows of 3 and 12 along axis 1 only: rows of a few elements dealt out into a
        # vector per column (int8 rows of 12 too), float32 rows of 12 in groups.
        cases = [(s, a) for s in shapes for a in (0, 1)] + [((1000, 3), 1), ((1000, 12), 1)]
        for shape, axis in cases:
            x = (rng.standard_normal(shape) * 50).astype(dtype)
            for last in (0, 1):
                if last:
                    want = x.shape[axis] - 1 - np.argmax(np.flip(x, axis), axis)
                else:
                    want = np.argmax(x, axis)
                got = argmax(x, axis, 0, last)
                assert (got == want).all(), (dtype, shape, axis, last)
    # 16-bit rows of 10, dealt out two elements at a time.
    x = rng.integers(-5, 5, size=(1000, 10)).astype(np.int16)
    for last in (0, 1):
        want = 9 - np.argmax(np.flip(x, 1), 1) if last else np.argmax(x, 1)
        assert (argmax(x, 1, 0, last) == want).all(), ("int16", last)
    print("ok")
    """
)


@pytest.mark.slow
@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 CPU names")
@pytest.mark.skipif(
    platform.machine() in ("x86_64", "AMD64") and not get_host_cpu_features().get("avx2"),
    reason="the code compiled for Haswell needs AVX2 to run",
)
def test_compiles_and_runs_for_an_avx2_cpu(tmp_path):
    env = dict(os.environ)
    env.update(
        NUMBA_CPU_NAME="haswell",
        NUMBA_CPU_FEATURES=HASWELL,
        NUMBA_CACHE_DIR=str(tmp_path),
        PYTHONPATH=ROOT + os.pathsep + env.get("PYTHONPATH", ""),
    )
    done = subprocess.run(
        [sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"

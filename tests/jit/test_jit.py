"""argmax and argmin called from users' @njit code."""

from __future__ import annotations

import ctypes
import itertools
import os
import shutil
import subprocess
import sys

import numba
import numpy as np
import pytest
from conftest import FLOATS, INTS, onnx_argmax, onnx_argmin, random_tensor
from numba import njit, prange
from numba.core.errors import TypingError

import argmax_numba
import argmax_numba.planning as planning
from argmax_numba import argmax, argmin
from argmax_numba.dtypes import kernel_view
from argmax_numba.planning import Kernel
from argmax_numba.runtime import table as _task_table

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@njit
def keep_first(x, axis):
    return argmax(x, axis, 1, 0)


@njit
def drop_last(x, axis):
    return argmax(x, axis, 0, 1)


@njit
def variants(x, axis, last):
    """Several call forms in one function: one compilation per dtype."""
    return argmax(x, axis, 1, 0), argmax(x, axis, 0, 1), argmax(x, axis, 1, last), argmax(x)


def _variants_match(x, axis):
    """``variants``' first three results along ``axis`` against the reference, for
    ``last`` 0 and 1 (it compiles one specialisation per dtype)."""
    for last in (0, 1):
        keep0, drop1, keep_rt, _ = variants(x, axis, bool(last))
        np.testing.assert_array_equal(keep0, onnx_argmax(x, axis, 1, 0))
        np.testing.assert_array_equal(drop1, onnx_argmax(x, axis, 0, 1))
        np.testing.assert_array_equal(keep_rt, onnx_argmax(x, axis, 1, last))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [FLOATS[1], INTS[0], INTS[-1]], ids=str)
def test_matches_reference(dtype):
    rng = np.random.default_rng(3)
    x = random_tensor(dtype, (3, 4, 5), rng, special=0.2)
    for axis in (-3, -1, 0, 1, 2):
        for last in (0, 1):
            keep0, drop1, keep_rt, dflt = variants(x, axis, bool(last))
            np.testing.assert_array_equal(keep0, onnx_argmax(x, axis, 1, 0))
            np.testing.assert_array_equal(drop1, onnx_argmax(x, axis, 0, 1))
            np.testing.assert_array_equal(keep_rt, onnx_argmax(x, axis, 1, last))
            np.testing.assert_array_equal(dflt, onnx_argmax(x, 0, 1, 0))


@njit
def argmin_forms(x, axis, last):
    """argmin's call forms: keepdims 1 and 0, ``last`` constant and at run time, the
    axis at run time and as a literal."""
    return argmin(x, axis, 1, last), argmin(x, axis, 0, 0), argmin(x, axis, 0, 1), argmin(x, -1, 1)


@pytest.mark.parametrize("dtype", [FLOATS[1], INTS[7]], ids=str)
def test_argmin_from_compiled_code(dtype):
    # On every layout a static type admits (C, F and A arrays), small and above the
    # serial threshold, against onnx's reference ArgMin.
    rng = np.random.default_rng(11)
    for shape in ((5, 6), (1200, 700)):  # (one rank: each rank and layout compiles again)
        x = random_tensor(dtype, shape, rng, special=0.1)
        assert shape[0] == 5 or x.nbytes >= planning.SERIAL_BELOW_BYTES
        for y in (x, np.asfortranarray(x), x[..., ::-1]):
            for axis, last in itertools.product(range(-y.ndim, y.ndim), (0, 1)):
                keep_rt, drop_first, drop_last, literal = argmin_forms(y, axis, bool(last))
                np.testing.assert_array_equal(keep_rt, onnx_argmin(y, axis, 1, last))
                np.testing.assert_array_equal(drop_first, onnx_argmin(y, axis, 0, 0))
                np.testing.assert_array_equal(drop_last, onnx_argmin(y, axis, 0, 1))
                np.testing.assert_array_equal(literal, onnx_argmin(y, -1, 1, 0))


def test_argmin_errors_in_compiled_code_name_argmin():
    @njit
    def varying_keep(x, keep):
        return argmin(x, 0, keep)

    with pytest.raises(TypingError, match="argmin: in compiled code keepdims"):
        varying_keep(np.zeros(3), 1)
    with pytest.raises(ValueError, match="argmin: axis is out of range"):
        argmin_forms(np.zeros((2, 3)), 5, True)


@pytest.mark.slow
def test_parallel_path_and_layouts():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3200, 257)).astype(np.float32)  # above the serial threshold
    assert x.nbytes >= planning.SERIAL_BELOW_BYTES
    for y in (x, np.asfortranarray(x), x[:, ::-2]):
        for axis in (0, 1):
            np.testing.assert_array_equal(keep_first(y, axis), onnx_argmax(y, axis, 1, 0))
    few_columns = rng.standard_normal((1 << 19, 3)).astype(np.float32)  # the narrow kernel
    assert few_columns.nbytes >= planning.SERIAL_BELOW_BYTES
    np.testing.assert_array_equal(keep_first(few_columns, 0), onnx_argmax(few_columns, 0, 1, 0))
    one_row = rng.standard_normal(1 << 19)
    assert one_row.nbytes >= planning.SERIAL_BELOW_BYTES
    assert drop_last(one_row, 0)[()] == np.argmax(one_row)
    # Rows of 1 KiB above are searched in groups; a few long rows one at a time.
    few_rows = rng.standard_normal((4, 30000)).astype(np.float32)
    assert planning.plan(4, 30000, 1, 4, 1).kernel == Kernel.ROWS
    np.testing.assert_array_equal(drop_last(few_rows, 1), onnx_argmax(few_rows, 1, 0, 1))


@njit(parallel=True)
def rows_in_prange(x):
    out = np.empty(x.shape[:2], np.int64)
    for i in prange(x.shape[0]):
        out[i] = argmax(x[i], 1, 0, 0)
    return out


@pytest.mark.slow
def test_read_only_input_and_calls_inside_prange():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((300, 257)).astype(np.float32)
    x.flags.writeable = False
    for axis in (0, 1):
        np.testing.assert_array_equal(keep_first(x, axis), onnx_argmax(x, axis, 1, 0))
    stack = rng.integers(-5, 5, size=(6, 40, 33)).astype(np.int16)
    np.testing.assert_array_equal(rows_in_prange(stack), onnx_argmax(stack, 2, 0, 0))


def test_short_rows_of_every_length():
    # Rows of 2 to 8 elements have a task per length (in compiled code one task with a
    # branch per length); small and large (parallel) inputs.
    rng = np.random.default_rng(5)
    for n in range(1, 10):
        for rows in (7, 400000):  # (from 2 elements a row above the serial threshold)
            x = random_tensor(np.dtype(np.float32), (rows, n), rng, special=0.2)
            np.testing.assert_array_equal(keep_first(x, 1), onnx_argmax(x, 1, 1, 0))
            np.testing.assert_array_equal(drop_last(x, 1), onnx_argmax(x, 1, 0, 1))


def test_16_bit_rows_dealt_out_in_pairs():
    # 16-bit rows of an even length are dealt out two elements at a time, and have
    # branches of their own up to 12 (rows of 9 and 13 are searched in groups), through
    # the int16 specialisation of ``rows_in_prange``.
    rng = np.random.default_rng(9)
    for n in (2, 4, 9, 10, 12, 13):
        stack = rng.integers(-3, 3, size=(3, 41, n)).astype(np.int16)
        np.testing.assert_array_equal(rows_in_prange(stack), onnx_argmax(stack, 2, 0, 0))


def test_short_rows_of_8_bit_elements():
    # Rows of 8-bit elements have a branch per length up to 12 (other dtypes' code has
    # none of those branches); small and large (parallel) inputs, through the int8
    # specialisation that ``test_matches_reference`` compiles.
    rng = np.random.default_rng(6)
    for n in range(8, 14):
        for rows in (7, 200000):  # (above the serial threshold)
            x = random_tensor(np.dtype(np.int8), (2, rows, n), rng, special=0.2)
            _variants_match(x, 2)


def test_rank_zero_result():
    x = np.array([1.0, 7.0, 7.0, 2.0])
    got = drop_last(x, 0)
    assert got.shape == () and got[()] == 2


def test_non_constant_keepdims_is_a_typing_error():
    @njit
    def bad(x, keep):
        return argmax(x, 0, keep, 0)

    with pytest.raises(TypingError, match="keepdims must be a compile-time constant"):
        bad(np.ones(3), 1)


@pytest.mark.parametrize("dtype", [np.float16, np.complex64])
def test_unsupported_dtype_is_a_typing_error(dtype):
    with pytest.raises(TypingError, match=f"dtype {np.dtype(dtype)}"):
        keep_first(np.ones(3, dtype=dtype), 0)


def test_bool_is_a_typing_error():
    with pytest.raises(TypingError, match="unsupported input dtype bool"):
        keep_first(np.ones(3, dtype=np.bool_), 0)


def test_bad_axis_raises_at_run_time():
    with pytest.raises(ValueError, match="axis is out of range"):
        keep_first(np.ones((2, 3)), 2)


def test_empty_reduced_axis_raises():
    with pytest.raises(ValueError, match="reduced axis is empty"):
        keep_first(np.ones((0, 3)), 0)


USER_MODULE = """
import numpy as np
from numba import njit, prange

from argmax_numba import argmax


@njit(cache=True)
def predict(x):
    return argmax(x, 1, 0)
"""

USER_RUN = """
import sys, warnings
import numpy as np
sys.path.insert(0, sys.argv[1])
with warnings.catch_warnings():
    warnings.simplefilter("error")  # numba's "Cannot cache compiled function" included
    import user_module
    x = np.random.default_rng(0).standard_normal((300, 200)).astype(np.float32)
    assert (user_module.predict(x) == np.argmax(x, 1)).all()
print(sum(user_module.predict.stats.cache_hits.values()))
"""

# The same function loaded from the disk cache by another version of this package, one
# with another table of kernel addresses.
USER_RUN_OTHER_VERSION = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import argmax_numba.runtime.table as table
table.TABLE_SYMBOL = "argmax_numba_task_table_v0"
import user_module
try:
    user_module.predict(np.ones((3, 4), np.float32))
except RuntimeError as exc:
    print(exc)
"""


@pytest.mark.slow
def test_user_function_is_cached_on_disk(tmp_path):
    # A user's @njit(cache=True) function that calls argmax is written to the disk cache
    # and loaded from it by the next process (numba refuses to cache code that holds
    # addresses of the running process). Its second compile links this package's
    # drivers as loaded from their cache, whose need to start the threading runtime on
    # loading numba does not keep: the third process must start it all the same.
    (tmp_path / "user_module.py").write_text(USER_MODULE)

    def run(code: str) -> str:
        # (The cache beside the module, whatever NUMBA_CACHE_DIR the tests run with.)
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env["PYTHONPATH"] = ROOT
        env["ARGMAX_NUMBA_TIER"] = "fast"  # the fast tier's address table, versioned
        done = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    hits = []
    for attempt in range(3):
        if attempt == 1:
            shutil.rmtree(tmp_path / "__pycache__")
        hits.append(int(run(USER_RUN).split()[-1]))
    assert hits == [0, 0, 1]
    # Code cached against another table is refused with an error, not run (it would look
    # up a symbol that is no longer defined).
    out = run(USER_RUN_OTHER_VERSION)
    assert "cached by another version of argmax-numba" in out, out


@pytest.mark.skipif(
    argmax_numba.kernel_tier() != "fast",
    reason="the fast tier's output; the portable tier allocates with numpy's np.empty",
)
def test_large_output_in_compiled_code():
    # Outputs from 4 MiB on get huge pages in compiled code, as numpy's own do, and
    # start at one: numba's runtime writes the first bytes of a new buffer before the
    # advice, which left the first 2 MiB in small pages (512 page faults a call).
    @njit
    def rows(x):
        return argmax(x, 1, 0), argmax(x, 1, 1)

    x = np.random.default_rng(5).standard_normal((1 << 20, 3)).astype(np.float32)
    for keep, got in enumerate(rows(x)):
        np.testing.assert_array_equal(got, np.argmax(x, 1, keepdims=keep == 1))
        assert got.ctypes.data % (2 << 20) == 0  # a huge page of x86-64


def test_blocks_gathered_a_few_bytes_a_row():
    # Blocks whose rows fit in SHORT_GATHER_BYTES are gathered by a task of their own
    # (EACH_SHORT_COLS), through the int8 specialisation that ``test_matches_reference``
    # compiles.
    rng = np.random.default_rng(10)
    x = random_tensor(np.dtype(np.int8), (50, 6, 3), rng, special=0.2)
    assert planning.plan(50, 6, 3, 1, 1).kernel == Kernel.EACH_SHORT_COLS
    _variants_match(x, 1)


def test_blocks_loaded_a_piece_a_row():
    # Blocks whose rows are longer than GATHER_BYTES up to WIDE_GATHER_BYTES (of elements
    # of two bytes or more) are loaded a block at a time by a task of their own
    # (EACH_WIDE_COLS), through the float32 specialisation that ``test_matches_reference``
    # compiles.
    rng = np.random.default_rng(11)
    x = random_tensor(np.dtype(np.float32), (50, 6, 3), rng, special=0.2)
    assert planning.plan(50, 6, 3, 4, 1).kernel == Kernel.EACH_WIDE_COLS
    _variants_match(x, 1)


# An input of each kernel's, small: (dtype, (outer, n, inner)), reduced along axis 1.
KERNEL_INPUTS = {
    Kernel.ROWS: ("int8", (1, 257, 1)),
    Kernel.ROW_PIECES: ("int8", (1, 1 << 22, 1)),  # (above the serial threshold)
    Kernel.SHORT_ROWS: ("int8", (3, 2, 1)),
    Kernel.GROUP_ROWS: ("int8", (3, 1, 1)),
    Kernel.CHUNK_ROWS: ("int8", (64, 257, 1)),
    Kernel.COLS: ("int8", (1, 3, 64)),
    Kernel.SIDE_COLS: ("int8", (4, 4096, 2)),
    Kernel.BLOCK_COLS: ("int8", (1, 16, 16)),
    Kernel.EACH_COLS: ("int8", (1, 3, 5)),
    Kernel.EACH_SHORT_COLS: ("int8", (1, 3, 2)),
    Kernel.EACH_WIDE_COLS: ("float32", (1, 3, 3)),
    Kernel.NARROW: ("int8", (1, 64, 200)),
}


@njit
def middle_axis(x, last):
    return argmax(x, 1, 0, last)


fast_only = pytest.mark.skipif(
    argmax_numba.kernel_tier() != "fast",
    reason="the fast tier's address table; compiled callers on the portable tier call the "
    "portable kernels by name (test_portable_tier_from_compiled_code)",
)


def _empty_table() -> None:
    ctypes.memset(_task_table._TABLE, 0, ctypes.sizeof(_task_table._TABLE))


@fast_only
def test_a_call_compiles_its_own_kernel_only():
    # A compiled caller finds its kernels' addresses in a table, and fills a slot the
    # first time a call needs it: each kernel's input fills its driver's slot (serial or
    # parallel) and the slot of its task for the ``last`` it takes, and no other (a
    # branch that ran another kernel would give the same results, only slower).
    rng = np.random.default_rng(12)
    threads = numba.get_num_threads()
    assert set(KERNEL_INPUTS) == set(Kernel)
    for kernel, (name, shape) in KERNEL_INPUTS.items():
        dtype = np.dtype(name)
        parallel = not planning.serial(*shape, dtype.itemsize)
        assert planning.plan(*shape, dtype.itemsize, threads if parallel else 1).kernel == kernel
        x = random_tensor(dtype, shape, rng, special=0.2)
        kind = kernel_view(dtype)[0]
        for last in (0, 1):
            _empty_table()
            got = middle_axis(x, bool(last))
            np.testing.assert_array_equal(got, onnx_argmax(x, 1, 0, last), err_msg=kernel.name)
            filled = {i for i, address in enumerate(_task_table._TABLE) if address}
            assert _task_table.PLAN_SLOT in filled
            role = _task_table.PARALLEL if parallel else _task_table.SERIAL
            task = _task_table.TASK_LAST if last else _task_table.TASK_FIRST
            want = {_task_table.SlotKey(kernel, kind, dtype, r) for r in (role, task)}
            got_keys = {_task_table.slot_key(i) for i in filled - {_task_table.PLAN_SLOT}}
            assert got_keys == want, kernel.name


@fast_only
def test_a_kernel_that_fails_to_build_in_compiled_code(monkeypatch):
    # Where filling a slot fails, the compiled caller raises a RuntimeError that says
    # what to do, after the one warning; Python calls go on with the portable kernels.
    from argmax_numba import api, tiers

    def broken(slot):
        raise RuntimeError("an internal moved")

    monkeypatch.setattr(tiers.STATE, "tier", tiers.Tier.FAST)
    monkeypatch.setattr(tiers.STATE, "warned", False)
    monkeypatch.setattr(api, "_PLANS", {})
    monkeypatch.setattr(_task_table, "_address", broken)
    _empty_table()
    x = np.random.default_rng(13).standard_normal((30, 7)).astype(np.float32)
    with pytest.warns(RuntimeWarning, match="the fast kernels failed .*an internal moved"):
        with pytest.raises(RuntimeError, match="ARGMAX_NUMBA_TIER=portable"):
            keep_first(x, 1)
    assert argmax_numba.kernel_tier() == "portable"
    np.testing.assert_array_equal(argmax(x, 1, 0), np.argmax(x, 1))


PORTABLE_CALLERS = """
import itertools
import numpy as np
from numba import njit, prange
import argmax_numba
from argmax_numba import argmax, argmin

assert argmax_numba.kernel_tier() == "portable"


@njit
def first(x, axis):
    return argmax(x, axis, 0)


@njit
def varying(x, axis, last):
    return argmax(x, axis, 1, last)


@njit
def varying_min(x, axis, last):
    return argmin(x, axis, 1, last)


@njit
def along_last(x):
    return argmax(x, -1, 0, 1), argmin(x, -1, 1)


@njit(parallel=True)
def in_prange(x):
    out = np.empty((4, x.shape[1]), np.int64)
    for i in prange(4):
        out[i] = argmax(x, 0, 0, i % 2)
    return out


def want(x, axis, last, numpy_function=np.argmax):
    if not last:
        return numpy_function(x, axis)
    return x.shape[axis] - 1 - numpy_function(np.flip(x, axis), axis)


rng = np.random.default_rng(4)
for dtype, shape in itertools.product(
    (np.float32, np.int8),
    ((7,), (300, 5), (5, 300), (2000, 700), (6, 7, 8), (20, 3000, 4)),
):
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if x.dtype.kind == "f":
        x.flat[:: 7] = np.nan
        x.flat[3:: 11] = -0.0
    # Each type of array compiles every caller again, so the layouts are a few: float32
    # matrices in C and Fortran order and reversed, float32 3-D arrays in C order and
    # reversed, and the rest in C order; argmin on matrices, the constant ``last`` on
    # 3-D arrays, in C order.
    layouts = [x]
    if x.dtype.kind == "f" and x.ndim == 2:
        layouts.append(np.asfortranarray(x))
    if x.dtype.kind == "f" and x.ndim > 1:
        layouts.append(x[..., ::-1])
    for layout in layouts:
        for axis in range(-x.ndim, x.ndim):
            for last in (0, 1):
                got = varying(layout, axis, last)
                assert got.shape == np.expand_dims(want(layout, axis, last), axis).shape
                np.testing.assert_array_equal(got.squeeze(axis), want(layout, axis, last))
                if layout is x and x.ndim == 2:
                    got = varying_min(layout, axis, last).squeeze(axis)
                    np.testing.assert_array_equal(got, want(layout, axis, last, np.argmin))
            if layout is x and x.ndim == 3:
                np.testing.assert_array_equal(first(layout, axis), want(layout, axis, 0))
x = rng.standard_normal((50, 30))
np.testing.assert_array_equal(in_prange(x)[1], want(x, 0, 1))
# Along an axis known to be the last (a constant -1 or ndim - 1, or a 1-D input's), the
# rows loops only are linked into the user's function; along any axis, both kinds.
x = (rng.standard_normal((300, 5)) * 3).astype(np.float32)
x.flat[::7] = np.nan
top, bottom = along_last(x)
np.testing.assert_array_equal(top, want(x, 1, 1))
np.testing.assert_array_equal(bottom.squeeze(1), want(x, 1, 0, np.argmin))
for function, middle in ((along_last, False), (first, True)):
    for code in function.inspect_llvm().values():
        assert "portable_rows" in code and ("portable_middle" in code) == middle, function
# A read-only input: the user's function compiles again for its type, but the loops it
# calls are those compiled for writeable ones, each with one version, of a read-only input.
x = (rng.standard_normal((6, 7, 8)) * 3).astype(np.int8)
x.flags.writeable = False
for axis in range(3):
    np.testing.assert_array_equal(first(x, axis), want(x, axis, 0))
from argmax_numba.dtypes import kernel_view
from argmax_numba.kernels.portable import portable_kernels

kernels = portable_kernels(kernel_view(x.dtype)[0], 1)
for loop in (*kernels.rows.values(), *kernels.middle.values()):
    signatures = loop.compiled(x.dtype).signatures
    assert len(signatures) == 1 and not signatures[0][0].mutable, signatures
print("ok")
"""


@pytest.mark.slow
def test_portable_tier_from_compiled_code():
    # A process on the portable tier: users' compiled functions call the portable
    # kernels, on a float and an integer dtype (each compiles every caller again; the
    # portable tier's run of this module covers the others), the layouts that make the
    # compiled caller copy (Fortran order, a reversed axis), every axis and
    # ``select_last_index`` (constant or not), and from inside a prange loop; argmin on
    # C-ordered matrices; a read-only input, which runs the loops compiled before.
    env = {**os.environ, "ARGMAX_NUMBA_TIER": "portable", "PYTHONPATH": ROOT}
    proc = subprocess.run(
        [sys.executable, "-c", PORTABLE_CALLERS],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[-1] == "ok"

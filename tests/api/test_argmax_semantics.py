"""argmax and argmin against onnx's reference ArgMax and ArgMin: every dtype x axis x
layout x flag."""

from __future__ import annotations

import itertools
import platform

import numba
import numpy as np
import pytest
from conftest import (
    DTYPES,
    FLOATS,
    INTS,
    LAYOUTS,
    PARALLEL,
    SERIAL,
    onnx_arg,
    onnx_argmax,
    onnx_argmin,
    random_tensor,
    special_values,
    use_thresholds,
    use_tier,
    with_layout,
)

import argmax_numba.api as api
import argmax_numba.kernels.portable as portable
from argmax_numba import argmax, argmin
from argmax_numba.dtypes import Extreme, kernel_view
from argmax_numba.kernels.portable import tuning

SHAPES = [(7,), (5, 6), (3, 4, 5), (2, 1, 3, 4)]
# Each operator: ours, by its ONNX name.
OPS = {"ArgMax": argmax, "ArgMin": argmin}


@pytest.mark.parametrize("op_type", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_axis_flag(dtype, op_type, kernel_path, tier):
    rng = np.random.default_rng(1)
    ours = OPS[op_type]
    for shape in SHAPES:
        x = random_tensor(dtype, shape, rng, special=0.2)
        for axis, keep, last in itertools.product(range(-len(shape), len(shape)), (0, 1), (0, 1)):
            got = ours(x, axis, keep, last)
            want = onnx_arg(op_type, x, axis, keep, last)
            assert got.dtype == np.int64
            assert got.shape == want.shape, (shape, axis, keep)
            np.testing.assert_array_equal(got, want, err_msg=f"{shape} axis={axis} last={last}")


@pytest.mark.parametrize("op_type", OPS)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.int16), FLOATS[3]], ids=str)
def test_layouts(layout, dtype, op_type, kernel_path, tier):
    rng = np.random.default_rng(2)
    x = random_tensor(dtype, (4, 5, 6), rng, special=0.2)
    y = with_layout(x, layout)
    before = y.copy()
    for axis, last in itertools.product(range(3), (0, 1)):
        got = OPS[op_type](y, axis, 1, last)
        np.testing.assert_array_equal(got, onnx_arg(op_type, x, axis, 1, last))
    assert y.tobytes() == before.tobytes()  # the input is never modified (NaN bits too)
    assert y.flags.writeable == (layout != "readonly")


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nan_wins_first_or_last(dtype, tier):
    x = np.array([1.0, np.nan, np.inf, -np.nan, 2.0], dtype=np.float64).astype(dtype)
    assert argmax(x, 0, 0, 0) == 1
    assert argmax(x, 0, 0, 1) == 3
    np.testing.assert_array_equal(argmax(x, 0, 0, 1), onnx_argmax(x, 0, 0, 1))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nan_wins_for_argmin_too(dtype, tier):
    # onnx's reference ArgMin, like numpy's, answers NaN's place (onnxruntime's CPU
    # ArgMin skips NaN: 2 and 4 here).
    x = np.array([3.0, np.nan, -1.0, -np.nan, -1.0], dtype=np.float64).astype(dtype)
    assert argmin(x, 0, 0, 0) == 1
    assert argmin(x, 0, 0, 1) == 3
    for last in (0, 1):
        np.testing.assert_array_equal(argmin(x, 0, 0, last), onnx_argmin(x, 0, 0, last))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_argmin_signed_zeros_tie_and_infinities(dtype, tier):
    x = np.array([1.0, 0.0, -0.0, np.inf, 0.0], dtype=np.float64).astype(dtype)
    assert argmin(x, 0, 0, 0) == 1 and argmin(x, 0, 0, 1) == 4
    y = np.array([np.inf, -np.inf, 5.0, -np.inf], dtype=np.float64).astype(dtype)
    assert argmin(y, 0, 0, 0) == 1 and argmin(y, 0, 0, 1) == 3


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_argmin_of_integer_extremes(dtype, tier):
    info = np.iinfo(dtype)
    x = np.array([info.max, info.min, 0, info.min, info.max], dtype=dtype)
    assert argmin(x, 0, 0, 0) == 1 and argmin(x, 0, 0, 1) == 3
    assert argmax(x, 0, 0, 0) == 0 and argmax(x, 0, 0, 1) == 4


@pytest.mark.parametrize("op_type", OPS)
@pytest.mark.parametrize("dtype", [INTS[0], INTS[4], INTS[7], FLOATS[0], FLOATS[3]], ids=str)
def test_the_greatest_key_there_is_ends_a_search_for_the_first(dtype, op_type, kernel_path, tier):
    # Both tiers stop searching a long row for the first place of its extreme once they
    # find the greatest key there is (the type's greatest integer, or the least for
    # ArgMin; a NaN): the first such place must win over later ones, the last where
    # select_last_index, with the chunks and pieces of the row in between.
    rng = np.random.default_rng(13)
    top = np.nan if dtype in FLOATS else None
    if top is None:
        info = np.iinfo(dtype)
        top = info.max if op_type == "ArgMax" else info.min
    for n in (3 * tuning.CHUNK + 5, 2 * tuning.PIECE + 3):
        base = random_tensor(dtype, (2, n), rng, special=0) + dtype.type(2)  # 2 to 7
        for places in (
            [1],
            [5, tuning.BLOCK_BYTES // dtype.itemsize + 3, tuning.CHUNK + 7, n - 1],
            [n - 2, n - 1],
            [min(tuning.PIECE, n - 3)],
        ):
            x = base.copy()
            x[:, places] = top
            x[1, : places[0]] = dtype.type(8)  # a key below the greatest before it
            for last in (0, 1):
                got = OPS[op_type](x, 1, 0, last)
                np.testing.assert_array_equal(got, onnx_arg(op_type, x, 1, 0, last))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_signed_zeros_tie(dtype, tier):
    x = np.array([-1.0, -0.0, 0.0, -0.0, -2.0], dtype=np.float64).astype(dtype)
    assert argmax(x, 0, 0, 0) == 1
    assert argmax(x, 0, 0, 1) == 3
    np.testing.assert_array_equal(argmax(x, 0, 0, 0), onnx_argmax(x, 0, 0, 0))


@pytest.mark.parametrize("op_type", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_extremes(dtype, op_type, tier):
    sv = special_values(dtype)
    x = np.stack([np.roll(sv, k) for k in range(len(sv))])
    for axis, last in itertools.product((0, 1), (0, 1)):
        got = OPS[op_type](x, axis, 1, last)
        np.testing.assert_array_equal(got, onnx_arg(op_type, x, axis, 1, last))


def test_defaults_are_onnx_ones():
    x = np.array([[1, 5], [3, 2]], dtype=np.int32)
    np.testing.assert_array_equal(argmax(x), [[1, 0]])  # axis 0, keepdims 1
    np.testing.assert_array_equal(argmax(x), onnx_argmax(x, 0, 1, 0))
    np.testing.assert_array_equal(argmin(x), [[0, 1]])
    np.testing.assert_array_equal(argmin(x), onnx_argmin(x, 0, 1, 0))


def test_argmax_and_argmin_of_one_input_remember_their_own_calls(tier):
    # Small calls remember what they ran by shape, dtype and flags: ArgMax's and
    # ArgMin's of the same input must not be confused.
    x = np.array([[2.0, 7.0, -3.0], [9.0, 1.0, 4.0]], dtype=np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(argmax(x, 1, 0, 0), [1, 0])
        np.testing.assert_array_equal(argmin(x, 1, 0, 0), [2, 1])


@pytest.mark.parametrize("dtype", [FLOATS[1], FLOATS[2], INTS[0], INTS[7]], ids=str)
def test_argmax_and_argmin_share_the_portable_loops(dtype, monkeypatch):
    # The portable tier's ArgMin runs ArgMax's loops, told the flip of its keys by an
    # argument: the same compiled function (the loop, or the one that views floats as
    # integers for it), compiled or loaded once for each type of input, gives both answers.
    use_tier(monkeypatch, "portable")
    use_thresholds(monkeypatch, **SERIAL)
    kernels = portable.portable_kernels(kernel_view(dtype)[0], dtype.itemsize)
    assert portable.portable_kernels(kernel_view(dtype, Extreme.MIN)[0], dtype.itemsize) is kernels
    rng = np.random.default_rng(17)
    for shape, loop in (((5, 6), kernels.rows[False]), ((2, 5, 64), kernels.middle[False])):
        x = random_tensor(dtype, shape, rng, special=0.3)
        for last in (0, 1):
            np.testing.assert_array_equal(argmax(x, 1, 1, last), onnx_argmax(x, 1, 1, last))
            np.testing.assert_array_equal(argmin(x, 1, 1, last), onnx_argmin(x, 1, 1, last))
        outer, n, inner = shape[0], shape[1], int(np.prod(shape[2:]))
        chosen = kernels.choose(outer, n, inner, False, shape)
        assert chosen.loop is loop
        entry = kernels.entry(chosen, kernel_view(dtype)[1])
        for op in ("argmax", "argmin"):
            assert api._PLANS[(x.shape, x.dtype, 1, 1, 1, op)].entry is entry
        arrays = [signature[:3] for signature in entry.signatures]  # the types but flip's
        assert arrays and len(arrays) == len(set(arrays)), entry.signatures


@pytest.mark.parametrize("dtype", [FLOATS[1], FLOATS[2], INTS[0], INTS[4]], ids=str)
def test_writeable_and_read_only_inputs_share_the_portable_loops(dtype, kernel_path, monkeypatch):
    # The portable loops take the input typed read-only: a read-only input planned after
    # a writeable one of the same kind runs the same compiled function, which has one
    # version, for a read-only input (a writeable one converts to it), on one thread and
    # on numba's threads, for rows, the middle axis and a 1-D input.
    use_tier(monkeypatch, "portable")
    cases = (((6, 40), 1), ((3, 7, 64), 1), ((50,), 0))
    ran = []
    for flag in ("writeable", "readonly"):
        monkeypatch.setattr(api, "_PLANS", {})  # each input planned, none repeated
        for (shape, axis), last in itertools.product(cases, (0, 1)):
            x = random_tensor(dtype, shape, np.random.default_rng(18 + last), special=0.3)
            y = x if flag == "writeable" else with_layout(x, "readonly")
            assert y.flags.writeable == (flag == "writeable")
            np.testing.assert_array_equal(argmax(y, axis, 1, last), onnx_argmax(x, axis, 1, last))
            np.testing.assert_array_equal(argmin(y, axis, 1, last), onnx_argmin(x, axis, 1, last))
        ran.append({key: plan.entry for key, plan in api._PLANS.items()})
    assert len(ran[0]) == len(cases) * 2 * 2, ran[0]
    assert ran[0].keys() == ran[1].keys()
    for key, entry in ran[0].items():
        assert ran[1][key] is entry, key
        assert len(entry.signatures) == 1 and not entry.signatures[0][0].mutable, key


@pytest.mark.parametrize("signed", [INTS[0], INTS[3]], ids=str)
def test_signed_and_unsigned_integers_share_the_portable_loops(signed, kernel_path, monkeypatch):
    # The portable loops read unsigned integers as the signed ones of their width, their
    # top bit flipped by ``flip``: each loop that either type runs is compiled for the
    # signed type alone. The extremes of both types, ties, 0, and -1 (whose bits are the
    # unsigned maximum's) or the unsigned maximum less one are found first or last, by
    # both operators, for rows, the middle axis and a 1-D input, on one thread and on
    # numba's threads. A task of short rows of at most FEW_ELEMENTS elements is searched
    # with the flip, a larger one copied flipped first: rows of 7 on either side of it.
    use_tier(monkeypatch, "portable")
    few = tuning.FEW_ELEMENTS // 7
    unsigned = np.dtype(signed.str.replace("i", "u"))
    kernels = portable.portable_kernels(kernel_view(signed)[0], signed.itemsize)
    assert portable.portable_kernels(kernel_view(unsigned)[0], signed.itemsize) is kernels
    rng = np.random.default_rng(21)
    parallel = kernel_path == "parallel"
    loops = set()
    for dtype, shape, axis in itertools.product(
        (unsigned, signed), ((40, 9), (3, 7, 64), (50,), (few, 7), (few + 1, 7)), (0, -1)
    ):
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, shape, dtype, endpoint=True)
        x.flat[::5], x.flat[1::7], x.flat[2::11] = info.max, info.min, 0
        x.flat[3::13] = dtype.type(-1) if dtype.kind == "i" else info.max - 1
        for last in (0, 1):
            np.testing.assert_array_equal(argmax(x, axis, 1, last), onnx_argmax(x, axis, 1, last))
            np.testing.assert_array_equal(argmin(x, axis, 1, last), onnx_argmin(x, axis, 1, last))
        ax = axis % x.ndim
        outer, inner = int(np.prod(shape[:ax])), int(np.prod(shape[ax + 1 :]))
        loops.add(kernels.choose(outer, shape[ax], inner, parallel, shape).loop)
    for loop in loops:
        assert list(loop._versions) == [signed], (loop.py_func.__name__, list(loop._versions))


def test_lists_and_bool_flags():
    data = [[1.0, 3.0, 3.0], [4.0, 4.0, 0.0]]
    np.testing.assert_array_equal(argmax(data, 1, False, True), [2, 1])
    np.testing.assert_array_equal(argmax(data, 1, True, False), [[1], [0]])
    np.testing.assert_array_equal(argmax(data, np.int64(-1), np.True_, 0), [[1], [0]])


def test_result_is_new_memory():
    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    y = argmax(x, 1, 1, 0)
    assert not np.shares_memory(x, y)
    assert y.flags.writeable


def test_size_one_axis(tier):
    x = np.ones((3, 1, 4), dtype=np.float32)
    np.testing.assert_array_equal(argmax(x, 1), np.zeros((3, 1, 4), np.int64))


@pytest.mark.parametrize("keep", [0, 1])
def test_empty_non_reduced_axis(keep, tier):
    x = np.zeros((0, 3, 2), dtype=np.float32)
    for axis in (1, 2):
        got = argmax(x, axis, keep)
        want = onnx_argmax(x, axis, keep, 0)
        assert got.dtype == np.int64 and got.shape == want.shape


def test_one_dimensional_keepdims_zero_is_rank_zero(tier):
    x = np.array([3, 9, 2], dtype=np.uint8)
    got = argmax(x, 0, 0)
    assert got.shape == () and got.dtype == np.int64 and int(got) == 1


@pytest.mark.parametrize("dtype", [FLOATS[1], FLOATS[2]], ids=str)
def test_more_small_shapes_than_plans(dtype, monkeypatch, fast_tier):
    # More small shapes in turn than the plans kept: each call plans again, and finds the
    # compiled function behind its driver (and whether it takes float16 without a view)
    # once for each kind of call, not once per plan.
    monkeypatch.setattr(api, "_MAX_PLANS", 4)
    rng = np.random.default_rng(4)
    xs = [random_tensor(dtype, (3 + i, 5), rng, special=0.3) for i in range(10)]
    argmax(xs[0], 1, 0, 0)
    found = len(api._ENTRIES)
    typed = []
    typeof = api.numba.typeof
    monkeypatch.setattr(api.numba, "typeof", lambda v: typed.append(v) or typeof(v))
    for x in xs * 2:
        for last in (0, 1):
            np.testing.assert_array_equal(argmax(x, 1, 0, last), onnx_argmax(x, 1, 0, last))
    assert len(api._PLANS) <= 4 and len(api._ENTRIES) == found and not typed


@pytest.mark.parametrize("dtype", [FLOATS[0], FLOATS[2], FLOATS[3], INTS[4]], ids=str)
def test_repeated_calls(dtype, tier):
    # A second call of the same kind reuses what the first one chose (float16 and
    # bfloat16 then pass their bits without a view); inputs of the same shape and dtype
    # in another layout must still take the general path.
    rng = np.random.default_rng(3)
    for shape, axis in (((6, 7), 1), ((6, 7), -2), ((3, 4, 5), 1), ((40, 3), 1), ((9,), 0)):
        for keep, last in itertools.product((0, 1), (0, 1)):
            for _ in range(2):
                x = random_tensor(dtype, shape, rng, special=0.3)
                want = onnx_argmax(x, axis, keep, last)
                for layout in ("C", "F", "sliced", "unaligned", "readonly", "byteswapped"):
                    got = argmax(with_layout(x, layout), axis, keep, last)
                    assert got.shape == want.shape, (shape, axis, keep, layout)
                    np.testing.assert_array_equal(got, want, err_msg=f"{shape} {axis} {layout}")


@pytest.mark.parametrize("dtype", [FLOATS[1], FLOATS[2], INTS[0]], ids=str)
def test_read_only_inputs_repeat_the_remembered_call(dtype, tier, monkeypatch):
    # A read-only input repeats the call remembered for its kind of input, as a writeable
    # one does: each kind is planned once, whichever flag its first input had.
    monkeypatch.setattr(api, "_PLANS", {})
    planned = []
    real = api._reduce
    monkeypatch.setattr(api, "_reduce", lambda *a: planned.append(a) or real(*a))
    rng = np.random.default_rng(6)
    kinds = (((6, 7), 1), ((3, 4, 5), 1), ((9,), 0))
    for (shape, axis), last in itertools.product(kinds, (0, 1)):
        x = random_tensor(dtype, shape, rng, special=0.3)
        frozen = with_layout(x, "readonly")
        want = onnx_argmax(x, axis, 1, last)
        for y in (frozen, x, frozen, x):
            np.testing.assert_array_equal(argmax(y, axis, 1, last), want, err_msg=str(shape))
    assert len(planned) == len(kinds) * 2


@pytest.mark.parametrize("dtype", [FLOATS[1], INTS[0]], ids=str)
def test_repeated_calls_along_the_first_axis_of_a_matrix(dtype, tier):
    # A 2-D input along its first axis goes to a driver of 3-D inputs; repeated, it is
    # passed with a leading axis of 1 by indexing (``api.LEADING``), not a reshape. The
    # portable tier's serial loop of rows takes a 1-D input as it is, the axis added in
    # compiled code (``add_leading_axis``).
    rng = np.random.default_rng(4)
    shapes = ((6, 7), (181, 181), (1, 40))
    for shape in shapes + (((9,), (1000,)) if tier == "portable" else ()):
        for keep, last in itertools.product((0, 1), (0, 1)):
            for _ in range(2):
                x = random_tensor(dtype, shape, rng, special=0.3)
                want = onnx_argmax(x, 0, keep, last)
                np.testing.assert_array_equal(argmax(x, 0, keep, last), want, err_msg=str(shape))
            remembered = api._PLANS[(x.shape, x.dtype, 0, keep, last, "argmax")]
            if tier == "fast" or len(shape) == 2:
                assert remembered.in_shape is api.LEADING, shape
            else:
                assert remembered.in_shape is None, shape
                assert "add_leading_axis" in remembered.entry.__name__
    if tier == "portable":  # on numba's threads, the view is made in Python
        kernels = portable.portable_kernels(kernel_view(dtype)[0], dtype.itemsize)
        assert kernels.choose(1, 1000, 1, True, (1000,)).in_shape == (1, 1000)


def test_bool_flags_repeat_the_remembered_call(monkeypatch, tier):
    # ``keepdims`` and ``select_last_index`` given as bools (numpy's ``keepdims=True``)
    # repeat the call remembered for the ints they equal, without planning again; a bool
    # axis is still refused.
    x = np.random.default_rng(8).standard_normal((6, 7)).astype(np.float32)
    planned = []
    real = api._reduce
    monkeypatch.setattr(api, "_reduce", lambda *a: planned.append(a) or real(*a))
    for keep, last in itertools.product((False, True), (False, True)):
        want = onnx_argmax(x, 1, int(keep), int(last))
        for flags in ((keep, last), (int(keep), int(last)), (keep, last)):
            np.testing.assert_array_equal(argmax(x, 1, *flags), want, err_msg=str(flags))
            assert argmax(x, 1, *flags).shape == want.shape
    assert len(planned) == 4  # once for each pair of values
    with pytest.raises(TypeError, match="axis must be an integer, not bool"):
        argmax(x, True)


@pytest.mark.parametrize("dtype", [FLOATS[1], FLOATS[2], INTS[0], INTS[7]], ids=str)
def test_rows_passed_in_their_own_ranks(dtype, fast_tier):
    # Along the last axis, the fast tier's row drivers take the input and the result as
    # they are, of any rank (``Ranks``), not reshaped to rows and a flat result: the first
    # call and the remembered ones, whose compiled driver is chosen by the two ranks.
    from argmax_numba.kernels.registry import KERNELS, Ranks

    rng = np.random.default_rng(5)
    for shape in ((9,), (1, 40), (3, 7), (2, 3, 300), (2, 1, 3, 4)):
        for keep, last in itertools.product((0, 1), (0, 1)):
            x = random_tensor(dtype, shape, rng, special=0.3)
            want = onnx_argmax(x, -1, keep, last)
            for _ in range(2):
                got = argmax(x, -1, keep, last)
                assert got.shape == want.shape
                np.testing.assert_array_equal(got, want, err_msg=f"{shape} {keep} {last}")
            plan = api._PLANS[(shape, dtype, -1, keep, last, "argmax")]
            assert plan.in_shape is None and plan.out_shape is None
            ranks = Ranks(len(shape), len(want.shape))
            entries = [
                e
                for kernels in KERNELS.values()
                for k in kernels.all_codes()
                for (_, r), e in k.entries.items()
                if r == ranks
            ]
            assert plan.entry in entries, (shape, keep)
    # Every axis after the reduced one has one element: rows reshaped, not the last axis.
    for shape, axis in (((3, 7, 1), 1), ((23, 1), 0), ((4, 5, 1, 1), 1), ((1, 1), 0)):
        x = random_tensor(dtype, shape, rng, special=0.3)
        for keep, last in itertools.product((0, 1), (0, 1)):
            want = onnx_argmax(x, axis, keep, last)
            for _ in range(2):
                got = argmax(x, axis, keep, last)
                np.testing.assert_array_equal(got, want, err_msg=f"{shape} {keep} {last}")


@pytest.mark.parametrize("dtype", [FLOATS[1], FLOATS[3], INTS[0], INTS[7]], ids=str)
def test_few_long_rows_cut_into_pieces(dtype, kernel_path, tier, searched_by):
    # Fewer long rows than a call shares out whole are cut into pieces (the portable
    # tier's PIECE elements at least, PIECES in all): the extreme must be found in any
    # piece, the first or the last of ties across pieces (the pieces of these rows are
    # PIECE + 1 long), a NaN anywhere above all.
    rng = np.random.default_rng(6)
    piece = tuning.PIECE
    for shape in ((1, 5 * piece + 3), (3, 2 * piece + 1)):
        n = shape[1]
        base = random_tensor(dtype, shape, rng, special=0) + dtype.type(2)  # 2 to 7
        plants = ([n - 1], [n // 2 + 7, n - 2], [1, n // 3, n - 1], [piece, piece + 1])
        for places, top in itertools.product(plants, (9, np.nan)):
            if dtype not in FLOATS and top != 9:  # (bfloat16's kind is "V", not "f")
                continue
            x = base.copy()
            x[:, places] = top
            for last in (0, 1):
                want = onnx_argmax(x, 1, 0, last)
                np.testing.assert_array_equal(argmax(x, 1, 0, last), want, err_msg=str(places))


def check_axis_1(x: np.ndarray) -> None:
    """``argmax`` of ``x`` along axis 1 against onnx's, both ``keepdims`` and
    ``select_last_index``."""
    for keep, last in itertools.product((0, 1), (0, 1)):
        want = onnx_argmax(x, 1, keep, last)
        got = argmax(x, 1, keep, last)
        np.testing.assert_array_equal(got, want, err_msg=f"{x.shape} {keep} {last}")


@pytest.mark.parametrize(
    "dtype", [FLOATS[0], FLOATS[1], FLOATS[3], INTS[0], INTS[1], INTS[2], INTS[7]], ids=str
)
def test_rows_as_long_as_short_rows_may_be_and_one_more(dtype, kernel_path, tier, searched_by):
    # Short rows (INTEGER_ROWS, FLOAT_ROWS: on one thread and on numba's threads) are
    # searched in one pass each, or across the rows; longer ones a block of BLOCK_BYTES at
    # a time: each length on either side of these, for every item size of floats and of
    # integers, ties and NaN anywhere.
    rng = np.random.default_rng(14)
    size = dtype.itemsize
    limits = tuning.FLOAT_ROWS if dtype in FLOATS else tuning.INTEGER_ROWS
    block = tuning.BLOCK_BYTES // size
    lengths = {limits.serial[size], limits.threads[size], block}
    for n in sorted(lengths | {m + 1 for m in lengths} | {2 * block + 1}):
        x = random_tensor(dtype, (300, n), rng, special=0.2)
        check_axis_1(x)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_short_rows_of_floats_folded_across_rows(dtype, monkeypatch, searched_by):
    # On numba's threads, the portable tier folds short rows of floats (FLOAT_ROWS)
    # a column at a time across ACROSS_ROWS rows of a task: the extreme must be found in any
    # column, the first or the last of ties (NaN, -0.0 with +0.0, inf), in every task
    # and in a last one part full; rows of one element, and the longest rows it takes.
    # (Rows of 2 to FIXED_ROWS[2] 16-bit floats have a loop of their own.)
    use_tier(monkeypatch, "portable")
    use_thresholds(monkeypatch, **PARALLEL)
    rng = np.random.default_rng(12)
    kernels = portable.portable_kernels(kernel_view(dtype)[0], dtype.itemsize)
    across = kernels.rows_across
    tasks = tuning.ACROSS_ROWS
    longest = tuning.FLOAT_ROWS.threads[dtype.itemsize]
    fixed = tuning.FIXED_ROWS[2]
    a, b = (2, min(10, longest - 1)) if dtype.itemsize > 2 else (fixed + 1, fixed + 2)
    for outer, n in ((1, 1), (tasks - 1, a), (2 * tasks + 5, b), (tasks + 1, longest)):
        assert kernels.choose(outer, n, 1, True).loop is across
        assert kernels.choose(outer, n, 1, False).loop is not across
        x = random_tensor(dtype, (outer, n), rng, special=0.3)
        x[::7] = x[::7, :1]  # rows of one value throughout: every place tied
        check_axis_1(x)
    wider = longest + 1  # searched a chunk at a time
    assert kernels.choose(tasks, wider, 1, True).loop is not across


def rows_for_their_own_loop(kernels, loop, dtype, n: int, rng) -> np.ndarray:
    """Random rows of ``n`` elements, ties, NaN and signed zeros among them, two tasks'
    worth and a last task part full, which ``loop`` takes on numba's threads (and not
    serially, nor on numba's threads where they are one task's worth)."""
    per = tuning.TASK_ELEMENTS // n  # rows of a task
    outer = 2 * per + 5
    assert kernels.choose(outer, n, 1, True).loop is loop
    assert kernels.choose(outer, n, 1, False).loop is not loop
    assert kernels.choose(per, n, 1, True).loop is not loop
    x = random_tensor(dtype, (outer, n), rng, special=0.3)
    x[::7] = x[::7, :1]  # rows of one value throughout: every place tied
    return x


@pytest.mark.parametrize("dtype", [*FLOATS, INTS[0], INTS[2], INTS[5], INTS[7]], ids=str)
def test_short_rows_compiled_for_their_length(dtype, monkeypatch, searched_by):
    # On numba's threads, the portable tier searches rows of 2 to FIXED_ROWS[itemsize]
    # elements with a loop compiled for their length, many rows to a task: the extreme
    # must be found in any place of a row, the first or the last of ties (NaN, -0.0 with
    # +0.0, inf), in every task and in a last one part full. Longer rows, serial calls,
    # and inputs of one task's elements or fewer take the loops for rows of any length.
    # How long rows of 4 and 8 bytes may be depends on the CPU (``tuning.fixed_rows``):
    # this test sends them there on any, as long as rows of 1 byte may be everywhere.
    use_tier(monkeypatch, "portable")
    use_thresholds(monkeypatch, **PARALLEL)
    longest = tuning.FIXED_ROWS[1]
    monkeypatch.setattr(portable.choice, "FIXED_ROWS", dict.fromkeys((1, 2, 4, 8), longest))
    rng = np.random.default_rng(15)
    kernels = portable.portable_kernels(kernel_view(dtype)[0], dtype.itemsize)
    for n in (2, 3, longest):
        x = rows_for_their_own_loop(kernels, kernels.fixed_rows(n), dtype, n, rng)
        check_axis_1(x)
    many = 2 * tuning.TASK_ELEMENTS  # rows
    for n in (1, longest + 1):
        assert kernels.choose(many, n, 1, True).loop not in kernels._fixed.values()
    # Where the CPU leaves elements of 4 and 8 bytes out, their rows take the others.
    monkeypatch.setattr(portable.choice, "FIXED_ROWS", {**tuning.FIXED_ROWS, 4: 0, 8: 0})
    if dtype.itemsize > 2:
        assert kernels.choose(many, 4, 1, True).loop not in kernels._fixed.values()
    else:
        assert kernels.choose(many, 4, 1, True).loop is kernels.fixed_rows(4)


@pytest.mark.parametrize("dtype", FLOATS[:2], ids=str)
def test_rows_of_floats_searched_as_halves(dtype, monkeypatch, searched_by):
    # On numba's threads, the portable tier searches rows of float32 and float64 too long
    # for the loop compiled for their length, but of an even length up to twice that
    # (and up to HALVED_ROWS), as two halves each, with a loop compiled for half their
    # length: the extreme must be found in either half, the first or the last of ties
    # within a half and across the two (NaN, -0.0 with +0.0, inf), in every task and in
    # a last one part full. Odd and longer rows, serial calls, and inputs of one task's
    # elements or fewer take other loops. How long rows of the loop compiled for their
    # length may be depends on the CPU (``tuning.fixed_rows``): this test sets it to
    # half the longest rows searched as halves, on any.
    use_tier(monkeypatch, "portable")
    use_thresholds(monkeypatch, **PARALLEL)
    most = tuning.HALVED_ROWS // 2
    monkeypatch.setattr(portable.choice, "FIXED_ROWS", {**tuning.FIXED_ROWS, dtype.itemsize: most})
    rng = np.random.default_rng(17)
    kernels = portable.portable_kernels(kernel_view(dtype)[0], dtype.itemsize)
    for n in (most + 2, tuning.HALVED_ROWS):
        x = rows_for_their_own_loop(kernels, kernels.fixed_halves(n // 2), dtype, n, rng)
        x[1::7, n // 2 :] = x[1::7, : n // 2]  # halves alike: each best tied across them
        check_axis_1(x)
    many = 2 * tuning.TASK_ELEMENTS  # rows
    for n in (most + 1, tuning.HALVED_ROWS + 2):
        assert not portable.halved(n, dtype.itemsize)
        assert kernels.choose(many, n, 1, True).loop not in kernels._fixed.values()
    # Integer rows of these lengths keep the loops for rows of any length.
    integers = portable.portable_kernels(0, dtype.itemsize)
    assert integers.choose(many, most + 2, 1, True).loop is integers.rows[True]


@pytest.mark.parametrize(
    ("features", "wide"),
    [
        ("+avx2,-avx512f", {4: 16, 8: 16}),
        ("+avx2,+avx512f", {4: 8, 8: 7}),
        ("+sse4.2,-avx2,-avx512f", {4: 0, 8: 0}),
    ],
)
def test_short_rows_compiled_for_their_length_as_long_as_the_cpu_allows(
    monkeypatch, features, wide
):
    # Rows of up to 16 elements of 1 and 2 bytes take the loop compiled for their length
    # on any CPU. Rows of elements of 4 and 8 bytes take it where numba compiles for an
    # x86-64 CPU with AVX2: up to 16 of them, or with AVX-512 up to 8 and 7, as told by
    # NUMBA_CPU_FEATURES where it is set (numba.config.CPU_FEATURES).
    monkeypatch.setattr(numba.config, "CPU_FEATURES", features)
    x86 = platform.machine().lower() in ("x86_64", "amd64")
    want = {1: 16, 2: 16, **(wide if x86 else {4: 0, 8: 0})}
    assert tuning.fixed_rows(tuning._x86_features()) == want


def test_wide_short_rows_left_out_where_numba_turns_avx_off(monkeypatch):
    # With NUMBA_ENABLE_AVX=0 numba compiles for the host without AVX's features, so
    # that rows of elements of 4 and 8 bytes keep the loops for rows of any length.
    monkeypatch.setattr(numba.config, "CPU_FEATURES", None)
    monkeypatch.setattr(numba.config, "ENABLE_AVX", False)
    assert tuning.fixed_rows(tuning._x86_features()) == {1: 16, 2: 16, 4: 0, 8: 0}


@pytest.mark.parametrize("dtype", [FLOATS[0], FLOATS[1], FLOATS[3], INTS[0], INTS[7]], ids=str)
def test_narrow_blocks_of_few_rows_copied_into_tiles(dtype, kernel_path, monkeypatch, searched_by):
    # The portable tier copies narrow blocks of few rows side by side into tiles of
    # TILE_LANES lanes: several tiles, a last one part full, one block fewer than a tile
    # holds, blocks of one row, and the most rows and bytes a tiled block may have.
    use_tier(monkeypatch, "portable")
    rng = np.random.default_rng(9)
    size = dtype.itemsize
    most_rows = tuning.TILE_ROWS[size]
    widest = min(tuning.NARROW_WIDTH - 1, tuning.TILE_BYTES // (most_rows * size))
    kernels = portable.portable_kernels(0, size)
    for n, inner in ((16, 3), (1, 5), (most_rows, widest), (2, tuning.NARROW_WIDTH - 1)):
        blocks = max(1, tuning.TILE_LANES // inner)  # a tile's
        for outer in (1, blocks - 1, 2 * blocks + 5):
            assert kernels.choose(outer, n, inner, False).loop is kernels.tiles[False]
            x = random_tensor(dtype, (outer, n, inner), rng, special=0.2)
            check_axis_1(x)


@pytest.mark.parametrize("dtype", [FLOATS[0], FLOATS[1], FLOATS[3], INTS[0]], ids=str)
def test_narrow_blocks_of_few_columns_compiled_for_their_width(dtype, monkeypatch, searched_by):
    # On numba's threads, the portable tier copies tiled blocks of 2 to FIXED_COLUMNS
    # columns with a loop compiled for their width: the extreme must be found in any row
    # and column of a block, the first or the last of ties (NaN, -0.0 with +0.0, inf), in
    # every tile and task, and in a last tile part full. Wider blocks, serial calls, and
    # inputs of one task's elements or fewer take the loop for blocks of any width.
    use_tier(monkeypatch, "portable")
    use_thresholds(monkeypatch, **PARALLEL)
    rng = np.random.default_rng(16)
    size = dtype.itemsize
    kernels = portable.portable_kernels(kernel_view(dtype)[0], size)
    widest = tuning.FIXED_COLUMNS[size]
    most_rows = min(tuning.TILE_ROWS[size], tuning.TILE_BYTES // (widest * size))
    for n, inner in ((16, 2), (3, 3), (most_rows, widest)):
        assert portable.tiled(n, inner, size)
        fixed = kernels.fixed_tiles(inner)
        blocks = tuning.TILE_LANES // inner  # a tile's
        per = max(1, tuning.TASK_ELEMENTS // (blocks * inner * n))  # tiles of a task
        outer = (2 * per + 1) * blocks - 1
        assert kernels.choose(outer, n, inner, True).loop is fixed
        assert kernels.choose(outer, n, inner, False).loop is not fixed
        assert kernels.choose(1, n, inner, True).loop is not fixed
        x = random_tensor(dtype, (outer, n, inner), rng, special=0.3)
        x[::5] = x[::5, :1]  # blocks of one value down each column: every row tied
        check_axis_1(x)
    wider = widest + 1
    assert portable.tiled(2, wider, size)
    many = tuning.TASK_ELEMENTS  # blocks
    assert kernels.choose(many, 2, wider, True).loop is kernels.tiles[True]


@pytest.mark.parametrize("dtype", [FLOATS[0], FLOATS[2], INTS[0]], ids=str)
def test_few_blocks_cut_into_parts_of_rows(dtype, monkeypatch, searched_by):
    # On numba's threads, the portable tier cuts the rows of fewer than PIECES blocks of
    # at most PART_WIDTH columns into parts, folded apart and merged in order: the
    # extreme must be found in any part, the first or the last of ties across all parts,
    # a NaN above all. Shapes: the fewest rows cut, the widest blocks, the most parts with
    # a short last one, and the most blocks; blocks just narrower than those folded two
    # rows at a time, and as wide (parts of an even and an odd number of rows after their
    # first, so that a row is left over after the pairs).
    use_tier(monkeypatch, "portable")
    use_thresholds(monkeypatch, **PARALLEL)
    rng = np.random.default_rng(11)
    rows, pieces = tuning.PART_ROWS, tuning.PIECES
    kernels = portable.portable_kernels(kernel_view(dtype)[0], dtype.itemsize)
    paired = tuning.paired_width(dtype.itemsize)
    shapes = (
        (1, 2 * rows, tuning.NARROW_WIDTH),
        (2, 3 * rows + 1, tuning.PART_WIDTH),
        (1, pieces * rows + 7, 100),
        (pieces - 1, 2 * rows + 1, 70),
        (1, 2 * rows, paired - 1),
        (1, 2 * rows + 1, paired),
    )
    assert [inner >= paired for _, _, inner in shapes] == [False, True, False, False, False, True]
    for outer, n, inner in shapes:
        assert kernels.choose(outer, n, inner, True).loop is kernels.middle_parts
        assert kernels.choose(outer, n, inner, False).loop is kernels.middle[False]
        base = random_tensor(dtype, (outer, n, inner), rng, special=0) + dtype.type(2)  # 2-7
        for top in (9, np.nan) if dtype in FLOATS else (9,):
            x = base.copy()
            x[:, n - 1, 0] = top  # in the last row
            x[:, ::rows, 1] = top  # in every part, tied
            x[:, n // 2 - 1 : n // 2 + 1, 2] = top  # tied across the middle
            x[:, 0, 3] = top  # in the first row
            x[:, :, 4] = top  # every row tied
            # (A part from row 0 starts a group of rows at row 1, then folds rows 2 and 3
            # as a pair, 4 and 5, and so on.)
            x[:, 2:4, 5] = top  # tied within a pair
            x[:, 3:5, 6] = top  # tied across two pairs
            for keep, last in itertools.product((0, 1), (0, 1)):
                want = onnx_argmax(x, 1, keep, last)
                got = argmax(x, 1, keep, last)
                np.testing.assert_array_equal(got, want, err_msg=f"{x.shape} {top} {last}")


@pytest.mark.parametrize("dtype", [FLOATS[0], FLOATS[2], INTS[0]], ids=str)
def test_blocks_cut_into_stretches_of_columns(dtype, monkeypatch, searched_by):
    # On numba's threads the middle-axis loop cuts a block into stretches of columns, one
    # a task: as many as make PIECES tasks of the input, at least STRETCH, at most
    # STRETCH_BYTES' worth. Inputs where each of the three decides, and blocks that end
    # in a stretch cut short, with many ties: every column's answer checked. Stretches of
    # STRETCH_BYTES' worth are folded two rows at a time (at least PAIRED_WIDTH
    # positions): seven rows there, two pairs and a row left over after the first two.
    use_tier(monkeypatch, "portable")
    use_thresholds(monkeypatch, **PARALLEL)
    rng = np.random.default_rng(12)
    kernels = portable.portable_kernels(kernel_view(dtype)[0], dtype.itemsize)
    widest = tuning.STRETCH_BYTES // dtype.itemsize
    assert widest >= tuning.paired_width(dtype.itemsize)
    shapes = (
        (1, 3, 5 * tuning.STRETCH - 1),  # STRETCH: fewer than PIECES tasks
        (1, 2, 8 * widest + 5),  # PIECES tasks, between STRETCH and STRETCH_BYTES' worth
        (1, 7, 40 * widest + 1),  # STRETCH_BYTES' worth: more than PIECES tasks
        (3, 2, 5 * tuning.PART_WIDTH + 3),  # three blocks, each ending in a shorter one
    )
    for outer, n, inner in shapes:
        assert kernels.choose(outer, n, inner, True).loop is kernels.middle[True]
        x = random_tensor(dtype, (outer, n, inner), rng, special=0.1)
        for last in (0, 1):
            want = onnx_argmax(x, 1, 0, last)
            np.testing.assert_array_equal(argmax(x, 1, 0, last), want, err_msg=f"{x.shape}")


@pytest.mark.parametrize("dtype", [FLOATS[2], INTS[0]], ids=str)
def test_rows_of_the_middle_axis_numbered_in_groups(dtype, kernel_path, monkeypatch, searched_by):
    # The portable tier numbers the rows of the middle axis in groups of as many rows as
    # its 16-bit row numbers count (8- and 16-bit elements), merged after each group: the
    # extreme must be found in any group, the first or the last of ties across groups,
    # a NaN above all. (A block this narrow and alone is cut into parts of fewer rows
    # than a group: here it is not, so that the middle-axis loop folds all its rows.)
    use_tier(monkeypatch, "portable")
    monkeypatch.setattr(portable.choice, "PART_WIDTH", 0)
    group = int(np.iinfo(tuning.ROW_NUMBERS[dtype.itemsize]).max)  # rows a group counts
    n, inner = 2 * group + 3, tuning.NARROW_WIDTH
    kernels = portable.portable_kernels(kernel_view(dtype)[0], dtype.itemsize)
    parallel = kernel_path == "parallel"
    assert kernels.choose(1, n, inner, parallel).loop is kernels.middle[parallel]
    rng = np.random.default_rng(10)
    base = random_tensor(dtype, (n, inner), rng, special=0) + dtype.type(2)  # 2 to 7
    tops = (9, np.nan) if dtype in FLOATS else (9,)
    for top in tops:
        x = base.copy()
        x[group - 1, 0] = x[group, 1] = x[n - 1, 2] = top  # one in each group
        x[1, 3] = x[group + 1, 3] = x[2 * group + 1, 3] = top  # ties across the groups
        x[group, 4] = x[group + 1, 4] = top  # ties across a group's border
        for last in (0, 1):
            want = onnx_argmax(x, 0, 0, last)
            np.testing.assert_array_equal(argmax(x, 0, 0, last), want, err_msg=f"{top}")


@pytest.mark.parametrize("dtype", [FLOATS[2], INTS[0]], ids=str)
def test_narrow_blocks_numbered_in_groups(dtype, kernel_path, monkeypatch, searched_by):
    # The portable tier reads ``m`` rows of a narrow block side by side as one wide row,
    # numbers the wide rows in 16 bits (8- and 16-bit elements) in groups merged after
    # each, and folds NARROW_WIDTH lanes also where a wide row is narrower (5 columns:
    # 60 lanes). The extreme must be found in any group and in the rows after the last
    # whole wide row, the first or the last of ties across groups and across a group's
    # border, a NaN above all.
    use_tier(monkeypatch, "portable")
    group = int(np.iinfo(tuning.ROW_NUMBERS[dtype.itemsize]).max)  # rows a group counts
    kernels = portable.portable_kernels(kernel_view(dtype)[0], dtype.itemsize)
    parallel = kernel_path == "parallel"
    rng = np.random.default_rng(11)
    for inner in (16, 5):
        m = tuning.NARROW_WIDTH // inner
        n = (2 * group + 3) * m + m - 1  # wide rows in three groups, and m - 1 rows more
        assert kernels.choose(1, n, inner, parallel).loop is kernels.narrow[parallel]
        base = random_tensor(dtype, (n, inner), rng, special=0) + dtype.type(2)  # 2 to 7
        tops = (9, np.nan) if dtype in FLOATS else (9,)
        for top in tops:
            x = base.copy()
            x[(group - 1) * m + 1, 0] = top  # the first group's last wide row
            x[group * m, 1] = top  # the second group's first wide row
            x[n - m, 2] = x[n - 1, 2] = top  # the last whole wide row; the rows after it
            x[1, 3] = x[group * m + 1, 3] = x[2 * group * m + 1, 3] = top  # across groups
            x[(group - 1) * m + 2, 4] = x[group * m + 2, 4] = top  # across a group's border
            for last in (0, 1):
                want = onnx_argmax(x, 0, 0, last)
                got = argmax(x, 0, 0, last)
                np.testing.assert_array_equal(got, want, err_msg=f"{inner} {top}")


@pytest.mark.parametrize("dtype", [FLOATS[0], FLOATS[2], FLOATS[3], INTS[0]], ids=str)
def test_the_portable_tier_repeats_a_remembered_call(dtype, monkeypatch):
    # A small call on the portable tier remembers its loop, which reads floats as the
    # integers of their width: the next call of the same kind runs it without choosing
    # again, and still answers right (NaN, -0.0 and ties included).
    use_tier(monkeypatch, "portable")
    rng = np.random.default_rng(5)
    for shape, axis in (((6, 7), 1), ((6, 7), 0), ((9,), 0)):
        x = random_tensor(dtype, shape, rng, special=0.4)
        argmax(x, axis, 0, 1)
    chosen = []
    real = api._choose_portable
    monkeypatch.setattr(api, "_choose_portable", lambda *a: chosen.append(a) or real(*a))
    for shape, axis in (((6, 7), 1), ((6, 7), 0), ((9,), 0)):
        for _ in range(3):
            x = random_tensor(dtype, shape, rng, special=0.4)
            got = argmax(x, axis, 0, 1)
            np.testing.assert_array_equal(got, onnx_argmax(x, axis, 0, 1))
    assert chosen == []


@pytest.mark.parametrize("variant", ["serial", "parallel"])
def test_thresholds_set_for_a_test_choose_the_kernels(variant, monkeypatch, fast_tier):
    # Small inputs remember their call and repeat it without planning again. A test that
    # sets ``planning``'s thresholds (``kernel_path``, ``use_thresholds``) must run the
    # kernels they choose, even on an input whose call another variant remembered.
    x = np.random.default_rng(3).standard_normal((8, 8)).astype(np.float32)
    other, wanted = (PARALLEL, SERIAL) if variant == "serial" else (SERIAL, PARALLEL)
    use_thresholds(monkeypatch, **other)
    argmax(x, 1)
    argmax(x, 1)  # remembered where it ran serially
    chosen = []
    real = api._choose
    monkeypatch.setattr(api, "_choose", lambda *a: chosen.append(a[6]) or real(*a))
    use_thresholds(monkeypatch, **wanted)
    np.testing.assert_array_equal(argmax(x, 1, 0), np.argmax(x, 1))
    assert chosen == [variant == "parallel"]

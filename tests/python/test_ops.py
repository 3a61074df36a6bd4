"""Every op against NumPy, over the supported dtypes, lazy and eager."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import resident as rs
from helpers import DTYPES, check, sample


@pytest.fixture(params=["lazy", "eager"])
def c(request, server):
    with rs.connect(server.target, lazy=request.param == "lazy") as client:
        yield client


# --- creation ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (7,), (3, 0, 2), (2, 3, 4)], ids=str)
def test_ones_zeros(c, dtype, shape):
    check(c.ones(shape, dtype), np.ones(shape, dtype))
    check(c.zeros(shape, dtype), np.zeros(shape, dtype))


def test_default_dtype_is_float64(c):
    check(c.ones(5), np.ones(5))
    check(c.zeros((2, 2)), np.zeros((2, 2)))


@pytest.mark.parametrize("fill,dtype", [(3, None), (2.5, None), (True, None), (7, np.int32),
                                        (1.5, np.float32), (-2, np.float64), (0, np.bool_),
                                        (np.float32(1.25), None), (np.int32(9), None)], ids=str)
def test_full(c, fill, dtype):
    check(c.full((2, 3), fill, dtype), np.full((2, 3), fill, dtype))


@pytest.mark.parametrize("args,kw", [((10,), {}), ((2, 11, 3), {}), ((10, 0, -2), {}),
                                     ((0.0, 1.0, 0.1), {}), ((5,), {"dtype": np.float32}),
                                     ((-3, 3), {"dtype": np.int32}), ((1, 0), {}),
                                     ((0.5, 4), {}), ((0, 5, 0.5), {"dtype": np.int64})],
                         ids=str)
def test_arange(c, args, kw):
    check(c.arange(*args, **kw), np.arange(*args, **kw))


# --- elementwise ---------------------------------------------------------------------

BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
          "divide": np.divide}


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("da,db", list(itertools.product(DTYPES, DTYPES)), ids=str)
def test_binary_promotion_and_broadcasting(c, op, da, db):
    a, b = sample(da, (3, 1, 4), 1), sample(db, (5, 4), 2)
    with np.errstate(all="ignore"):
        try:
            want = BINARY[op](a, b)
        except TypeError:  # NumPy refuses bool - bool: so must the server
            with pytest.raises(rs.InvalidArgument, match="boolean subtract"):
                getattr(rs, op)(c.asarray(a), c.asarray(b)).get()
            return
    check(getattr(rs, op)(c.asarray(a), c.asarray(b)), want)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_operators(c, dtype):
    a, b = sample(dtype, (4, 3), 3), sample(dtype, (3,), 4)
    x, y = c.asarray(a), c.asarray(b)
    with np.errstate(all="ignore"):
        check(x + y, a + b)
        check(x * y, a * b)
        check(x / y, a / b)
        if dtype != np.bool_:
            check(x - y, a - b)
            check(-x, -a)
            check(-(x - y) * x, -(a - b) * a)


def test_negative_of_bool_is_refused_like_numpy(c):
    with pytest.raises(rs.InvalidArgument, match="boolean negative"):
        (-c.ones(3, bool)).get()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_negative(c, dtype):
    a = sample(dtype, (6,), 5)
    if dtype == np.bool_:
        return
    check(rs.negative(c.asarray(a)), np.negative(a))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("scalar", [2, -3, 2.5, True, np.float32(0.5), np.int64(4),
                                    np.float64(1.5)], ids=repr)
def test_python_and_numpy_scalars_promote_as_numpy2(c, dtype, scalar):
    a = sample(dtype, (5,), 6)
    x = c.asarray(a)
    with np.errstate(all="ignore"):
        try:
            want = a + scalar
        except OverflowError:  # -3 for an unsigned dtype: NumPy 2 refuses it
            with pytest.raises(OverflowError, match="out of bounds"):
                x + scalar
            return
        check(x + scalar, want)
        check(scalar * x, scalar * a)
        check(x / scalar, a / scalar)
        if not (dtype == np.bool_ and isinstance(scalar, (bool, np.bool_))):
            try:
                want = scalar - a
            except TypeError:
                return
            check(scalar - x, want)


def test_scalar_out_of_range_for_int32_is_overflow_error(c):
    x = c.ones(3, np.int32)
    with pytest.raises(OverflowError):
        np.ones(3, np.int32) + 2**40  # NumPy 2 refuses it too
    with pytest.raises(OverflowError):
        x + 2**40


# --- linear algebra ---------------------------------------------------------------------

DOT_SHAPES = [((), ()), ((), (3,)), ((4,), ()), ((), (2, 3)), ((2, 3), ()), ((5,), (5,)),
              ((2, 5), (5,)), ((5,), (5, 3)), ((4, 6), (6, 3)), ((1, 1), (1, 1)),
              ((0, 3), (3, 2))]


@pytest.mark.parametrize("sa,sb", DOT_SHAPES, ids=str)
@pytest.mark.parametrize("da,db", [(np.float64, np.float64), (np.float32, np.float32),
                                   (np.int32, np.float32), (np.int64, np.int64),
                                   (np.int32, np.int32), (np.bool_, np.bool_),
                                   (np.bool_, np.int64)], ids=str)
def test_dot(c, sa, sb, da, db):
    a, b = sample(da, sa, 7), sample(db, sb, 8)
    check(rs.dot(c.asarray(a), c.asarray(b)), np.dot(a, b), exact=False)
    check(c.asarray(a).dot(c.asarray(b)), a.dot(b), exact=False)


MATMUL_SHAPES = [((5,), (5,)), ((3, 5), (5,)), ((5,), (5, 2)), ((3, 4), (4, 2)),
                 ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((0, 2), (2, 3))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32], ids=str)
def test_matmul(c, sa, sb, dtype):
    a, b = sample(dtype, sa, 9), sample(dtype, sb, 10)
    check(c.asarray(a) @ c.asarray(b), a @ b, exact=False)
    check(rs.matmul(c.asarray(a), c.asarray(b)), np.matmul(a, b), exact=False)


def test_shape_errors_are_numpy_like(c):
    with pytest.raises(ValueError, match="not aligned"):
        rs.dot(c.ones((2, 3)), c.ones((4, 2))).get()
    with pytest.raises(rs.InvalidArgument, match="broadcast"):
        (c.ones(3) + c.ones(4)).get()
    with pytest.raises(rs.InvalidArgument):
        (c.ones((2, 3)) @ c.ones((2, 3))).get()


# --- reductions, shapes, casts ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -3])
def test_sum(c, dtype, axis):
    a = sample(dtype, (3, 4, 5), 11)
    check(rs.sum(c.asarray(a), axis=axis), np.sum(a, axis=axis), exact=False)
    check(c.asarray(a).sum(axis=axis), a.sum(axis=axis), exact=False)


def test_sum_axis_out_of_bounds(c):
    with pytest.raises(rs.InvalidArgument, match="out of bounds"):
        c.ones((2, 3)).sum(axis=2).get()


@pytest.mark.parametrize("shape", [(6, 4), (-1,), (2, -1, 3), (24,), (1, 24, 1)], ids=str)
def test_reshape(c, shape):
    a = sample(np.float64, (2, 3, 4), 12)
    check(c.asarray(a).reshape(shape), a.reshape(shape))
    check(rs.reshape(c.asarray(a), shape), np.reshape(a, shape))
    check(c.asarray(a).reshape(*shape), a.reshape(*shape))


def test_reshape_to_wrong_size(c):
    with pytest.raises(rs.InvalidArgument, match="cannot reshape"):
        c.ones(6).reshape(4, 2).get()


@pytest.mark.parametrize("axes", [None, (0, 2, 1), (2, 0, 1), (-1, 0, 1)], ids=str)
def test_transpose(c, axes):
    a = sample(np.int32, (2, 3, 4), 13)
    x = c.asarray(a)
    check(rs.transpose(x, axes), np.transpose(a, axes))
    check(x.transpose(axes), a.transpose(axes))
    if axes:
        check(x.transpose(*axes), a.transpose(*axes))
    check(x.T, a.T)


@pytest.mark.parametrize("src,dst", list(itertools.product(DTYPES, DTYPES)), ids=str)
def test_astype(c, src, dst):
    a = sample(src, (17,), 14)
    check(c.asarray(a).astype(dst), a.astype(dst))
    check(rs.astype(c.asarray(a), dst), a.astype(dst))


def test_astype_nan_and_out_of_range_like_numpy_on_x86(c):
    a = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 2.9, -2.9])
    with np.errstate(invalid="ignore"):
        check(c.asarray(a).astype(np.int64), a.astype(np.int64))
        check(c.asarray(a).astype(np.int32), a.astype(np.int32))


@pytest.mark.parametrize("spec", ["float32", float, int, bool, "i4", np.dtype("<f8")], ids=str)
def test_dtype_spellings(c, spec):
    check(c.arange(4).astype(spec), np.arange(4).astype(spec))


def test_composite_expression(c):
    a, b, d = sample(np.float64, (4, 3), 15), sample(np.float64, (3, 5), 16), sample(
        np.float32, (5, 4), 17)
    x, y, z = c.asarray(a), c.asarray(b), c.asarray(d)
    want = (((a @ b).T + d) / 2).sum(axis=0) - a.sum()
    check(((((x @ y).T + z) / 2).sum(axis=0)) - x.sum(), want, exact=False)


# --- server-side loops --------------------------------------------------------------------


def test_loop_single(c):
    x = c.loop(10, c.ones((3, 4)), lambda v: v + v)
    check(x, np.full((3, 4), 1024.0))


def test_loop_with_invariants_scalars_and_several_carried(c):
    a, b = sample(np.float64, (4,), 18), sample(np.float64, (4,), 19)
    y = c.asarray(b)
    inv = y * 0.5  # pending outside the loop: computed once
    got = c.loop(5, (c.asarray(a), c.zeros(4)), lambda v: [v[0] * 0.5 + inv, v[1] + v[0]])
    assert isinstance(got, tuple) and len(got) == 2
    wa, wb = a.copy(), np.zeros(4)
    for _ in range(5):
        wa, wb = wa * 0.5 + b * 0.5, wb + wa
    check(got[0], wa)
    check(got[1], wb)


def test_nested_loops(c):
    def outer(v):
        return c.loop(3, v, lambda w: w * 2.0) + 1.0
    x = c.loop(4, c.ones(5), outer)
    want = np.ones(5)
    for _ in range(4):
        want = want * 8.0 + 1.0
    check(x, want)


def test_loop_of_dot(c):
    m = sample(np.float64, (3, 3), 20) / 10
    v = sample(np.float64, (3,), 21)
    x = c.loop(6, c.asarray(v), lambda w: rs.dot(c.asarray(m), w))
    want = v
    for _ in range(6):
        want = m @ want
    check(x, want, exact=False)


def test_loop_parameter_shape_known_inside_the_body(c):
    seen = []

    def body(v):
        seen.append((v.shape, v.dtype))
        return v.reshape(v.shape)
    c.loop(2, c.ones((2, 3), np.int32), body).get()
    assert seen == [((2, 3), np.dtype(np.int32))]


def test_zero_trip_loop_returns_the_initial_value(c):
    check(c.loop(0, c.arange(5), lambda v: v * 3), np.arange(5))

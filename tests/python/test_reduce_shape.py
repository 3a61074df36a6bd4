"""Reductions over axis sets and the shaping ops against NumPy, over the
supported dtypes, lazy and eager. Float sums and means are compared with
helpers.check's tolerance (rtol 1e-5 float32, 1e-12 float64: NumPy's
pairwise sums and the server's order differ); everything else exactly."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs
from helpers import DTYPES, check, sample


@pytest.fixture(params=["lazy", "eager"])
def c(request, server):
    with rs.connect(server.target, lazy=request.param == "lazy") as client:
        yield client


REDUCTIONS = ["sum", "prod", "mean", "max", "min", "any", "all"]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), (-1, True),
                                           ((0, 2), False), ((2, 0), True), ((), False)], ids=str)
def test_reduction(c, dtype, op, axis, keepdims):
    a = sample(dtype, (3, 4, 5), 21)
    if op == "prod" and dtype.kind == "f":
        a = (a / 8).astype(dtype)  # keep products in range
    want = getattr(np, op)(a, axis=axis, keepdims=keepdims)
    check(getattr(rs, op)(c.asarray(a), axis=axis, keepdims=keepdims), want, exact=False)
    check(getattr(c.asarray(a), op)(axis=axis, keepdims=keepdims), want, exact=False)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (-1, True)], ids=str)
def test_arg_reduction(c, dtype, op, axis, keepdims):
    a = sample(dtype, (3, 4, 5), 22)
    want = getattr(np, op)(a, axis=axis, keepdims=keepdims)
    check(getattr(rs, op)(c.asarray(a), axis=axis, keepdims=keepdims), want)
    check(getattr(c.asarray(a), op)(axis=axis, keepdims=keepdims), want)


def test_nan_propagates(c):
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -np.inf]])
    for op in ("max", "min", "argmax", "argmin"):
        check(getattr(rs, op)(c.asarray(a), axis=1), getattr(np, op)(a, axis=1))
        check(getattr(rs, op)(c.asarray(a)), getattr(np, op)(a))


def test_reduction_errors(c):
    with pytest.raises(rs.InvalidArgument, match="zero-size array to reduction operation maximum"):
        rs.max(c.zeros((0, 3)), axis=0).get()
    with pytest.raises(rs.InvalidArgument, match="attempt to get argmin of an empty sequence"):
        c.zeros(0).argmin().get()
    with pytest.raises(rs.InvalidArgument, match="duplicate value in 'axis'"):
        c.ones((2, 3)).sum(axis=(1, -1)).get()
    with pytest.raises(rs.InvalidArgument, match="out of bounds"):
        c.ones((2, 3)).mean(axis=2).get()
    with pytest.raises(TypeError):
        rs.argmax(c.ones((2, 3)), axis=(0, 1))
    # Empty reductions with an identity, as NumPy.
    check(rs.prod(c.zeros((0, 3)), axis=0), np.prod(np.zeros((0, 3)), axis=0))
    check(c.zeros((0, 3), np.int32).sum(), np.zeros((0, 3), np.int32).sum())
    check(c.zeros((0, 3), bool).all(axis=1), np.zeros((0, 3), bool).all(axis=1))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("key", [np.s_[::2], np.s_[:, ::-1], np.s_[1:, -2:, ::-3],
                                 np.s_[:, 5:-10:-1, -100:100:3], np.s_[::-5, 1:2, 3:0:-2],
                                 np.s_[0:0], np.s_[-1:]], ids=str)
def test_slice(c, dtype, key):
    a = sample(dtype, (4, 5, 6), 23)
    check(c.asarray(a)[key], a[key])


def test_slice_errors(c):
    with pytest.raises(rs.InvalidArgument, match="slice step cannot be zero"):
        c.ones((2, 3))[::0].get()
    with pytest.raises(rs.InvalidArgument, match="too many indices"):
        c.ones((2, 3))[:, :, :].get()
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 2"):
        c.ones((2, 3))[2]
    with pytest.raises(TypeError):
        c.ones((2, 3))[0.5]
    with pytest.raises(IndexError, match="out of bounds"):
        c.ones((2, 3))[[0, 1], [1, 3]]  # several index arrays: test_indexing.py


@pytest.mark.parametrize("key", [np.s_[0], np.s_[-1], np.s_[1, ::-1], np.s_[..., 2],
                                 np.s_[None, 1:], np.s_[:, None, -2, ...], np.s_[...],
                                 np.s_[-3, None, 1, None]], ids=str)
def test_basic_indexing(c, key):
    a = sample(np.int32, (4, 5, 6), 29)
    check(c.asarray(a)[key], a[key])


@pytest.mark.parametrize("dtypes", [(np.int32, np.int32), (np.int32, np.float32),
                                    (np.bool_, np.int64), (np.float32, np.float64)], ids=str)
@pytest.mark.parametrize("axis", [0, 1, -1, None], ids=str)
def test_concatenate(c, dtypes, axis):
    a, b = sample(dtypes[0], (3, 4), 24), sample(dtypes[1], (3, 4), 25)
    check(rs.concatenate([c.asarray(a), c.asarray(b)], axis=axis),
          np.concatenate([a, b], axis=axis))


@pytest.mark.parametrize("axis", [0, 1, 2, -1], ids=str)
def test_stack(c, axis):
    a, b = sample(np.int64, (3, 4), 26), sample(np.float32, (3, 4), 27)
    check(rs.stack([c.asarray(a), c.asarray(b), c.asarray(a)], axis=axis),
          np.stack([a, b, a], axis=axis))


def test_broadcast_squeeze_expand_dims(c):
    a = sample(np.float32, (3, 1, 4), 28)
    x = c.asarray(a)
    check(rs.broadcast_to(x, (2, 3, 5, 4)), np.broadcast_to(a, (2, 3, 5, 4)))
    check(rs.squeeze(x), np.squeeze(a))
    check(x.squeeze(axis=1), a.squeeze(axis=1))
    check(rs.expand_dims(x, (0, -1)), np.expand_dims(a, (0, -1)))
    with pytest.raises(rs.InvalidArgument, match="cannot select an axis to squeeze out"):
        rs.squeeze(x, axis=0).get()
    with pytest.raises(rs.InvalidArgument, match="could not be broadcast"):
        rs.broadcast_to(x, (3, 2, 5)).get()
    with pytest.raises(rs.InvalidArgument, match="same shape"):
        rs.stack([x, c.ones(3)]).get()

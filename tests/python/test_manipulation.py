"""flip, roll, moveaxis, broadcast_arrays, meshgrid, unstack, diff,
count_nonzero, linspace, eye, tril, triu against NumPy (bit for bit)
through the real server."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs
from helpers import check, sample


@pytest.fixture(params=["lazy", "eager"])
def c(request, server):
    with rs.connect(server.target, lazy=request.param == "lazy") as client:
        previous = rs.set_default_client(client)
        yield client
        rs.set_default_client(previous)


@pytest.mark.parametrize("dtype", [np.float64, np.int16, np.bool_, np.float32], ids=str)
def test_flip_roll_moveaxis(c, dtype):
    a = sample(dtype, (3, 4, 5), 5)
    x = c.asarray(a)
    for axis in [None, 0, -1, (0, 2)]:
        check(rs.flip(x, axis=axis), np.flip(a, axis=axis))
    for shift, axis in [(2, None), (-1, 0), (7, 2), ((1, -2), (0, 1)), ((1, 1), (1, 1)), (0, 1)]:
        check(rs.roll(x, shift, axis=axis), np.roll(a, shift, axis=axis))
    for src, dst in [(0, -1), ((0, 1), (2, 0)), (-1, 0)]:
        check(rs.moveaxis(x, src, dst), np.moveaxis(a, src, dst))
    with pytest.raises(np.exceptions.AxisError):
        rs.flip(x, axis=3)


def test_broadcast_arrays_meshgrid_unstack(c):
    a, b = sample(np.float64, (3, 1), 1), sample(np.float64, (4,), 2)
    for got, want in zip(rs.broadcast_arrays(c.asarray(a), c.asarray(b)),
                         np.broadcast_arrays(a, b)):
        check(got, want)
    x, y, z = np.arange(3.0), np.arange(4.0) * 2, np.arange(2.0) - 5
    for indexing in ["xy", "ij"]:
        for got, want in zip(rs.meshgrid(c.asarray(x), c.asarray(y), c.asarray(z),
                                         indexing=indexing),
                             np.meshgrid(x, y, z, indexing=indexing)):
            check(got, want)
    m = sample(np.int32, (2, 3, 4), 3)
    for axis in [0, 1, -1]:
        for got, want in zip(rs.unstack(c.asarray(m), axis=axis), np.unstack(m, axis=axis)):
            check(got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint8, np.bool_], ids=str)
def test_diff_and_count_nonzero(c, dtype):
    a = sample(dtype, (4, 6), 9)
    x = c.asarray(a)
    for n, axis in [(1, -1), (2, 0), (3, 1), (0, 0)]:
        check(rs.diff(x, n=n, axis=axis), np.diff(a, n=n, axis=axis))
    for axis in [None, 0, (0, 1)]:
        check(rs.count_nonzero(x, axis=axis),
              np.asarray(np.count_nonzero(a, axis=axis), np.int64))
    check(rs.count_nonzero(x, axis=1, keepdims=True),
          np.count_nonzero(a, axis=1, keepdims=True).astype(np.int64))


@pytest.mark.parametrize("args,kw", [((0.0, 1.0, 11), {}), ((-3.3, 7.1, 50), {}),
                                     ((1, 10, 7), {}), ((0.0, 1.0, 10), {"endpoint": False}),
                                     ((5.0, -2.5, 13), {"dtype": np.float32}),
                                     ((0, 100, 9), {"dtype": np.int32}), ((2.0, 3.0, 1), {}),
                                     ((2.0, 3.0, 0), {}), ((1e-320, 3e-320, 4), {})], ids=str)
def test_linspace_is_numpys_bit_for_bit(c, args, kw):
    want = np.linspace(*args, **kw)
    got = rs.linspace(*args[:2], args[2], **kw)
    check(got, want)
    assert got.get().tobytes() == want.tobytes()


def test_eye_tril_triu(c):
    for args, kw in [((3,), {}), ((3, 5), {"k": 1}), ((4, 2), {"k": -1}),
                     ((3,), {"dtype": np.int8}), ((2, 2), {"k": 5})]:
        check(rs.eye(*args, **kw), np.eye(*args, **kw))
    for dtype in [np.float64, np.int16, np.bool_]:
        a = sample(dtype, (2, 4, 5), 4)
        x = c.asarray(a)
        for k in [0, 1, -2, 7]:
            check(rs.tril(x, k=k), np.tril(a, k=k))
            check(rs.triu(x, k=k), np.triu(a, k=k))
    with pytest.raises(ValueError):
        rs.tril(c.ones(3))


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.bool_], ids=str)
def test_tile_and_repeat(c, dtype):
    a = sample(dtype, (2, 3), 9)
    x = c.asarray(a)
    for reps in [2, (2, 1), (1, 3), (2, 1, 2), (0, 2), ()]:
        check(rs.tile(x, reps), np.tile(a, reps))
    for repeats, axis in [(3, None), (2, 0), (2, -1), (0, 1), ([1, 0, 2], 1), ([2, 2], 0),
                          (np.array([3, 1, 1, 0, 2, 2]), None)]:
        check(rs.repeat(x, repeats, axis=axis), np.repeat(a, repeats, axis=axis))
    check(rs.repeat(x, c.asarray(np.array([1, 2])), axis=0), np.repeat(a, [1, 2], axis=0))
    with pytest.raises(ValueError, match="negative"):
        rs.repeat(x, -1)
    with pytest.raises(ValueError):
        rs.repeat(x, [1, 2], axis=1)


def test_astype_copy_and_reductions_with_dtype(c):
    a = np.array([[100, 27, -3], [90, 90, 1]], np.int8)
    x = c.asarray(a)
    assert rs.astype(x, np.int8, copy=False) is x
    assert x.astype(np.int8, copy=False) is x
    check(rs.astype(x, np.float32, copy=False), a.astype(np.float32))
    check(rs.astype(x, np.int8), a.astype(np.int8))
    for dtype in [np.int8, np.int16, np.float32, np.uint8]:
        with np.errstate(all="ignore"):
            check(rs.sum(x, dtype=dtype), np.sum(a, dtype=dtype))
            check(rs.sum(x, axis=0, dtype=dtype), np.sum(a, axis=0, dtype=dtype))
            check(rs.prod(x, axis=1, dtype=dtype, keepdims=True),
                  np.prod(a, axis=1, dtype=dtype, keepdims=True))
    f = np.linspace(0, 1, 1001)
    check(rs.sum(c.asarray(f), dtype=np.float32), np.sum(f, dtype=np.float32), exact=False)


def test_shape_errors_raise_at_the_call(c):
    """Even a lazy client raises shape errors where NumPy does: at the call."""
    x = c.asarray(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out"):
        rs.squeeze(x, axis=0)
    with pytest.raises(rs.InvalidArgument, match="cannot reshape array of size 6"):
        x.reshape(4, 2)
    with pytest.raises(ValueError, match="out of bounds"):
        rs.expand_dims(x, axis=5)
    with pytest.raises(ValueError):
        rs.concatenate([x, c.asarray(np.zeros((3, 3)))], axis=1)
    with pytest.raises(ValueError):
        rs.broadcast_to(x, (3, 3))

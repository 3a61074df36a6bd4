"""The integer dtypes (int8, int16, uint8, uint16, uint32, uint64) through
the Python client: every bit round-trips, promotion and NEP 50 scalars as
NumPy 2 computed in the test, NumPy's errors for out-of-range scalars."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs

from helpers import check

NEW = [np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.fixture
def c(server):
    with rs.connect(server.target) as client:
        yield client


@pytest.mark.parametrize("dtype", NEW, ids=lambda d: np.dtype(d).name)
def test_round_trip_keeps_every_bit(c, dtype):
    info = np.iinfo(dtype)
    a = np.array([info.min, info.max, 0, 1, info.max - 1], dtype)
    got = c.asarray(a).get()
    assert got.dtype == a.dtype and (got == a).all()


@pytest.mark.parametrize("da", NEW, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("db", NEW + [np.int32, np.int64, np.float32], ids=lambda d: np.dtype(d).name)
def test_mixed_promotion_as_numpy(c, da, db):
    a = np.array([1, 2, 100], da)
    b = np.array([3, 0, 7], db)
    x, y = c.asarray(a), c.asarray(b)
    with np.errstate(all="ignore"):
        check(x + y, a + b)
        check(x * y, a * b)
        check(x // y, a // b)
        check(x < y, a < b)


@pytest.mark.parametrize("dtype", NEW, ids=lambda d: np.dtype(d).name)
def test_scalars_and_sums_as_numpy(c, dtype):
    a = np.array([0, 5, 100], dtype)
    x = c.asarray(a)
    check(x + 1, a + 1)
    check(x * 2.5, a * 2.5)
    check(x == 300, a == 300)
    check(x > -1, a > -1)
    check(rs.sum(x), np.sum(a))
    check(rs.prod(x), np.prod(a))
    check(rs.mean(x), np.mean(a), exact=False)
    check(rs.max(x), np.max(a))
    info = np.iinfo(dtype)
    bad = int(info.max) + 1 if info.max < 2**63 - 1 else -1
    with pytest.raises(OverflowError, match="out of bounds"):
        a + bad  # NumPy's own answer, which the client must give
    with pytest.raises(OverflowError, match="out of bounds"):
        (x + bad).get()


def test_out_of_range_scalar_is_an_error_on_the_server_too(c):
    x = c.asarray(np.array([1, 2], np.uint8))
    with pytest.raises((OverflowError, rs.InvalidArgument), match="-1 out of bounds for uint8"):
        (x + (-1)).get()

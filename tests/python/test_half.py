"""float16 (NumPy's) and bfloat16 (ml_dtypes') through the Python client:
every bit round-trips, elementwise results are NumPy's bit for bit (both
compute in float32 and round once per op), promotion is NumPy 2's and
ml_dtypes', sums and matmul (float32 accumulation) within one ULP."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs

from helpers import check

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
HALVES = [np.dtype(np.float16), BF16]


@pytest.fixture
def c(server):
    with rs.connect(server.target) as client:
        yield client


def specials(dtype):
    return np.array([0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 65504.0, 6e-8, 1e-40, 3.0e38],
                    dtype=np.float32).astype(dtype)


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_round_trip_keeps_every_bit(c, dtype):
    bits = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16)
    a = bits.view(dtype)
    got = c.asarray(a).get()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.view(np.uint16), bits)


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_elementwise_bit_identical(c, dtype):
    rng = np.random.default_rng(3)
    a = np.concatenate([(rng.standard_normal(200) * 30).astype(dtype), specials(dtype)])
    b = np.concatenate([(rng.standard_normal(200) * 3).astype(dtype), specials(dtype)[::-1]])
    x, y = c.asarray(a), c.asarray(b)
    with np.errstate(all="ignore"):
        check(x + y, a + b)
        check(x - y, a - b)
        check(x * y, a * b)
        check(x / y, a / b)
        check(-x, -a)
        check(rs.sqrt(rs.abs(x)), np.sqrt(np.abs(a)))
        check(rs.maximum(x, y), np.maximum(a, b))
        check(x < y, a < b)
        check(x * 2.5, a * 2.5)
        check((x + y) * y - x, (a + b) * b - a)  # rounded after every op


@pytest.mark.parametrize("da", HALVES, ids=str)
@pytest.mark.parametrize("db", [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.float16,
                                np.float32, np.float64, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
def test_promotion_as_numpy(c, da, db):
    a = np.array([1.5, -2, 100], da)
    b = np.array([3, 0, 1], db)
    x, y = c.asarray(a), c.asarray(b)
    with np.errstate(all="ignore"):
        check(x + y, a + b)
        check(x * y, a * b)


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_casts_as_numpy(c, dtype):
    a = specials(dtype)
    x = c.asarray(a)
    for to in (np.float32, np.float64, np.bool_):
        check(x.astype(to), a.astype(to))
    f = np.array([1.0009765625, 1.00048828125, 1e-8, 7e4, np.nan, -np.inf], np.float64)
    check(c.asarray(f).astype(dtype), f.astype(dtype))


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_reductions_and_matmul(c, dtype):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((16, 24)).astype(dtype)
    b = rng.standard_normal((24, 8)).astype(dtype)
    x, y = c.asarray(a), c.asarray(b)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)  # float32 accumulation
    check(x @ y, want, exact=False)
    check(rs.sum(x), np.sum(a.astype(np.float32)).astype(dtype), exact=False)
    check(rs.sum(x, axis=0), np.sum(a.astype(np.float32), axis=0).astype(dtype), exact=False)
    check(rs.mean(x, axis=1), np.mean(a.astype(np.float32), axis=1).astype(dtype), exact=False)
    check(rs.max(x), np.max(a))

"""sort, argsort, take_along_axis, cumulative_sum/prod (and NumPy's cumsum,
cumprod) through the real server against NumPy computed in the test:
stable order, NaNs last, -0.0 equal to +0.0, the standard's descending,
every real dtype, axes, and the errors NumPy raises."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs
from conftest import DEVICE
from helpers import DTYPES, check, sample


@pytest.fixture(params=["lazy", "eager"])
def c(request, server):
    with rs.connect(server.target, lazy=request.param == "lazy") as client:
        yield client


def with_specials(a):
    if a.dtype.kind == "f":
        a.flat[:7] = [np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan, 0.0]
    return a


def descending_argsort(a, axis):
    """The standard's descending stable order, as array-api-strict computes it."""
    flipped = np.flip(a, axis=axis)
    return a.shape[axis] - 1 - np.flip(np.argsort(flipped, axis=axis, stable=True), axis=axis)


@pytest.mark.parametrize("dtype", DTYPES + [np.dtype(np.float16)], ids=str)
def test_sort_and_argsort_every_dtype(c, dtype):
    a = with_specials(sample(dtype, (4, 33), 21))
    x = c.asarray(a)
    for axis in [-1, 0]:
        check(rs.argsort(x, axis=axis), np.argsort(a, axis=axis, stable=True))
        check(rs.sort(x, axis=axis), np.sort(a, axis=axis, stable=True))
        want = descending_argsort(a, axis)
        check(rs.argsort(x, axis=axis, descending=True), want)
        check(rs.sort(x, axis=axis, descending=True), np.take_along_axis(a, want, axis=axis))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int16,
                                   np.int32, np.int64, np.uint64, np.bool_], ids=str)
@pytest.mark.parametrize("specials", [False, True], ids=["plain", "nan_and_zeros"])
def test_long_rows_bit_for_bit(c, dtype, specials):
    """Rows long enough for the library sorts (radix passes, VQSort of
    values or of key-and-index words): the order and each element's bits,
    NaN payloads and -0.0 among +0.0 included, as NumPy's stable sort."""
    a = sample(dtype, (2, 3000), 22)
    if a.dtype.kind in "iu":
        a = (a % 7).astype(dtype)  # many ties
    if specials and a.dtype.kind == "f":
        a[:, ::5] = 0.0
        a[:, 1::10] = -0.0
        a[:, 3::17] = np.nan
        a[:, 4::23] = -np.nan
    x = c.asarray(a)
    bits = np.dtype(f"u{a.dtype.itemsize}") if a.dtype != np.bool_ else np.uint8
    for descending in (False, True):
        want = descending_argsort(a, -1) if descending else np.argsort(a, stable=True)
        check(rs.argsort(x, descending=descending), want)
        got = rs.sort(x, descending=descending).get()
        np.testing.assert_array_equal(got.view(bits), np.take_along_axis(a, want, -1).view(bits))
    check(rs.argsort(x[0]), np.argsort(a[0], stable=True))  # one row: split over the threads


def test_sort_is_stable_with_ties_and_3d(c):
    a = np.array([[3, 1, 2, 1, 3, 1, 0]] * 2, np.int64).reshape(2, 1, 7)
    x = c.asarray(a)
    check(rs.argsort(x), np.argsort(a, stable=True))
    b = np.random.default_rng(3).integers(0, 4, (3, 5, 6)).astype(np.float32)
    for axis in range(3):
        check(rs.argsort(c.asarray(b), axis=axis), np.argsort(b, axis=axis, stable=True))
    big = np.random.default_rng(4).standard_normal(100_000)
    check(rs.sort(c.asarray(big)), np.sort(big))
    check(np.sort(c.asarray(b), 1), np.sort(b, 1))  # NumPy's protocol, axis positional


def test_take_along_axis(c):
    a = sample(np.float64, (3, 5), 22)
    idx = np.array([[0, 4, -1], [2, 2, 2], [-5, 1, 3]])
    x = c.asarray(a)
    check(rs.take_along_axis(x, c.asarray(idx), axis=1), np.take_along_axis(a, idx, axis=1))
    one = np.array([[2]])  # broadcast along the other axis: a (1, 5) result
    check(rs.take_along_axis(x, c.asarray(one), axis=0), np.take_along_axis(a, one, axis=0))
    with pytest.raises(rs.InvalidArgument, match="out of bounds"):
        rs.take_along_axis(x, c.asarray(np.array([[5], [0], [0]])), axis=1).get()
    with pytest.raises(ValueError, match="same number of dimensions"):
        rs.take_along_axis(x, c.asarray(np.array([1, 2])), axis=0)


def check_scan(got, want):
    """The CPU backend scans left to right as NumPy: floats bit for bit.
    CUDA combines in a tree: floats within rounding (halves by up to one
    rounding per element)."""
    want = np.asarray(want)
    if DEVICE == "cpu" or want.dtype.kind != "f":
        return check(got, want)
    if want.dtype.itemsize > 2:
        return check(got, want, exact=False)
    g = got.get()
    assert g.dtype == want.dtype and g.shape == want.shape
    scale = max(1.0, float(np.abs(want.astype(np.float32)).max(initial=0)))
    np.testing.assert_allclose(g.astype(np.float32), want.astype(np.float32), rtol=0,
                               atol=1e-2 * scale)


@pytest.mark.parametrize("dtype", DTYPES + [np.dtype(np.float16)], ids=str)
def test_cumulative_sum_and_prod(c, dtype):
    a = sample(dtype, (3, 9), 23)
    if dtype.kind == "f":
        a = (a / 10).astype(dtype)
    x = c.asarray(a)
    for axis in [0, 1, -1]:
        with np.errstate(all="ignore"):
            check_scan(rs.cumulative_sum(x, axis=axis), np.cumulative_sum(a, axis=axis))
            check_scan(rs.cumulative_prod(x, axis=axis), np.cumulative_prod(a, axis=axis))
    with np.errstate(all="ignore"):
        check_scan(rs.cumsum(x), np.cumsum(a))
        check_scan(x.cumprod(axis=1), a.cumprod(axis=1))
        check_scan(rs.cumulative_sum(x, axis=1, include_initial=True),
                   np.cumulative_sum(a, axis=1, include_initial=True))
        check_scan(rs.cumulative_prod(x, axis=0, include_initial=True, dtype=np.float64),
                   np.cumulative_prod(a, axis=0, include_initial=True, dtype=np.float64))
    with pytest.raises(ValueError, match="axis is required"):
        rs.cumulative_sum(x)


def test_errors_and_empty(c):
    x = c.asarray(np.zeros((2, 0)))
    check(rs.sort(x), np.sort(np.zeros((2, 0))))
    check(rs.cumulative_sum(x, axis=1), np.cumulative_sum(np.zeros((2, 0)), axis=1))
    with pytest.raises(ValueError, match="out of bounds"):
        rs.argsort(x, axis=2)
    with pytest.raises(ValueError):
        rs.sort(c.asarray(np.float64(1.0)))


def test_take(c):
    a = sample(np.int32, (3, 4, 5), 24)
    x = c.asarray(a)
    idx = np.array([4, 0, -1, 2, 2])
    for axis in [0, 1, 2, -1]:
        i = idx % a.shape[axis] if axis in (0, 1) else idx
        check(rs.take(x, c.asarray(i), axis=axis), np.take(a, i, axis=axis))
    check(rs.take(x, c.asarray(np.array([59, 0, 7])), axis=None), np.take(a, [59, 0, 7]))
    check(np.take(x, c.asarray(np.array([1, 0])), axis=0), np.take(a, [1, 0], axis=0))
    with pytest.raises(rs.InvalidArgument, match="out of bounds"):
        rs.take(x, c.asarray(np.array([3])), axis=0).get()


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.bool_, np.float32], ids=str)
def test_unique_functions(c, dtype):
    dtype = np.dtype(dtype)
    a = sample(dtype, (4, 7), 25)
    if dtype.kind == "f":
        a = np.round(a / 5).astype(dtype)  # repeats
        a.flat[:4] = [np.nan, -0.0, 0.0, np.nan]
    x = c.asarray(a)
    # NumPy's unique_* (the standard's: NaNs are distinct). NumPy 2.3+'s
    # unique_values may be unsorted (a hash table); Resident's are sorted.
    check(rs.unique_values(x), np.sort(np.unique_values(a)))
    got, want = rs.unique_counts(x), np.unique_counts(a)
    check(got.values, want.values)
    check(got.counts, want.counts)
    got, want = rs.unique_inverse(x), np.unique_inverse(a)
    check(got.values, want.values)
    check(got.inverse_indices, want.inverse_indices)
    got, want = rs.unique_all(x), np.unique_all(a)
    for g, w in zip(got, want):
        check(g, w)
    empty = rs.unique_all(c.asarray(np.zeros((0, 3), dtype)))
    assert empty.values.shape == (0,) and empty.inverse_indices.shape == (0, 3)


@pytest.mark.parametrize("dtype", [np.float64, np.int16], ids=str)
def test_searchsorted(c, dtype):
    a = np.sort(sample(dtype, (50,), 26))
    if np.dtype(dtype).kind == "f":
        a[-2:] = np.nan
    v = sample(dtype, (3, 7), 27)
    v.flat[:3] = a[[0, 10, 49]]  # ties with x1's elements
    x = c.asarray(a)
    for side in ["left", "right"]:
        check(rs.searchsorted(x, c.asarray(v), side=side), np.searchsorted(a, v, side=side))
    shuffled = np.random.default_rng(5).permutation(50)
    sorter = np.argsort(a[shuffled], stable=True)
    check(rs.searchsorted(c.asarray(a[shuffled]), c.asarray(v), sorter=c.asarray(sorter)),
          np.searchsorted(a[shuffled], v, sorter=sorter))
    check(np.searchsorted(x, c.asarray(v[0])), np.searchsorted(a, v[0]))


def complex_sample(dtype, shape, seed):
    """Parts drawn from a few values: ties, signed zeros, infinities and NaNs
    in either part (NumPy's order puts R + nanj, nan + Rj, nan + nanj last)."""
    rng = np.random.default_rng(seed)
    pool = np.array([np.nan, -np.inf, -1.0, -0.0, 0.0, 1.0, 2.5, np.inf])
    a = np.empty(shape, dtype)
    a.real = rng.choice(pool, shape)
    a.imag = rng.choice(pool, shape)
    return a


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_complex_sort_argsort_unique_searchsorted(c, dtype):
    a = complex_sample(dtype, (3, 40), 31)
    x = c.asarray(a)
    for axis in [-1, 0]:
        check(rs.argsort(x, axis=axis), np.argsort(a, axis=axis, stable=True))
        check(rs.sort(x, axis=axis), np.sort(a, axis=axis, stable=True))
        check(rs.argsort(x, axis=axis, descending=True), descending_argsort(a, axis))
    check(np.sort(x, axis=None), np.sort(a, axis=None))  # the protocol path
    # unique_*: the standard's (NaNs distinct), so compare NaN-free values.
    b = np.where(np.isnan(a), 0, a).astype(dtype)
    got, want = rs.unique_inverse(c.asarray(b)), np.unique_inverse(b)
    check(got.values, want.values)
    check(got.inverse_indices, want.inverse_indices)
    s = np.sort(b.ravel())
    v = b[0, :9]
    for side in ["left", "right"]:
        check(rs.searchsorted(c.asarray(s), c.asarray(v), side=side),
              np.searchsorted(s, v, side=side))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_complex_cumulative_sum_and_prod(c, dtype):
    rng = np.random.default_rng(32)
    a = (rng.uniform(-1.2, 1.2, (4, 50)) + 1j * rng.uniform(-1.2, 1.2, (4, 50))).astype(dtype)
    x = c.asarray(a)
    rtol = 1e-5 if dtype == np.complex64 else 1e-12
    for axis in [1, 0]:
        for got, want in [(rs.cumulative_sum(x, axis=axis), np.cumsum(a, axis=axis)),
                          (rs.cumulative_prod(x, axis=axis), np.cumprod(a, axis=axis)),
                          (np.cumsum(x, axis=axis), np.cumsum(a, axis=axis))]:
            g = got.get()
            assert g.dtype == want.dtype and g.shape == want.shape
            np.testing.assert_allclose(g, want, rtol=rtol, atol=rtol * 50)

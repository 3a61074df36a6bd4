"""complex64 and complex128 through the Python client and a real server:
every bit round-trips, elementwise results are NumPy's bit for bit (the
server reproduces NumPy's AVX-512 complex loops), promotion is NumPy 2's
with weak Python complex scalars (NEP 50), casts take the real part as
NumPy's unsafe cast does, sums and matmul within a relative tolerance, and
what Resident refuses is a clear InvalidArgument."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import resident as rs

from helpers import check

COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]


@pytest.fixture
def c(server):
    with rs.connect(server.target) as client:
        yield client


def sample(dtype, n, seed):
    rng = np.random.default_rng(seed)
    part = np.float32 if dtype == np.complex64 else np.float64
    z = np.empty(n, dtype)
    z.real = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3, n)).astype(part)
    z.imag = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3, n)).astype(part)
    specials = np.array([0j, complex(-0.0, 0.0), 1 + 0j, 1j, complex(np.inf, 1),
                         complex(1, -np.inf), complex(3e38, 3e38), complex(1e-40, -2.5)], dtype)
    return np.concatenate([z, specials])


def exact(got_array, want):
    """Bit for bit, part by part; any NaN equals any NaN."""
    got = got_array.get()
    assert got.dtype == want.dtype and got.shape == want.shape
    assert (got_array.dtype, got_array.shape) == (want.dtype, want.shape)
    for part in (np.real, np.imag):
        g, w = np.ascontiguousarray(part(got)), np.ascontiguousarray(part(want))
        same = (g.view(np.uint8) == w.view(np.uint8)).reshape(g.shape + (-1,)).all(-1)
        assert np.all(same | (np.isnan(g) & np.isnan(w))), (got[~same][:5], want[~same][:5])


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_round_trip_keeps_every_bit(c, dtype):
    a = sample(dtype, 300, 1)
    got = c.asarray(a).get()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.view(np.uint8), a.view(np.uint8))
    assert c.zeros(3, dtype).get().dtype == dtype
    check(c.full((2,), 1.5 - 2j), np.full(2, 1.5 - 2j))
    check(c.full((2,), 3, dtype=dtype), np.full(2, 3, dtype=dtype))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_elementwise_bit_identical(c, dtype):
    a, b = sample(dtype, 400, 2), sample(dtype, 400, 3)[::-1].copy()
    x, y = c.asarray(a), c.asarray(b)
    with np.errstate(all="ignore"):
        exact(x + y, a + b)
        exact(x - y, a - b)
        exact(x * y, a * b)
        exact(x / y, a / b)
        exact(-x, -a)
        exact(abs(x), np.abs(a))
        exact(rs.maximum(x, y), np.maximum(a, b))
        exact(rs.minimum(x, y), np.minimum(a, b))
        exact(rs.fmax(x, y), np.fmax(a, b))
        exact(rs.fmin(x, y), np.fmin(a, b))
        for op in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                   "logical_and", "logical_or", "logical_xor"):
            check(getattr(rs, op)(x, y), getattr(np, op)(a, b))
        for op in ("isnan", "isfinite", "logical_not"):
            check(getattr(rs, op)(x), getattr(np, op)(a))
        # NumPy's own loops: Smith's reciprocal, rint of each part, and
        # small integer powers as repeated products.
        exact(rs.reciprocal(x), np.reciprocal(a))
        exact(rs.rint(x), np.rint(a))
        for k in (2, 3, 5, -1, -4):  # the operator: 2 and -1 are NumPy's fast paths
            exact(x ** k, a ** k)
        for k in (2, 3, -1, -4):  # the ufunc: NumPy's npy_cpow, repeated plain products
            exact(rs.power(x, k), np.power(a, k))


def close_in_ulps(got_array, want, ulps=4):
    """Within `ulps` units in the last place of NumPy's larger part, and
    NumPy's special values exactly (a NaN, infinite or zero part of NumPy's
    is the same, zero's sign included)."""
    got = got_array.get()
    assert got.dtype == want.dtype and got.shape == want.shape
    part_t = np.float32 if want.dtype == np.complex64 else np.float64
    mag = np.maximum(np.abs(want.real), np.abs(want.imag)).astype(part_t)
    with np.errstate(all="ignore"):
        ulp = np.spacing(mag).astype(np.float64)
        err = np.maximum(np.abs(got.real.astype(np.float64) - want.real),
                         np.abs(got.imag.astype(np.float64) - want.imag)) / ulp
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        special = ~np.isfinite(w) | (w == 0)
        same = (np.isnan(g) & np.isnan(w)) | ((g == w) & (np.signbit(g) == np.signbit(w)))
        assert np.all(same[special]), (got[special & ~same][:5], want[special & ~same][:5])
        err[special] = 0
    ordinary = np.isfinite(want.real) & np.isfinite(want.imag)
    assert np.all(err[ordinary] <= ulps), (got[err > ulps][:5], want[err > ulps][:5])


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_library_functions_within_four_ulps(c, dtype):
    a = sample(dtype, 400, 6)
    x = c.asarray(a)
    with np.errstate(all="ignore"):
        for op in ("sign", "sqrt", "exp", "log", "sin", "cos", "tanh", "tan", "sinh", "cosh",
                   "log2", "log10", "log1p", "expm1"):
            close_in_ulps(getattr(rs, op)(x), getattr(np, op)(a))
        # glibc's own inverse functions are up to 3 ULP from the true value.
        for op in ("arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"):
            close_in_ulps(getattr(rs, op)(x), getattr(np, op)(a), ulps=8)
        close_in_ulps(x ** 0.5, a ** 0.5)  # the operator's sqrt (NumPy's fast path)
        # cpow is exp(y log x): its error grows with |y log x| (moderate here).
        b = sample(dtype, 400, 7) / 1e3
        close_in_ulps(x ** c.asarray(b), a ** b, ulps=64)


def test_promotion_and_weak_scalars_as_numpy2(c):
    f32 = np.array([1.5, -2, 0.25], np.float32)
    f64 = np.array([1.5, -2, 0.25])
    i32 = np.array([1, -2, 3], np.int32)
    z64 = np.array([1 + 2j, -0.5j, 3], np.complex64)
    cases = [
        (c.asarray(f32) + 1j, f32 + 1j),            # complex64
        (c.asarray(f64) + 1j, f64 + 1j),            # complex128
        (c.asarray(i32) * (2 - 1j), i32 * (2 - 1j)),  # complex128
        (c.asarray(z64) + 1.5, z64 + 1.5),          # stays complex64
        (c.asarray(z64) * 2, z64 * 2),
        (c.asarray(z64) + c.asarray(f64), z64 + f64),  # complex128
        (c.asarray(z64) + c.asarray(i32), z64 + i32),  # complex128
        ((1j) * c.asarray(f32), (1j) * f32),
    ]
    for got, want in cases:
        assert got.dtype == want.dtype  # known locally, before evaluation
        exact(got, want)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_casts_take_the_real_part(c, dtype):
    a = sample(dtype, 50, 4)
    x = c.asarray(a)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's ComplexWarning; Resident casts silently
        want = {t: a.astype(t) for t in (np.float32, np.float64, np.float16, np.int32, np.int64,
                                         np.uint8)}
    for t, w in want.items():
        check(x.astype(t), w)
    check(x.astype(bool), a.astype(bool))
    other = np.complex128 if dtype == np.complex64 else np.complex64
    with np.errstate(all="ignore"):
        exact(x.astype(other), a.astype(other))
    r = np.array([1.5, -0.0, np.inf, 7], np.float32)
    exact(c.asarray(r).astype(dtype), r.astype(dtype))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_reductions_and_matmul(c, dtype):
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((6, 5)) + 1j * rng.standard_normal((6, 5))).astype(dtype)
    b = (rng.standard_normal((5, 4)) + 1j * rng.standard_normal((5, 4))).astype(dtype)
    x, y = c.asarray(a), c.asarray(b)
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    for got, want in [(x.sum(), a.sum()), (x.sum(axis=0), a.sum(axis=0)),
                      (x.mean(axis=1), a.mean(axis=1)), (x @ y, a @ b),
                      (x.prod(), a.prod()), (x.prod(axis=0), a.prod(axis=0)),
                      (x.prod(axis=1, keepdims=True), a.prod(axis=1, keepdims=True)),
                      (c.asarray(a[:0]).prod(axis=0), a[:0].prod(axis=0)),
                      (rs.dot(x, y), np.dot(a, b))]:
        g = got.get()
        assert g.dtype == want.dtype and g.shape == want.shape
        np.testing.assert_allclose(g, want, rtol=tol, atol=tol * 10)
    z = np.array([[0j, 1j], [0j, 0j]], dtype)
    check(c.asarray(z).any(axis=1), z.any(axis=1))
    check(c.asarray(z).all(), z.all())


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_where_and_assignment(c, dtype):
    a, b = sample(dtype, 400, 8), sample(dtype, 400, 9)
    cond = np.arange(a.size) % 3 == 0
    x, y = c.asarray(a), c.asarray(b)
    exact(rs.where(c.asarray(cond), x, y), np.where(cond, a, b))  # bits, NaN payloads included
    exact(rs.where(c.asarray(cond), x, 1j), np.where(cond, a, np.asarray(1j, dtype)))
    m = cond[:400].reshape(20, 20)
    exact(rs.where(c.asarray(m), x[:400].reshape(20, 20), y[:20]),  # broadcast rows
          np.where(m, a[:400].reshape(20, 20), b[:20]))
    want = a.copy()
    want[5:9] = 2 - 1j
    want[cond] = b[cond]
    x[5:9] = 2 - 1j
    x[c.asarray(cond)] = y[c.asarray(cond)]
    exact(x, want)


def test_refusals_are_invalid_argument_and_the_server_serves_on(c):
    x = c.asarray(np.array([1 + 1j, 2], np.complex64))
    for bad, words in [(lambda: rs.floor(x), "floor"), (lambda: x % x, "remainder"),
                       (lambda: rs.arctan2(x, x), "arctan2")]:
        with pytest.raises((rs.InvalidArgument, TypeError), match=words):
            bad().get()
    a = np.array([1 + 1j, 2], np.complex64)
    exact(x * x, a * a)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_max_min_argmax_argmin_of_complex(c, dtype):
    # NumPy's lexicographic maximum and minimum, reduced over any axes (a
    # tree of the elementwise ops on the server: exact without NaNs).
    rng = np.random.default_rng(41)
    a = (rng.integers(-3, 4, (5, 6, 7)) + 1j * rng.integers(-3, 4, (5, 6, 7))).astype(dtype)
    x = c.asarray(a)
    for axis in [None, 0, 1, (0, 2), -1]:
        exact(rs.max(x, axis=axis), np.max(a, axis=axis))
        exact(rs.min(x, axis=axis), np.min(a, axis=axis))
    exact(np.max(x, axis=1, keepdims=True), np.max(a, axis=1, keepdims=True))
    # A NaN in either part wins, as in NumPy (which NaN may differ).
    a[2, 3, 4] = complex(1, np.nan)
    got = rs.max(c.asarray(a), axis=2).get()
    want = np.max(a, axis=2)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(want)], want[~np.isnan(want)])
    with pytest.raises(ValueError):
        rs.max(c.asarray(np.zeros((0, 3), dtype)), axis=0).get()
    # argmax/argmin: the first maximum (minimum), or the first NaN.
    b = (rng.integers(-3, 4, (5, 6, 7)) + 1j * rng.integers(-3, 4, (5, 6, 7))).astype(dtype)
    y = c.asarray(b)
    for axis in [None, 0, 1, -1]:
        check(rs.argmax(y, axis=axis), np.argmax(b, axis=axis))
        check(rs.argmin(y, axis=axis), np.argmin(b, axis=axis))
    check(np.argmax(y, axis=2, keepdims=True), np.argmax(b, axis=2, keepdims=True))
    b[1, 2, 3] = complex(np.nan, 1)
    b[1, 2, 5] = complex(1, np.nan)
    y = c.asarray(b)
    check(rs.argmax(y, axis=2), np.argmax(b, axis=2))
    check(rs.argmin(y), np.argmin(b))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_clip_of_complex(c, dtype):
    # NumPy's clip loop: lexicographic order compared part by part, a NaN
    # part in x kept, a NaN bound taken unless x orders past it plainly,
    # ties giving the bound (signed zeros show which).
    nan = np.nan
    a = np.array([1 + 2j, 3 - 1j, complex(nan, 0), 2 + 5j, complex(2, nan), 0.5 + 9j,
                  complex(-0.0, 0.0), complex(0.0, -0.0), 2 + 0j, complex(nan, nan)], dtype)
    lo = np.array([1 + 1j, complex(1, nan), 0j, complex(nan, 1), 0j, 1 + 0j,
                   0j, complex(0.0, 0.0), complex(1, nan), 0j], dtype)
    x = c.asarray(a)
    exact(rs.clip(x, c.asarray(lo), 2 + 3j), np.clip(a, lo, 2 + 3j))
    exact(rs.clip(x, 1 + 1j, 2 + 3j), np.clip(a, 1 + 1j, 2 + 3j))
    exact(x.clip(1, 2.5), np.clip(a, 1, 2.5))  # real bounds, the complex dtype kept
    exact(rs.clip(x, complex(-0.0, 0.0), complex(0.0, 0.0)),
          np.clip(a, complex(-0.0, 0.0), complex(0.0, 0.0)))
    # Broadcast bounds, a real array clipped by complex ones (complex128).
    rng = np.random.default_rng(5)
    b = (rng.integers(-3, 4, (4, 5)) + 1j * rng.integers(-3, 4, (4, 5))).astype(dtype)
    hi = (rng.integers(-1, 3, (5,)) + 1j * rng.integers(-1, 3, (5,))).astype(dtype)
    exact(rs.clip(c.asarray(b), -1 - 1j, c.asarray(hi)), np.clip(b, -1 - 1j, hi))
    i = np.array([1, 2, 3], np.int16)
    exact(rs.clip(c.asarray(i), 0, 2 + 1j), np.clip(i, 0, 2 + 1j))
    exact(np.clip(x, c.asarray(lo), 2 + 3j), np.clip(a, lo, 2 + 3j))  # __array_function__

"""The op table's ufuncs through the Python client, against NumPy 2 computed
in the test: every function of rs.BINARY/UNARY names x every dtype NumPy
accepts (and the error for those it refuses or that need a dtype Resident
lacks), operators with Python scalars, and fused chains of new ops."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs
from resident._ops import BINARY_ELEMENTWISE, UNARY_ELEMENTWISE

from helpers import DTYPES, check, sample

@pytest.fixture(params=["lazy", "eager"])
def c(request, server):
    with rs.connect(server.target, lazy=request.param == "lazy") as client:
        yield client


# glibc / CUDA libdevice against NumPy's own SIMD loops: within 4 ULP (8 for
# float32 power; see tests/backend/elementwise_literals_test.cc).
TRANSCENDENTAL = {"power", "exp", "log", "log1p", "expm1", "sin", "cos", "tanh", "tan", "arcsin",
                  "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "log2",
                  "log10", "arctan2", "hypot", "logaddexp"}
SUPPORTED = set(DTYPES) | {np.dtype(np.float16)}  # NumPy gives float16 for 1-byte float math


def numpy_or_error(f, *args):
    with np.errstate(all="ignore"):
        try:
            want = f(*args)
        except (TypeError, ValueError):
            return None
    if f is np.nextafter and np.asarray(want).dtype == np.float16:
        return None  # not yet in Resident: the halves' own spacing (README)
    return want if np.asarray(want).dtype in SUPPORTED else None


def check_ufunc(name, result, want):
    if name not in TRANSCENDENTAL or want.dtype.kind != "f":
        check(result, want)
        return
    got = result.get()
    assert got.dtype == want.dtype and got.shape == want.shape
    both_nan = np.isnan(got) & np.isnan(want)
    same = (got == want) | both_nan
    if not same.all():
        maxulp = 8 if name == "power" and want.dtype == np.float32 else 4
        np.testing.assert_array_max_ulp(got[~same], want[~same], maxulp=maxulp, dtype=want.dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", UNARY_ELEMENTWISE)
def test_every_unary_ufunc(c, name, dtype):
    a = sample(dtype, (3, 4), 1)
    if dtype.kind == "f":
        a.flat[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30]
    want = numpy_or_error(getattr(np, name), a)
    x = c.asarray(a)
    if want is None:  # eager clients raise at the call, lazy ones at get()
        with pytest.raises(rs.InvalidArgument):
            getattr(rs, name)(x).get()
        return
    check_ufunc(name, getattr(rs, name)(x), want)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", BINARY_ELEMENTWISE)
def test_every_binary_ufunc(c, name, dtype):
    a, b = sample(dtype, (3, 1), 2), sample(dtype, (4,), 3)
    if name == "power" and dtype.kind == "i":
        b = np.abs(b) % 7  # NumPy raises for negative integer powers
    want = numpy_or_error(getattr(np, name), a, b)
    x, y = c.asarray(a), c.asarray(b)
    if want is None:
        with pytest.raises(rs.InvalidArgument):
            getattr(rs, name)(x, y).get()
        return
    check_ufunc(name, getattr(rs, name)(x, y), want)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64], ids=str)
def test_operators_with_scalars(c, dtype):
    a = sample(dtype, (7,), 4)
    x = c.asarray(a)
    with np.errstate(all="ignore"):
        check(x < 0.5, a < 0.5)
        check(x >= 2, a >= 2)
        check(x == 3, a == 3)
        check(x != 3, a != 3)
        check(x // 3, a // 3)
        check(x % 3, a % 3)
        check(-7 % x, -7 % a)
        check(x ** 2, a ** 2)
        check(abs(x), abs(a))
        check(rs.maximum(x, 1), np.maximum(a, 1))
        check(rs.minimum(2.5, x), np.minimum(2.5, a))


def test_aliases_and_errors(c):
    a = np.array([-3, 4, 5], np.int32)
    x = c.asarray(a)
    check(rs.abs(x), np.abs(a))
    check(rs.mod(x, 3), np.mod(a, 3))
    with pytest.raises(ValueError, match="negative integer powers"):
        x ** -1
    # NumPy's float16 for 1-byte inputs, now that Resident has the dtype.
    check(rs.sqrt(c.asarray(np.array([True, False]))), np.sqrt(np.array([True, False])))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64], ids=str)
def test_bitwise_operators(c, dtype):
    a, b = sample(dtype, (3, 1), 11), sample(dtype, (4,), 12)
    x, y = c.asarray(a), c.asarray(b)
    check(x & y, a & b)
    check(x | y, a | b)
    check(x ^ y, a ^ b)
    check(~x, ~a)
    check(rs.bitwise_invert(x), np.bitwise_not(a))
    if dtype != np.bool_:
        counts = (np.abs(b.astype(np.int64)) % 9).astype(dtype)
        check(x << c.asarray(counts), a << counts)
        check(x >> c.asarray(counts), a >> counts)
        check(rs.bitwise_left_shift(x, 3), np.left_shift(a, 3))
        check(x & 6, a & 6)
        check(+x, +a)
    else:
        with pytest.raises(rs.InvalidArgument):
            (+x).get()  # NumPy has no bool positive


def test_standard_names_and_float_math(c):
    a = np.array([-0.75, -0.0, 0.0, 0.25, 0.999, 1.0, 2.5, np.inf, np.nan])
    x = c.asarray(a)
    for ours, numpys in [("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"),
                         ("asinh", "arcsinh"), ("acosh", "arccosh"), ("atanh", "arctanh")]:
        check_ufunc(numpys, getattr(rs, ours)(x), getattr(np, numpys)(a))
    check_ufunc("arctan2", rs.atan2(x, 0.5), np.arctan2(a, 0.5))
    check(rs.copysign(x, -1.0), np.copysign(a, -1.0))
    check(rs.nextafter(x, 0.0), np.nextafter(a, 0.0))
    check(rs.signbit(x), np.signbit(a))
    check(rs.isinf(x), np.isinf(a))
    check(rs.trunc(x * 3), np.trunc(a * 3))
    check(rs.rint(x * 3), np.rint(a * 3))
    check(rs.square(x), np.square(a))
    check(rs.reciprocal(x), np.reciprocal(a))
    with pytest.raises(rs.InvalidArgument, match="not supported by Resident yet"):
        rs.nextafter(c.asarray(np.ones(2, np.float16)), 0).get()
    with pytest.raises(rs.InvalidArgument):
        rs.bitwise_and(x, x).get()  # NumPy has no float bitwise loops


def test_complex_parts(c):
    z = np.array([1 + 2j, -0.0 - 3j, complex(np.inf, np.nan), complex(np.nan, 1)], np.complex128)
    x = c.asarray(z)
    check(rs.real(x), np.real(z))
    check(rs.imag(x), np.imag(z))
    check(rs.conj(x), np.conj(z))
    check(rs.isinf(x), np.isinf(z))
    check(rs.square(c.asarray(z[:2])), np.square(z[:2]))
    check(+x, +z)
    f = np.array([1.5, -2.0], np.float32)
    check(rs.real(c.asarray(f)), np.real(f))
    check(rs.imag(c.asarray(f)), np.imag(f))


def test_fused_chain_of_new_ops_equals_numpy(c):
    a = sample(np.float64, (1000,), 5)
    x = c.asarray(a)
    y, want = x, a
    for _ in range(6):  # folded into one loop on the server
        y = rs.maximum(y, x)
        want = np.maximum(want, a)
    check(y, want)
    out = c.loop(5, x, lambda v: rs.minimum(rs.sqrt(rs.absolute(v)), v))
    w = a
    for _ in range(5):
        w = np.minimum(np.sqrt(np.abs(w)), w)
    check(out, w)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_where_and_clip(c, dtype):
    cond = sample(np.bool_, (3, 1), 6)
    a, b = sample(dtype, (4,), 7), sample(dtype, (3, 4), 8)
    if dtype.kind == "f":
        a[:3] = [np.nan, -0.0, np.inf]
    check(rs.where(c.asarray(cond), c.asarray(a), c.asarray(b)), np.where(cond, a, b))
    check(rs.where(c.asarray(cond), c.asarray(a), 0), np.where(cond, a, 0))
    if dtype != np.bool_:
        check(c.asarray(a).clip(-5, 5), np.clip(a, -5, 5))
        check(rs.clip(c.asarray(b), c.asarray(a), 20), np.clip(b, a, 20))


def test_python_scalars_are_weak_on_the_wire(c):
    """Python scalars travel as the server's weak scalars (NEP 50); NumPy
    scalars stay strong."""
    f = c.asarray(np.array([1.5, -2.0], np.float32))
    i = c.asarray(np.array([7, -7], np.int32))
    check(f + 1.0, np.array([1.5, -2.0], np.float32) + 1.0)
    check(i + 1.5, np.array([7, -7], np.int32) + 1.5)
    check(f + np.float64(1.0), np.array([1.5, -2.0], np.float32) + np.float64(1.0))
    check(i == 2**40, np.array([7, -7], np.int32) == 2**40)  # exact, as NumPy 2
    check(rs.clip(i, 0, 2**40), np.clip(np.array([7, -7], np.int32), 0, 2**40))
    with pytest.raises(OverflowError):
        i + 2**40
    with pytest.raises(OverflowError):
        i + 2**70
    out = c.loop(4, f, lambda v: v * 0.5 + 1)  # scalars inside a fused body
    want = np.array([1.5, -2.0], np.float32)
    for _ in range(4):
        want = want * 0.5 + 1
    check(out, want)

"""Wrong answers a new user found (the Array API issue's list), each against
NumPy through the real server: logical ops test a scalar's own truth,
arange stores start and start + step as NumPy does and refuses integer
bounds the dtype cannot hold, mean of a 0-d array refuses axis 0."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs
from helpers import check


@pytest.fixture(params=["lazy", "eager"])
def c(request, server):
    with rs.connect(server.target, lazy=request.param == "lazy") as client:
        yield client


@pytest.mark.parametrize("op", ["logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize("dtype,scalar", [(np.float32, 1e-50), (np.float32, 1e-50j),
                                          (np.float16, 1e-10), (np.int8, 256),
                                          (np.uint8, 0.0), (np.float64, float("nan"))],
                         ids=str)
def test_logical_ops_test_a_scalars_own_truth(c, op, dtype, scalar):
    a = np.array([0, 1], dtype)
    want = getattr(np, op)(a, scalar)  # NumPy casts both operands to bool
    check(getattr(rs, op)(c.asarray(a), scalar), want)
    check(getattr(rs, op)(scalar, c.asarray(a)), getattr(np, op)(scalar, a))


@pytest.mark.parametrize("args,dtype", [((-1.44, 0.56, 1.0), np.float32),
                                        ((-1.44, 5.56, 1.0), np.float32),
                                        ((0.1, 3.0, 0.7), np.float64),
                                        ((-0.0, 1.0, 0.5), np.float64),
                                        ((-0.0, 1.0, 0.5), np.float32),
                                        ((-0.0, 2.0, 1.0), None),
                                        ((0.3, 9.1, 0.37), np.float16)], ids=str)
def test_arange_stores_start_and_start_plus_step(c, args, dtype):
    want = np.arange(*args, dtype=dtype)
    got = c.arange(*args, dtype=dtype)
    check(got, want)
    # Bit for bit, the sign of a zero start included.
    assert np.array_equal(np.signbit(got.get()), np.signbit(want))


def test_arange_matches_numpy_on_random_float32_bounds(c):
    rng = np.random.default_rng(7)
    for _ in range(20):
        start = float(rng.uniform(-100, 100))
        step = float(rng.uniform(0.01, 3)) * (1 if rng.integers(2) else -1)
        stop = start + step * int(rng.integers(2, 40))
        want = np.arange(start, stop, step, dtype=np.float32)
        assert c.arange(start, stop, step, dtype=np.float32).get().tobytes() == want.tobytes()


@pytest.mark.parametrize("args", [(-2, 5), (-2.0, 5.0), (0, 600, 300), (5, -300, -300)], ids=str)
def test_arange_integer_bounds_the_dtype_cannot_hold_raise(c, args):
    with pytest.raises(OverflowError):
        np.arange(*args, dtype=np.uint8)
    with pytest.raises(OverflowError):
        c.arange(*args, dtype=np.uint8)


@pytest.mark.parametrize("args", [(0, 300, 300), (250, 260), (0, 300)], ids=str)
def test_arange_integer_that_wraps_after_two_elements_is_numpys(c, args):
    check(c.arange(*args, dtype=np.uint8), np.arange(*args, dtype=np.uint8))


def test_mean_of_a_0d_array_with_axis_0_is_axis_error(c):
    x = c.asarray(np.float64(3.0).reshape(()))
    with pytest.raises(np.exceptions.AxisError):
        np.mean(np.float64(3.0).reshape(()), axis=0)
    with pytest.raises((ValueError, rs.InvalidArgument), match="out of bounds"):
        rs.mean(x, axis=0).get()
    check(rs.sum(x, axis=0), np.sum(np.float64(3.0).reshape(()), axis=0))


@pytest.mark.parametrize("dtype,lo,hi", [(np.int16, "f64", 32767), (np.int16, -40000, 2),
                                         (np.int16, 0, 40000), (np.uint8, 0, 255),
                                         (np.int32, -2**31, "f64"), (np.int16, 1, 2),
                                         (np.float32, -1e10, 32767)], ids=str)
def test_clip_drops_python_int_bounds_past_an_integer_arrays_range(c, dtype, lo, hi):
    a = np.array([1, 2, 3], dtype)
    bound = np.array([0, 1e10, 2.5])
    lo_np = bound if lo == "f64" else lo
    hi_np = bound if hi == "f64" else hi
    want = np.clip(a, lo_np, hi_np)
    lo_rs = c.asarray(bound) if lo == "f64" else lo
    hi_rs = c.asarray(bound) if hi == "f64" else hi
    check(rs.clip(c.asarray(a), lo_rs, hi_rs), want)
    check(c.asarray(a).clip(lo_rs, hi_rs), want)


def test_clip_with_a_python_int_min_past_the_max_overflows_as_numpy(c):
    a = np.array([1, 2, 3], np.int8)
    with pytest.raises(OverflowError):
        np.clip(a, 65536, 1)
    with pytest.raises(OverflowError):
        rs.clip(c.asarray(a), 65536, 1).get()

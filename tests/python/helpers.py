"""Shared checks: NumPy computes the expected value in the test itself."""

from __future__ import annotations

import numpy as np

import resident as rs

DTYPES = [np.dtype(d) for d in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                np.uint16, np.uint32, np.uint64, np.float32, np.float64)]


def sample(dtype, shape, seed=0) -> np.ndarray:
    """Deterministic data of every kind, zeros and negatives included."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        data = rng.integers(0, 2, shape).astype(bool)
    elif dtype.kind == "i":
        data = rng.integers(-50, 50, shape).astype(dtype)
    elif dtype.kind == "u":
        data = rng.integers(0, 100, shape).astype(dtype)
    else:
        data = (rng.standard_normal(shape) * 10).astype(dtype)
    return np.asarray(data, dtype)


def check(result: rs.ndarray, want: np.ndarray, exact: bool = True) -> None:
    """``result`` equals NumPy's ``want``: dtype, shape and every value. The
    client's local shape/dtype (known before evaluation) must be the
    server's. Elementwise floats are bit-identical by design; reductions and
    products are compared to a tolerance with ``exact=False``."""
    want = np.asarray(want)
    local = (result.shape, result.dtype)
    got = result.get()
    assert isinstance(got, np.ndarray)
    assert (result.shape, result.dtype) == local, "local metadata differs from the server's"
    assert got.dtype == want.dtype, f"dtype {got.dtype} != NumPy's {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape} != NumPy's {want.shape}"
    if exact or want.dtype.kind in "biu":
        if want.dtype.itemsize == 2 and want.dtype.kind not in "biu":
            # float16 / bfloat16 compared as float32 (exactly): any NaN equals
            # any NaN, as for the other floats (NumPy fixes no payload and a
            # GPU gives its own; NumPy 2.5 with ml_dtypes 0.6 compares
            # bfloat16 NaNs unequal).
            got, want = got.astype(np.float32), want.astype(np.float32)
        np.testing.assert_array_equal(got, want)
    else:
        # float16 / bfloat16 results are rounded once: one ULP of 11 / 8 bits.
        rtol = {2: 2e-3 if want.dtype == np.float16 else 1.6e-2, 4: 1e-5}.get(
            want.dtype.itemsize, 1e-12)
        if want.dtype.itemsize == 2:
            got, want = got.astype(np.float32), want.astype(np.float32)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, float(np.abs(want).max(initial=0))))


def close(result: rs.ndarray, want: np.ndarray, single_atol: float, double_atol: float) -> None:
    """NumPy's dtype and shape, and values within an absolute tolerance of
    the dtype's precision times the largest |value| (at least 1): for
    results another library computes by another algorithm (FFTs,
    factorisations). The client's local metadata must be the server's."""
    want = np.asarray(want)
    local = (result.shape, result.dtype)
    got = result.get()
    assert (result.shape, result.dtype) == local, "local metadata differs from the server's"
    assert got.dtype == want.dtype, f"dtype {got.dtype} != NumPy's {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape} != NumPy's {want.shape}"
    single = want.dtype in (np.complex64, np.float32)
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got, want, rtol=0,
                               atol=(single_atol if single else double_atol) * scale)

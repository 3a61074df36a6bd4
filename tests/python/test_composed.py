"""var/std, the *_like functions and the standard's names for existing
functions, against NumPy through the real server."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs
from helpers import check, sample


@pytest.fixture(params=["lazy", "eager"])
def c(request, server):
    with rs.connect(server.target, lazy=request.param == "lazy") as client:
        yield client


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint8, np.bool_], ids=str)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1], ids=str)
@pytest.mark.parametrize("ddof", [0, 1, 2.5], ids=str)
def test_var_and_std_as_numpy(c, dtype, axis, ddof):
    a = sample(dtype, (4, 5, 3), 11)
    x = c.asarray(a)
    with np.errstate(all="ignore"):
        check(rs.var(x, axis=axis, ddof=ddof), np.var(a, axis=axis, ddof=ddof), exact=False)
        check(x.std(axis=axis, ddof=ddof, keepdims=True),
              np.std(a, axis=axis, ddof=ddof, keepdims=True), exact=False)
        check(rs.var(x, axis=axis, correction=ddof, keepdims=True),
              np.var(a, axis=axis, correction=ddof, keepdims=True), exact=False)


def test_var_errors_are_numpys(c):
    x = c.ones((2, 3))
    with pytest.raises(ValueError, match="simultaneously"):
        rs.var(x, ddof=1, correction=1)
    with pytest.raises(np.exceptions.AxisError):
        rs.var(x, axis=2)
    with pytest.raises(TypeError, match="complex"):
        rs.var(c.asarray(np.ones(2, np.complex64)))


def test_like_functions_and_empty(c):
    a = sample(np.int16, (3, 2), 1)
    x = c.asarray(a)
    check(rs.zeros_like(x), np.zeros_like(a))
    check(rs.ones_like(x, dtype=np.float32), np.ones_like(a, dtype=np.float32))
    check(rs.full_like(x, 7), np.full_like(a, 7))
    check(rs.empty_like(x), np.zeros_like(a))  # zeros: never another tenant's memory
    with pytest.raises(OverflowError):
        rs.full_like(x, 70000)
    prev = rs.set_default_client(c)
    try:
        check(rs.empty((2, 2), dtype=np.uint8), np.zeros((2, 2), np.uint8))
    finally:
        rs.set_default_client(prev)


def test_the_standards_names(c):
    a, b = sample(np.float64, (2, 3, 4), 2), sample(np.float64, (2, 3, 4), 3)
    x, y = c.asarray(a), c.asarray(b)
    check(rs.pow(x, 2.0), np.pow(a, 2.0))
    check(rs.concat([x, y], axis=1), np.concat([a, b], axis=1))
    check(rs.permute_dims(x, (2, 0, 1)), np.permute_dims(a, (2, 0, 1)))
    check(rs.matrix_transpose(x), np.matrix_transpose(a))
    check(x.mT, a.mT)
    with pytest.raises(ValueError):
        rs.matrix_transpose(c.ones(3))


def test_vecdot_and_tensordot(c):
    a = sample(np.float64, (2, 3, 4), 40)
    b = sample(np.float64, (3, 4, 5), 41)
    x, y = c.asarray(a), c.asarray(b)
    check(rs.tensordot(x, y, axes=2), np.tensordot(a, b, axes=2), exact=False)
    check(rs.tensordot(x, y, axes=([1, 2], [0, 1])), np.tensordot(a, b, axes=([1, 2], [0, 1])),
          exact=False)
    check(rs.tensordot(x, y, axes=0), np.tensordot(a, b, axes=0), exact=False)
    v = sample(np.float64, (3, 4), 42)
    check(rs.vecdot(x, c.asarray(v)), np.vecdot(a, v), exact=False)
    z = (sample(np.float64, (5,), 43) + 1j * sample(np.float64, (5,), 44)).astype(np.complex128)
    check(rs.vecdot(c.asarray(z), c.asarray(z[::-1].copy())), np.vecdot(z, z[::-1]), exact=False)
    with pytest.raises(ValueError, match="shape mismatch"):
        rs.tensordot(x, y, axes=([0], [0]))

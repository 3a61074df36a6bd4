"""NumPy's protocols through the real server: ufuncs and NumPy functions
called on Resident arrays run there and return Resident arrays; host arrays
beside them are refused; unsupported arguments are NumPy's TypeError."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs
from helpers import check, sample


@pytest.fixture(params=["lazy", "eager"])
def c(request, server):
    with rs.connect(server.target, lazy=request.param == "lazy") as client:
        yield client


def test_ufuncs_run_on_the_server(c):
    a, b = sample(np.float64, (3, 4), 1), sample(np.float64, (4,), 2)
    x, y = c.asarray(a), c.asarray(b)
    for ufunc in [np.exp, np.sqrt, np.negative, np.abs, np.isnan, np.sin, np.floor]:
        with np.errstate(all="ignore"):
            got = ufunc(x)
            assert isinstance(got, rs.ndarray)
            check(got, ufunc(a), exact=ufunc not in (np.exp, np.sin))
    for ufunc in [np.add, np.multiply, np.maximum, np.less, np.logical_xor, np.power]:
        with np.errstate(all="ignore"):
            check(ufunc(x, y), ufunc(a, b), exact=ufunc is not np.power)
            check(ufunc(x, 2), ufunc(a, 2), exact=ufunc is not np.power)
            check(ufunc(np.float32(3), x), ufunc(np.float32(3), a), exact=ufunc is not np.power)


def test_numpy_functions_run_on_the_server(c):
    a, b = sample(np.float32, (3, 4), 3), sample(np.float32, (3, 4), 4)
    x, y = c.asarray(a), c.asarray(b)
    check(np.sum(x, axis=0), np.sum(a, axis=0), exact=False)
    check(np.mean(x), np.mean(a), exact=False)
    check(np.max(x, axis=1, keepdims=True), np.max(a, axis=1, keepdims=True))
    check(np.concatenate([x, y], axis=1), np.concatenate([a, b], axis=1))
    check(np.stack([x, y]), np.stack([a, b]))
    check(np.where(x > 0, x, y), np.where(a > 0, a, b))
    check(np.clip(x, -1, 1), np.clip(a, -1, 1))
    check(np.transpose(x), np.transpose(a))
    check(np.reshape(x, (4, 3)), np.reshape(a, (4, 3)))
    check(np.var(x, axis=1, ddof=1), np.var(a, axis=1, ddof=1), exact=False)
    check(np.flip(x, axis=0), np.flip(a, axis=0))
    check(np.tril(x), np.tril(a))
    check(np.dot(x, np.transpose(y)), np.dot(a, a.T * 0 + b.T), exact=False)
    assert isinstance(np.sum(x), rs.ndarray)


def test_host_arrays_are_refused_and_unsupported_arguments_are_type_errors(c):
    a = sample(np.float64, (3,), 5)
    x = c.asarray(a)
    with pytest.raises(TypeError, match="upload it with client.asarray"):
        np.add(x, a)
    with pytest.raises(TypeError, match="upload it with client.asarray"):
        a + x
    with pytest.raises(TypeError, match="upload it with client.asarray"):
        np.concatenate([x, a])
    with pytest.raises(TypeError):
        np.add(x, x, out=x)
    with pytest.raises(TypeError):
        np.add.reduce(x)
    with pytest.raises(TypeError):
        np.sum(x, initial=1.0)
    with pytest.raises(TypeError):
        np.unique(x)  # not implemented yet: NumPy's "no implementation found"
    with pytest.raises(TypeError, match="implicit conversion"):
        np.asarray(x)  # as CuPy: a download is explicit (x.get())

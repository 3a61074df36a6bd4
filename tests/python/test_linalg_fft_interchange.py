"""rs.linalg's and rs.fft's composed functions, DLPack and to_device through
the real server, against NumPy computed in the test."""

from __future__ import annotations

import math

import numpy as np
import pytest

import resident as rs
from helpers import check, sample


def test_linalg_composed_functions_match_numpy(client):
    c = client
    a = sample(np.float64, (3, 4, 4), 40)
    v = sample(np.float64, (5, 3), 41)
    w = sample(np.float64, (5, 3), 42)
    x, y, z = c.asarray(a), c.asarray(v), c.asarray(w)
    check(rs.linalg.matmul(x, x), np.matmul(a, a), exact=False)
    check(rs.linalg.matrix_transpose(x), np.linalg.matrix_transpose(a))
    check(rs.linalg.outer(y[0], z[1]), np.linalg.outer(v[0], w[1]))
    for k in (0, 1, 3, -2, 5, -7):
        check(rs.linalg.diagonal(x, offset=k), np.linalg.diagonal(a, offset=k))
        check(rs.linalg.trace(x, offset=k), np.linalg.trace(a, offset=k), exact=False)
    check(rs.linalg.trace(c.asarray(np.arange(9, dtype=np.int32).reshape(3, 3))),
          np.linalg.trace(np.arange(9, dtype=np.int32).reshape(3, 3)))
    check(rs.linalg.cross(y, z), np.linalg.cross(v, w))
    check(rs.linalg.cross(y[:, None, :], z), np.linalg.cross(v[:, None, :], w))
    check(rs.linalg.cross(x[:, :3, 0], x[:, 1:, 1], axis=0),
          np.cross(a[:, :3, 0], a[:, 1:, 1], axis=0))
    for ord_ in (2, 1, math.inf, -math.inf, 0, 3, 0.5):
        check(rs.linalg.vector_norm(x, ord=ord_), np.linalg.vector_norm(a, ord=ord_),
              exact=False)
        check(rs.linalg.vector_norm(x, axis=(0, 2), keepdims=True, ord=ord_),
              np.linalg.vector_norm(a, axis=(0, 2), keepdims=True, ord=ord_), exact=False)
    for ord_ in ("fro", 1, -1, math.inf, -math.inf):
        for keep in (False, True):
            check(rs.linalg.matrix_norm(x, ord=ord_, keepdims=keep),
                  np.linalg.matrix_norm(a, ord=ord_, keepdims=keep), exact=False)
    zc = (sample(np.float64, (3, 3), 43) + 1j * sample(np.float64, (3, 3), 44))
    check(rs.linalg.matrix_norm(c.asarray(zc)), np.linalg.matrix_norm(zc), exact=False)
    for n in (0, 1, 2, 5):
        check(rs.linalg.matrix_power(x, n), np.linalg.matrix_power(a, n), exact=False)
    # Clear errors for bad shapes (the factorisations' cases: test_linalg.py).
    with pytest.raises(ValueError):
        rs.linalg.cross(x, x)
    with pytest.raises(ValueError):
        rs.linalg.outer(x, y)


def test_fft_helpers_match_numpy(client):
    rs.set_default_client(client)
    try:
        for n in (1, 2, 7, 8):
            for d in (1.0, 0.1):
                check(rs.fft.fftfreq(n, d=d), np.fft.fftfreq(n, d=d))
                check(rs.fft.rfftfreq(n, d=d), np.fft.rfftfreq(n, d=d))
        check(rs.fft.fftfreq(5, dtype=rs.float32), np.fft.fftfreq(5).astype(np.float32))
        with pytest.raises(ValueError):
            rs.fft.fftfreq(0)
    finally:
        rs.set_default_client(None)
    a = sample(np.float32, (4, 5, 3), 45)
    x = client.asarray(a)
    for axes in (None, 0, (1, 2), (-1,)):
        check(rs.fft.fftshift(x, axes=axes), np.fft.fftshift(a, axes=axes))
        check(rs.fft.ifftshift(x, axes=axes), np.fft.ifftshift(a, axes=axes))


def test_dlpack_exports_a_host_copy_and_imports_any_producer(client):
    a = sample(np.int16, (3, 4), 46)
    x = client.asarray(a)
    assert x.__dlpack_device__() == (1, 0)  # kDLCPU: where the export lives
    np.testing.assert_array_equal(np.from_dlpack(x), a)
    with pytest.raises(BufferError, match="download"):
        x.__dlpack__(copy=False)
    with pytest.raises(BufferError, match="kDLCPU"):
        x.__dlpack__(dl_device=(2, 0))
    rs.set_default_client(client)
    try:
        check(rs.from_dlpack(a), a)                      # a NumPy producer: one upload
        assert rs.from_dlpack(x) is x
        y = rs.from_dlpack(x, copy=True)
        assert y is not x
        check(y, a)
        with pytest.raises(BufferError):
            rs.from_dlpack(a, copy=False)
    finally:
        rs.set_default_client(None)


def test_to_device(server, client):
    a = sample(np.float64, (6,), 47)
    x = client.asarray(a)
    assert x.to_device(x.device) is x
    assert x.to_device(client) is x
    with rs.connect(server.target) as other:
        y = x.to_device(other)
        assert y is not x
        check(y, a)
        check(y + 1, a + 1)
    with pytest.raises(ValueError, match="cannot move"):
        x.to_device("elsewhere")

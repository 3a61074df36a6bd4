"""NumPy functions lab scripts use beyond the Array API (histogram,
bincount, cov, corrcoef, diag, outer, hstack/vstack/column_stack, copy,
isclose/allclose, argwhere, median, linalg.norm), through the real server
and through NumPy's __array_function__, against NumPy computed in the test."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs
from helpers import check, sample


def test_histogram_and_bincount(client):
    c = client
    a = sample(np.float64, (1000,), 60)
    x = c.asarray(a)
    for bins, rng in ((10, None), (7, (-5.0, 5.0)), ([-30.0, -1.0, 0.0, 0.5, 2.0, 40.0], None)):
        counts, edges = rs.histogram(x, bins=bins, range=rng)
        want_counts, want_edges = np.histogram(a, bins=bins, range=rng)
        check(counts, want_counts)   # counts are exact
        check(edges, want_edges)     # NumPy's linspace arithmetic
    w = sample(np.float64, (1000,), 61)
    counts, _ = rs.histogram(x, bins=5, weights=c.asarray(w))
    check(counts, np.histogram(a, bins=5, weights=w)[0], exact=False)
    counts, _ = rs.histogram(x, bins=5, density=True)
    check(counts, np.histogram(a, bins=5, density=True)[0], exact=False)
    counts, edges = np.histogram(x, bins=4)  # through __array_function__
    check(counts, np.histogram(a, bins=4)[0])
    ints = sample(np.uint8, (500,), 62) % 9
    check(rs.bincount(c.asarray(ints)), np.bincount(ints))
    check(rs.bincount(c.asarray(ints), minlength=12), np.bincount(ints, minlength=12))
    check(rs.bincount(c.asarray(ints), weights=c.asarray(w[:500])),
          np.bincount(ints, weights=w[:500]), exact=False)
    with pytest.raises(ValueError, match="negative"):
        rs.bincount(c.asarray(np.array([1, -1, 2])))
    with pytest.raises(ValueError, match="not finite"):
        rs.histogram(c.asarray(np.array([1.0, np.inf])))


def test_statistics_and_shapes(client):
    c = client
    m = sample(np.float64, (4, 30), 63)
    x = c.asarray(m)
    check(rs.cov(x), np.cov(m), exact=False)
    check(rs.cov(x, rowvar=False), np.cov(m, rowvar=False), exact=False)
    check(rs.cov(x[0], x[1]), np.cov(m[0], m[1]), exact=False)
    check(rs.cov(x, bias=True), np.cov(m, bias=True), exact=False)
    check(rs.corrcoef(x), np.corrcoef(m), exact=False)
    check(np.cov(x), np.cov(m), exact=False)
    v = np.arange(1.0, 4.0)
    for k in (0, 1, -2):
        check(rs.diag(c.asarray(v), k), np.diag(v, k))
    check(rs.diag(x[:, :4], 1), np.diag(m[:, :4], 1))
    check(rs.diag(c.asarray(np.array([True, False]))), np.diag(np.array([True, False])))
    check(rs.outer(x[0, :3], x[1:3, :2]), np.outer(m[0, :3], m[1:3, :2]))
    check(rs.hstack([x, x[:, :2]]), np.hstack([m, m[:, :2]]))
    check(rs.hstack([x[0], x[1]]), np.hstack([m[0], m[1]]))
    check(rs.vstack([x, x[0]]), np.vstack([m, m[0]]))
    check(rs.column_stack([x[0], x[1]]), np.column_stack([m[0], m[1]]))
    check(rs.median(x), np.median(m))
    check(rs.median(x, axis=1), np.median(m, axis=1))
    check(rs.median(x[:, :29], axis=0, keepdims=True), np.median(m[:, :29], axis=0, keepdims=True))
    with_nan = m.copy()
    with_nan[1, 3] = np.nan
    check(rs.median(c.asarray(with_nan), axis=1), np.median(with_nan, axis=1))
    b = np.array([[0, 1, 0], [2, 0, 3]])
    check(rs.argwhere(c.asarray(b)), np.argwhere(b))
    y = x + 1e-9
    check(rs.isclose(x, y), np.isclose(m, m + 1e-9))
    assert rs.allclose(x, y) and not rs.allclose(x, x + 1)
    z = c.asarray(np.array([np.nan, np.inf, 1.0]))
    check(rs.isclose(z, z, equal_nan=True), np.isclose(*(np.array([np.nan, np.inf, 1.0]),) * 2,
                                                       equal_nan=True))


def test_copy_is_a_new_array_object(client):
    x = client.asarray(np.arange(4.0))
    y = x.copy()
    z = np.copy(x)
    y[0] = 9.0
    z[1] = 8.0
    check(x, np.arange(4.0))
    check(y, np.array([9.0, 1.0, 2.0, 3.0]))
    check(z, np.array([0.0, 8.0, 2.0, 3.0]))


def test_linalg_norm_matches_numpy(client):
    a = sample(np.float64, (10, 12), 64)
    x = client.asarray(a)
    for ord_, axis in ((None, None), (1, None), ("fro", None), (np.inf, None), (None, 1),
                       (3, 0), (None, (0, 1)), (np.inf, (1, 0)), (-1, (0, 1))):
        check(rs.linalg.norm(x, ord=ord_, axis=axis), np.linalg.norm(a, ord=ord_, axis=axis),
              exact=False)
    check(rs.linalg.norm(x, axis=(0, 1), keepdims=True),
          np.linalg.norm(a, axis=(0, 1), keepdims=True), exact=False)
    check(np.linalg.norm(x), np.linalg.norm(a), exact=False)
    with pytest.raises(ValueError):
        rs.linalg.norm(client.asarray(np.zeros((2, 2, 2))), ord=1)

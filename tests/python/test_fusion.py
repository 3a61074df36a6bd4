"""Straight-line runs of elementwise ops run fused on the server: one op
per run (counted by resident_fused_ops_total{form="region"}), equal to
NumPy's op-by-op results bit for bit, the intermediates the user holds
written too."""

from __future__ import annotations

import re

import numpy as np
import pytest

import resident as rs
from helpers import DTYPES, check, sample

N = 70001  # over the CUDA backend's fusion threshold (2^16 elements), a ragged end


def fused(server, form: str) -> int:
    m = re.search(r'^resident_fused_ops_total\{form="' + form + r'"\} (\d+)', server.metrics(),
                  re.M)
    assert m, "resident_fused_ops_total missing from the metrics"
    return int(m.group(1))


@pytest.mark.parametrize("dtype", DTYPES + [np.dtype(np.float16)], ids=str)
def test_a_mixed_chain_is_one_fused_op_equal_to_numpy(server, dtype):
    x, y = sample(dtype, N, 1), sample(dtype, N, 2)
    with rs.connect(server.target) as c:
        a, b = c.asarray(x), c.asarray(y)
        a.evaluate(), b.evaluate()
        before = fused(server, "region")
        t = a * b
        u = t + a                  # held: written by the fused op too
        w = rs.maximum(u, b)
        z = w * a if dtype == np.bool_ else w - a
        f = u < w
        c.evaluate(z, f, u)
        want_u = x * y + x
        want_w = np.maximum(want_u, y)
        check(z, want_w * x if dtype == np.bool_ else want_w - x)
        check(f, want_u < want_w)
        check(u, want_u)
        assert fused(server, "region") == before + 1


def test_scalars_casts_and_float_math_fuse(server):
    x = sample(np.float32, N, 3)
    k = sample(np.int16, N, 4)
    with rs.connect(server.target) as c:
        a, kk = c.asarray(x), c.asarray(k)
        a.evaluate(), kk.evaluate()
        before = fused(server, "region")
        # float32 * 0.5 stays float32 (NEP 50); + int16 gives float32; the
        # astype and the sqrt of the absolute value stay in the one region.
        r = rs.sqrt(rs.abs(a * 0.5 + kk)).astype(np.float64) * 3.0 + 1
        g = rs.exp(a * 0.01) + rs.floor(a)
        check(r, np.sqrt(np.abs(x * np.float32(0.5) + k)).astype(np.float64) * 3.0 + 1)
        check(g, np.exp(x * np.float32(0.01)) + np.floor(x), exact=False)
        assert fused(server, "region") >= before + 2


def test_a_run_broken_by_a_reduction_fuses_on_each_side(server):
    x = sample(np.float64, N, 5)
    with rs.connect(server.target) as c:
        a = c.asarray(x)
        a.evaluate()
        before = fused(server, "region")
        h = a * 2.0 + 1.0
        s = h.sum()
        r = (h - s) * (h + s)  # s is one element: broadcast inside the region
        check(r, (x * 2.0 + 1.0 - (x * 2.0 + 1.0).sum()) * (x * 2.0 + 1.0 + (x * 2.0 + 1.0).sum()),
              exact=False)
        assert fused(server, "region") == before + 2


def test_where_and_clip_fuse_with_the_ops_around_them(server):
    x = sample(np.float32, N, 6)
    k = sample(np.int16, N, 7)
    with rs.connect(server.target) as c:
        a, kk = c.asarray(x), c.asarray(k)
        a.evaluate(), kk.evaluate()
        before = fused(server, "region")
        # relu6 of a scaled input, then a masked mix: one region of seven ops.
        r = rs.where(a * 0.5 > 1.0, rs.clip(a * 2.0, 0, 6), kk) - 1
        m = rs.clip(kk, -3, 100000) * 2  # an int bound past int16 clamps (NumPy 2)
        want_r = np.where(x * np.float32(0.5) > 1.0, np.clip(x * np.float32(2.0), 0, 6), k) - 1
        check(r, want_r)
        check(m, np.clip(k, -3, np.iinfo(np.int16).max) * 2)
        assert fused(server, "region") == before + 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8], ids=str)
def test_broadcast_rows_and_columns_fuse(server, dtype):
    # A bias row, a column scale and a (1, 1, w) slice of a 3-D array: read
    # in place by the fused kernel, never materialised at the full shape.
    x = sample(dtype, (263, 267), 8)
    row, col = sample(dtype, 267, 9), sample(dtype, (263, 1), 10)
    v = sample(dtype, (5, 7, 2003), 11)
    t = sample(dtype, (7, 1), 12)
    with rs.connect(server.target) as c:
        a, r, k, vv, tt = (c.asarray(h) for h in (x, row, col, v, t))
        c.evaluate(a, r, k, vv, tt)
        before = fused(server, "region")
        y = rs.maximum(a * k + r, r) - k
        w = (vv - tt) * tt < vv
        check(y, np.maximum(x * col + row, row) - col)
        check(w, (v - t) * t < v)
        assert fused(server, "region") == before + 2


def reductions(server) -> int:
    m = re.search(r"^resident_fused_reductions_total (\d+)", server.metrics(), re.M)
    assert m, "resident_fused_reductions_total missing from the metrics"
    return int(m.group(1))


def test_order_free_trailing_reductions_fuse(server):
    x = sample(np.float32, N, 13)
    k = sample(np.int32, N, 14)
    u = sample(np.uint8, N, 15)
    with rs.connect(server.target) as c:
        a, kk, uu = c.asarray(x), c.asarray(k), c.asarray(u)
        c.evaluate(a, kk, uu)
        before, before_r = fused(server, "region"), reductions(server)
        count = (a * 2.0 > 1.0).sum()           # a count: int64
        every = (kk * 3 != 7).all()
        some = rs.isnan(a - a).any()
        top = (kk * kk - 5).max(keepdims=True)  # (1,), int32
        low = (uu * 3 + 1).min()                # wraps in uint8
        prod = (kk % 3 + 1).prod()              # int64, wraps
        total = (uu + 1).sum()                  # uint8 -> uint64
        float_sum = (a * 2.0).sum()             # a float sum: the region alone
        check(count, (x * np.float32(2.0) > 1.0).sum())
        check(every, (k * 3 != 7).all())
        check(some, np.isnan(x - x).any())
        check(top, (k * k - 5).max(keepdims=True))
        check(low, (u * np.uint8(3) + np.uint8(1)).min())
        check(prod, (k % 3 + 1).prod())
        check(total, (u + np.uint8(1)).sum())
        check(float_sum, (x * np.float32(2.0)).sum(), exact=False)
        assert reductions(server) == before_r + 7
        assert fused(server, "region") == before + 7

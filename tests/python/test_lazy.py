"""Lazy recording counted in requests, by the client and by the server's
own metrics."""

from __future__ import annotations

import re

import numpy as np
import pytest

import resident as rs
from helpers import check
from resident.v1 import resident_pb2 as pb


def test_seed_loop_written_naively_is_one_request(server):
    with rs.connect(server.target) as c:
        x = c.ones((64, 32)).evaluate()
        runs_before, server_before = c.stats.get("Run", 0), server.requests("Run")
        for _ in range(1024):
            x = x + x  # recorded, not sent
        assert x.shape == (64, 32) and x.dtype == np.float64  # known locally: no request
        assert c.stats.get("Run", 0) == runs_before
        x.evaluate()
        assert c.stats["Run"] == runs_before + 1
        assert server.requests("Run") == server_before + 1
        got = x.get()  # already computed: one download
    assert np.all(np.isinf(got))


def test_get_of_a_small_pending_result_is_one_request(server):
    with rs.connect(server.target) as c:
        before = dict(c.stats)
        got = (c.arange(10) * 3 + 1).sum().get()
        after = c.stats
        assert got == (np.arange(10) * 3 + 1).sum()
        assert after.get("Run", 0) == before.get("Run", 0) + 1  # data came back inline
        assert after.get("Download", 0) == before.get("Download", 0)


def test_eager_client_sends_each_operation(server):
    with rs.connect(server.target, lazy=False) as c:
        before = server.requests("Run")
        x = c.ones(8)
        for _ in range(5):
            x = x * 2.0
        assert server.requests("Run") == before + 6
        check(x, np.full(8, 32.0))


def test_intermediates_held_by_the_user_are_kept(client):
    a = client.arange(6)
    b = a * 2      # held: kept as a handle by the program that computes c
    c_ = b + a
    c_.evaluate()
    runs = client.stats["Run"]
    check(b, np.arange(6) * 2)  # no recomputation: a download of the kept handle
    assert client.stats["Run"] == runs


def test_server_loop_is_one_request(server):
    with rs.connect(server.target) as c:
        before = server.requests("Run")
        x = c.loop(1000, c.ones(4), lambda v: v * 1.001)
        x.evaluate()
        assert server.requests("Run") == before + 1
        np.testing.assert_array_equal(x.get(), np.full(4, np.float64(1.0)) * 1.001 ** 0 * _power(1000))


def _power(n):
    v = np.ones(4)
    for _ in range(n):
        v = v * 1.001
    return v[0]


def test_evaluate_several_arrays_in_one_program(client):
    a = client.ones(3) + 1
    b = client.zeros(3) - 1
    runs = client.stats.get("Run", 0)
    client.evaluate(a, b)
    assert client.stats["Run"] == runs + 1
    check(a, np.full(3, 2.0))
    check(b, np.full(3, -1.0))


def test_a_chain_of_100k_recorded_ops_does_not_overflow_the_stack(client):
    x = client.zeros(1)
    for _ in range(100_000):
        x = x + 1.0
    check(x, np.full(1, 100_000.0))


def _ops_run(server) -> int:
    m = re.search(r'^resident_ops_total\{tenant="default"\} (\d+)', server.metrics(), re.M)
    return int(m.group(1)) if m else 0


def test_a_value_computed_for_one_test_is_kept_for_the_pending_values_that_read_it(server):
    # The shape of a Python CG loop: each test reads r_k, whose program
    # computes p_(k-1) on the way; p_k (pending, held) reads p_(k-1), which
    # nothing else holds. Kept as a handle, it is not computed again at the
    # next test, so every test costs the same few ops, not one more each time.
    # And p itself runs with each test, as an eager library would run it.
    with rs.connect(server.target) as c:
        r, p = c.ones(4), c.ones(4)
        costs, handles = [], []
        for _ in range(12):
            handles.append(c._s.call("Describe", pb.DescribeRequest()).usage.handles)
            before = _ops_run(server)
            assert bool((r * r).sum() > 0)
            costs.append(_ops_run(server) - before)
            r_next = r + p * 0.5
            p = r_next + p * 0.25
            r = r_next
        assert max(costs[2:]) == min(costs[2:]), costs
        # p, held and pending, ran along with each test: no history of
        # every iteration's arrays is held on the server for it.
        assert max(handles[3:]) == min(handles[3:]), handles
        want_r, want_p = np.ones(4), np.ones(4)
        for _ in range(12):
            want_r, want_p = want_r + want_p * 0.5, (want_r + want_p * 0.5) + want_p * 0.25
        np.testing.assert_array_equal(r.get(), want_r)
        np.testing.assert_array_equal(p.get(), want_p)


def test_a_held_array_run_along_that_fails_does_not_fail_what_was_asked(server):
    with rs.connect(server.target) as c:
        four = c.asarray(np.ones(4))
        y = c.ones(3) + 1
        bad = y + four  # held, pending, reads y: it would run along with y, and fails
        check(y, np.full(3, 2.0))
        with pytest.raises(rs.InvalidArgument, match="broadcast"):
            bad.get()
        good = y * 2  # y is on the server now; a held consumer that works runs along
        z = y + 1
        check(z, np.full(3, 3.0))
        check(good, np.full(3, 4.0))

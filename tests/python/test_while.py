"""While loops decided on the device (``c.while_loop``): each loop here is
also written in NumPy, and the results, the trip counts and whether
max_trips stopped the loop are NumPy's. One request per loop, whatever its
trips; bad bodies are refused before anything runs; the server's cap and
a client's deadline stop a loop that would not end."""

from __future__ import annotations

import re
import threading
import time

import numpy as np
import pytest

import resident as rs
from helpers import check


@pytest.fixture(params=["lazy", "eager"])
def c(request, server):
    with rs.connect(server.target, lazy=request.param == "lazy") as client:
        yield client


def numpy_while(cond, body, x, max_trips):
    trips = 0
    while cond(x):
        if trips == max_trips:
            return x, trips, True
        x = body(x)
        trips += 1
    return x, trips, False


def collatz_step(xp, x):
    return xp.where(x > 1, xp.where(x % 2 == 0, x // 2, 3 * x + 1), x)


def test_collatz_stopping_times_bit_for_bit(c):
    x0 = np.arange(1, 200, dtype=np.int64)
    want, trips, capped = numpy_while(lambda x: (x > 1).any(), lambda x: collatz_step(np, x),
                                      x0, 10_000)
    got, got_trips, got_capped = c.while_loop(
        lambda x: (x > 1).any(), lambda x: collatz_step(rs, x), c.asarray(x0),
        max_trips=10_000, full_output=True)
    check(got, want)
    assert int(got_trips) == trips == 124  # 97's stopping time is 118; 171's 124
    assert bool(got_capped) is capped is False


def test_several_carried_values_and_max_trips(c):
    # Halving a vector while its max is above 1, counting in a carried int.
    x0 = np.array([3.0, 40.0, 0.5])

    def np_body(s):
        return [s[0] * 0.5, s[1] + 1]
    for max_trips in (0, 3, 6, 100):
        (wx, wk), trips, capped = numpy_while(lambda s: s[0].max() > 1, np_body,
                                              [x0, np.int64(0)], max_trips)
        (x, k), got_trips, got_capped = c.while_loop(
            lambda s: s[0].max() > 1, lambda s: [s[0] * 0.5, s[1] + 1],
            [c.asarray(x0), c.asarray(np.int64(0))], max_trips=max_trips, full_output=True)
        check(x, wx)
        assert int(k) == int(wk) == int(got_trips) == trips
        assert bool(got_capped) == capped, max_trips
    # Without full_output: the carried values, in the structure given.
    assert isinstance(c.while_loop(lambda x: x.max() > 1, lambda x: x * 0.5, c.asarray(x0),
                                   max_trips=9), rs.ndarray)
    out = c.while_loop(lambda s: s[0].max() > 1, lambda s: (s[0] * 0.5, s[1]),
                       (c.asarray(x0), c.ones(2)), max_trips=9)
    assert isinstance(out, tuple) and len(out) == 2


def conjugate_gradient(xp, dot, a, b, tol, max_trips, while_loop):
    x = xp.zeros_like(b)
    r = b - dot(a, x)
    state = [x, r, r, dot(r, r)]

    def body(s):
        x, r, p, rr = s
        ap = dot(a, p)
        alpha = rr / dot(p, ap)
        x = x + alpha * p
        r = r - alpha * ap
        rr_new = dot(r, r)
        return [x, r, r + (rr_new / rr) * p, rr_new]
    bb = dot(b, b)
    return while_loop(lambda s: s[3] > tol * tol * bb, body, state, max_trips)


def test_conjugate_gradient_to_tolerance_matches_numpy(c):
    n = 96  # a 1-D Poisson matrix: SPD, condition ~ n^2
    a = 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    b = np.sin(np.linspace(0, 3, n))
    (want, *_), trips, _ = conjugate_gradient(np, np.dot, a, b, 1e-10, 1000, numpy_while)

    def resident_while(cond, body, state, max_trips):
        out, t, capped = c.while_loop(cond, body, state, max_trips=max_trips, full_output=True)
        return out, int(t), bool(capped)
    (x, *_), got_trips, capped = conjugate_gradient(
        rs, rs.matmul, c.asarray(a), c.asarray(b), 1e-10, 1000, resident_while)
    assert not capped
    # Dot products round in another order than NumPy's BLAS: the trips may
    # differ by one; both solve the system.
    assert abs(got_trips - trips) <= 1, (got_trips, trips)
    np.testing.assert_allclose(x.get(), want, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(a @ x.get(), b, atol=1e-8)


def test_a_while_is_one_request_and_counted(server):
    with rs.connect(server.target, lazy=True) as c:
        runs = server.requests("Run")
        before = _metric(server, "resident_while_trips_total")
        ops_before = _ops(server)
        x = c.while_loop(lambda x: x.sum() < 1000, lambda x: x * 1.5 + 1, c.ones(3),
                         max_trips=1000)
        y = (x + 1).get()
        assert server.requests("Run") == runs + 1
        want, trips, _ = numpy_while(lambda x: x.sum() < 1000, lambda x: x * 1.5 + 1,
                                     np.ones(3), 1000)
        np.testing.assert_array_equal(y, want + 1)
        assert _metric(server, "resident_while_trips_total") == before + trips
        # Ops count the trips taken (a few per trip), not max_trips' worth.
        assert 0 < _ops(server) - ops_before < 10 * (trips + 1), (trips, _ops(server) - ops_before)


def _ops(server):
    m = re.search(r'^resident_ops_total\{tenant="default"\} (\d+)', server.metrics(), re.M)
    return int(m.group(1)) if m else 0


def _metric(server, name):
    m = re.search(rf"^{re.escape(name)} (\d+)", server.metrics(), re.M)
    return int(m.group(1)) if m else 0


def test_device_graphs_equal_trip_by_trip_bit_for_bit(start_server):
    """The same loops on a server started with --loop-graphs=true and on one
    with --loop-graphs=false give the same bytes. On CUDA the first runs the
    trips after the first as a graph (the device tests the condition), which
    the metrics count; the CPU backend records no graphs."""
    server = start_server("--loop-graphs=true")
    plain = start_server("--loop-graphs=false")
    rng = np.random.default_rng(7)
    n = 64
    a = 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    b = rng.standard_normal(n)
    m = rng.standard_normal((n, n)) / n

    def run(target):
        with rs.connect(target, lazy=True) as c:
            def while_loop(cond, body, state, max_trips):
                return c.while_loop(cond, body, state, max_trips=max_trips, full_output=True)
            (x, r, p, rr), trips, capped = conjugate_gradient(
                rs, rs.matmul, c.asarray(a), c.asarray(b), 1e-12, 1000, while_loop)
            # A fixed loop whose body does not fuse: a dot, then elementwise.
            mm = c.asarray(m)
            y = c.loop(40, c.asarray(b), lambda y: rs.tanh(mm @ y) * 0.5 + y * 0.25)
            return [v.get().tobytes() for v in (x, r, p, rr, y)], int(trips), bool(capped)
    graphs_before = _metric(server, 'resident_while_loops_total{form="graph"}')
    loops_before = _metric(server, "resident_loop_graphs_total")
    got, trips, capped = run(server.target)
    want, want_trips, want_capped = run(plain.target)
    assert (trips, capped) == (want_trips, want_capped)
    assert trips > 10
    assert got == want
    assert _metric(plain, 'resident_while_loops_total{form="graph"}') == 0
    assert _metric(plain, "resident_loop_graphs_total") == 0
    graphs = _metric(server, 'resident_while_loops_total{form="graph"}') - graphs_before
    loops = _metric(server, "resident_loop_graphs_total") - loops_before
    if server.args[server.args.index("--device") + 1].startswith("cuda"):
        assert (graphs, loops) == (1, 1), server.log()
    else:
        assert (graphs, loops) == (0, 0)


def test_kept_loop_graphs_are_reused_and_equal_trip_by_trip(start_server):
    """One session solving again at a size it solved before reuses the
    executable graph of that solve (updated with the new arrays' addresses)
    on CUDA, and every answer is still the trip-by-trip server's, bit for
    bit, whatever was solved in between. --loop-graph-cache=0 keeps none."""
    server = start_server("--loop-graphs=true")
    uncached = start_server("--loop-graphs=true", "--loop-graph-cache=0")
    plain = start_server("--loop-graphs=false")
    rng = np.random.default_rng(11)
    sizes = [48, 48, 96, 48]
    problems = []
    for n in sizes:
        a = 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1) + np.diag(rng.random(n))
        problems.append((a, rng.standard_normal(n)))

    def run(target):
        out = []
        with rs.connect(target, lazy=True) as c:
            def while_loop(cond, body, state, max_trips):
                return c.while_loop(cond, body, state, max_trips=max_trips, full_output=True)
            for a, b in problems:
                (x, r, p, rr), trips, capped = conjugate_gradient(
                    rs, rs.matmul, c.asarray(a), c.asarray(b), 1e-12, 1000, while_loop)
                out.append((x.get().tobytes(), r.get().tobytes(), int(trips), bool(capped)))
        return out
    hits = "resident_loop_graph_cache_hits_total"
    want = run(plain.target)
    assert all(t > 10 for _, _, t, _ in want)
    assert run(server.target) == want
    assert run(uncached.target) == want
    assert _metric(uncached, hits) == 0
    if server.args[server.args.index("--device") + 1].startswith("cuda"):
        # The second and the fourth solve at 48 at least; 96 may fit too.
        assert _metric(server, 'resident_while_loops_total{form="graph"}') == len(sizes)
        assert _metric(server, hits) >= 2, server.log()
        # Each recorded trip stayed within the arena the planner sized.
        peak = _metric(server, 'resident_loop_graph_arena_bytes_total{use="peak"}')
        planned = _metric(server, 'resident_loop_graph_arena_bytes_total{use="planned"}')
        assert 0 < peak <= planned
    else:
        assert _metric(server, hits) == 0


def test_a_negative_loop_graph_cache_is_refused_at_start(start_server):
    with pytest.raises(RuntimeError, match="--loop-graph-cache must not be negative"):
        start_server("--loop-graph-cache=-1")


def test_bad_conditions_and_bodies_are_refused(c):
    x = c.ones(3)
    with pytest.raises(rs.InvalidArgument, match="a while condition must be a bool scalar"):
        c.while_loop(lambda x: x.sum(), lambda x: x * 2, x, max_trips=3).get()
    with pytest.raises(rs.InvalidArgument, match=r"cond yield is bool \(3,\)"):
        c.while_loop(lambda x: x > 2, lambda x: x * 2, x, max_trips=3).get()
    with pytest.raises(rs.InvalidArgument, match="must keep each carried value's dtype"):
        c.while_loop(lambda x: x.sum() > 2, lambda x: x.astype(np.int32), x, max_trips=3).get()
    with pytest.raises(rs.InvalidArgument, match="--max-trip-count"):
        c.while_loop(lambda x: x.sum() > 2, lambda x: x, x, max_trips=1 << 40).get()
    with pytest.raises(TypeError, match="cond must return a resident array"):
        c.while_loop(lambda x: True, lambda x: x, x, max_trips=3)
    with pytest.raises(ValueError, match="max_trips must not be negative"):
        c.while_loop(lambda x: x.sum() > 2, lambda x: x, x, max_trips=-1)
    check(x + 0, np.ones(3))  # the server still serves; x is intact


def test_a_loop_that_never_ends_stops_at_the_deadline(start_server):
    s = start_server("--max-trip-count=1000000000")
    with rs.connect(s.target, run_timeout=0.5) as c:
        never = c.while_loop(lambda x: (x >= 0).all(), lambda x: x + 1, c.zeros(1000),
                             max_trips=10 ** 9)
        with pytest.raises(rs.DeadlineExceeded):
            never.get()
        check(c.ones(2) + 1, np.full(2, 2.0))


def test_an_administrators_close_stops_a_while_between_trips(start_server, workdir):
    from conftest import make_tokens  # noqa: PLC0415
    path, tok = make_tokens(workdir, {"alice": "user", "ops": "admin"})
    s = start_server(f"--auth-tokens={path}")
    with rs.connect(s.target, token=tok["alice"]) as alice, \
            rs.connect(s.target, token=tok["ops"]) as ops:
        never = alice.while_loop(lambda x: (x >= 0).all(), lambda x: x + 1, alice.zeros(64),
                                 max_trips=1 << 30)
        outcome = {}

        def run():
            try:
                never.get()
            except rs.ResidentError as e:
                outcome["error"] = e
        worker = threading.Thread(target=run)
        worker.start()
        time.sleep(0.5)  # the loop is running
        assert ops.admin_close(alice.session_id) == alice.session_id
        worker.join(timeout=30)
        assert not worker.is_alive()
        assert isinstance(outcome.get("error"), rs.Cancelled), outcome
        assert "closed while the program ran" in str(outcome["error"])
        check(ops.ones(2) + 1, np.full(2, 2.0))  # the server serves on

"""A compute call that runs long, or never ends, takes nothing from anyone else.

A library routine (LAPACK's svd) cannot be interrupted between its own
iterations. While a tenant's calls sit in one, every other tenant's calls, the
admin calls and new sessions stay served, and SIGTERM still stops the server
within its drain time.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import resident as rs
from conftest import DEVICE, make_tokens

GRACE_S = 3.0
# The long calls are sized by LAPACK's speed; cuSOLVER's runs them in a blink.
cpu_only = pytest.mark.skipif(DEVICE != "cpu", reason="long calls calibrated on the CPU backend")


def _timed(fn):
    t = time.monotonic()
    out = fn()
    return out, time.monotonic() - t


def _svd_size(client: rs.Client, seconds: float) -> int:
    """The order of a matrix whose svdvals takes about `seconds` here."""
    n = 512
    a = client.asarray(np.random.default_rng(0).random((n, n)))
    float(a.sum())
    _, t = _timed(lambda: float(rs.linalg.svdvals(a).sum()))
    return int(min(3000, max(n, n * (seconds / max(t, 1e-3)) ** (1 / 3))))


@pytest.fixture
def tenants(start_server, workdir):
    path, tokens = make_tokens(workdir, {"alice": "user", "bob": "user", "root": "admin"})
    s = start_server(f"--auth-tokens={path}", f"--shutdown-grace={GRACE_S:g}s",
                     "--max-concurrent-per-tenant=2")
    return s, tokens


def _start_long_calls(target: str, token: str, n: int, count: int):
    """`count` threads, each its own session, each one long svdvals; returns
    the threads and a list their errors land in."""
    errors: list = []

    def run(seed: int) -> None:
        try:
            with rs.connect(target, token=token) as c:
                a = c.asarray(np.random.default_rng(seed).random((n, n)))
                float(rs.linalg.svdvals(a).sum())
        except Exception as e:  # the server's end, when SIGTERM comes first
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    return threads, errors


@cpu_only
def test_other_tenants_and_admin_are_served_while_a_tenant_computes(tenants):
    server, tokens = tenants
    with rs.connect(server.target, token=tokens["alice"]) as probe:
        n = _svd_size(probe, 6.0)
    # Alice fills her concurrency limit (and more) with long library calls.
    threads, _ = _start_long_calls(server.target, tokens["alice"], n, 3)
    time.sleep(1.0)
    assert any(t.is_alive() for t in threads), "the long calls ended too soon to test anything"
    # Bob and the administrator, meanwhile: new sessions, programs,
    # downloads, admin listings, each within a short deadline.
    slowest = {"open": 0.0, "run": 0.0, "svd": 0.0, "admin": 0.0}
    for _ in range(3):
        bob, took = _timed(lambda: rs.connect(server.target, token=tokens["bob"], timeout=5,
                                              run_timeout=5))
        slowest["open"] = max(slowest["open"], took)
        with bob:
            x = bob.asarray(np.arange(10.0))
            (got, took) = _timed(lambda: (x * 2 + 1).get())
            np.testing.assert_array_equal(got, np.arange(10.0) * 2 + 1)
            slowest["run"] = max(slowest["run"], took)
            _, took = _timed(lambda: float(rs.linalg.svdvals(bob.asarray(np.eye(3))).sum()))
            slowest["svd"] = max(slowest["svd"], took)
        with rs.connect(server.target, token=tokens["root"], timeout=5) as root:
            _, took = _timed(root.admin_sessions)
            slowest["admin"] = max(slowest["admin"], took)
    print(f"svd order {n}; the others' slowest calls (s): {slowest}")
    assert max(slowest.values()) < 5
    assert any(t.is_alive() for t in threads), "the long calls ended before the checks did"
    for t in threads:
        t.join(timeout=120)


def test_non_converging_svd_is_refused_and_others_stay_served(tenants):
    server, tokens = tenants
    m = np.eye(3)
    m[1, 2] = -np.inf  # LAPACK's svd never returns on it (NumPy's neither)
    errors: list = []

    def hostile() -> None:
        try:
            with rs.connect(server.target, token=tokens["alice"], run_timeout=30) as c:
                float(rs.linalg.svdvals(c.asarray(m)).sum())
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=hostile, daemon=True) for _ in range(2)]
    for t in threads:
        t.start()
    with rs.connect(server.target, token=tokens["bob"], timeout=5, run_timeout=5) as bob:
        assert float(bob.asarray(np.ones(4)).sum()) == 4.0
    for t in threads:
        t.join(timeout=20)
        assert not t.is_alive(), "svd of a matrix holding -inf did not return"
    assert len(errors) == 2
    assert all(isinstance(e, rs.linalg.LinAlgError) for e in errors), errors


@cpu_only
def test_sigterm_stops_the_server_within_its_drain_time_whatever_runs(tenants):
    server, tokens = tenants
    with rs.connect(server.target, token=tokens["alice"]) as probe:
        n = _svd_size(probe, 15.0)
    threads, _ = _start_long_calls(server.target, tokens["alice"], n, 2)
    time.sleep(1.5)
    assert any(t.is_alive() for t in threads)
    t0 = time.monotonic()
    server.proc.send_signal(15)
    server.proc.wait(timeout=GRACE_S + 20)
    took = time.monotonic() - t0
    print(f"SIGTERM with {GRACE_S:g} s of drain time: gone after {took:.2f} s, "
          f"exit status {server.proc.returncode}")
    # The drain time, plus the scheduling slack of a loaded 2-core machine.
    assert took < GRACE_S + 1.5, f"the server took {took:.1f} s to stop after SIGTERM"
    for t in threads:
        t.join(timeout=10)


@cpu_only
def test_a_stack_of_matrices_stops_at_its_deadline(server):
    """One LAPACK call cannot be stopped, but a stack of them stops between
    matrices once its call's deadline passes."""
    n = 256
    with rs.connect(server.target) as c:
        a = c.asarray(np.random.default_rng(1).random((n, n)) + np.eye(n))

        def stack(count: int):
            return rs.broadcast_to(a, (count, n, n)) + 0.0  # made on the server

        small = 8
        _, t = _timed(lambda: float(rs.linalg.svdvals(stack(small)).sum()))
        # About 4 s of work (at most 256 MiB of matrices).
        count = int(min(512, max(small, small * 4.0 / max(t, 1e-3))))
        full = t * count / small
    with rs.connect(server.target, run_timeout=0.5) as c:
        a = c.asarray(np.random.default_rng(1).random((n, n)) + np.eye(n))
        a.evaluate()  # uploaded before the clock starts
        t0 = time.monotonic()
        with pytest.raises(rs.DeadlineExceeded):
            float(rs.linalg.svdvals(rs.broadcast_to(a, (count, n, n)) + 0.0).sum())
        took = time.monotonic() - t0
    print(f"stack of {count}: stopped after {took:.2f} s of about {full:.2f} s")
    assert full > 1.5, f"the stack was too small to test anything ({full:.2f} s)"
    assert took < full / 2, f"stopped after {took:.2f} s of about {full:.2f} s of work"

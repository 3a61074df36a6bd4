"""Handles are released when arrays are garbage-collected (piggybacked on
the next request, never a call from __del__), and sessions end with
``with c:`` or when the client and its arrays are gone."""

from __future__ import annotations

import gc
import time

import numpy as np
import pytest

import resident as rs
from conftest import wait_until
from helpers import check


def handles(c: rs.Client) -> int:
    return sum(1 for a in c.ls() if a.handle)


def test_dropped_arrays_release_their_handles_on_the_next_request(server, client):
    base = handles(client)
    arrays = [client.ones(4) * float(i) for i in range(50)]
    client.evaluate(*arrays)
    assert handles(client) == base + 50
    calls, runs = dict(client.stats), server.requests("Run")
    del arrays
    gc.collect()
    assert client.stats == calls  # no request from the destructors
    keep = client.ones(1).evaluate()  # this request carries the releases
    assert server.requests("Run") == runs + 1
    assert handles(client) == base + 1  # the 50 are gone, ls sent nothing more
    assert server.requests("Run") == runs + 1
    del keep


def test_many_dropped_handles_go_before_other_requests(client):
    base = handles(client)
    for _ in range(300):  # more than a batch: released before the ls itself
        client.asarray(np.ones(2))
    assert handles(client) == base


def test_intermediates_never_become_handles(client):
    base = handles(client)
    x = client.ones(10)
    for _ in range(100):
        x = x + 1.0
    x.evaluate()
    assert handles(client) == base + 1


def test_attach_handles_are_released_but_the_name_stays(client):
    client.keep(client.arange(4), "lifetime-test")
    try:
        base = handles(client)
        y = client.attach("lifetime-test")
        check(y, np.arange(4))
        assert handles(client) == base + 1
        del y
        check(client.ones(1), np.ones(1))
        assert handles(client) == base
        assert any(a.name == "lifetime-test" for a in client.ls())
    finally:
        client.delete("lifetime-test")


def sessions(admin: rs.Client) -> set:
    return {s.session for s in admin.admin_sessions()}


def test_with_block_ends_the_session(server, client):
    with rs.connect(server.target) as c:
        c.ones(3).evaluate()
        sid = c.session_id
        assert sid in sessions(client)
    assert sid not in sessions(client)


def test_dropping_the_client_and_its_arrays_ends_the_session(server, client):
    c = rs.connect(server.target)
    x = c.ones(3).evaluate()
    sid = c.session_id
    del c
    gc.collect()
    assert sid in sessions(client)  # x still holds the session
    check(x, np.ones(3))
    del x
    gc.collect()
    assert wait_until(lambda: sid not in sessions(client))


def test_arrays_keep_working_while_only_they_hold_the_client(server):
    x = rs.connect(server.target).arange(3) * 2
    check(x, np.arange(3) * 2)


def test_lease_is_renewed_in_the_background(start_server):
    s = start_server("--session-idle-timeout", "600ms")
    with rs.connect(s.target) as c:
        x = c.ones(2).evaluate()
        time.sleep(1.5)  # several idle timeouts: the renewer keeps it alive
        check(x, np.ones(2))
    with rs.connect(s.target, keep_alive=False) as c:
        x = c.ones(2).evaluate()
        time.sleep(1.5)  # every call renews the lease: none for 1.5 s
        with pytest.raises(rs.NotFound):
            x.get()


def test_keep_outlives_the_session(server):
    with rs.connect(server.target) as c:
        c.keep(c.arange(5) * 2, "outlives")
    with rs.connect(server.target) as c:
        try:
            check(c.attach("outlives"), np.arange(5) * 2)
            listing = [a for a in c.ls() if a.name == "outlives"]
            assert listing and listing[0].shape == (5,) and listing[0].dtype == np.int64
        finally:
            c.delete("outlives")


def test_info(client):
    i = client.info()
    assert i.device is not None and i.device.name in ("cpu", "cuda:0")
    assert i.max_inline_bytes > 0 and i.chunk_bytes > 0 and i.server_version

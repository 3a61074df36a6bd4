"""Errors are Python exceptions with the gRPC code and the server's message;
the server keeps serving after each."""

from __future__ import annotations

import re
import sys

import grpc
import numpy as np
import pytest

import resident as rs
from helpers import check


def test_hierarchy():
    for cls in (rs.InvalidArgument, rs.NotFound, rs.ResourceExhausted, rs.AlreadyExists,
                rs.Unauthenticated, rs.PermissionDenied, rs.Unavailable, rs.FailedPrecondition,
                rs.DeadlineExceeded, rs.Internal):
        assert issubclass(cls, rs.ResidentError)
    assert issubclass(rs.InvalidArgument, ValueError)
    assert issubclass(rs.ResourceExhausted, MemoryError)
    assert issubclass(rs.NotFound, LookupError)


def test_shape_mismatch_names_the_instruction(client):
    x = client.ones(3)
    y = client.ones(4)
    z = (x * 2.0) + y
    with pytest.raises(rs.InvalidArgument) as e:
        z.get()
    assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert re.search(r"instruction \d+ \(add\)", e.value.details)
    assert "(3,) (4,)" in e.value.details
    assert e.value.request_id and len(e.value.request_id) == 16
    assert "INVALID_ARGUMENT" in str(e.value)
    # metadata of the bad array needs the server: it raises the same error
    with pytest.raises(rs.InvalidArgument, match="broadcast"):
        z.shape
    # the failed program changed nothing; the session goes on
    check(x + 1.0, np.full(3, 2.0))


def test_a_server_error_names_the_line_that_recorded_the_op(client):
    x = client.asarray(np.arange(4))
    i = client.asarray(np.array([9]))
    y = x[i] * 2; line = sys._getframe().f_lineno  # noqa: E702 (the line under test)
    with pytest.raises(rs.InvalidArgument) as e:
        y.get()
    assert "out of bounds" in e.value.details
    assert f"[recorded at {__file__}:{line}]" in e.value.details


def test_eager_errors_raise_at_the_call(eager):
    with pytest.raises(rs.InvalidArgument, match="broadcast"):
        eager.ones(3) + eager.ones(4)


def test_error_inside_a_loop_body(client):
    x = client.loop(3, client.ones(3), lambda v: v * 2.0 + client.ones(4))
    with pytest.raises(rs.InvalidArgument, match=r"\(loop\).*broadcast"):
        x.get()


def test_loop_body_misuse_is_refused_at_the_call(client):
    leaked = []

    def body(v):
        leaked.append(v * 2.0)
        return v
    with pytest.raises(ValueError, match="returned 2 values for 1"):
        client.loop(2, [client.ones(2)], lambda v: [v[0], v[0]])
    client.loop(2, client.ones(2), body).get()
    with pytest.raises(rs.FailedPrecondition, match="outside its loop"):
        leaked[0].get()
    with pytest.raises(TypeError):
        client.loop(2, client.ones(2), lambda v: 3)


def test_named_arrays_errors(client):
    with pytest.raises(rs.NotFound):
        client.attach("no-such-name")
    with pytest.raises(rs.InvalidArgument):
        client.keep(client.ones(2), "bad name!")
    client.keep(client.ones(2), "errors-test")
    try:
        with pytest.raises(rs.AlreadyExists):
            client.keep(client.zeros(2), "errors-test")
    finally:
        client.delete("errors-test")
    with pytest.raises(rs.NotFound):
        client.delete("errors-test")


def test_memory_limit_is_resource_exhausted(start_server):
    s = start_server("--max-memory", "1M")
    with rs.connect(s.target) as c:
        with pytest.raises(rs.ResourceExhausted) as e:
            c.ones((1024, 1024)).get()
        assert isinstance(e.value, MemoryError)
        with pytest.raises(rs.ResourceExhausted):
            c.asarray(np.ones(1 << 18))
        check(c.ones(16), np.ones(16))  # still serving


def test_unreachable_server_is_unavailable():
    with pytest.raises(rs.Unavailable, match="cannot reach 127.0.0.1:1"):
        rs.connect("127.0.0.1:1", timeout=2)


def test_closed_client(server):
    c = rs.connect(server.target)
    x = c.ones(3).evaluate()
    c.close()
    assert c.closed
    with pytest.raises(rs.FailedPrecondition, match="closed"):
        x.get()
    with pytest.raises(rs.FailedPrecondition, match="closed"):
        c.ones(2)


def test_released_array(client):
    x = client.ones(3).evaluate()
    x.release()
    with pytest.raises(rs.FailedPrecondition, match="released"):
        x.get()
    with pytest.raises(rs.FailedPrecondition, match="released"):
        (x + 1).get()


def test_host_arrays_do_not_mix_implicitly(client):
    x = client.ones(3)
    with pytest.raises(TypeError, match="asarray"):
        x + np.ones(3)
    with pytest.raises(TypeError, match="asarray"):
        np.ones(3) + x
    with pytest.raises(TypeError, match="get"):
        np.asarray(x)
    with pytest.raises(TypeError):
        x + "a"


def test_arrays_of_two_clients_do_not_mix(server, client):
    with rs.connect(server.target) as other:
        with pytest.raises(ValueError, match="different clients"):
            client.ones(2) + other.ones(2)


def test_bad_dtypes_and_shapes_are_refused_before_sending(client):
    with pytest.raises(TypeError, match="not supported"):
        client.ones(3, np.longdouble)
    with pytest.raises(TypeError, match="shape"):
        client.ones("abc")
    with pytest.raises(rs.InvalidArgument):
        client.ones((-1, 2)).get()

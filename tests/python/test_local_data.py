"""Shared-memory transfers through the server's local data socket: the
transport a client gets and why, round trips of every dtype through memfd
regions, arrays that live in shared memory (empty_host), and what the
server refuses from careless and hostile clients: unsealed, short, missing
or foreign descriptors, other sessions' regions, ranges outside a region,
too many regions, a client killed with regions mapped."""

from __future__ import annotations

import fcntl
import gc
import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import resident as rs
from conftest import make_tokens, wait_until
from helpers import DTYPES, check, sample
from resident.v1 import resident_pb2 as pb

MIB = 1 << 20


@pytest.fixture
def shm(server):
    with rs.connect(server.target) as c:
        assert c.transport == "shared-memory", c.transport_detail
        yield c


def usage(c: rs.Client):
    return c._s.call("Describe", pb.DescribeRequest()).usage


# --- the transport -------------------------------------------------------------------


def test_a_client_on_the_servers_host_gets_shared_memory(server, shm):
    assert "memfd regions over" in shm.transport_detail
    assert shm._s.local is not None and shm._s.local.path in shm.transport_detail
    with rs.connect(server.target, local_data=False) as c:
        assert c.transport == "grpc"
        assert "local_data=False" in c.transport_detail


def test_a_server_without_the_socket_says_so(start_server):
    s = start_server("--local-data-socket=off")
    with rs.connect(s.target) as c:
        assert c.transport == "grpc"
        assert "offers no local data socket" in c.transport_detail
        check(c.asarray(np.arange(MIB)), np.arange(MIB))  # the gRPC path still works


def test_a_socket_not_visible_here_falls_back_to_grpc(start_server, tmp_path):
    path = tmp_path / "hidden.sock"
    s = start_server(f"--local-data-socket={path}")
    os.unlink(path)  # as if the server ran in another mount namespace
    with rs.connect(s.target) as c:
        assert c.transport == "grpc"
        assert "not visible here" in c.transport_detail
        check(c.asarray(np.ones(MIB)), np.ones(MIB))


def test_a_unix_listen_address_gets_its_data_socket_beside_it(start_server, tmp_path):
    grpc_path = tmp_path / "g.sock"
    start_server(listen=f"unix:{grpc_path}")
    with rs.connect(f"unix:{grpc_path}") as c:
        assert c.transport == "shared-memory", c.transport_detail
        assert f"{grpc_path}.data" in c.transport_detail
        check(c.asarray(np.arange(MIB)), np.arange(MIB))


def test_the_socket_file_mode_is_the_flags(start_server, tmp_path):
    path = tmp_path / "mode.sock"
    start_server(f"--local-data-socket={path}", "--local-data-socket-mode=0600")
    assert (os.stat(path).st_mode & 0o777) == 0o600


# --- round trips -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES + [np.dtype(np.complex128), np.dtype(np.float16)],
                         ids=str)
def test_every_dtype_round_trips_through_regions(shm, dtype):
    a = sample(dtype, (3 * MIB // dtype.itemsize + 7,), 4)
    before = dict(shm.stats)
    x = shm.asarray(a)
    check(x, a)  # an uploaded array's get() is a download, here into a region
    after = shm.stats
    for method in ("RegionUpload", "RegionDownload"):
        assert after.get(method, 0) == before.get(method, 0) + 1, method
    assert after.get("Upload", 0) == before.get("Upload", 0)
    assert after.get("Download", 0) == before.get("Download", 0)


def test_large_results_download_into_a_region_the_array_owns(shm):
    n = 10 * MIB // 8  # past the inline limit: a download
    x = shm.arange(n, dtype=np.float64) * 0.5
    before = dict(shm.stats)
    got = x.get()
    np.testing.assert_array_equal(got, np.arange(n) * 0.5)
    assert shm.stats.get("RegionDownload", 0) == before.get("RegionDownload", 0) + 1
    assert shm.stats.get("Download", 0) == before.get("Download", 0)
    got[:] = -1  # the caller's memory: the server's array is unchanged
    np.testing.assert_array_equal(x.get(), np.arange(n) * 0.5)


def test_a_view_keeps_its_downloaded_regions_bytes(shm):
    n = 6 * MIB // 8
    first = shm.full((n,), 1.0)
    got = first.get()
    view = got[::2]  # NumPy would collapse a plain view's base past `got`
    part = got.reshape(2, -1)[1]
    del got
    gc.collect()
    for _ in range(3):  # downloads of the same size: the pool reuses free regions
        assert shm.full((n,), 2.0).get()[0] == 2.0
        gc.collect()
    assert np.all(view == 1.0) and np.all(part == 1.0)
    host = shm.empty_host((n,), np.float64)
    host[...] = 3.0
    tail = host[n // 2:]
    del host
    gc.collect()
    assert shm.full((n,), 4.0).get()[0] == 4.0
    assert np.all(tail == 3.0)
    check(shm.asarray(tail), np.full(n - n // 2, 3.0))  # still in place, at its offset


def test_regions_are_reused_not_piled_up(shm):
    x = shm.ones(6 * MIB // 8)
    for _ in range(30):
        got = x.get()
        assert got[0] == 1.0
        del got
        gc.collect()
    local = shm._s.local
    assert len(local.regions) <= 3, len(local.regions)
    assert usage(shm).regions >= len(local.regions)


def test_an_array_in_shared_memory_uploads_in_place(shm):
    host = shm.empty_host((1024, 1024), np.float32)
    assert isinstance(host, np.ndarray) and host.shape == (1024, 1024)
    host[...] = np.arange(host.size, dtype=np.float32).reshape(host.shape)
    local = shm._s.local
    assert local.find(host) is not None  # no copy needed
    check(shm.asarray(host), host)
    part = host[512:]  # a contiguous part at an offset of the region
    check(shm.asarray(part), part)
    check(shm.asarray(host[:, :3]), host[:, :3])  # not contiguous: copied, same answer


def test_empty_host_on_grpc_is_an_ordinary_array(server):
    with rs.connect(server.target, local_data=False) as c:
        a = c.empty_host((4, 5), np.int32)
        assert a.shape == (4, 5) and a.dtype == np.int32


def test_closing_the_client_unmaps_its_regions(server):
    with rs.connect(server.target) as probe:
        base = usage(probe).regions
        with rs.connect(server.target) as c:
            c.asarray(np.ones(4 * MIB)).get()
            assert usage(probe).regions > base
        assert wait_until(lambda: usage(probe).regions == base)


# --- the socket's refusals ----------------------------------------------------------------


class RawLocal:
    """The local data protocol by hand, as a careless or hostile client."""

    def __init__(self, path: str, session: bytes, token: str = "") -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.session = session
        self.token = token

    def ask(self, req: pb.LocalDataRequest, fds=()) -> pb.LocalDataResponse:
        if not req.session:
            req.session = self.session
        if self.token and not req.token:
            req.token = self.token
        payload = req.SerializeToString()
        self.send_frame(struct.pack("<I", len(payload)) + payload, fds)
        return self.reply()

    def send_frame(self, frame: bytes, fds=()) -> None:
        if fds:
            socket.send_fds(self.sock, [frame], list(fds))
        else:
            self.sock.sendall(frame)

    def reply(self) -> pb.LocalDataResponse:
        head = self.recv(4)
        return pb.LocalDataResponse.FromString(self.recv(struct.unpack("<I", head)[0]))

    def recv(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            piece = self.sock.recv(n - len(out))
            if not piece:
                raise ConnectionError("closed")
            out += piece
        return out


def memfd(size: int, seal: bool = True) -> int:
    fd = os.memfd_create("test", os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    if seal:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
    return fd


INVALID, NOT_FOUND, PERMISSION_DENIED, RESOURCE_EXHAUSTED, UNAUTHENTICATED = 3, 5, 7, 8, 16


def test_bad_regions_are_refused_and_the_socket_keeps_serving(shm):
    raw = RawLocal(shm._s.local.path, shm._s.id)
    cases = [
        (memfd(MIB, seal=False), MIB, "sealed against shrinking"),
        (memfd(MIB), 2 * MIB, "fewer than"),
        (memfd(MIB), 0, "positive size"),
        (os.open("/dev/null", os.O_RDONLY), MIB, "not shared memory"),
    ]
    for fd, size, words in cases:
        try:
            r = raw.ask(pb.LocalDataRequest(register_bytes=size), [fd])
        finally:
            os.close(fd)
        assert r.code == INVALID and words in r.message, r
    r = raw.ask(pb.LocalDataRequest(register_bytes=MIB))  # no descriptor
    assert r.code == INVALID and "carried 0" in r.message
    a, b = memfd(MIB), memfd(MIB)
    two = RawLocal(shm._s.local.path, shm._s.id)  # two descriptors in a frame: dropped at once
    with pytest.raises((ConnectionError, OSError)):
        two.ask(pb.LocalDataRequest(register_bytes=MIB), [a, b])
    os.close(a), os.close(b)
    fd = memfd(MIB)
    r = raw.ask(pb.LocalDataRequest(release_region=b"x" * 16), [fd])  # a stray descriptor
    os.close(fd)
    assert r.code == INVALID
    raw.send_frame(struct.pack("<I", 5) + b"\xff\xff\xff\xff\xff")  # not a message
    assert raw.reply().code == INVALID
    r = raw.ask(pb.LocalDataRequest(session=b"\x01" * 16, register_bytes=MIB), [memfd(MIB)])
    assert r.code == NOT_FOUND  # no such session
    r = raw.ask(pb.LocalDataRequest(release_region=b"\x02" * 16))
    assert r.code == NOT_FOUND
    fd = memfd(MIB)
    r = raw.ask(pb.LocalDataRequest(register_bytes=MIB), [fd])  # and a good one still works
    os.close(fd)
    assert r.code == 0 and len(r.region) == 16
    assert raw.ask(pb.LocalDataRequest(release_region=r.region)).code == 0
    raw.send_frame(struct.pack("<I", 1 << 30))  # an absurd frame: the connection ends
    with pytest.raises((ConnectionError, OSError)):
        raw.reply()
    check(shm.asarray(np.ones(2 * MIB)), np.ones(2 * MIB))  # the client's own socket is fine


def test_transfers_outside_a_region_or_of_another_session_change_nothing(server, shm):
    region = next(iter(shm._s.local.regions.values()))
    n_before = len(shm.ls())

    def upload(c, offset, shape, rid=region.id):
        return c._s.call("RegionUpload", pb.RegionUploadRequest(
            session=c._s.id, region=rid, offset=offset, dtype=pb.DTYPE_FLOAT64, shape=shape))

    with pytest.raises(rs.InvalidArgument, match="outside the region"):
        upload(shm, region.size - 8, [2])
    with pytest.raises(rs.InvalidArgument, match="outside the region"):
        upload(shm, -8, [1])
    with pytest.raises(rs.NotFound):
        upload(shm, 0, [1], rid=b"\x07" * 16)
    with rs.connect(server.target) as other:  # same tenant, another session
        with pytest.raises(rs.NotFound):
            upload(other, 0, [1])
        x = other.asarray(np.ones(2 * MIB))
        with pytest.raises(rs.NotFound):
            other._s.call("RegionDownload", pb.RegionDownloadRequest(
                session=other._s.id, handle=x._evaluate().handle, region=region.id))
    x = shm.ones(MIB)
    with pytest.raises(rs.InvalidArgument, match="outside the region"):
        shm._s.call("RegionDownload", pb.RegionDownloadRequest(
            session=shm._s.id, handle=x._evaluate().handle, region=region.id,
            offset=region.size - 8))
    assert len(shm.ls()) == n_before + 1  # x only


def test_silent_or_unauthenticated_connections_are_closed(start_server, workdir):
    path, tokens = make_tokens(workdir, {"alice": "user"})
    s = start_server(f"--auth-tokens={path}", "--local-data-first-request-timeout=1s")
    with rs.connect(s.target, token=tokens["alice"]) as alice:
        sock_path = alice._s.local.path
        silent = RawLocal(sock_path, alice._s.id)  # connects, says nothing
        wrong = RawLocal(sock_path, alice._s.id, "wrong")
        assert wrong.ask(pb.LocalDataRequest(release_region=b"\x01" * 16)).code == UNAUTHENTICATED
        for raw in (silent, wrong):
            raw.sock.settimeout(5)
            with pytest.raises((ConnectionError, OSError)):
                raw.reply()  # the server closes it after the timeout
        # A client that made a request may stay quiet as long as it likes.
        time.sleep(1.5)
        check(alice.asarray(np.arange(MIB)), np.arange(MIB))


def test_region_limits_name_their_flags(start_server):
    s = start_server("--max-regions-per-tenant=3", "--max-region-bytes-per-tenant=16M")
    with rs.connect(s.target) as c:  # holds one region of 2 MiB
        raw = RawLocal(c._s.local.path, c._s.id)
        got = []
        for _ in range(3):
            fd = memfd(2 * MIB)
            got.append(raw.ask(pb.LocalDataRequest(register_bytes=2 * MIB), [fd]))
            os.close(fd)
        assert [r.code for r in got] == [0, 0, RESOURCE_EXHAUSTED]
        assert "--max-regions-per-tenant" in got[2].message
        assert raw.ask(pb.LocalDataRequest(release_region=got[0].region)).code == 0
        fd = memfd(32 * MIB)
        r = raw.ask(pb.LocalDataRequest(register_bytes=32 * MIB), [fd])
        os.close(fd)
        assert r.code == RESOURCE_EXHAUSTED and "--max-region-bytes-per-tenant" in r.message


def test_tokens_authenticate_the_socket_too(start_server, workdir):
    path, tokens = make_tokens(workdir, {"alice": "user", "bob": "user"})
    s = start_server(f"--auth-tokens={path}")
    with rs.connect(s.target, token=tokens["alice"]) as alice:
        assert alice.transport == "shared-memory", alice.transport_detail
        check(alice.asarray(np.arange(MIB)), np.arange(MIB))
        fd = memfd(MIB)
        for token, code in (("", UNAUTHENTICATED), ("wrong", UNAUTHENTICATED),
                            (tokens["bob"], NOT_FOUND)):  # bob cannot name alice's session
            raw = RawLocal(alice._s.local.path, alice._s.id, token)
            assert raw.ask(pb.LocalDataRequest(register_bytes=MIB), [fd]).code == code
        os.close(fd)


def test_local_connections_are_capped_per_tenant(start_server, workdir):
    path, tokens = make_tokens(workdir, {"alice": "user", "bob": "user"})
    s = start_server(f"--auth-tokens={path}", "--max-local-data-connections-per-tenant=2")
    def nothing() -> pb.LocalDataRequest:  # releases an unknown region
        return pb.LocalDataRequest(release_region=b"\x01" * 16)
    first = rs.connect(s.target, token=tokens["alice"])
    with rs.connect(s.target, token=tokens["alice"]) as second, \
            rs.connect(s.target, token=tokens["alice"]) as third, \
            rs.connect(s.target, token=tokens["bob"]) as bob:
        assert [c.transport for c in (first, second, third, bob)] == \
            ["shared-memory", "shared-memory", "grpc", "shared-memory"]
        assert "--max-local-data-connections-per-tenant" in third.transport_detail
        check(third.asarray(np.arange(MIB)), np.arange(MIB))  # over gRPC
        # A third connection of alice's by hand: refused, then closed.
        raw = RawLocal(second._s.local.path, second._s.id, tokens["alice"])
        assert raw.ask(nothing()).code == RESOURCE_EXHAUSTED
        with pytest.raises((ConnectionError, OSError)):
            raw.ask(nothing())
        # A connection stays its first tenant's: alice cannot borrow bob's.
        raw = RawLocal(bob._s.local.path, bob._s.id, tokens["bob"])
        assert raw.ask(nothing()).code == NOT_FOUND
        raw.token = tokens["alice"]
        r = raw.ask(pb.LocalDataRequest(release_region=b"\x01" * 16, session=second._s.id))
        assert r.code == PERMISSION_DENIED and "another tenant" in r.message
        first.close()  # its connection's slot comes back

        def alice_gets_shared_memory() -> bool:
            with rs.connect(s.target, token=tokens["alice"]) as c:
                return c.transport == "shared-memory"
        assert wait_until(alice_gets_shared_memory)


KILLED_CLIENT = textwrap.dedent("""
    import sys, numpy as np, resident as rs
    c = rs.connect(sys.argv[1])
    assert c.transport == "shared-memory", c.transport_detail
    keep = [c.asarray(np.ones(3 << 20)), c.empty_host((1 << 20,))]
    print("ready", flush=True)
    sys.stdin.read()
""")


def test_a_killed_client_leaves_no_region_or_descriptor(server, shm):
    def fds() -> int:
        return len(os.listdir(f"/proc/{server.proc.pid}/fd"))

    base_regions, base_fds = usage(shm).regions, fds()
    for _ in range(3):
        p = subprocess.Popen([sys.executable, "-c", KILLED_CLIENT, server.target],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready"
        assert usage(shm).regions > base_regions
        p.send_signal(signal.SIGKILL)
        p.wait()
        p.stdin.close()
        p.stdout.close()
        assert wait_until(lambda: usage(shm).regions == base_regions), usage(shm)
    assert wait_until(lambda: fds() <= base_fds), (fds(), base_fds)

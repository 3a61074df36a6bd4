"""Shared-memory transfers for a client on the server's host.

The server offers a Unix socket (OpenSessionResponse.local_data_socket).
Over it the client registers regions of its own memory: each a memfd sealed
against shrinking, passed as an SCM_RIGHTS file descriptor. The server maps
each region once and registers it with the device, so an upload or download
that names a region (RegionUpload, RegionDownload) moves the array's bytes by
DMA and carries none over gRPC.

Regions are pooled: an upload copies into a free region (with several
threads when large), or reads in place from an array of :meth:`empty_host`;
a download lands in a region that the returned NumPy array then owns, so the
bytes are written once; the region goes back to the pool when that array is
collected. The server unmaps every region when the socket closes.
"""

from __future__ import annotations

import concurrent.futures
import fcntl
import mmap
import os
import socket
import struct
import threading
import weakref
from typing import Dict, List, Optional, Tuple

import grpc
import numpy as np

from ._errors import ResidentError, error_for
from .v1 import resident_pb2 as pb

#: Regions are made in multiples of this (huge-page friendly).
GRANULE = 2 << 20
#: Free regions kept for reuse beyond these are given back to the server.
KEEP_FREE_REGIONS = 8
KEEP_FREE_BYTES = 4 << 30
#: Copies into a region this large use several threads.
PARALLEL_COPY_BYTES = 32 << 20

_LOCAL_HOSTS = ("localhost", "127.", "[::1]", "::1", "unix:", "unix-abstract:")


def target_is_local(target: str) -> bool:
    """Whether a gRPC target names this host (loopback or a Unix socket)."""
    t = target.lower()
    for prefix in ("dns:///", "ipv4:", "ipv6:"):
        if t.startswith(prefix):
            t = t[len(prefix):]
    return t.startswith(_LOCAL_HOSTS)


class Region:
    """One registered memfd, mapped here and on the server."""

    def __init__(self, rid: bytes, mm: mmap.mmap, size: int, pinned: bool) -> None:
        self.id = rid
        self.mm = mm
        self.size = size
        self.pinned = pinned
        self.bytes = np.frombuffer(mm, np.uint8)  # the region as an array (one export)
        self.address = self.bytes.ctypes.data

    def holds(self, a: np.ndarray) -> Optional[int]:
        """The offset of a's memory in this region, if it lies inside."""
        if a.nbytes == 0:
            return None
        start = a.__array_interface__["data"][0]
        if self.address <= start and start + a.nbytes <= self.address + self.size:
            return start - self.address
        return None


def parallel_copy(dst: np.ndarray, src: np.ndarray) -> None:
    """dst[...] = src for flat uint8 arrays, in threads when large (NumPy
    releases the GIL for the copy)."""
    n = src.size
    threads = min(os.cpu_count() or 1, 8)
    if n < PARALLEL_COPY_BYTES or threads < 2:
        np.copyto(dst, src)
        return
    step = -(-n // threads)
    step = -(-step // 4096) * 4096
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda i: np.copyto(dst[i:i + step], src[i:i + step]),
                      range(0, n, step)))


class LocalData:
    """The session's connection to the local data socket and its regions."""

    def __init__(self, path: str, session: bytes, token: Optional[str]) -> None:
        self.path = path
        self.session = session
        self.token = token or ""
        self.lock = threading.Lock()  # one request on the socket at a time
        self.pool_lock = threading.Lock()
        self.free: List[Region] = []
        self.regions: Dict[bytes, Region] = {}
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(path)
        except OSError:
            self.sock.close()
            raise
        self.closed = False

    # --- the socket's protocol ---------------------------------------------------

    def _request(self, req: "pb.LocalDataRequest", fd: Optional[int] = None
                 ) -> "pb.LocalDataResponse":
        req.session = self.session
        if self.token:
            req.token = self.token
        payload = req.SerializeToString()
        frame = struct.pack("<I", len(payload)) + payload
        with self.lock:
            if fd is None:
                self.sock.sendall(frame)
            else:
                socket.send_fds(self.sock, [frame], [fd])
            head = self._recv(4)
            (n,) = struct.unpack("<I", head)
            resp = pb.LocalDataResponse.FromString(self._recv(n))
        if resp.code != 0:
            raise error_for(_CODES.get(resp.code, grpc.StatusCode.UNKNOWN), resp.message)
        return resp

    def _recv(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            piece = self.sock.recv(n - len(out))
            if not piece:
                raise ConnectionError("the server closed the local data socket")
            out += piece
        return bytes(out)

    def register(self, size: int) -> Region:
        size = max(GRANULE, -(-size // GRANULE) * GRANULE)
        fd = os.memfd_create("resident-region", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(fd, size)
            # The server refuses a region that could shrink under it.
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
            mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            resp = self._request(pb.LocalDataRequest(register_bytes=size), fd)
        finally:
            os.close(fd)  # the mapping (and the server's copy) keep the memory
        region = Region(resp.region, mm, size, resp.pinned)
        with self.pool_lock:
            self.regions[region.id] = region
        return region

    def release(self, region: Region) -> None:
        with self.pool_lock:
            self.regions.pop(region.id, None)
        try:
            if not self.closed:
                self._request(pb.LocalDataRequest(release_region=region.id))
        except (OSError, ResidentError):
            pass  # the server drops it with the connection anyway
        del region.bytes
        try:
            region.mm.close()
        except BufferError:
            pass  # a view still exists; the mapping goes with it

    # --- the pool ----------------------------------------------------------------

    def acquire(self, size: int) -> Region:
        """A free region of at least `size` bytes, leased to the caller."""
        with self.pool_lock:
            fits = [r for r in self.free if r.size >= size]
            if fits:
                best = min(fits, key=lambda r: r.size)
                self.free.remove(best)
                return best
        return self.register(size)

    def give_back(self, region: Region) -> None:
        """Back to the pool; the oldest free ones beyond the pool's bounds go."""
        excess: List[Region] = []
        with self.pool_lock:
            if region.id not in self.regions:
                return
            self.free.append(region)
            while (len(self.free) > KEEP_FREE_REGIONS
                   or sum(r.size for r in self.free) > KEEP_FREE_BYTES) and self.free:
                excess.append(self.free.pop(0))
        for r in excess:
            self.release(r)

    def lease(self, region: Region, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """The region's first bytes as a new array that owns the region: it
        returns to the pool once the array and every view of it are gone.
        The flat array's base is a memoryview, not an ndarray, so NumPy
        collapses every later view's base to that flat array and no
        further: it is the one to watch."""
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        flat = np.frombuffer(memoryview(region.mm)[:nbytes], dtype)
        weakref.finalize(flat, _give_back_later, weakref.ref(self), region)
        return flat.reshape(shape)

    def find(self, a: np.ndarray) -> Optional[Tuple[Region, int]]:
        """The region and offset of an array living in one of ours."""
        if not a.flags.c_contiguous:
            return None
        with self.pool_lock:
            for r in self.regions.values():
                off = r.holds(a)
                if off is not None:
                    return r, off
        return None

    def empty(self, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        return self.lease(self.acquire(max(nbytes, 1)), shape, dtype)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.sock.close()  # the server unmaps every region of ours
        except OSError:
            pass
        with self.pool_lock:
            self.free.clear()


def _give_back_later(owner: "weakref.ref[LocalData]", region: Region) -> None:
    local = owner()
    if local is not None and not local.closed:
        local.give_back(region)


_CODES = {c.value[0]: c for c in grpc.StatusCode}

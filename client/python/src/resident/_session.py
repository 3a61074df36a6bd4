"""The connection and session behind a Client: channel, stubs, releases
piggybacked on requests, the lease renewer, flushing recorded programs,
and chunked transfers."""

from __future__ import annotations

import atexit
import collections
import concurrent.futures
import os
import re
import threading
import weakref
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import grpc
import numpy as np

from . import _dtypes
from ._errors import (DataLoss, FailedPrecondition, Internal, ResidentError, error_for,
                      from_rpc_error)
from ._graph import Kind, Node, ScopeBuilder
from ._infer import Meta
from ._local_data import GRANULE, LocalData, parallel_copy, target_is_local
from ._progress import Progress
from .v1 import resident_pb2 as pb
from .v1 import resident_pb2_grpc as pb_grpc

PathOrPem = Union[str, bytes, "os.PathLike[str]"]

#: Queued releases beyond this go out before the next non-Run request too.
RELEASE_BATCH = 256
#: gRPC downloads from this size come over several concurrent streams of
#: byte ranges.
PARALLEL_DOWNLOAD_BYTES = 64 << 20
DOWNLOAD_STREAMS = 4


def _read_pem(value: Optional[PathOrPem], what: str) -> Optional[bytes]:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    try:
        with open(value, "rb") as f:
            return f.read()
    except OSError as e:
        raise FileNotFoundError(f"cannot read {what} {value}: {e.strerror}") from None


def make_channel(target: str, tls: bool, tls_ca: Any, tls_cert: Any, tls_key: Any,
                 tls_server_name: Optional[str]) -> grpc.Channel:
    options: List[Tuple[str, Any]] = [
        ("grpc.max_receive_message_length", -1),  # the server bounds what it sends
        ("grpc.max_send_message_length", -1),
    ]
    use_tls = tls or any(v not in (None, False) for v in (tls_ca, tls_cert, tls_key))
    if not use_tls:
        return grpc.insecure_channel(target, options=options)
    if (tls_cert is None) != (tls_key is None):
        raise ValueError("a client certificate (tls_cert) and its key (tls_key) go together")
    ca = None if tls_ca is True else _read_pem(tls_ca, "CA file")
    creds = grpc.ssl_channel_credentials(
        root_certificates=ca, private_key=_read_pem(tls_key, "key"),
        certificate_chain=_read_pem(tls_cert, "certificate"))
    if tls_server_name:
        options.append(("grpc.ssl_target_name_override", tls_server_name))
    return grpc.secure_channel(target, creds, options=options)


class _Keeper:
    """What the background thread needs, and nothing that keeps the Session
    alive: it renews the lease, sends queued releases, and closes the
    session once the Session is closed or garbage-collected."""

    def __init__(self, channel: grpc.Channel, stub: pb_grpc.ResidentStub, session: bytes,
                 metadata: Sequence[Tuple[str, str]], period_s: Optional[float],
                 close_on_exit: bool) -> None:
        self.channel, self.stub, self.session = channel, stub, session
        self.metadata = tuple(metadata)
        self.period_s = period_s
        self.close_on_exit = close_on_exit
        self.releases: "collections.deque[bytes]" = collections.deque()
        self.closed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="resident-session", daemon=True)
        self._thread.start()

    def take_releases(self) -> List[bytes]:
        out = []
        while True:  # deque.popleft is atomic: no lock that __del__ could contend
            try:
                out.append(self.releases.popleft())
            except IndexError:
                return out

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                self.stub.RenewSession(pb.RenewSessionRequest(session=self.session),
                                       metadata=self.metadata, timeout=self.period_s)
                handles = self.take_releases()
                if handles:
                    self.stub.Run(pb.RunRequest(session=self.session, release=handles),
                                  metadata=self.metadata, timeout=self.period_s)
            except grpc.RpcError:
                pass  # the next call of the user reports what is wrong
        self.releases.clear()  # the whole session goes
        if self.close_on_exit:
            try:
                self.stub.CloseSession(pb.CloseSessionRequest(session=self.session),
                                       metadata=self.metadata, timeout=5)
            except grpc.RpcError:
                pass  # it expires on the server after its idle timeout anyway
        self.channel.close()

    def shutdown(self, wait: bool) -> None:
        """Ends the session; ``wait=False`` from a finalizer (never blocks)."""
        self.closed = True
        self._stop.set()
        if wait and threading.current_thread() is not self._thread:
            self._thread.join(timeout=10)


_live_keepers: "weakref.WeakSet[_Keeper]" = weakref.WeakSet()


@atexit.register
def _close_all_at_exit() -> None:
    # Daemon threads die at exit; close the sessions still open first.
    for k in list(_live_keepers):
        k.shutdown(wait=True)


_INSTRUCTION = re.compile(r"^instruction (\d+) ")


def _with_site(e: ResidentError, builder: ScopeBuilder) -> ResidentError:
    """The server's error about instruction i, naming the line of the
    user's script that recorded it."""
    m = _INSTRUCTION.match(e.details)
    site = builder.site_of_instruction(int(m.group(1))) if m else None
    if site is None:
        return e
    return error_for(e.code, f"{e.details} [recorded at {site[0]}:{site[1]}]", e.request_id)


#: Codes of a program that fails again if sent again unchanged.
_REFUSALS = (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INVALID_ARGUMENT)


def _mark_refused_draws(e: ResidentError, builder: ScopeBuilder) -> None:
    """Marks the random draws a refusal was about: the instruction the
    error names, or, for a program refused whole (over the memory or the
    quota), every draw in it. Their Generators draw on from the state
    before them; an interrupted program (cancelled, past its deadline)
    marks nothing, its draws may simply run again."""
    if e.code not in _REFUSALS:
        return
    m = _INSTRUCTION.match(e.details)
    if m:
        named = builder.node_of_instruction(int(m.group(1)))
        nodes = [named] if named is not None else []
    else:
        nodes = builder.order
    for n in nodes:
        if n.kind is Kind.OP and n.ins is not None and n.ins.op == "random":
            n.refused = e.details


#: Pending nodes a flush examines for held consumers beyond the ones it runs.
_CONSUMER_SCAN_LIMIT = 4096


def _held_consumers(order: Sequence[Node]) -> List[Node]:
    """Held pending single-result ops outside ``order`` that read what it
    computes, directly or through unheld pending ops."""
    seen = {id(n) for n in order}
    extras: List[Node] = []
    frontier = list(order)
    scanned = 0
    while frontier and scanned < _CONSUMER_SCAN_LIMIT:
        n = frontier.pop()
        for ref in n.consumer_refs:
            c = ref()
            if (c is None or id(c) in seen or c.kind is not Kind.OP or c.num_outputs != 1
                    or c.refused is not None):
                continue
            scanned += 1
            seen.add(id(c))
            frontier.append(c)
            if c.has_user():
                extras.append(c)
    return extras


class Session:
    """A session of the server and the channel to it (one per Client)."""

    def __init__(self, target: str, *, token: Optional[str], tls: bool, tls_ca: Any,
                 tls_cert: Any, tls_key: Any, tls_server_name: Optional[str], lazy: bool,
                 keep_alive: bool, close_on_exit: bool, timeout: Optional[float],
                 device: str = "", local_data: bool = True,
                 run_timeout: Optional[float] = None) -> None:
        self.target = target
        self.run_timeout = run_timeout  # each program's deadline, seconds
        self.lazy = lazy
        self.recording_body = 0  # > 0 while a loop body is being recorded
        self.metadata: Tuple[Tuple[str, str], ...] = (
            (("authorization", f"Bearer {token}"),) if token else ())
        self.calls: "collections.Counter[str]" = collections.Counter()
        self.lock = threading.RLock()  # one program is built and sent at a time
        channel = make_channel(target, tls, tls_ca, tls_cert, tls_key, tls_server_name)
        self.stub = pb_grpc.ResidentStub(channel)
        self.admin_stub = pb_grpc.AdminStub(channel)
        try:
            self.describe = self._call("Describe", self.stub.Describe, pb.DescribeRequest(),
                                       timeout=timeout, context=f"cannot reach {target}")
            opened = self._call("OpenSession", self.stub.OpenSession,
                                pb.OpenSessionRequest(device=device), timeout=timeout)
        except BaseException:
            channel.close()
            raise
        self.id: bytes = opened.session
        self.device: str = opened.device  # where the server placed it
        self.idle_timeout_ms = opened.idle_timeout_ms
        chunk = self.describe.chunk_bytes or (1 << 20)
        if self.describe.max_message_bytes:
            chunk = min(chunk, self.describe.max_message_bytes // 2)
        self.chunk_bytes = max(chunk, 1)
        self.local: Optional[LocalData] = None
        #: Uploads and downloads from this size go through shared memory
        #: when the local data path is up.
        self.local_min_bytes = 1 << 20
        self.transport, self.transport_detail = self._open_local_data(
            opened.local_data_socket, token, local_data)
        period = max(self.idle_timeout_ms / 3000.0, 0.01) if keep_alive else None
        self._keeper = _Keeper(channel, self.stub, self.id, self.metadata, period,
                               close_on_exit)
        _live_keepers.add(self._keeper)
        weakref.finalize(self, _Keeper.shutdown, self._keeper, False)

    def _open_local_data(self, path: str, token: Optional[str], wanted: bool) -> Tuple[str, str]:
        """Connects the shared-memory data path when it can; returns the
        transport ("shared-memory" or "grpc") and why."""
        if not wanted:
            return "grpc", "shared memory turned off (connect(local_data=False))"
        if not path:
            return "grpc", "the server offers no local data socket (--local-data-socket off)"
        if not os.path.exists(path):
            where = ("the server is on another host" if not target_is_local(self.target)
                     else "another container or mount namespace?")
            return "grpc", f"the server's local data socket {path} is not visible here ({where})"
        try:
            local = LocalData(path, self.id, token)
        except OSError as e:
            return "grpc", f"cannot connect to the local data socket {path}: {e.strerror or e}"
        try:
            # One region now: proves the server maps our memory for this session.
            local.give_back(local.register(GRANULE))
        except (OSError, ResidentError) as e:
            local.close()
            return "grpc", f"the local data socket {path} refused a region: {e}"
        self.local = local
        pinned = all(r.pinned for r in local.regions.values())
        return "shared-memory", (f"memfd regions over {path}"
                                 + ("" if pinned else " (the device could not pin them)"))

    def close_local_data(self) -> None:
        if self.local is not None:
            self.local.close()
            self.local = None

    # --- calls ---------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._keeper.closed if hasattr(self, "_keeper") else False

    def check_open(self) -> None:
        if self.closed:
            raise FailedPrecondition("the client is closed; its arrays are gone")

    def _call(self, name: str, method: Any, request: Any, timeout: Optional[float] = None,
              context: str = "") -> Any:
        self.calls[name] += 1
        try:
            return method(request, metadata=self.metadata, timeout=timeout)
        except grpc.RpcError as e:
            raise from_rpc_error(e, context) from None

    def call(self, name: str, request: Any, timeout: Optional[float] = None,
             admin: bool = False) -> Any:
        """A unary call of the Resident (or Admin) service by method name."""
        self.check_open()
        stub = self.admin_stub if admin else self.stub
        if name != "Run" and len(self._keeper.releases) >= RELEASE_BATCH:
            self.send_releases()
        return self._call(name, getattr(stub, name), request, timeout)

    def queue_release(self, handle: bytes) -> None:
        if not self.closed:
            self._keeper.releases.append(handle)

    def send_releases(self) -> None:
        handles = self._keeper.take_releases()
        if handles:
            self._call("Run", self.stub.Run, pb.RunRequest(session=self.id, release=handles))

    def close(self) -> None:
        if hasattr(self, "_keeper") and not self._keeper.closed:
            self._keeper.shutdown(wait=True)
        self.close_local_data()

    # --- programs ------------------------------------------------------------

    def flush(self, targets: Sequence[Node], inline: Sequence[Node] = ()) -> Dict[int, np.ndarray]:
        """Runs every pending node the targets need as one program, keeping
        the targets and every node an ndarray still wraps. Returns the data
        of the ``inline`` targets (by id) that came back with the result.

        Held pending arrays that read what the program computes run in it
        too, as an eager library would have run them: in a Python loop that
        tests one value per iteration, the others (CG's x) then never build
        up a history that holds every iteration's arrays on the server. If
        the program fails with them, it runs again without them, so an
        error comes only from what was asked for."""
        self.check_open()
        with self.lock:
            builder, req = self._program(targets)
            if not builder.order:
                return {}
            extras = _held_consumers(builder.order)
            if extras:
                try:
                    wide, wide_req = self._program(list(targets) + extras)
                    return self._send(wide, wide_req, targets, inline, mark_refusals=False)
                except ResidentError as e:
                    # Refused, needing a refused draw, or an extra made in a
                    # loop body still being built: run as asked. Any other
                    # failure (a deadline, the server gone) would fail that too.
                    if e.code not in _REFUSALS and not isinstance(e, FailedPrecondition):
                        raise
            return self._send(builder, req, targets, inline, mark_refusals=True)

    def _program(self, nodes: Sequence[Node]) -> Tuple[ScopeBuilder, "pb.RunRequest"]:
        """The program of every pending node ``nodes`` need."""
        builder = ScopeBuilder(None, 0)
        req = pb.RunRequest(session=self.id)
        builder.build(nodes, req.program)
        return builder, req

    def _send(self, builder: ScopeBuilder, req: "pb.RunRequest", targets: Sequence[Node],
              inline: Sequence[Node], mark_refusals: bool) -> Dict[int, np.ndarray]:
        """Runs ``req`` (built by ``builder``), keeping the targets, held
        nodes and nodes a pending one outside still reads; with
        ``mark_refusals``, a refusal marks the random draws it was about."""
        for n in builder.order:
            if n.refused is not None:
                raise FailedPrecondition(
                    f"this array needs a random draw the server refused ({n.refused}); "
                    "its generator has gone on from the state before that draw")
        target_ids = {id(t) for t in targets}
        inline_ids = {id(t) for t in inline}
        # Consumers inside this program: a node read by more pending
        # nodes than these is still needed by one outside it.
        inside: Dict[int, int] = collections.Counter()
        for n in builder.order:
            for i in n.inputs:
                inside[id(i)] += 1
        kept: List[Node] = []
        for n in builder.order:
            if n.kind is Kind.OP and n.num_outputs != 1:
                continue  # a loop: its outputs are nodes of their own
            if id(n) in target_ids or n.has_user() or n.consumers > inside[id(n)]:
                req.outputs.add(value=builder.value_of(n), keep=True,
                                return_data=id(n) in inline_ids)
                kept.append(n)
        req.release.extend(self._keeper.take_releases())
        try:
            resp = self._call("Run", self.stub.Run, req, timeout=self.run_timeout)
        except ResidentError as e:
            if mark_refusals:
                _mark_refused_draws(e, builder)
            raise _with_site(e, builder) from None
        if len(resp.results) != len(kept):
            raise Internal(f"server returned {len(resp.results)} results for {len(kept)} outputs")
        data: Dict[int, np.ndarray] = {}
        for n, r in zip(kept, resp.results):
            meta = Meta(_dtypes.from_wire(r.array.dtype), tuple(r.array.shape))
            n.materialize(r.array, meta)
            if id(n) in inline_ids:
                data[id(n)] = _from_bytes(r.data, meta)
        return data

    # --- transfers -----------------------------------------------------------

    def upload(self, array: np.ndarray, progress: Optional[bool]) -> Node:
        self.check_open()
        dtype = _dtypes.normalize(array.dtype)
        host = np.asarray(array, dtype=dtype.newbyteorder("<"), order="C")  # keeps 0-d
        flat = host.reshape(-1).view(np.uint8)
        total = flat.size
        if self.local is not None and total >= self.local_min_bytes:
            return _with_bar("upload", total, progress,
                             lambda: self._upload_shared(host, flat, dtype))
        chunk = self.chunk_bytes
        bar = Progress("upload", total, progress)
        header = pb.UploadRequest(session=self.id, dtype=_dtypes.to_wire(dtype),
                                  shape=list(host.shape))

        def messages() -> Iterator[pb.UploadRequest]:
            if total == 0:
                yield header
                return
            for offset in range(0, total, chunk):
                msg = header if offset == 0 else pb.UploadRequest()
                piece = flat[offset:offset + chunk]
                msg.data = piece.tobytes()
                yield msg
                bar.update(piece.size)

        if len(self._keeper.releases) >= RELEASE_BATCH or (self._keeper.releases
                                                           and total >= self.local_min_bytes):
            self.send_releases()  # a large upload may need the memory they hold
        try:
            info = self._call("Upload", self.stub.Upload, messages())
        finally:
            bar.close()
        node = Node(Kind.MATERIALIZED, self)
        node.materialize(info, Meta(_dtypes.from_wire(info.dtype), tuple(info.shape)))
        return node

    def _upload_shared(self, host: np.ndarray, flat: np.ndarray, dtype: np.dtype) -> Node:
        """An upload through a shared-memory region: in place when `host`
        lives in one (empty_host), else copied into a pooled one."""
        assert self.local is not None
        if self._keeper.releases:
            self.send_releases()  # their memory may be what this upload needs
        found = self.local.find(host)
        if found is not None:
            region, offset, own = found[0], found[1], False
        else:
            region, offset, own = self.local.acquire(flat.size), 0, True
        try:
            if own:
                parallel_copy(region.bytes[:flat.size], flat)
            info = self._call("RegionUpload", self.stub.RegionUpload, pb.RegionUploadRequest(
                session=self.id, region=region.id, offset=offset,
                dtype=_dtypes.to_wire(dtype), shape=list(host.shape)))
        finally:
            if own:
                self.local.give_back(region)
        node = Node(Kind.MATERIALIZED, self)
        node.materialize(info, Meta(_dtypes.from_wire(info.dtype), tuple(info.shape)))
        return node

    def _download_shared(self, node: Node, meta: Meta, nbytes: int) -> np.ndarray:
        """A download into a region the returned array then owns."""
        assert self.local is not None
        region = self.local.acquire(nbytes)
        try:
            self._call("RegionDownload", self.stub.RegionDownload, pb.RegionDownloadRequest(
                session=self.id, handle=node.handle, region=region.id, offset=0))
        except BaseException:
            self.local.give_back(region)
            raise
        return self.local.lease(region, meta.shape, meta.dtype.newbyteorder("<"))

    def _download_ranges(self, node: Node, meta: Meta, nbytes: int,
                         progress: Optional[bool]) -> np.ndarray:
        """A large download over gRPC as concurrent streams of byte ranges
        (one stream is bounded by its flow-control window), each written
        into its place."""
        buf = np.empty(nbytes, np.uint8)
        step = -(-nbytes // DOWNLOAD_STREAMS)
        step = -(-step // (1 << 20)) * (1 << 20)
        ranges = [(b, min(b + step, nbytes)) for b in range(0, nbytes, step)]
        bar = Progress("download", nbytes, progress)
        bar_lock = threading.Lock()

        def update(n: int) -> None:
            with bar_lock:
                bar.update(n)

        streams = []
        for b, e in ranges:
            self.calls["Download"] += 1
            streams.append(self.stub.Download(pb.DownloadRequest(
                session=self.id, handle=node.handle, offset=b, length=e - b),
                metadata=self.metadata))
        try:
            with concurrent.futures.ThreadPoolExecutor(len(streams)) as pool:
                done = [pool.submit(_receive_range, st, buf, b, e, update)
                        for st, (b, e) in zip(streams, ranges)]
                for f in done:
                    f.result()
        except grpc.RpcError as e:
            for st in streams:
                st.cancel()
            raise from_rpc_error(e) from None
        except BaseException:
            for st in streams:
                st.cancel()
            raise
        finally:
            bar.close()
        return buf.view(meta.dtype.newbyteorder("<")).astype(meta.dtype, copy=False).reshape(
            meta.shape)

    def empty_host(self, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """A NumPy array in shared memory the server reads in place."""
        self.check_open()
        if self.local is None:
            return np.empty(shape, dtype)
        return self.local.empty(shape, dtype)

    def download(self, node: Node, progress: Optional[bool]) -> np.ndarray:
        self.check_open()
        if not node.handle:
            raise FailedPrecondition("the array was released")
        meta = node.meta
        if meta is not None:
            nbytes = int(np.prod(meta.shape, dtype=np.int64)) * meta.dtype.itemsize
            if (self.local is not None and nbytes >= self.local_min_bytes
                    and meta.dtype.byteorder in "=<|"):
                return _with_bar("download", nbytes, progress,
                                 lambda: self._download_shared(node, meta, nbytes))
            if nbytes >= PARALLEL_DOWNLOAD_BYTES:
                return self._download_ranges(node, meta, nbytes, progress)
        self.calls["Download"] += 1
        stream = self.stub.Download(pb.DownloadRequest(session=self.id, handle=node.handle),
                                    metadata=self.metadata)
        buf: Optional[np.ndarray] = None
        meta: Optional[Meta] = None
        offset = 0
        bar: Optional[Progress] = None
        try:
            for chunk in stream:
                if buf is None:
                    meta = Meta(_dtypes.from_wire(chunk.array.dtype), tuple(chunk.array.shape))
                    nbytes = int(np.prod(meta.shape, dtype=np.int64)) * meta.dtype.itemsize
                    buf = np.empty(nbytes, np.uint8)
                    bar = Progress("download", nbytes, progress)
                piece = chunk.data
                if offset + len(piece) > buf.size:
                    raise DataLoss(f"download carried more than the array's {buf.size} bytes")
                buf[offset:offset + len(piece)] = np.frombuffer(piece, np.uint8)
                offset += len(piece)
                if bar is not None:
                    bar.update(len(piece))
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        finally:
            if bar is not None:
                bar.close()
        if buf is None or meta is None:
            raise DataLoss("download ended before the array's description")
        if offset != buf.size:
            raise DataLoss(f"download carried {offset} bytes, expected {buf.size}")
        return buf.view(meta.dtype.newbyteorder("<")).astype(meta.dtype, copy=False).reshape(
            meta.shape)


def _with_bar(label: str, nbytes: int, progress: Optional[bool], transfer: Any) -> Any:
    """transfer() under a progress bar that fills when it returns (a
    shared-memory transfer is one call)."""
    bar = Progress(label, nbytes, progress)
    try:
        out = transfer()
        bar.update(nbytes)
        return out
    finally:
        bar.close()


def _receive_range(stream: Any, buf: np.ndarray, begin: int, end: int, update: Any) -> None:
    """One Download stream of bytes [begin, end) into buf."""
    offset = begin
    for chunk in stream:
        piece = chunk.data
        if offset + len(piece) > end:
            raise DataLoss(f"a download range carried more than its {end - begin} bytes")
        buf[offset:offset + len(piece)] = np.frombuffer(piece, np.uint8)
        offset += len(piece)
        update(len(piece))
    if offset != end:
        raise DataLoss(f"a download range carried {offset - begin} bytes, expected {end - begin}")


def _from_bytes(data: bytes, meta: Meta) -> np.ndarray:
    want = int(np.prod(meta.shape, dtype=np.int64)) * meta.dtype.itemsize
    if len(data) != want:
        raise DataLoss(f"inline result carried {len(data)} bytes, expected {want}")
    return np.frombuffer(data, meta.dtype.newbyteorder("<")).astype(meta.dtype).reshape(meta.shape)

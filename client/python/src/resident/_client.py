"""resident.Client: a session on a Resident server, and connect()."""

from __future__ import annotations

import operator
import os
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _dtypes
from ._array import ShapeLike, _host_array_error, ndarray, normalize_shape, record
from ._errors import InvalidArgument
from ._graph import Kind, Node, ScopeBuilder
from ._infer import Meta
from ._session import PathOrPem, Session
from .v1 import resident_pb2 as pb

DEFAULT_TARGET = "127.0.0.1:50051"

Carried = Union[ndarray, Sequence[ndarray]]


@dataclass(frozen=True)
class DeviceInfo:
    name: str            # unique: "cpu", "cuda:0", "cpu#1" (a repeat in --device)
    description: str     # e.g. "NVIDIA H200 (sm_90)"
    total_bytes: int
    free_bytes: int
    limit_bytes: int     # the server's --max-memory (per device)
    used_bytes: int      # held by arrays and running programs
    index: int = 0       # what connect(device=...) takes
    kind: str = ""       # "cpu" or "cuda"
    backend: str = ""    # the hardware: "cuda:0" for both of cuda:0,cuda:0
    peer_copies: int = 0      # arrays copied here from another device
    peer_copy_bytes: int = 0


@dataclass(frozen=True)
class ServerInfo:
    server_version: str
    protocol_version: int
    devices: Tuple[DeviceInfo, ...]
    max_inline_bytes: int
    max_message_bytes: int
    chunk_bytes: int

    @property
    def device(self) -> Optional[DeviceInfo]:
        return self.devices[0] if self.devices else None


@dataclass(frozen=True)
class ArrayListing:
    """An array of the tenant as the server lists it."""

    handle: Optional[str]    # 32 hex digits; None for a name no handle is attached to
    name: str                # set for named arrays
    dtype: np.dtype
    shape: Tuple[int, ...]
    nbytes: int


@dataclass(frozen=True)
class SessionListing:
    """A session as an administrator sees it."""

    session: str
    tenant: str
    age_ms: int
    idle_ms: int
    arrays: int
    bytes: int


def _holds_resident(obj: Any) -> bool:
    """Whether a nested list or tuple holds a resident array anywhere."""
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, ndarray):
            return True
        if isinstance(o, (list, tuple)):
            stack.extend(o)
    return False

class Client:
    """A session on a Resident server. Make one with :func:`resident.connect`.

    Arrays made through a client live in its session. ``with client:`` (or
    ``close()``) ends the session and frees all of them on the server; so
    does dropping the client and every array of it.
    """

    def __init__(self, session: Session) -> None:
        self._s = session

    # --- lifetime -------------------------------------------------------------

    def close(self) -> None:
        """Ends the session: the server frees every array of it."""
        self._s.close()

    @property
    def closed(self) -> bool:
        return self._s.closed

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"session {self._s.id.hex()[:16]}"
        return f"resident.Client({self._s.target!r}, {state})"

    @property
    def lazy(self) -> bool:
        return self._s.lazy

    @property
    def session_id(self) -> str:
        return self._s.id.hex()

    @property
    def transport(self) -> str:
        """How array bytes move: ``"shared-memory"`` (memfd regions over the
        server's local data socket: a client on the server's host) or
        ``"grpc"``. :attr:`transport_detail` says why."""
        return self._s.transport

    @property
    def transport_detail(self) -> str:
        """Why :attr:`transport` is what it is: the socket in use, or why
        shared memory could not be used (remote host, socket not visible,
        refused by the server)."""
        return self._s.transport_detail

    def empty_host(self, shape: ShapeLike, dtype: Any = np.float64) -> np.ndarray:
        """A new, uninitialised NumPy array in memory shared with the
        server, so that :meth:`asarray` of it (or of a contiguous part)
        uploads without copying it first. An ordinary NumPy array when the
        transport is ``"grpc"``."""
        dt = _dtypes.normalize(np.dtype(dtype))
        return self._s.empty_host(normalize_shape(shape), dt)

    @property
    def stats(self) -> Dict[str, int]:
        """Requests this client has sent, by method (``{"Run": 3, ...}``)."""
        return dict(self._s.calls)

    # --- creation ---------------------------------------------------------------

    def _creation(self, op: str, ins: "pb.Instruction") -> ndarray:
        self._s.check_open()
        return record(op, [], self._s, ins)

    def ones(self, shape: ShapeLike, dtype: Any = np.float64) -> ndarray:
        """An array of ones (``numpy.ones``)."""
        return self._creation("ones", pb.Instruction(
            shape=list(normalize_shape(shape)), dtype=_dtypes.to_wire(dtype)))

    def zeros(self, shape: ShapeLike, dtype: Any = np.float64) -> ndarray:
        """An array of zeros (``numpy.zeros``)."""
        return self._creation("zeros", pb.Instruction(
            shape=list(normalize_shape(shape)), dtype=_dtypes.to_wire(dtype)))

    def full(self, shape: ShapeLike, fill_value: Any, dtype: Any = None) -> ndarray:
        """An array filled with ``fill_value``; dtype by default as NumPy's
        (bool, int64, float64, or a NumPy scalar's own)."""
        if not _dtypes.is_scalar(fill_value):
            raise TypeError(f"fill_value must be a bool, int or float, not "
                            f"{type(fill_value).__name__}")
        dt = _dtypes.normalize(dtype) if dtype is not None else (
            _dtypes.natural_dtype(fill_value) if isinstance(fill_value, np.generic) else None)
        ins = pb.Instruction(shape=list(normalize_shape(shape)))
        if dt is not None:
            _dtypes.check_fits(fill_value, dt)
            ins.dtype = _dtypes.to_wire(dt)
        _dtypes.set_scalar(fill_value, ins.fill)
        return self._creation("full", ins)

    def arange(self, start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> ndarray:
        """``numpy.arange(start, stop, step)``; ``arange(n)`` is 0..n-1."""
        if stop is None:
            start, stop = 0, start
        for v in (start, stop, step):
            if not _dtypes.is_scalar(v):
                raise TypeError(f"arange bounds must be numbers, not {type(v).__name__}")
        ins = pb.Instruction()
        _dtypes.set_scalar(start, ins.start)
        _dtypes.set_scalar(stop, ins.stop)
        _dtypes.set_scalar(step, ins.step)
        if dtype is None and any(isinstance(v, np.generic) for v in (start, stop, step)):
            dtype = np.result_type(start, stop, step)
        if dtype is not None:
            ins.dtype = _dtypes.to_wire(dtype)
        return self._creation("arange", ins)

    def asarray(self, obj: Any, dtype: Any = None, progress: Optional[bool] = None) -> ndarray:
        """Uploads host data (a NumPy array, a nested list, a scalar) in
        chunks. A resident array of this client is returned as it is (or
        converted, with ``dtype``). ``progress``: a bar on stderr (default:
        for 64 MiB or more when stderr is a terminal)."""
        if isinstance(obj, ndarray):
            if obj._node.session is not self._s:
                raise ValueError("the array belongs to another client")
            return obj if dtype is None or obj.dtype == np.dtype(dtype) else obj.astype(dtype)
        if isinstance(obj, (list, tuple)) and _holds_resident(obj):
            return self._stack_nested(obj, dtype)
        host = np.asarray(obj, dtype=dtype)
        _dtypes.normalize(host.dtype)  # a clear TypeError for unsupported dtypes
        return ndarray._wrap(self._s.upload(host, progress))

    array = asarray

    def _stack_nested(self, obj: Any, dtype: Any) -> ndarray:
        """A nested list holding resident arrays (``[[a[i, j] for ...]]``):
        stacked on the server, level by level, with NumPy's promotion."""
        from ._shape_ops import stack
        parts = [self._stack_nested(o, None) if isinstance(o, (list, tuple)) else
                 o if isinstance(o, ndarray) else self.asarray(o) for o in obj]
        if not parts:
            raise ValueError("asarray: an empty list inside a nested list of arrays")
        out = stack(parts, axis=0)
        return out if dtype is None else out.astype(dtype)

    # --- programs -----------------------------------------------------------------

    def evaluate(self, *arrays: ndarray) -> None:
        """Computes several pending arrays in one program."""
        nodes = [a._node for a in arrays if a._node.kind in (Kind.OP, Kind.LOOP_OUTPUT)]
        if nodes:
            self._s.flush(nodes)

    def loop(self, n: int, carried: Carried,
             body: Callable[[Any], Any]) -> Any:
        """A loop the server runs: ``body(carried)`` gives the next carried
        values; it runs ``n`` times in one program.

        ``carried`` is one array (``body`` then takes and returns one) or a
        sequence of them (``body`` takes and returns a list of as many, each
        of the same dtype and shape as the one it replaces). The body is
        called once, here, to record it; it may use arrays from outside the
        loop (computed once) and Python scalars.

            x = c.loop(1024, x, lambda x: x + x)
        """
        trips = operator.index(n)
        init, params, single, tag = self._loop_params(carried, "loop")
        arg = params[0] if single else list(params)
        nexts = self._record(body, arg, "loop body", None if single else len(init))
        ins = pb.Instruction(op="loop", trip_count=trips)
        builder = ScopeBuilder(tag, len(init))
        yields = [a._node for a in nexts]
        builder.build(yields, ins.body)
        for y in yields:
            ins.body.yields.append(builder.operand(y))
        outs = self._loop_node(ins, init, builder.invariants, yields, 0)
        if single:
            return outs[0]
        return tuple(outs) if isinstance(carried, tuple) else outs

    def while_loop(self, cond: Callable[[Any], Any], body: Callable[[Any], Any],
                   init: Carried, *, max_trips: int, full_output: bool = False) -> Any:
        """A loop the server runs until a condition computed on the device
        fails, in one program: ``while cond(x) and trips < max_trips: x =
        body(x)`` (the shape of ``jax.lax.while_loop``). Returns the final
        carried values; with ``full_output=True`` also the trips taken and
        whether ``max_trips`` stopped it with the condition still true, as
        0-d arrays: ``(x, trips, capped)``.

        ``cond`` takes the carried values (like ``body``) and returns a 0-d
        bool array, e.g. ``lambda s: s[1] > 1e-16``; ``body`` returns the next
        carried values, each of the same dtype and shape. Both are called
        once, here, to record them; they may use arrays from outside the
        loop (computed once) and Python scalars. ``max_trips`` is required
        (at most the server's --max-trip-count).

            x, r = c.while_loop(lambda s: (s[1] * s[1]).sum() > tol**2,
                                step, [x0, r0], max_trips=10_000)
        """
        trips = operator.index(max_trips)
        if trips < 0:
            raise ValueError(f"max_trips must not be negative, not {trips}")
        given = init
        init, params, single, tag = self._loop_params(given, "while_loop")
        arg = params[0] if single else list(params)
        test = self._record(cond, arg, "while_loop cond", None)[0]
        nexts = self._record(body, arg, "while_loop body", None if single else len(init))
        ins = pb.Instruction(op="while", trip_count=trips)
        # Both scopes take every outer array either uses, numbered once.
        scout = ScopeBuilder(tag, len(init))
        scout.build([test._node] + [a._node for a in nexts], pb.Program())
        yields = [a._node for a in nexts]
        for target, out in (([test._node], ins.cond), (yields, ins.body)):
            builder = ScopeBuilder(tag, len(init))
            builder.preset_invariants(scout.invariants)
            builder.build(target, out)
            for y in target:
                out.yields.append(builder.operand(y))
        outs = self._loop_node(ins, init, scout.invariants, yields, 2)
        values = outs[0] if single else (tuple(outs[:len(init)]) if isinstance(given, tuple)
                                         else outs[:len(init)])
        if not full_output:
            return values
        return values, outs[len(init)], outs[len(init) + 1]

    def _loop_params(self, carried: Carried, what: str):
        """The initial values as a list, the body's parameter arrays, whether
        one array (not a list) is carried, and the scope's tag."""
        s = self._s
        s.check_open()
        single = isinstance(carried, ndarray)
        init: List[ndarray] = [carried] if single else list(carried)
        if not init:
            raise ValueError(f"{what} needs at least one carried array")
        for a in init:
            self._check_mine(a, f"{what} carried value")
        tag = object()
        params = [ndarray._wrap(Node(Kind.PARAM, s, a._node.meta, scope=tag, index=i))
                  for i, a in enumerate(init)]
        return init, params, single, tag

    def _record(self, fn: Callable[[Any], Any], arg: Any, what: str,
                count: Optional[int]) -> List[ndarray]:
        """Calls ``fn(arg)`` to record a body: its results, ``count`` of them
        as a list (None: one array, returned alone)."""
        s = self._s
        s.recording_body += 1  # eager clients record a body whole, too
        try:
            result = fn(arg)
        finally:
            s.recording_body -= 1
        if count is None and isinstance(result, ndarray):
            results = [result]
        elif count is not None and isinstance(result, (list, tuple)):
            results = list(result)
            if len(results) != count:
                raise ValueError(f"{what} returned {len(results)} values for {count} "
                                 "carried values")
        else:
            raise TypeError(f"the {what} must return " + (
                "a resident array" if count is None else "a list of resident arrays") +
                f", not {type(result).__name__}")
        for a in results:
            self._check_mine(a, f"{what} result")
        return results

    def _loop_node(self, ins: "pb.Instruction", init: List[ndarray], invariants: List[Node],
                   yields: List[Node], extra: int) -> List[ndarray]:
        """The loop or while op node and its outputs: the carried values,
        then ``extra`` 0-d results (a while's trips and capped)."""
        s = self._s
        loop = Node(Kind.OP, s, None, ins, [a._node for a in init] + invariants,
                    num_outputs=len(init) + extra)
        outs = []
        for i, (a, y) in enumerate(zip(init, yields)):
            meta = a._node.meta if y.meta == a._node.meta else None
            outs.append(ndarray._wrap(Node(Kind.LOOP_OUTPUT, s, meta, inputs=[loop], index=i)))
        for k, dtype in enumerate((np.dtype(np.int64), np.dtype(np.bool_))[:extra]):
            meta = Meta(dtype, ())
            outs.append(ndarray._wrap(Node(Kind.LOOP_OUTPUT, s, meta, inputs=[loop],
                                           index=len(init) + k)))
        loop.outputs = tuple(weakref.ref(o._node) for o in outs)
        if not s.lazy and not s.recording_body:
            s.flush([o._node for o in outs])
        return outs

    def _check_mine(self, a: Any, what: str) -> None:
        if isinstance(a, np.ndarray):
            raise _host_array_error(a)
        if not isinstance(a, ndarray):
            raise TypeError(f"{what} must be a resident array, not {type(a).__name__}")
        if a._node.session is not self._s:
            raise ValueError(f"{what} belongs to another client")

    # --- named arrays and listing ----------------------------------------------------

    def keep(self, array: ndarray, name: str) -> None:
        """Names ``array`` for the tenant beyond this session (and across
        restarts, with the server's --data-dir). Names are 1-128 characters
        of [A-Za-z0-9._-]; a name the tenant already has is AlreadyExists."""
        self._check_mine(array, "keep")
        handle = array._evaluate().handle
        self._s.call("Keep", pb.KeepRequest(session=self._s.id, handle=handle, name=name))

    def attach(self, name: str) -> ndarray:
        """A handle of this session to the tenant's named array (NotFound if
        there is no such name). Dropping the array releases the handle; the
        name stays."""
        info = self._s.call("Attach", pb.AttachRequest(session=self._s.id, name=name))
        node = Node(Kind.MATERIALIZED, self._s)
        node.materialize(info, Meta(_dtypes.from_wire(info.dtype), tuple(info.shape)))
        return ndarray._wrap(node)

    @property
    def device(self) -> str:
        """The name of the server device this session was placed on."""
        return self._s.device

    def copy_to(self, array: ndarray, device: Union[int, str]) -> ndarray:
        """A copy of ``array`` on the server device ``device`` (an index or
        a name, as :meth:`info` lists them), as a new array of this session;
        the original stays. Programs reading an array of another device copy
        it to this session's device first. InvalidArgument for an unknown
        device."""
        self._check_mine(array, "copy_to")
        handle = array._evaluate().handle
        info = self._s.call("Copy", pb.CopyRequest(session=self._s.id, handle=handle,
                                                   device=str(device)))
        node = Node(Kind.MATERIALIZED, self._s)
        node.materialize(info, Meta(_dtypes.from_wire(info.dtype), tuple(info.shape)))
        return ndarray._wrap(node)

    def delete(self, name: str) -> None:
        """Deletes a name of the tenant (NotFound if there is none). Handles
        attached to it stay valid until released."""
        self._s.call("Release", pb.ReleaseRequest(session=self._s.id, names=[name]))

    def ls(self) -> List[ArrayListing]:
        """This tenant's arrays: this session's handles and the named arrays.
        Releases of dropped arrays still queued are sent first, so the list
        does not show them."""
        self._s.send_releases()
        resp = self._s.call("List", pb.ListRequest(session=self._s.id))
        return [ArrayListing(a.handle.hex() or None, a.name, _dtypes.from_wire(a.dtype),
                             tuple(a.shape), a.nbytes) for a in resp.arrays]

    def info(self) -> ServerInfo:
        """The server's version, device(s), memory and transport limits."""
        r = self._s.call("Describe", pb.DescribeRequest(), timeout=10)
        return ServerInfo(r.server_version, r.protocol_version,
                          tuple(DeviceInfo(d.name, d.description, d.total_bytes, d.free_bytes,
                                           d.limit_bytes, d.used_bytes, d.index, d.kind,
                                           d.backend, d.peer_copies, d.peer_copy_bytes)
                                for d in r.devices),
                          r.max_inline_bytes, r.max_message_bytes, r.chunk_bytes)

    # --- administration (admin role) ------------------------------------------------------

    def admin_sessions(self) -> List[SessionListing]:
        """Every session on the server (PermissionDenied without the admin role)."""
        resp = self._s.call("ListSessions", pb.ListSessionsRequest(), admin=True)
        return [SessionListing(x.session.hex(), x.tenant, x.age_ms, x.idle_ms, x.arrays,
                               x.bytes) for x in resp.sessions]

    def admin_close(self, session: str) -> str:
        """Closes any session by id or a unique hex prefix of 8+ digits."""
        resp = self._s.call("CloseSession", pb.AdminCloseSessionRequest(session_hex=session),
                            admin=True)
        return resp.session.hex()


def connect(target: Optional[str] = None, *, token: Optional[str] = None,
            tls_ca: Union[PathOrPem, bool, None] = None, tls_cert: Optional[PathOrPem] = None,
            tls_key: Optional[PathOrPem] = None, tls_server_name: Optional[str] = None,
            tls: bool = False, lazy: bool = True, keep_alive: bool = True,
            close_session: bool = True, timeout: Optional[float] = 10.0,
            device: Union[int, str, None] = None, local_data: bool = True,
            run_timeout: Optional[float] = None) -> Client:
    """Connects to a Resident server and opens a session.

    Args:
        target: ``"host:port"``; default ``$RESIDENT_SERVER`` or 127.0.0.1:50051.
        token: sent as ``authorization: Bearer <token>``; default ``$RESIDENT_TOKEN``.
        tls_ca: PEM file (or bytes) of the CA that signed the server's
            certificate; ``True`` for the system's roots. Any TLS argument
            (or ``tls=True``) turns TLS on.
        tls_cert, tls_key: a client certificate and key, for mutual TLS.
        tls_server_name: the name to verify in the server's certificate
            when it differs from the host in ``target``.
        lazy: record operations and send them as one program when a value
            is needed (default); ``False`` sends each at once.
        keep_alive: renew the session's lease in the background.
        close_session: end the session (freeing its arrays) when the client
            is closed or collected; ``False`` leaves it to the idle timeout.
        timeout: seconds to wait for the server at connection.
        device: the server device for this session's arrays and programs:
            an index or a name from :meth:`Client.info`; default the least
            loaded. InvalidArgument for an unknown one.
        local_data: move array bytes through shared memory when the server
            is on this host and offers its local data socket (default);
            :attr:`Client.transport` says which path was taken and why.
        run_timeout: seconds each program may run (its gRPC deadline);
            past it the server stops the program between ops (a while loop
            between trips) and DeadlineExceeded is raised, nothing kept.
            Default: no limit.

    Raises:
        Unavailable: the server cannot be reached. Unauthenticated: a
        missing or wrong token.
    """
    target = target or os.environ.get("RESIDENT_SERVER") or DEFAULT_TARGET
    if token is None:
        token = os.environ.get("RESIDENT_TOKEN") or None
    return Client(Session(target, token=token, tls=tls, tls_ca=tls_ca, tls_cert=tls_cert,
                          tls_key=tls_key, tls_server_name=tls_server_name, lazy=lazy,
                          keep_alive=keep_alive, close_on_exit=close_session, timeout=timeout,
                          device="" if device is None else str(device),
                          local_data=local_data, run_timeout=run_timeout))

"""resident.ndarray: an array on the server (or recorded, not yet computed),
and the NumPy-like functions that record operations on it."""

from __future__ import annotations

import numbers
import operator
import weakref
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _dtypes
from ._errors import AxisError, FailedPrecondition, InvalidArgument, LinAlgError
from ._graph import Kind, Node
from ._infer import Meta
from ._ops import (ALIASES, BINARY_ELEMENTWISE, COMPARISONS, OPERATORS, OPS,
                   UNARY_ELEMENTWISE, UNARY_OPERATORS)
from .v1 import resident_pb2 as pb

Scalar = Union[bool, int, float, np.generic]
ArrayOrScalar = Union["ndarray", Scalar]
ShapeLike = Union[int, Sequence[int]]


def normalize_shape(shape: Any) -> Tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"a shape is an int or a sequence of ints, not {shape!r}") from None


class ndarray:
    """An array resident on the server, used like ``numpy.ndarray``.

    Arrays are immutable: every operation makes a new one. Operations are
    recorded and sent as one program when a value is needed (``get()``,
    ``item()``, a handle, or metadata the client cannot infer), unless the
    client is eager (``connect(..., lazy=False)``). ``shape``, ``dtype``,
    ``ndim``, ``size`` and ``nbytes`` of a recorded array come from local
    NumPy rules without a request; the server's answer replaces them once
    computed. The server's copy is released when the array is
    garbage-collected (the release rides on the next request).
    """

    __slots__ = ("_node", "__weakref__")
    _node: Node
    # __array_ufunc__ and __array_function__: _protocols.py (np.exp(x) runs
    # on the server; a host NumPy array beside a resident one is refused).

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("make arrays with a client: c.ones(...), c.asarray(numpy_array), ...")

    @classmethod
    def _wrap(cls, node: Node) -> "ndarray":
        obj = object.__new__(cls)
        obj._node = node
        node.user = weakref.ref(obj)
        return obj

    # --- evaluation ------------------------------------------------------------

    def _evaluate(self) -> Node:
        n = self._node
        n.session.check_open()
        if n.kind is Kind.MATERIALIZED:
            if not n.handle:
                raise FailedPrecondition("the array was released")
        elif n.kind is Kind.PARAM:
            raise FailedPrecondition("a loop body's parameter has no value outside the loop")
        else:
            n.session.flush([n])
        return n

    def evaluate(self) -> "ndarray":
        """Computes the array on the server now (one request if pending)."""
        self._evaluate()
        return self

    def _meta(self) -> Meta:
        if self._node.meta is None:
            self._evaluate()
        assert self._node.meta is not None
        return self._node.meta

    # --- metadata ------------------------------------------------------------------

    @property
    def shape(self) -> Tuple[int, ...]:
        return self._meta().shape

    @property
    def dtype(self) -> np.dtype:
        return self._meta().dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def handle(self) -> str:
        """The server's handle, 32 hex digits (computes the array first)."""
        return self._evaluate().handle.hex()

    @property
    def device(self) -> Any:
        """The server device holding the array (the Array API's ``device``)."""
        from ._namespace import Device
        return Device(self._node.session.device)

    def __array_namespace__(self, *, api_version: Optional[str] = None) -> Any:
        """The ``resident`` module: an Array API 2024.12 namespace (in part:
        the README says which functions it has so far)."""
        if api_version not in (None, "2024.12", "2023.12", "2022.12", "2021.12"):
            raise ValueError(f"unsupported Array API version {api_version!r}")
        import resident
        return resident

    @property
    def T(self) -> "ndarray":
        return transpose(self)

    # --- host transfers -------------------------------------------------------------

    def get(self, progress: Optional[bool] = None) -> np.ndarray:
        """The array as a new ``numpy.ndarray``: computes it if pending (a
        small result comes back with the program itself), else downloads it
        in chunks. ``progress``: a bar on stderr (default: for 64 MiB or more
        when stderr is a terminal)."""
        n = self._node
        s = n.session
        limit = s.describe.max_inline_bytes
        if n.kind in (Kind.OP, Kind.LOOP_OUTPUT) and n.meta is not None and limit > 0:
            nbytes = int(np.prod(n.meta.shape, dtype=np.int64)) * n.meta.dtype.itemsize
            if nbytes <= limit:
                s.check_open()
                data = s.flush([n], inline=[n])
                if id(n) in data:
                    return data[id(n)]
        return s.download(self._evaluate(), progress)

    def item(self) -> Union[bool, int, float]:
        """The only element as a Python scalar (ValueError unless size 1)."""
        return self.get().item()

    def release(self) -> None:
        """Frees the server's copy now (later use raises FailedPrecondition)."""
        n = self._node
        if n.kind is not Kind.MATERIALIZED or not n.handle:
            raise FailedPrecondition("the array is not on the server")
        n.session.call("Release", pb.ReleaseRequest(session=n.session.id, handles=[n.handle]))
        n.handle = b""

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("implicit conversion to a NumPy array is not allowed: use .get() "
                        "or resident.asnumpy() (a download)")

    def __float__(self) -> float:
        return float(self.get())

    def __complex__(self) -> complex:
        # Without it complex(x) falls back to __float__, which refuses complex.
        return complex(self.get())

    def __int__(self) -> int:
        return int(self.get())

    def __index__(self) -> int:
        """A 0-d integer array as a Python int (evaluated), as NumPy's: so it
        indexes, slices and repeats like one."""
        if self.dtype.kind not in "iu" or self.ndim != 0:
            raise TypeError("only 0-d integer arrays can be converted to an index")
        return int(self.get())

    def __bool__(self) -> bool:
        return bool(self.get())

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of unsized object")
        return shape[0]

    def __iter__(self) -> Any:
        """Its sub-arrays along the first axis, as NumPy's: each a lazy slice
        (x[0], x[1], ...), so a Python loop over a large array makes one
        program op per element; x.get() downloads it at once."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        n = self._node
        state = {Kind.MATERIALIZED: "on server" if n.handle else "released",
                 Kind.OP: "pending", Kind.LOOP_OUTPUT: "pending", Kind.PARAM: "loop parameter"}
        if n.meta is None:
            return f"resident.ndarray(shape=?, dtype=?, {state[n.kind]})"
        return f"resident.ndarray(shape={n.meta.shape}, dtype={n.meta.dtype}, {state[n.kind]})"

    # --- operations -----------------------------------------------------------------

    def astype(self, dtype: Any, copy: bool = True) -> "ndarray":
        return astype(self, dtype, copy=copy)

    def reshape(self, *shape: Any) -> "ndarray":
        return reshape(self, shape[0] if len(shape) == 1 else shape)

    def transpose(self, *axes: Any) -> "ndarray":
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = tuple(axes[0]) if axes[0] is not None else ()
        return transpose(self, axes or None)

    def dot(self, other: ArrayOrScalar) -> "ndarray":
        return dot(self, other)

    def clip(self, min: ArrayOrScalar = None, max: ArrayOrScalar = None) -> "ndarray":  # noqa: A002
        return clip(self, min, max)

    # Operators (__add__, __radd__, __lt__, __neg__, ...) are generated from
    # _ops.OPERATORS below the class. Like NumPy's, == and != are
    # elementwise, so arrays are unhashable.
    __hash__ = None  # type: ignore[assignment]


def _power_operator(self: ndarray, other: Any) -> Any:
    """``x ** other`` as NumPy's operator computes it: a float or complex
    array to the Python int 2 or -1, or the Python float 0.5, is square,
    reciprocal or sqrt (NumPy's fast_scalar_power; for complex these differ
    from power's own arithmetic, and sqrt(-0.0) is -0.0 where pow gives
    +0.0); anything else is power."""
    if self.dtype.kind in "fc":
        if type(other) is int and other in (2, -1):
            return _unary("square" if other == 2 else "reciprocal", self)
        if type(other) is float and other == 0.5:
            return _unary("sqrt", self)
    return _binary_operator("power", self, other)


def _install_operators() -> None:
    def forward(op: str) -> Callable[[ndarray, Any], Any]:
        if op == "power":
            return _power_operator
        return lambda self, other: _binary_operator(op, self, other)

    def reflected(op: str) -> Callable[[ndarray, Any], Any]:
        return lambda self, other: _binary_operator(op, other, self)

    def unary(op: str) -> Callable[[ndarray], Any]:
        return lambda self: _unary(op, self)

    for dunder, op in OPERATORS.items():
        setattr(ndarray, dunder, forward(op))
        setattr(ndarray, "__r" + dunder[2:], reflected(op))
    for dunder, op in COMPARISONS.items():
        setattr(ndarray, dunder, forward(op))
    for dunder, op in UNARY_OPERATORS.items():
        setattr(ndarray, dunder, unary(op))


# --- recording ------------------------------------------------------------------------


def record(op: str, inputs: Sequence[Node], session: Any,
           ins: Optional["pb.Instruction"] = None) -> ndarray:
    """Records one instruction (or, in eager mode, runs it at once)."""
    spec = OPS[op]
    ins = ins if ins is not None else pb.Instruction()
    ins.op = op
    meta = None
    metas = [i.meta for i in inputs]
    if spec.infer is not None and all(m is not None for m in metas):
        try:
            meta = spec.infer(metas, ins)  # type: ignore[arg-type]
        except (ValueError, TypeError) as e:
            if spec.eager_errors:
                if isinstance(e, LinAlgError):  # numpy.linalg's class, kept
                    raise LinAlgError(f"{op}: {e.details}") from None
                error = AxisError if isinstance(e, IndexError) else InvalidArgument
                raise error(f"{op}: {e}") from None
            meta = None  # invalid: the server's error surfaces when it is evaluated
    node = Node(Kind.OP, session, meta, ins, inputs)
    array = ndarray._wrap(node)
    if not session.lazy and not session.recording_body:
        session.flush([node])
    return array


def record_many(op: str, inputs: Sequence[Node], session: Any, ins: "pb.Instruction",
                metas: Sequence[Optional[Meta]]) -> List[ndarray]:
    """Records one instruction of several results (qr, svd, eigh, slogdet,
    random), each its own array: value ``i`` of the instruction."""
    ins.op = op
    node = Node(Kind.OP, session, None, ins, inputs, num_outputs=len(metas))
    outs = [ndarray._wrap(Node(Kind.LOOP_OUTPUT, session, meta, inputs=[node], index=i))
            for i, meta in enumerate(metas)]
    node.outputs = tuple(weakref.ref(o._node) for o in outs)
    if not session.lazy and not session.recording_body:
        session.flush([o._node for o in outs])
    return outs


def _host_array_error(value: Any) -> TypeError:
    return TypeError(f"a {type(value).__module__}.{type(value).__name__} does not mix with "
                     "resident arrays implicitly: upload it with client.asarray() first")


def _scalar_node(value: Any, like: ndarray) -> Node:
    """A Python or NumPy scalar next to ``like``, as a 0-d array of the dtype
    NumPy 2 would give the pair (Python scalars are 'weak': x_f32 * 2.0
    stays float32)."""
    dtype = _dtypes.normalize(np.result_type(like.dtype, value))
    _dtypes.check_fits(value, dtype)
    ins = pb.Instruction(op="full", dtype=_dtypes.to_wire(dtype))
    _dtypes.set_scalar(value, ins.fill, dtype)
    return Node(Kind.OP, like._node.session, Meta(dtype, ()), ins)


#: Ops whose Python-scalar operands go on the wire as weak scalars (the
#: server applies NEP 50); others get a 0-d array.
_WEAK_SCALAR_OPS = frozenset(BINARY_ELEMENTWISE + UNARY_ELEMENTWISE + ("where", "clip"))


def _weak_scalar_node(value: Any, like: ndarray) -> Node:
    """A Python bool/int/float/complex as its op's inline scalar operand. Its meta
    carries the value itself, so the local rule asks NumPy with the scalar
    (NEP 50)."""
    if isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**63:
        raise OverflowError("Python int too large to convert to C long")  # NumPy's words
    node = Node(Kind.SCALAR, like._node.session, Meta(value, ()))  # type: ignore[arg-type]
    node.scalar = pb.Scalar()
    _dtypes.set_scalar(value, node.scalar)
    return node


def _scalar_operand(op: str, value: Any, like: ndarray) -> Node:
    # np.float64 subclasses float but is a NumPy scalar: strong, as in NumPy.
    if (op in _WEAK_SCALAR_OPS and isinstance(value, (bool, int, float, complex))
            and not isinstance(value, np.generic)):
        return _weak_scalar_node(value, like)
    return _scalar_node(value, like)


def _operands(op: str, a: Any, b: Any) -> List[Node]:
    arrays = [x for x in (a, b) if isinstance(x, ndarray)]
    if not arrays:
        raise TypeError(f"{op} needs at least one resident array")
    if len(arrays) == 2 and a._node.session is not b._node.session:
        raise ValueError(f"{op}: the arrays belong to different clients")
    nodes = []
    for x in (a, b):
        if isinstance(x, ndarray):
            nodes.append(x._node)
        elif isinstance(x, (np.ndarray, list, tuple)):
            raise _host_array_error(x)
        elif _dtypes.is_scalar(x):
            nodes.append(_scalar_operand(op, x, arrays[0]))
        else:
            raise TypeError(f"{op}: unsupported operand of type {type(x).__name__}")
    return nodes


def _binary(op: str, a: ArrayOrScalar, b: ArrayOrScalar) -> ndarray:
    if (op == "power" and isinstance(a, ndarray) and a.dtype.kind in "biu"
            and isinstance(b, numbers.Integral) and not isinstance(b, (bool, np.bool_))
            and int(b) < 0):
        raise ValueError("Integers to negative integer powers are not allowed.")
    nodes = _operands(op, a, b)
    return record(op, nodes, nodes[0].session)


def _binary_operator(op: str, a: Any, b: Any) -> Any:
    other = b if isinstance(a, ndarray) else a
    if not isinstance(other, (ndarray, np.ndarray, list, tuple)) and not _dtypes.is_scalar(other):
        return NotImplemented
    return _binary(op, a, b)


def _unary(op: str, a: ndarray, ins: Optional["pb.Instruction"] = None) -> ndarray:
    if not isinstance(a, ndarray):
        if isinstance(a, np.ndarray):
            raise _host_array_error(a)
        raise TypeError(f"{op} needs a resident array, got {type(a).__name__}")
    return record(op, [a._node], a._node.session, ins)


def where(cond: ndarray, a: ArrayOrScalar, b: ArrayOrScalar) -> ndarray:
    """numpy.where(cond, a, b): a where cond is true (non-zero), else b."""
    return _ternary("where", cond, a, b)


def clip(a: ndarray, min: ArrayOrScalar = None, max: ArrayOrScalar = None) -> ndarray:  # noqa: A002
    """numpy.clip(a, min, max) (the standard's names; NumPy's a_min/a_max
    positions): NaN bounds propagate; min > max gives max. As
    NumPy 2's np.clip, a Python int bound at or past an integer array's
    range is dropped (so it neither clamps nor overflows), and None drops a
    bound."""
    lo, hi = min, max
    if isinstance(a, ndarray) and np.dtype(a.dtype).kind in "iu":
        info = np.iinfo(a.dtype)
        if type(lo) is int and lo <= info.min:
            lo = None
        if type(hi) is int and hi >= info.max:
            hi = None
    if lo is None and hi is None:
        return a  # arrays are immutable: the identity needs no copy
    if lo is None:
        return _binary("minimum", a, hi)
    if hi is None:
        return _binary("maximum", a, lo)
    return _ternary("clip", a, lo, hi)


def _ternary(op: str, first: ndarray, x: ArrayOrScalar, y: ArrayOrScalar) -> ndarray:
    if not isinstance(first, ndarray):
        if isinstance(first, np.ndarray):
            raise _host_array_error(first)
        raise TypeError(f"{op} needs a resident array first, got {type(first).__name__}")
    session = first._node.session
    like = next((v for v in (x, y) if isinstance(v, ndarray)), first)
    nodes = [first._node]
    for v in (x, y):
        if isinstance(v, ndarray):
            if v._node.session is not session:
                raise ValueError(f"{op}: the arrays belong to different clients")
            nodes.append(v._node)
        elif isinstance(v, (np.ndarray, list, tuple)):
            raise _host_array_error(v)
        elif _dtypes.is_scalar(v):
            nodes.append(_scalar_operand(op, v, like))
        else:
            raise TypeError(f"{op}: unsupported operand of type {type(v).__name__}")
    return record(op, nodes, session)


def _binary_function(op: str, doc: str) -> Callable[[ArrayOrScalar, ArrayOrScalar], ndarray]:
    def f(a: ArrayOrScalar, b: ArrayOrScalar) -> ndarray:
        return _binary(op, a, b)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return f


def _unary_function(op: str, doc: str) -> Callable[[ndarray], ndarray]:
    def f(a: ndarray) -> ndarray:
        return _unary(op, a)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return f


# --- the NumPy-like functions ------------------------------------------------------------

# One function per elementwise ufunc of the server's table (numpy.<name>'s
# semantics, arrays or scalars for binary ones), plus NumPy's aliases.
for _name in BINARY_ELEMENTWISE:
    globals()[_name] = _binary_function(_name, f"numpy.{_name}, elementwise, on the server.")
for _name in UNARY_ELEMENTWISE:
    globals()[_name] = _unary_function(_name, f"numpy.{_name}, elementwise, on the server.")
for _alias, _name in ALIASES.items():
    globals()[_alias] = globals()[_name]
ELEMENTWISE_FUNCTIONS = BINARY_ELEMENTWISE + UNARY_ELEMENTWISE + tuple(ALIASES)
_install_operators()
dot = _binary_function("dot", "numpy.dot for 0-D, 1-D and 2-D operands.")
matmul = _binary_function("matmul", "numpy.matmul: matrix products, broadcasting stacks.")


def reshape(a: ndarray, /, shape: ShapeLike, *, copy: Optional[bool] = None) -> ndarray:
    """The same elements in a new shape (one dimension may be -1). Arrays
    are immutable on the server, so ``copy`` (the Array API's) changes
    nothing: a reshape never shares data a later write could change."""
    return _unary("reshape", a, pb.Instruction(shape=list(normalize_shape(shape))))


def transpose(a: ndarray, axes: Optional[Sequence[int]] = None) -> ndarray:
    """Permutes the axes (default: reverses them)."""
    ins = pb.Instruction(axes=[operator.index(x) for x in axes] if axes else [])
    return _unary("transpose", a, ins)


def astype(a: ndarray, dtype: Any, /, *, copy: bool = True, device: Any = None) -> ndarray:
    """A copy converted to ``dtype`` (float to int truncates, as in NumPy).
    With ``copy=False`` an array already of ``dtype`` is returned itself
    (arrays are immutable, so a copy would never differ). ``device`` must be
    the array's own (a transfer is ``to_device``)."""
    if device is not None and device != a.device:
        raise ValueError(f"astype cannot move an array from {a.device} to {device}; "
                         "use to_device")
    if not copy and _dtypes.normalize(np.dtype(dtype)) == a.dtype:
        return a
    return _unary("astype", a, pb.Instruction(dtype=_dtypes.to_wire(dtype)))


def asnumpy(a: Any, progress: Optional[bool] = None) -> np.ndarray:
    """``a`` as a NumPy array: downloads a resident array, passes NumPy data
    through (like ``cupy.asnumpy``)."""
    if isinstance(a, ndarray):
        return a.get(progress=progress)
    return np.asarray(a)

"""Local dtype and shape rules, so ``x.shape`` and ``x.dtype`` of a recorded
array need no round trip.

They mirror the server's (server/program/infer.cc), which follow NumPy; the
dtypes come from NumPy itself, asked on 0-d arrays. The server stays the
authority: when it answers, its dtype and shape replace these. A rule that
raises (an invalid program) leaves the metadata unknown, so asking for it
sends the program and raises the server's error.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, NamedTuple, Sequence, Tuple

import numpy as np

from . import _dtypes
from .v1 import resident_pb2 as pb


class Meta(NamedTuple):
    dtype: np.dtype
    shape: Tuple[int, ...]


Rule = Callable[[Sequence[Meta], "pb.Instruction"], Meta]

_ufunc_cache: Dict[tuple, np.dtype] = {}


def ufunc_dtype(name: str, *dtypes: Any) -> np.dtype:
    """The dtype NumPy's ufunc ``name`` gives for arrays of these dtypes; a
    Python scalar in place of a dtype is passed as itself (weak, NEP 50:
    OverflowError for an int out of an integer array's range, as NumPy).
    real and imag are NumPy functions, not ufuncs: the same probe works."""
    if not all(isinstance(d, np.dtype) for d in dtypes):
        with np.errstate(all="ignore"):
            args = [np.zeros((), d) if isinstance(d, np.dtype) else d for d in dtypes]
            return np.asarray(getattr(np, name)(*args)).dtype
    key = (name,) + dtypes
    dt = _ufunc_cache.get(key)
    if dt is None:
        with np.errstate(all="ignore"):
            dt = getattr(np, name)(*(np.zeros((), d) for d in dtypes)).dtype
        _ufunc_cache[key] = dt
    return dt


def _check_shape(shape: Sequence[int]) -> Tuple[int, ...]:
    out = tuple(int(d) for d in shape)
    if any(d < 0 for d in out):
        raise ValueError("negative dimensions are not allowed")
    return out


def _wire_dtype(ins: "pb.Instruction", default: np.dtype) -> np.dtype:
    return _dtypes.from_wire(ins.dtype) if ins.dtype else default


def creation(_ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    """ones, zeros: dtype default float64."""
    return Meta(_wire_dtype(ins, np.dtype(np.float64)), _check_shape(ins.shape))


def full(_ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    kind = ins.fill.WhichOneof("value")
    default = {"bool_value": np.bool_, "int_value": np.int64, "float_value": np.float64,
               "complex_value": np.complex128}
    if kind is None:
        raise ValueError("full needs a fill value")
    return Meta(_wire_dtype(ins, np.dtype(default[kind])), _check_shape(ins.shape))


def _scalar(s: "pb.Scalar", default):
    kind = s.WhichOneof("value")
    return default if kind is None else getattr(s, kind)


def arange(_ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    start, stop, step = _scalar(ins.start, 0), _scalar(ins.stop, None), _scalar(ins.step, 1)
    if stop is None:
        raise ValueError("arange needs stop")
    floating = any(isinstance(v, float) for v in (start, stop, step))
    dtype = _wire_dtype(ins, np.dtype(np.float64 if floating else np.int64))
    if not floating:
        if step == 0:
            raise ValueError("arange: step must not be zero")
        n = len(range(int(start), int(stop), int(step)))
    else:
        if step == 0 or math.isnan(step):
            raise ValueError("arange: step must not be zero")
        n = max(0, math.ceil((float(stop) - float(start)) / float(step)))
    if dtype == np.bool_ and n > 2:
        raise ValueError("arange: no fill-function for data-type bool beyond 2 elements")
    if dtype.kind in "iu":  # NumPy 2 stores the first two as Python ints: each must fit
        first = int(start)
        second = int(start) + int(step) if not floating else int(float(start) + float(step))
        for value in (first, second)[:min(n, 2)]:
            _dtypes.check_fits(value, dtype)
    return Meta(dtype, (n,))


def elementwise(name: str) -> Rule:
    """A NumPy ufunc's rule: broadcasting, and the ufunc's own dtype."""
    def rule(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
        dt = ufunc_dtype(name, *(o.dtype for o in ops))  # TypeError: e.g. bool - bool
        dt = _dtypes.normalize(dt)  # TypeError: NumPy's float16 for sqrt(bool), say
        shape = np.broadcast_shapes(*(o.shape for o in ops)) if len(ops) > 1 else ops[0].shape
        return Meta(dt, tuple(shape))
    return rule


def _probe(m: Meta) -> Any:
    """A 0-d NumPy stand-in for an operand (a weak scalar stays itself)."""
    return np.zeros((), m.dtype) if isinstance(m.dtype, np.dtype) else m.dtype


def _shape(ops: Sequence[Meta]) -> Tuple[int, ...]:
    return tuple(np.broadcast_shapes(*(o.shape for o in ops)))


def where(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    """numpy.where: a and b promoted (NEP 50 for scalars), shapes broadcast."""
    with np.errstate(all="ignore"):
        dt = np.where(np.zeros((), bool), _probe(ops[1]), _probe(ops[2])).dtype
    return Meta(_dtypes.normalize(dt), _shape(ops))


def clip(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    """numpy.clip: a, lo and hi promoted (NEP 50 for scalars)."""
    with np.errstate(all="ignore"):
        dt = np.clip(*(_probe(o) for o in ops)).dtype
    return Meta(_dtypes.normalize(dt), _shape(ops))


def dot(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    a, b = ops
    dt = np.result_type(a.dtype, b.dtype)
    if not a.shape or not b.shape:
        return Meta(dt, tuple(np.broadcast_shapes(a.shape, b.shape)))
    if len(a.shape) > 2 or len(b.shape) > 2:
        raise ValueError("dot supports 0-D, 1-D and 2-D operands")
    kb = b.shape[0] if len(b.shape) == 1 else b.shape[-2]
    if a.shape[-1] != kb:
        raise ValueError("shapes not aligned")
    out = (a.shape[0],) if len(a.shape) == 2 else ()
    return Meta(dt, out + ((b.shape[1],) if len(b.shape) == 2 else ()))


def matmul(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    a, b = ops
    if not a.shape or not b.shape:
        raise ValueError("matmul of a 0-d operand")
    sa = ((1,) + a.shape) if len(a.shape) == 1 else a.shape
    sb = (b.shape + (1,)) if len(b.shape) == 1 else b.shape
    if sa[-1] != sb[-2]:
        raise ValueError("matmul core dimensions differ")
    out = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    if len(a.shape) > 1:
        out += (sa[-2],)
    if len(b.shape) > 1:
        out += (sb[-1],)
    return Meta(np.result_type(a.dtype, b.dtype), out)


def reshape(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    (a,) = ops
    size = math.prod(a.shape)
    to = list(ins.shape)
    if to.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if any(d < -1 for d in to):
        raise ValueError(f"negative dimensions not allowed: {tuple(to)}")
    known = math.prod(d for d in to if d != -1)
    if (-1 in to and (known == 0 or size % known)) or (-1 not in to and known != size):
        raise ValueError(f"cannot reshape array of size {size} into shape {tuple(to)}")
    if -1 in to:
        to[to.index(-1)] = size // known
    return Meta(a.dtype, tuple(to))


def transpose(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    (a,) = ops
    rank = len(a.shape)
    axes = list(ins.axes) or list(range(rank))[::-1]
    if len(axes) != rank or any(not -rank <= x < rank for x in axes):
        raise ValueError(f"axes {tuple(axes)} don't match an array of dimension {rank}")
    axes = [x % rank for x in axes]
    if len(set(axes)) != rank:
        raise ValueError("repeated axis in transpose")
    return Meta(a.dtype, tuple(a.shape[x] for x in axes))


def astype(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    return Meta(_dtypes.from_wire(ins.dtype), ops[0].shape)

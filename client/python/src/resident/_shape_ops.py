"""Reductions over axis sets and the shaping ops, with NumPy's names and
keyword arguments: ``rs.sum(x, axis=(0, 2), keepdims=True)``,
``x.max(axis=-1)``, ``x[1:, ::-2]``, ``rs.concatenate([a, b], axis=1)``,
``rs.stack``, ``rs.broadcast_to``, ``rs.squeeze``, ``rs.expand_dims``.

Basic indexing (``x[1:, ::-2]``, ``x[0]``, ``x[..., None]``) returns a copy,
not a view: arrays are immutable, so the difference shows only in memory
use. ``squeeze`` and ``expand_dims`` share
the data; ``broadcast_to`` is a copy.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any, List, Optional, Sequence, Union

import numpy as np

from . import _dtypes
from ._array import _host_array_error, _unary, ndarray, normalize_shape, record
from .v1 import resident_pb2 as pb

Axis = Union[None, int, Sequence[int]]


def _set_axis(ins: "pb.Instruction", axis: Axis) -> None:
    if axis is None:
        return
    if isinstance(axis, (int, np.integer)):
        ins.has_axis = True
        ins.axis = operator.index(axis)
    else:
        ins.has_axes = True
        ins.axes.extend(operator.index(a) for a in axis)


def _reduction(op: str, doc: str):
    def f(a: ndarray, axis: Axis = None, keepdims: bool = False) -> ndarray:
        ins = pb.Instruction(keepdims=bool(keepdims))
        _set_axis(ins, axis)
        return _unary(op, a, ins)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return f


def _with_dtype(op: str, doc: str):
    """sum and prod with NumPy's ``dtype=``: the operand converted to it,
    reduced, and the result kept in it (an integer dtype wraps as NumPy's
    accumulation in it does)."""
    plain = _reduction(op, doc)

    def f(a: ndarray, axis: Axis = None, dtype: Any = None, keepdims: bool = False) -> ndarray:
        if dtype is None:
            return plain(a, axis, keepdims)
        dtype = _dtypes.normalize(np.dtype(dtype))
        out = plain(a if a.dtype == dtype else a.astype(dtype), axis, keepdims)
        return out if out.dtype == dtype else out.astype(dtype)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return f


sum = _with_dtype(  # noqa: A001
    "sum", "Sum over axis (None: all; int or tuple). bool and int32 give int64.")
prod = _with_dtype("prod", "Product over axis. bool and int32 give int64; empty products are 1.")
mean = _reduction("mean", "Mean over axis; integers give float64, an empty mean NaN.")
max = _reduction("max", "Maximum over axis; NaN propagates; empty is an error.")  # noqa: A001
min = _reduction("min", "Minimum over axis; NaN propagates; empty is an error.")  # noqa: A001
any = _reduction("any", "Whether any element over axis is nonzero.")  # noqa: A001
all = _reduction("all", "Whether every element over axis is nonzero.")  # noqa: A001


def _arg(op: str, doc: str):
    def f(a: ndarray, axis: Optional[int] = None, keepdims: bool = False) -> ndarray:
        if axis is not None and not isinstance(axis, (int, np.integer)):
            raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer")
        ins = pb.Instruction(keepdims=bool(keepdims))
        _set_axis(ins, axis)
        return _unary(op, a, ins)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = doc
    return f


argmax = _arg("argmax", "int64 index of the first maximum (first NaN) along axis, or flat.")
argmin = _arg("argmin", "int64 index of the first minimum (first NaN) along axis, or flat.")


def _nodes(op: str, arrays: Sequence[ndarray]) -> List[Any]:
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"need at least one array to {op}")
    for x in arrays:
        if isinstance(x, np.ndarray):
            raise _host_array_error(x)
        if not isinstance(x, ndarray):
            raise TypeError(f"{op} needs resident arrays, got {type(x).__name__}")
        if x._node.session is not arrays[0]._node.session:
            raise ValueError(f"{op}: the arrays belong to different clients")
    return [x._node for x in arrays]


def concatenate(arrays: Sequence[ndarray], axis: Optional[int] = 0) -> ndarray:
    """numpy.concatenate (axis=None joins the flattened arrays), promoted dtype."""
    nodes = _nodes("concatenate", arrays)
    ins = pb.Instruction()
    _set_axis(ins, None if axis is None else operator.index(axis))
    return record("concatenate", nodes, nodes[0].session, ins)


def stack(arrays: Sequence[ndarray], axis: int = 0) -> ndarray:
    """numpy.stack: arrays of one shape joined along a new axis."""
    nodes = _nodes("stack", arrays)
    ins = pb.Instruction(has_axis=True, axis=operator.index(axis))
    return record("stack", nodes, nodes[0].session, ins)


def broadcast_to(a: ndarray, shape: Any) -> ndarray:
    """A copy of ``a`` broadcast to ``shape`` (NumPy gives a read-only view)."""
    return _unary("broadcast_to", a, pb.Instruction(shape=list(normalize_shape(shape))))


def squeeze(a: ndarray, axis: Axis = None) -> ndarray:
    """Drops length-1 axes (all of them, or those named; others are an error)."""
    ins = pb.Instruction()
    _set_axis(ins, axis)
    return _unary("squeeze", a, ins)


def expand_dims(a: ndarray, axis: Union[int, Sequence[int]]) -> ndarray:
    """Inserts length-1 axes at ``axis`` (an int or a tuple)."""
    ins = pb.Instruction()
    _set_axis(ins, axis)
    return _unary("expand_dims", a, ins)


def _getitem(self: ndarray, key: Any) -> ndarray:
    """NumPy's basic indexing: slices (a copy), integers (that axis dropped),
    ``...`` and ``None`` (a new axis); one integer index array or boolean
    mask goes to _indexing.py."""
    key = key if isinstance(key, tuple) else (key,)
    # A 0-d integer array indexes as its int (evaluated), as in NumPy.
    # A Python bool is a 0-d mask (a new axis of length 1 or 0).
    key = tuple(operator.index(k) if isinstance(k, ndarray) and k.ndim == 0 and
                k.dtype.kind in "iu" else np.asarray(k) if isinstance(k, (bool, np.bool_))
                else k for k in key)
    from . import _indexing
    if builtins.any(_indexing._is_advanced(k) for k in key):
        return _indexing.getitem_advanced(self, key)
    for k in key:
        if not (k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))) \
                or isinstance(k, (bool, np.bool_)):
            raise TypeError("resident arrays take slices, integers, ..., None and one index "
                            f"array or mask, not {type(k).__name__}")
    if builtins.sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    indexed = [k for k in key if k is not None and k is not Ellipsis]
    simple = builtins.all(isinstance(k, slice) for k in indexed) and len(indexed) == len(key)
    shape = None if simple else self.shape  # ints and ... need the rank
    if shape is not None:
        if len(indexed) > len(shape):
            raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
                             f"but {len(indexed)} were indexed")
        if Ellipsis in key:
            at = key.index(Ellipsis)
            fill = (slice(None),) * (len(shape) - len(indexed))
            key = key[:at] + fill + key[at + 1:]
    ins = pb.Instruction()
    dropped: List[int] = []   # input axes an integer removes
    new_axes: List[int] = []  # result positions of None
    axis = pos = 0
    for k in key:
        if k is None:
            new_axes.append(pos)
            pos += 1
            continue
        r = ins.slices.add()
        if isinstance(k, slice):
            for name in ("start", "stop", "step"):
                v = getattr(k, name)
                if v is not None:
                    setattr(r, "has_" + name, True)
                    setattr(r, name, operator.index(v))
            pos += 1
        else:
            i = operator.index(k)
            n = shape[axis]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            i %= n
            r.has_start, r.start, r.has_stop, r.stop = True, i, True, i + 1
            dropped.append(axis)
        axis += 1
    out = _unary("slice", self, ins) if len(ins.slices) else self
    if dropped:
        out = squeeze(out, axis=tuple(dropped))
    if new_axes:
        out = expand_dims(out, tuple(new_axes))
    return out


# ndarray's methods of the same names (numpy.ndarray's signatures).
for _f in (sum, prod, mean, max, min, any, all, argmax, argmin, squeeze):
    setattr(ndarray, _f.__name__, _f)
ndarray.__getitem__ = _getitem  # type: ignore[method-assign]


def _setitem(self: ndarray, key: Any, value: Any) -> None:
    from . import _indexing
    _indexing.setitem(self, key, value)


ndarray.__setitem__ = _setitem  # type: ignore[method-assign]
del _f

"""Sorting, gathering along an axis and cumulative sums, on the server:
the Array API's ``sort``, ``argsort`` (stable; ``descending`` as the
standard defines it), ``take_along_axis``, ``cumulative_sum`` and
``cumulative_prod``, and NumPy's ``cumsum``/``cumprod``. NumPy's order:
NaNs last, -0.0 equal to +0.0, equal elements in their order.
"""

from __future__ import annotations

import operator
from typing import Any, Optional

import numpy as np

from . import _dtypes
from ._array import _unary, ndarray, record
from ._composed import ones_like, zeros_like
from ._shape_ops import concatenate
from .v1 import resident_pb2 as pb


def _axis_ins(axis: Optional[int], **fields: Any) -> "pb.Instruction":
    ins = pb.Instruction(**fields)
    if axis is not None:
        ins.has_axis = True
        ins.axis = operator.index(axis)
    return ins


def argsort(x: ndarray, /, *, axis: int = -1, descending: bool = False,
            stable: bool = True) -> ndarray:
    """int64 indices that sort ``x`` along ``axis``; always stable."""
    return _unary("argsort", x, _axis_ins(axis, descending=bool(descending)))


def sort(x: ndarray, /, *, axis: int = -1, descending: bool = False,
         stable: bool = True) -> ndarray:
    """A sorted copy of ``x`` along ``axis``; always stable."""
    return _unary("sort", x, _axis_ins(axis, descending=bool(descending)))


def take_along_axis(x: ndarray, indices: ndarray, /, *, axis: int = -1) -> ndarray:
    """numpy.take_along_axis: ``x`` gathered at ``indices`` along ``axis``
    (other axes broadcast; an index out of range is an error)."""
    if not isinstance(indices, ndarray) or not isinstance(x, ndarray):
        raise TypeError("take_along_axis needs resident arrays")
    return record("take_along_axis", [x._node, indices._node], x._node.session,
                  _axis_ins(axis))


def searchsorted(x1: ndarray, x2: Any, /, *, side: str = "left", sorter: Any = None) -> ndarray:
    """int64 insertion points of ``x2``'s elements in the sorted 1-D ``x1``
    (numpy.searchsorted; NaNs after every number). One stable argsort of
    x1 and x2 joined (x2 first for side="left", so it precedes equal
    elements of x1; last for "right") gives each x2 element's place among
    both; less its rank among x2 alone, that is how many x1 elements precede
    it."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', not {side!r}")
    if not isinstance(x1, ndarray) or x1.ndim != 1:
        raise ValueError("searchsorted: x1 must be a 1-D resident array")
    if sorter is not None:
        x1 = take(x1, sorter)
    if not isinstance(x2, ndarray):  # host values: uploaded to x1's client
        from ._indexing import _upload_like
        x2 = _upload_like(x1, np.asarray(x2))
    shape = x2.shape
    v = x2.reshape(-1)
    m = v.shape[0]
    if m == 0 or x1.shape[0] == 0:
        from ._composed import zeros_like
        return zeros_like(v, dtype=np.int64).reshape(shape)
    joined = concatenate([v, x1] if side == "left" else [x1, v])
    place = argsort(argsort(joined))  # each element's position in the sorted join
    mine = place[:m] if side == "left" else place[x1.shape[0]:]
    rank = argsort(argsort(v))
    from ._array import subtract
    return subtract(mine, rank).reshape(shape)


def take(x: ndarray, indices: ndarray, /, *, axis: Optional[int] = None) -> ndarray:
    """numpy.take / the standard's take with 1-D indices: the elements at
    ``indices`` along ``axis`` (the flattened array when None), a gather
    with the indices broadcast over the other axes."""
    if not isinstance(indices, ndarray):
        raise TypeError("take needs resident indices (upload them with asarray)")
    if indices.ndim != 1:
        raise ValueError(f"take: indices must be 1-D, got {indices.ndim} dimensions")
    if axis is None:
        if x.ndim != 1:
            x = x.reshape(-1)
        axis = 0
    if x.ndim == 0:
        raise ValueError("take: a 0-d array has no axis")
    ax = operator.index(axis)
    if not -x.ndim <= ax < x.ndim:
        raise ValueError(f"axis {ax} is out of bounds for array of dimension {x.ndim}")
    ax %= x.ndim
    shape = [1] * x.ndim
    shape[ax] = indices.shape[0]
    return take_along_axis(x, indices.reshape(tuple(shape)), axis=ax)


def _cumulative(op: str, x: ndarray, axis: Optional[int], dtype: Any,
                include_initial: bool) -> ndarray:
    if axis is None and x.ndim > 1:
        raise ValueError(f"{op}: axis is required for arrays of more than one dimension")
    if x.ndim == 0:
        raise ValueError(f"{op}: a 0-d array has no axis")
    if dtype is not None:
        x = x.astype(_dtypes.normalize(np.dtype(dtype)))
    out = _unary(op, x, _axis_ins(0 if axis is None else axis))
    if dtype is not None and out.dtype != np.dtype(dtype):
        out = out.astype(dtype)
    if include_initial:
        ax = (0 if axis is None else operator.index(axis)) % x.ndim
        shape = list(out.shape)
        shape[ax] = 1
        like = zeros_like if op == "cumulative_sum" else ones_like
        out = concatenate([like(out, shape=tuple(shape)), out], axis=ax)
    return out


def cumulative_sum(x: ndarray, /, *, axis: Optional[int] = None, dtype: Any = None,
                   include_initial: bool = False) -> ndarray:
    """Running sums along ``axis`` (sum's dtype: int64 for small ints)."""
    return _cumulative("cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(x: ndarray, /, *, axis: Optional[int] = None, dtype: Any = None,
                    include_initial: bool = False) -> ndarray:
    """Running products along ``axis``."""
    return _cumulative("cumulative_prod", x, axis, dtype, include_initial)


def _numpy_cumulative(op: str, a: ndarray, axis: Optional[int], dtype: Any) -> ndarray:
    """numpy.cumsum / cumprod: the flattened array when axis is None."""
    if dtype is not None:
        a = a.astype(_dtypes.normalize(np.dtype(dtype)))
    out = _unary(op, a, _axis_ins(axis))
    return out if dtype is None or out.dtype == np.dtype(dtype) else out.astype(dtype)


def cumsum(a: ndarray, axis: Optional[int] = None, dtype: Any = None) -> ndarray:
    """numpy.cumsum: the flattened array's running sums when axis is None."""
    return _numpy_cumulative("cumulative_sum", a, axis, dtype)


def cumprod(a: ndarray, axis: Optional[int] = None, dtype: Any = None) -> ndarray:
    """numpy.cumprod: the flattened array's running products when axis is None."""
    return _numpy_cumulative("cumulative_prod", a, axis, dtype)


ndarray.argsort = lambda self, axis=-1: argsort(self, axis=axis)  # type: ignore[method-assign]
ndarray.cumsum = lambda self, axis=None, dtype=None: cumsum(self, axis, dtype)  # type: ignore
ndarray.cumprod = lambda self, axis=None, dtype=None: cumprod(self, axis, dtype)  # type: ignore

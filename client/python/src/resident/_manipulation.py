"""Array API and NumPy functions composed from the server's basic ops
(slices, concatenate, broadcast_to, reshape, transpose, arange, comparisons,
where), recorded into the same lazy program: ``flip``, ``roll``,
``moveaxis``, ``broadcast_arrays``, ``meshgrid``, ``unstack``, ``diff``,
``count_nonzero``, ``linspace``, ``eye``, ``tril``, ``triu``. Each computes
what NumPy's own Python code computes, in the same order, so the results
are NumPy's bit for bit (``linspace``: ``arange * step + start`` with the
stored endpoint, as ``numpy.linspace``).
"""

from __future__ import annotations

import operator
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _array, _dtypes
from ._array import ndarray, record
from ._shape_ops import broadcast_to, concatenate, sum as _sum
from .v1 import resident_pb2 as pb

Axis = Union[None, int, Sequence[int]]


def _norm_axes(axis: Axis, ndim: int) -> List[int]:
    axes = list(range(ndim)) if axis is None else (
        [axis] if isinstance(axis, (int, np.integer)) else list(axis))
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError("repeated axis")
    return out


def _index(ndim: int, axis: int, item: Any) -> Tuple[Any, ...]:
    key: List[Any] = [slice(None)] * ndim
    key[axis] = item
    return tuple(key)


def flip(x: ndarray, /, *, axis: Axis = None) -> ndarray:
    """The elements in reverse order along ``axis`` (all axes by default)."""
    key: List[Any] = [slice(None)] * x.ndim
    for a in _norm_axes(axis, x.ndim):
        key[a] = slice(None, None, -1)
    return x[tuple(key)]


def roll(x: ndarray, /, shift: Union[int, Sequence[int]], *, axis: Axis = None) -> ndarray:
    """Elements shifted along ``axis`` (flattened when None), wrapping."""
    if axis is None:
        return roll(x.reshape(-1), shift, axis=0).reshape(x.shape)
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    shifts = [shift] * len(axes) if isinstance(shift, (int, np.integer)) else list(shift)
    if len(shifts) != len(axes):
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences of the same length")
    out = x
    for a, s in zip(axes, shifts):  # a repeated axis shifts again, as NumPy's sum of shifts
        a = operator.index(a)
        if not -x.ndim <= a < x.ndim:
            raise np.exceptions.AxisError(a, x.ndim)
        a %= x.ndim
        n = x.shape[a]
        if n == 0:
            continue
        k = operator.index(s) % n
        if k:
            out = concatenate([out[_index(x.ndim, a, slice(n - k, None))],
                               out[_index(x.ndim, a, slice(None, n - k))]], axis=a)
    return out


def tile(x: ndarray, repetitions: Sequence[int], /) -> ndarray:
    """``x`` repeated ``repetitions[i]`` times along each axis (the shorter
    of shape and repetitions padded with leading 1s, as numpy.tile): one
    broadcast copy of ``x`` with an interleaved axis per repetition."""
    reps = [operator.index(r) for r in (
        (repetitions,) if isinstance(repetitions, (int, np.integer)) else repetitions)]
    if any(r < 0 for r in reps):
        raise ValueError("negative dimensions are not allowed")
    d = max(x.ndim, len(reps))
    shape = (1,) * (d - x.ndim) + tuple(x.shape)
    reps = [1] * (d - len(reps)) + reps
    interleaved = tuple(n for pair in zip([1] * d, shape) for n in pair)
    target = tuple(n for pair in zip(reps, shape) for n in pair)
    out = broadcast_to(x.reshape(interleaved), target)
    return out.reshape(tuple(r * n for r, n in zip(reps, shape)))


def repeat(x: ndarray, repeats: Any, /, *, axis: Optional[int] = None) -> ndarray:
    """Each element repeated along ``axis`` (the flattened array when None),
    as numpy.repeat. One count for all: a broadcast copy. A count per
    element (an array or sequence; its values are read on the client, as
    the result's shape depends on them): the runs of equal counts joined."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = _norm_axes(axis, x.ndim)[0]
    n = x.shape[axis]
    counts = np.asarray(repeats.get() if isinstance(repeats, ndarray) else repeats)
    if counts.dtype.kind not in "biu" or counts.ndim > 1:
        raise TypeError("repeats must be an integer or a 1-D sequence of integers")
    if (counts < 0).any():
        raise ValueError("repeats may not contain negative values")
    if counts.ndim == 1 and counts.size == 1:
        counts = counts.reshape(())
    if counts.ndim == 0:
        r = int(counts)
        shape = tuple(x.shape)
        inner = shape[:axis + 1] + (1,) + shape[axis + 1:]
        wide = shape[:axis + 1] + (r,) + shape[axis + 1:]
        out = broadcast_to(x.reshape(inner), wide)
        return out.reshape(shape[:axis] + (n * r,) + shape[axis + 1:])
    if counts.size != n:
        raise ValueError(f"operands could not be broadcast together with shape ({n},) "
                         f"({counts.size},)")
    parts = []
    start = 0
    while start < n:  # runs of one count: one slice and one broadcast each
        stop = start
        while stop < n and counts[stop] == counts[start]:
            stop += 1
        if counts[start] > 0:
            parts.append(repeat(x[_index(x.ndim, axis, slice(start, stop))], int(counts[start]),
                                axis=axis))
        start = stop
    if not parts:
        return x[_index(x.ndim, axis, slice(0, 0))]
    return parts[0] if len(parts) == 1 else concatenate(parts, axis=axis)


def moveaxis(x: ndarray, source: Axis, destination: Axis, /) -> ndarray:
    src = _norm_axes(source, x.ndim)
    dst = _norm_axes(destination, x.ndim)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x.transpose(*order)


def broadcast_arrays(*arrays: ndarray) -> List[ndarray]:
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    return [a if a.shape == shape else broadcast_to(a, shape) for a in arrays]


def meshgrid(*arrays: ndarray, indexing: str = "xy") -> List[ndarray]:
    """Coordinate matrices from 1-D arrays (``indexing`` 'xy' or 'ij')."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    n = len(arrays)
    shapes = [(1,) * i + (-1,) + (1,) * (n - i - 1) for i in range(n)]
    out = [a.reshape(s) for a, s in zip(arrays, shapes)]
    if indexing == "xy" and n > 1:
        out[0] = out[0].reshape((1, -1) + (1,) * (n - 2))
        out[1] = out[1].reshape((-1, 1) + (1,) * (n - 2))
    return broadcast_arrays(*out)


def unstack(x: ndarray, /, *, axis: int = 0) -> Tuple[ndarray, ...]:
    a = _norm_axes(axis, x.ndim)[0]
    return tuple(x[_index(x.ndim, a, i)] for i in range(x.shape[a]))


def diff(x: ndarray, /, *, axis: int = -1, n: int = 1, prepend: Any = None,
         append: Any = None) -> ndarray:
    """``n``-th differences along ``axis`` (bool: not-equal, as NumPy), of
    ``x`` with ``prepend`` and ``append`` joined before and after it."""
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    a = _norm_axes(axis, x.ndim)[0]
    if prepend is not None or append is not None:
        parts = [p for p in (prepend, x, append) if p is not None]
        from ._composed import full_like
        edge = list(x.shape)
        edge[a] = 1  # a scalar is broadcast to one slice, as numpy.diff does
        x = concatenate([p if isinstance(p, ndarray) else
                         full_like(x, p, shape=tuple(edge), dtype=np.asarray(p).dtype)
                         for p in parts], axis=a)
    for _ in range(n):
        hi, lo = x[_index(x.ndim, a, slice(1, None))], x[_index(x.ndim, a, slice(None, -1))]
        x = _array.not_equal(hi, lo) if x.dtype == np.bool_ else hi - lo
    return x


def count_nonzero(x: ndarray, /, *, axis: Axis = None, keepdims: bool = False) -> ndarray:
    return _sum(_array.not_equal(x, 0), axis=axis, keepdims=keepdims)


def _arange_on(like: ndarray, n: int, dtype: Any) -> ndarray:
    ins = pb.Instruction(dtype=_dtypes.to_wire(dtype))
    _dtypes.set_scalar(0, ins.start)
    _dtypes.set_scalar(n, ins.stop)
    _dtypes.set_scalar(1, ins.step)
    like._node.session.check_open()
    return record("arange", [], like._node.session, ins)


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None,
             endpoint: bool = True) -> ndarray:
    """``num`` evenly spaced values, NumPy's arithmetic (real bounds)."""
    from ._namespace import _client_for
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    for v in (start, stop):
        if not _dtypes.is_scalar(v) or isinstance(v, complex):
            raise TypeError("linspace bounds must be real numbers")
    client = _client_for(device)
    div = (num - 1) if endpoint else num
    delta = float(stop) - float(start)
    y = client.arange(0, num, 1, np.float64)
    if div > 0:
        step = delta / div
        y = (y / div) * delta if step == 0 else y * step
    else:
        y = y * delta
    y = y + float(start)
    if endpoint and num > 1:
        y = concatenate([y[: num - 1], client.full((1,), float(stop), np.float64)])
    if dtype is not None and np.dtype(dtype).kind in "iu":
        y = _array.floor(y)
    return y if dtype is None or np.dtype(dtype) == np.float64 else y.astype(dtype)


def eye(n_rows: int, n_cols: Optional[int] = None, /, *, k: int = 0, dtype: Any = None,
        device: Any = None) -> ndarray:
    from ._namespace import _client_for
    client = _client_for(device)
    m = n_rows if n_cols is None else n_cols
    if not -n_rows < k < m:  # no diagonal in range (k may not fit int64)
        return client.zeros((n_rows, m), dtype=np.float64 if dtype is None else dtype)
    rows = client.arange(0, n_rows, 1, np.int64).reshape(n_rows, 1)
    cols = client.arange(0, m, 1, np.int64).reshape(1, m)
    return _array.equal(rows + k, cols).astype(np.float64 if dtype is None else dtype)


def _tri_mask(x: ndarray, k: int, lower: bool) -> ndarray:
    if x.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    n, m = x.shape[-2], x.shape[-1]
    rows = _arange_on(x, n, np.int64).reshape(n, 1)
    cols = _arange_on(x, m, np.int64).reshape(1, m)
    return _array.greater_equal(rows + k, cols) if lower else _array.less_equal(rows + k, cols)


def tril(x: ndarray, /, *, k: int = 0) -> ndarray:
    """Elements on and below the ``k``-th diagonal; zeros above."""
    return _array.where(_tri_mask(x, k, lower=True), x, _zero(x))


def triu(x: ndarray, /, *, k: int = 0) -> ndarray:
    """Elements on and above the ``k``-th diagonal; zeros below."""
    return _array.where(_tri_mask(x, k, lower=False), x, _zero(x))


def _zero(x: ndarray) -> Any:
    return False if x.dtype == np.bool_ else 0

"""NumPy functions beyond the Array API that lab scripts use most, composed
from the server's ops in the same lazy program: ``histogram``,
``bincount``, ``cov``, ``corrcoef``, ``diag``, ``outer``, ``hstack``,
``vstack``, ``column_stack``, ``copy`` (and ``x.copy()``), ``isclose``,
``allclose``, ``argwhere`` and ``median``.

Counting without a scatter: ``bincount`` and ``histogram`` sort the values
once and count each bin as the difference of two ``searchsorted`` positions
(NumPy's own method for histograms with uneven bins, exact for counts).
Weighted counts are differences of a cumulative sum of the sorted weights,
so they agree with NumPy's per-bin sums within float rounding, not bit for
bit. ``bincount``'s length and ``histogram``'s automatic range depend on the
data: their minimum and maximum are evaluated first (one round trip).
"""

from __future__ import annotations

import operator
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from . import _array
from ._array import ndarray
from ._shape_ops import concatenate, max as _max, min as _min, stack, sum as _sum
from ._sorting import cumsum, searchsorted, sort, take
from ._manipulation import _arange_on


def copy(a: ndarray, /) -> ndarray:
    """A new array object with a's values (numpy.copy): assigning to one
    never changes the other."""
    from ._namespace import asarray
    return asarray(a, copy=True)


def _atleast(a: ndarray, ndim: int) -> ndarray:
    if a.ndim >= ndim:
        return a
    if ndim == 1 or a.ndim == 0:
        return a.reshape((1,) * (ndim - 1) + (a.size,) if ndim > 1 else (1,))
    return a.reshape((1,) + a.shape)  # a 1-D row for vstack


def hstack(tup: Sequence[ndarray]) -> ndarray:
    """numpy.hstack: along the second axis, or the first for 1-D arrays."""
    arrs = [_atleast(a, 1) for a in tup]
    return concatenate(arrs, axis=0 if arrs and arrs[0].ndim == 1 else 1)


def vstack(tup: Sequence[ndarray]) -> ndarray:
    """numpy.vstack: along the first axis, 1-D arrays as rows."""
    return concatenate([_atleast(a, 2) for a in tup], axis=0)


def column_stack(tup: Sequence[ndarray]) -> ndarray:
    """numpy.column_stack: 1-D arrays as columns, beside 2-D ones."""
    cols = [a.reshape((a.size, 1)) if a.ndim < 2 else a for a in tup]
    return concatenate(cols, axis=1)


def outer(a: ndarray, b: ndarray) -> ndarray:
    """numpy.outer: both flattened, a[i] * b[j]."""
    x, y = a.reshape(-1), b.reshape(-1)
    return _array.multiply(x.reshape((x.size, 1)), y.reshape((1, y.size)))


def diag(v: ndarray, k: int = 0) -> ndarray:
    """numpy.diag: a 1-D array as the k-th diagonal of a square matrix
    (zeros elsewhere), or a 2-D array's k-th diagonal."""
    k = operator.index(k)
    if v.ndim == 2:
        from .linalg import diagonal
        return diagonal(v, offset=k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = v.shape[0]
    size = n + abs(k)
    if n == 0:
        return _client_of(v).zeros((size, size), dtype=v.dtype)
    rows = _arange_on(v, size, np.int64).reshape((size, 1))
    cols = _arange_on(v, size, np.int64).reshape((1, size))
    on = _array.equal(_array.subtract(cols, rows), k)
    # Row r holds v[r] (k >= 0), or column c holds v[c] (k < 0), on the diagonal.
    source = rows if k >= 0 else cols
    values = take(v, _array.clip(source, 0, n - 1).reshape(-1)).reshape(source.shape)
    out = _array.where(on, values, 0)
    return out if out.dtype == v.dtype else out.astype(v.dtype)


def argwhere(a: ndarray, /) -> ndarray:
    """numpy.argwhere: the indices of the nonzero elements, one row each."""
    from ._indexing import nonzero
    if a.ndim == 0:
        return argwhere(a.reshape((1,)))[:, :0]
    return stack(list(nonzero(a)), axis=1)


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> ndarray:
    """numpy.isclose: |a - b| <= atol + rtol * |b|, infinities equal only to
    themselves, NaN to NaN when equal_nan."""
    finite = _array.logical_and(_array.isfinite(a), _array.isfinite(b))
    near = _array.less_equal(_array.absolute(_array.subtract(a, b)),
                             _array.add(atol, _array.multiply(rtol, _array.absolute(b))))
    out = _array.logical_or(_array.logical_and(finite, near), _array.equal(a, b))
    if equal_nan:
        out = _array.logical_or(out, _array.logical_and(_array.isnan(a), _array.isnan(b)))
    return out


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """numpy.allclose: every element isclose (evaluated: a Python bool)."""
    from ._shape_ops import all as _all
    return bool(_all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)).get())


def median(a: ndarray, axis: Optional[int] = None, keepdims: bool = False) -> ndarray:
    """numpy.median: the middle of the sorted values (the mean of the two
    middles for an even count), NaN where the values hold one."""
    x = a.reshape(-1) if axis is None else a
    ax = -1 if axis is None else operator.index(axis) % a.ndim
    if x.dtype.kind in "biu":
        x = x.astype(np.float64)
    s = sort(x, axis=ax)
    n = s.shape[ax]
    if n == 0:
        raise ValueError("median of an empty array")

    def at(i: int) -> ndarray:
        key: list = [slice(None)] * s.ndim
        key[ax] = slice(i, i + 1)
        return s[tuple(key)]

    lo, hi = at((n - 1) // 2), at(n // 2)
    mid = lo if n % 2 else _array.multiply(_array.add(lo, hi), 0.5)
    # Sorting puts NaNs last: the last value says whether the slice has one.
    last = at(n - 1)
    mid = _array.where(_array.isnan(last), last, mid)
    if axis is None:
        return mid.reshape((1,) * a.ndim) if keepdims else mid.reshape(())
    return mid if keepdims else mid.reshape(tuple(d for i, d in enumerate(s.shape) if i != ax))


def _counts_between(sorted_x: ndarray, edges: ndarray, right_inclusive_last: bool) -> ndarray:
    """Elements of sorted_x in [edges[i], edges[i+1]) (the last bin closed
    when asked): differences of searchsorted positions."""
    left = searchsorted(sorted_x, edges, side="left")
    nb = edges.shape[0] - 1
    upper = left[1:]
    if right_inclusive_last:
        last_right = searchsorted(sorted_x, edges[nb:], side="right")
        upper = concatenate([left[1:nb], last_right]) if nb > 1 else last_right
    return _array.subtract(upper, left[:nb])


def bincount(x: ndarray, /, weights: Optional[ndarray] = None, minlength: int = 0) -> ndarray:
    """numpy.bincount of a 1-D array of non-negative integers: the count
    (or weight sum) of each value 0..max(x). The minimum and maximum are
    evaluated first (one round trip)."""
    if x.ndim != 1:
        raise ValueError("object too deep for desired array")
    if x.dtype.kind not in "biu":
        raise TypeError("Cannot cast array data from dtype('float64') to dtype('int64') "
                        "according to the rule 'safe'")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    xi = x.astype(np.int64)
    if x.shape[0] == 0:
        length = minlength
    else:
        lo, hi = (int(v) for v in stack([_min(xi), _max(xi)]).get())
        if lo < 0:
            raise ValueError("'list' argument must have no negative elements")
        length = max(hi + 1, minlength)
    from ._composed import zeros_like
    if length == 0 or x.shape[0] == 0:
        out = zeros_like(xi[:0].reshape((0,)), dtype=np.int64)
        return out if length == 0 else _array.add(_arange_on(x, length, np.int64), 0) * 0
    edges = _arange_on(x, length + 1, np.int64)
    if weights is None:
        s = sort(xi)
        return _counts_between(s, edges, right_inclusive_last=False)
    if weights.shape != x.shape:
        raise ValueError("The weights and list don't have the same length.")
    from ._sorting import argsort
    order = argsort(xi)
    s = take(xi, order)
    w = take(weights.astype(np.float64), order)
    running = concatenate([_array.subtract(w[:1], w[:1]), cumsum(w)])
    left = searchsorted(s, edges, side="left")
    return _array.subtract(take(running, left[1:]), take(running, left[:length]))


def histogram(a: ndarray, bins: Any = 10, range: Optional[Tuple[float, float]] = None,  # noqa: A002
              density: Optional[bool] = None, weights: Optional[ndarray] = None
              ) -> Tuple[ndarray, ndarray]:
    """numpy.histogram: (counts, edges). ``bins`` an int (equal widths over
    ``range``, or the data's min and max, evaluated first) or the edges;
    every bin half-open but the last. Counts are int64, exact; weighted or
    density results are floats within rounding of NumPy's."""
    from ._manipulation import linspace
    x = a.reshape(-1)
    if isinstance(bins, (int, np.integer)):
        nbins = operator.index(bins)
        if nbins < 1:
            raise ValueError("`bins` must be positive, when an integer")
        if range is None:
            if x.shape[0] == 0:
                first, last = 0.0, 1.0
            else:
                first, last = (float(v) for v in stack(
                    [_min(x).astype(np.float64), _max(x).astype(np.float64)]).get())
                if not (np.isfinite(first) and np.isfinite(last)):
                    raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
        else:
            first, last = float(range[0]), float(range[1])
            if first > last:
                raise ValueError("max must be larger than min in range parameter.")
            if not (np.isfinite(first) and np.isfinite(last)):
                raise ValueError(f"supplied range of [{first}, {last}] is not finite")
        if first == last:
            first, last = first - 0.5, last + 0.5
        edge_dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
        edges = linspace(first, last, nbins + 1, device=_client_of(a), dtype=edge_dtype)
    else:
        edges = bins if isinstance(bins, ndarray) else _client_of(a).asarray(np.asarray(bins))
        if edges.ndim != 1:
            raise ValueError("`bins` must be 1d, when an array")
    if weights is None:
        counts = _counts_between(sort(x), edges, right_inclusive_last=True)
    else:
        from ._sorting import argsort
        order = argsort(x)
        s = take(x, order)
        w = take(weights.reshape(-1), order)
        running = concatenate([_array.subtract(w[:1], w[:1]), cumsum(w)])
        nb = edges.shape[0] - 1
        left = searchsorted(s, edges, side="left")
        last_right = searchsorted(s, edges[nb:], side="right")
        upper = concatenate([left[1:nb], last_right]) if nb > 1 else last_right
        counts = _array.subtract(take(running, upper), take(running, left[:nb]))
    if density:
        widths = _array.subtract(edges[1:], edges[:-1])
        counts = _array.divide(_array.divide(counts, _sum(counts)), widths)
    return counts, edges


def _client_of(a: ndarray) -> Any:
    from ._client import Client
    return Client(a._node.session)


def cov(m: ndarray, y: Optional[ndarray] = None, rowvar: bool = True, bias: bool = False,
        ddof: Optional[int] = None, dtype: Any = None) -> ndarray:
    """numpy.cov: the covariance of the variables (rows, or columns with
    rowvar=False), NumPy's steps: deviations from the mean, X @ X^H, times
    1 / (N - ddof)."""
    x = m
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    out_dtype = np.result_type(x.dtype, np.float64) if dtype is None else np.dtype(dtype)
    x = x.astype(out_dtype) if x.dtype != out_dtype else x
    x = x.reshape((1, x.size)) if x.ndim < 2 else x
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        yy = y.astype(out_dtype) if y.dtype != out_dtype else y
        yy = yy.reshape((1, yy.size)) if yy.ndim < 2 else yy
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        x = concatenate([x, yy], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    fact = x.shape[1] - ddof
    if fact <= 0:
        fact = 0.0
    mean = _sum(x, axis=1, keepdims=True) / x.shape[1]
    dev = _array.subtract(x, mean)
    c = _array.matmul(dev, _array.conjugate(dev.T) if dev.dtype.kind == "c" else dev.T)
    c = _array.multiply(c, np.true_divide(1, fact))
    return c.reshape(()) if c.size == 1 else c


def corrcoef(x: ndarray, y: Optional[ndarray] = None, rowvar: bool = True) -> ndarray:
    """numpy.corrcoef: cov divided by the outer product of the standard
    deviations, real parts clipped to [-1, 1]."""
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return _array.divide(c, c)
    d = diag(c)
    stddev = _array.sqrt(_array.real(d) if d.dtype.kind == "c" else d)
    c = _array.divide(c, stddev.reshape((stddev.size, 1)))
    c = _array.divide(c, stddev.reshape((1, stddev.size)))
    if c.dtype.kind == "c":
        return c
    return _array.clip(c, -1, 1)


ndarray.copy = copy  # type: ignore[attr-defined]

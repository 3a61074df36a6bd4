"""Functions composed from the server's ops, recorded into the same lazy
program (one request when a value is needed): ``var`` and ``std`` with
``correction`` (the Array API) or ``ddof`` (NumPy), the ``*_like``
creation functions and ``empty``, and the standard's names for functions
Resident has under NumPy's (``pow``, ``concat``, ``permute_dims``,
``matrix_transpose``).

``var`` follows NumPy's ``_var`` step by step (mean with keepdims, the
deviations squared by a multiply, their sum over the count less the
correction), so results agree with NumPy's within the README's bound for
float sums; integers and bool compute in float64, as NumPy's do.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _array, _dtypes
from ._array import ndarray, normalize_shape, record
from ._shape_ops import concatenate, sum as _sum
from .v1 import resident_pb2 as pb

Axis = Union[None, int, Sequence[int]]


def _reduced_count(shape: Tuple[int, ...], axis: Axis) -> int:
    """Elements each result of a reduction over ``axis`` covers (axis
    checked as NumPy does)."""
    if axis is None:
        return math.prod(shape)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    n = 1
    for a in axes:
        a = operator.index(a)
        if not -len(shape) <= a < len(shape):
            raise np.exceptions.AxisError(a, len(shape))
        n *= shape[a]
    return n


def var(x: ndarray, /, axis: Axis = None, *, correction: Optional[float] = None,
        keepdims: bool = False, ddof: Optional[float] = None) -> ndarray:
    """Variance over ``axis``: ``sum((x - mean)**2) / (n - correction)``;
    ``ddof`` is NumPy's name for ``correction`` (give one, not both)."""
    if correction is not None and ddof is not None:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    c = correction if correction is not None else (ddof if ddof is not None else 0)
    if not isinstance(x, ndarray):
        raise TypeError(f"var needs a resident array, got {type(x).__name__}")
    dt = np.dtype(x.dtype)
    if dt.kind == "c":
        raise TypeError("var/std of complex arrays are not supported by Resident yet")
    n = _reduced_count(x.shape, axis)
    a = x.astype(np.float64) if dt.kind in "biu" else x
    mean = _sum(a, axis=axis, keepdims=True) / n
    dev = a - mean
    ret = _sum(dev * dev, axis=axis, keepdims=keepdims)
    return ret / max(n - c, 0)


def std(x: ndarray, /, axis: Axis = None, *, correction: Optional[float] = None,
        keepdims: bool = False, ddof: Optional[float] = None) -> ndarray:
    """Standard deviation: ``sqrt(var(...))``."""
    return _array.sqrt(var(x, axis=axis, correction=correction, keepdims=keepdims, ddof=ddof))


# --- creation like another array ---------------------------------------------------------


def _like(op: str, x: ndarray, shape: Any, dtype: Any, fill: Any = None) -> ndarray:
    if not isinstance(x, ndarray):
        raise TypeError(f"{op}_like needs a resident array, got {type(x).__name__}")
    dt = _dtypes.normalize(x.dtype if dtype is None else dtype)
    ins = pb.Instruction(shape=list(normalize_shape(x.shape if shape is None else shape)),
                         dtype=_dtypes.to_wire(dt))
    if fill is not None:
        if not _dtypes.is_scalar(fill):
            raise TypeError(f"fill_value must be a bool, int or float, not {type(fill).__name__}")
        _dtypes.check_fits(fill, dt)
        _dtypes.set_scalar(fill, ins.fill)
    x._node.session.check_open()
    return record(op, [], x._node.session, ins)


def zeros_like(x: ndarray, /, *, dtype: Any = None, device: Any = None,
               shape: Any = None) -> ndarray:
    return _like("zeros", x, shape, dtype)


def ones_like(x: ndarray, /, *, dtype: Any = None, device: Any = None,
              shape: Any = None) -> ndarray:
    return _like("ones", x, shape, dtype)


def empty_like(x: ndarray, /, *, dtype: Any = None, device: Any = None,
               shape: Any = None) -> ndarray:
    """Zeros: the server never hands out memory it did not write."""
    return _like("zeros", x, shape, dtype)


def full_like(x: ndarray, /, fill_value: Any, *, dtype: Any = None, device: Any = None,
              shape: Any = None) -> ndarray:
    return _like("full", x, shape, dtype, fill_value)


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> ndarray:
    """Zeros: the server never hands out memory it did not write."""
    from ._namespace import zeros
    return zeros(shape, dtype=dtype, device=device)


# --- the standard's names ------------------------------------------------------------------


def pow(x1: Any, x2: Any, /) -> ndarray:  # noqa: A001 (the standard's name)
    return _array.power(x1, x2)


def round(x: ndarray, /) -> ndarray:  # noqa: A001 (the standard's name)
    """Halves to even (NumPy's rint) for floats; integers and bools as they
    are, as numpy.round keeps them."""
    if x.dtype.kind in "biu":
        return x
    return _array.rint(x)


def vecdot(x1: ndarray, x2: ndarray, /, *, axis: int = -1) -> ndarray:
    """The standard's vecdot: sum(conj(x1) * x2) along ``axis`` (the
    operands broadcast first; the axis must have one length in both)."""
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot: axis {axis} has length {x1.shape[axis]} in x1 and "
                         f"{x2.shape[axis]} in x2")
    from ._shape_ops import sum as _sum
    product = _array.multiply(_array.conjugate(x1), x2)
    return _sum(product, axis=axis, dtype=product.dtype)  # the standard keeps the dtype


def tensordot(x1: ndarray, x2: ndarray, /, *, axes: Any = 2) -> ndarray:
    """numpy.tensordot: the last ``axes`` axes of x1 against the first of x2
    (an int), or the given pairs; NumPy's own method, a transpose and
    reshape of each operand into a matrix and one matmul."""
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError("tensordot: axes must be non-negative")
        a_axes, b_axes = list(range(x1.ndim - axes, x1.ndim)), list(range(axes))
    else:
        a_axes, b_axes = [list(a) if not isinstance(a, int) else [a] for a in axes]
    if len(a_axes) != len(b_axes):
        raise ValueError("tensordot: the axes lists differ in length")
    a_axes = [a % x1.ndim for a in a_axes]
    b_axes = [b % x2.ndim for b in b_axes]
    for a, b in zip(a_axes, b_axes):
        if x1.shape[a] != x2.shape[b]:
            raise ValueError(f"tensordot: shape mismatch for sum ({x1.shape[a]} and {x2.shape[b]})")
    free_a = [d for d in range(x1.ndim) if d not in a_axes]
    free_b = [d for d in range(x2.ndim) if d not in b_axes]
    k = 1
    for a in a_axes:
        k *= x1.shape[a]
    m = 1
    for d in free_a:
        m *= x1.shape[d]
    n = 1
    for d in free_b:
        n *= x2.shape[d]
    left = _array.transpose(x1, free_a + a_axes).reshape((m, k))
    right = _array.transpose(x2, b_axes + free_b).reshape((k, n))
    out = _array.matmul(left, right)
    return out.reshape(tuple(x1.shape[d] for d in free_a) + tuple(x2.shape[d] for d in free_b))


def concat(arrays: Sequence[ndarray], /, axis: Optional[int] = 0) -> ndarray:
    return concatenate(arrays, axis=axis)


def permute_dims(x: ndarray, /, axes: Optional[Tuple[int, ...]] = None) -> ndarray:
    """The axes permuted (reversed when None: NumPy's transpose, which
    NumPy 2 also names permute_dims)."""
    return _array.transpose(x, axes)


def matrix_transpose(x: ndarray, /) -> ndarray:
    """The last two axes swapped (ValueError below two dimensions)."""
    if x.ndim < 2:
        raise ValueError("matrix_transpose needs an array of at least two dimensions")
    axes = list(range(x.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return x.transpose(*axes)


def _var_method(self: ndarray, axis: Axis = None, *, ddof: float = 0, keepdims: bool = False,
                correction: Optional[float] = None) -> ndarray:
    return var(self, axis=axis, ddof=None if correction is not None else ddof,
               correction=correction, keepdims=keepdims)


def _std_method(self: ndarray, axis: Axis = None, *, ddof: float = 0, keepdims: bool = False,
                correction: Optional[float] = None) -> ndarray:
    return std(self, axis=axis, ddof=None if correction is not None else ddof,
               correction=correction, keepdims=keepdims)


ndarray.var = _var_method  # type: ignore[attr-defined]
ndarray.std = _std_method  # type: ignore[attr-defined]
ndarray.mT = property(matrix_transpose)  # type: ignore[attr-defined]

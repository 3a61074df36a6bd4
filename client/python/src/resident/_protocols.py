"""NumPy's dispatch protocols, as CuPy has them: ``np.exp(x)``,
``np.add(x, 2)``, ``np.sum(x, axis=0)``, ``np.concatenate([x, y])``,
``np.where(c, x, y)`` on Resident arrays run on the server and return
Resident arrays.

- ``__array_ufunc__``: a ufunc Resident has (the op table's, by NumPy's
  name), called plainly (``method == "__call__"``, no ``out``, ``where``,
  ``dtype`` or ``casting``), runs as that function; anything else returns
  NotImplemented, so NumPy raises its TypeError. A host NumPy array beside
  a Resident one is refused, as CuPy refuses it: a silent upload would
  hide a transfer.
- ``__array_function__``: the NumPy functions Resident implements (below)
  with the keyword arguments they take; others return NotImplemented
  (NumPy: "no implementation found").

``np.asarray(x)`` and ``np.array(x)`` are refused (TypeError), as CuPy
refuses them: a download (``x.get()``, ``rs.asnumpy(x)``) is a transfer the
user should see, and a NumPy function Resident lacks would otherwise run on
the host after a silent download.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

import numpy as np

from . import _array, _composed, _indexing, _manipulation, _numpy_extras, _shape_ops, _sorting
from . import fft as _fft
from . import linalg as _linalg
from ._array import ELEMENTWISE_FUNCTIONS, ndarray


_UFUNCS: Dict[str, Callable[..., Any]] = {name: getattr(_array, name)
                                          for name in ELEMENTWISE_FUNCTIONS}


def _array_ufunc(self: ndarray, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    fn = _UFUNCS.get(getattr(ufunc, "__name__", ""))
    if method != "__call__" or fn is None or kwargs:
        return NotImplemented
    for value in inputs:
        if isinstance(value, np.ndarray) and value.ndim > 0:
            raise _array._host_array_error(value)
    return fn(*inputs)


_FUNCTIONS: Dict[Any, Callable[..., Any]] = {
    np.sum: _shape_ops.sum, np.prod: _shape_ops.prod, np.mean: _shape_ops.mean,
    np.max: _shape_ops.max, np.min: _shape_ops.min, np.amax: _shape_ops.max,
    np.amin: _shape_ops.min, np.argmax: _shape_ops.argmax, np.argmin: _shape_ops.argmin,
    np.any: _shape_ops.any, np.all: _shape_ops.all, np.concatenate: _shape_ops.concatenate,
    np.stack: _shape_ops.stack, np.broadcast_to: _shape_ops.broadcast_to,
    np.squeeze: _shape_ops.squeeze, np.expand_dims: _shape_ops.expand_dims,
    np.where: _array.where, np.clip: _array.clip, np.dot: _array.dot, np.matmul: _array.matmul,
    np.reshape: _array.reshape, np.transpose: _array.transpose,
    np.var: _composed.var, np.std: _composed.std, np.zeros_like: _composed.zeros_like,
    np.ones_like: _composed.ones_like, np.full_like: _composed.full_like,
    np.empty_like: _composed.empty_like, np.concat: _composed.concat,
    np.permute_dims: _composed.permute_dims, np.matrix_transpose: _composed.matrix_transpose,
    np.flip: _manipulation.flip, np.roll: _manipulation.roll,
    np.moveaxis: _manipulation.moveaxis, np.broadcast_arrays: _manipulation.broadcast_arrays,
    np.meshgrid: _manipulation.meshgrid, np.unstack: _manipulation.unstack,
    np.diff: _manipulation.diff, np.count_nonzero: _manipulation.count_nonzero,
    np.tril: _manipulation.tril, np.triu: _manipulation.triu,
    np.tile: _manipulation.tile, np.repeat: _manipulation.repeat,
    # NumPy's signatures (axis positional, kind/order/stable accepted: every
    # sort here is stable) over the standard's; axis=None sorts the flattened array.
    np.sort: lambda a, axis=-1, kind=None, order=None, stable=None: _sorting.sort(
        a.reshape(-1) if axis is None else a, axis=-1 if axis is None else axis),
    np.argsort: lambda a, axis=-1, kind=None, order=None, stable=None: _sorting.argsort(
        a.reshape(-1) if axis is None else a, axis=-1 if axis is None else axis),
    np.take_along_axis: lambda arr, indices, axis=-1: _sorting.take_along_axis(
        arr, indices, axis=axis),
    np.take: lambda a, indices, axis=None: _sorting.take(a, indices, axis=axis),
    np.nonzero: _indexing.nonzero, np.flatnonzero: _indexing.flatnonzero,
    np.extract: _indexing.extract,
    np.searchsorted: lambda a, v, side="left", sorter=None: _sorting.searchsorted(
        a, v, side=side, sorter=sorter),
    np.cumsum: _sorting.cumsum, np.cumprod: _sorting.cumprod,
    np.cumulative_sum: _sorting.cumulative_sum, np.cumulative_prod: _sorting.cumulative_prod,
    np.histogram: _numpy_extras.histogram, np.bincount: _numpy_extras.bincount,
    np.cov: _numpy_extras.cov, np.corrcoef: _numpy_extras.corrcoef, np.diag: _numpy_extras.diag,
    np.outer: _numpy_extras.outer, np.hstack: _numpy_extras.hstack,
    np.vstack: _numpy_extras.vstack, np.column_stack: _numpy_extras.column_stack,
    np.copy: _numpy_extras.copy, np.isclose: _numpy_extras.isclose,
    np.allclose: _numpy_extras.allclose, np.argwhere: _numpy_extras.argwhere,
    np.median: _numpy_extras.median, np.linalg.norm: _linalg.norm,
    np.linalg.vector_norm: _linalg.vector_norm, np.linalg.matrix_norm: _linalg.matrix_norm,
    np.linalg.outer: _linalg.outer, np.linalg.cross: _linalg.cross,
    np.linalg.diagonal: _linalg.diagonal, np.linalg.trace: _linalg.trace,
    np.linalg.matrix_power: _linalg.matrix_power,
    np.linalg.cholesky: lambda a, upper=False: _linalg.cholesky(a, upper=upper),
    np.linalg.solve: _linalg.solve, np.linalg.inv: _linalg.inv, np.linalg.det: _linalg.det,
    np.linalg.eigvalsh: lambda a, UPLO="L": _linalg.eigvalsh(  # noqa: N803
        a if UPLO == "L" else _linalg.matrix_transpose(a)),
    np.linalg.svdvals: _linalg.svdvals,
    np.linalg.qr: lambda a, mode="reduced": _linalg.qr(a, mode=mode),
    np.linalg.svd: lambda a, full_matrices=True, compute_uv=True, hermitian=False: _linalg.svd(
        a, full_matrices=full_matrices, compute_uv=compute_uv),
    np.linalg.eigh: lambda a, UPLO="L": _linalg.eigh(a, UPLO),  # noqa: N803
    np.linalg.slogdet: _linalg.slogdet,
    # NumPy's pinv cuts at rcond=1e-15 unless told otherwise (rtol=None:
    # the Array API's max(M, N) * eps).
    np.linalg.pinv: lambda a, rcond=None, hermitian=False, *, rtol=1e-15: _linalg.pinv(
        a, rcond=rcond, rtol=rtol),
    np.linalg.lstsq: lambda a, b, rcond=None: _linalg.lstsq(a, b, rcond),
    np.linalg.matrix_rank: lambda A, tol=None, hermitian=False, *, rtol=None: (  # noqa: N803
        _linalg.matrix_rank(A, rtol=rtol) if tol is None else NotImplemented),
}


def _numpy_fft(name: str, nd: bool) -> Callable[..., Any]:
    """numpy.fft's positional signature (a, n/s, axis/axes, norm) onto ours."""
    impl = getattr(_fft, name)
    if nd:
        return lambda a, s=None, axes=None, norm=None, out=None: impl(a, s=s, axes=axes,
                                                                      norm=norm)
    return lambda a, n=None, axis=-1, norm=None, out=None: impl(a, n=n, axis=axis, norm=norm)


for _name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
    _FUNCTIONS[getattr(np.fft, _name)] = _numpy_fft(_name, nd=False)
for _name in ("fftn", "ifftn", "rfftn", "irfftn"):
    _FUNCTIONS[getattr(np.fft, _name)] = _numpy_fft(_name, nd=True)
_FUNCTIONS[np.fft.fftshift] = lambda x, axes=None: _fft.fftshift(x, axes=axes)
_FUNCTIONS[np.fft.ifftshift] = lambda x, axes=None: _fft.ifftshift(x, axes=axes)


def _array_function(self: ndarray, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    impl = _FUNCTIONS.get(func)
    if impl is None or not all(issubclass(t, (ndarray, np.ndarray)) for t in types):
        return NotImplemented
    for value in args:
        if isinstance(value, np.ndarray) and value.ndim > 0:
            raise _array._host_array_error(value)
    try:
        return impl(*args, **kwargs)
    except TypeError as e:  # a NumPy argument Resident does not take (out=, dtype=, ...)
        if "unexpected keyword argument" in str(e):
            raise TypeError(f"resident's {func.__name__} does not take that argument: {e}") from e
        raise


ndarray.__array_ufunc__ = _array_ufunc  # type: ignore[assignment]
ndarray.__array_function__ = _array_function  # type: ignore[attr-defined]

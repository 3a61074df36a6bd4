"""The Array API's ``fft`` extension, as numpy.fft: ``fft``, ``ifft``,
``fftn``, ``ifftn``, ``rfft``, ``irfft``, ``rfftn``, ``irfftn``, ``hfft``,
``ihfft``, ``fftfreq``, ``rfftfreq``, ``fftshift`` and ``ifftshift``, with
``n``/``s``, ``axis``/``axes`` and ``norm``, recorded into the same lazy
program.

The server transforms along one axis, or over up to three in one
multi-dimensional transform (cuFFT on CUDA, FFTW on the CPU), in NumPy 2's
dtypes (complex64 from float32/complex64, complex128 otherwise), with
NumPy's default "backward" scaling. Here ``n``/``s`` pad with zeros or
truncate first, other norms are one scaling multiply, ``fftn``/``ifftn``/
``rfftn`` are one transform per three axes (NumPy's one-axis passes give
the same values within rounding), ``irfftn`` is ``ifftn`` over all axes but
the last, then ``irfft``, as NumPy computes it, and ``hfft``/``ihfft`` are
irfft/rfft of the conjugate, as in NumPy.

    import resident as rs
    y = rs.fft.rfft(x)                         # x float32: complex64
    z = rs.fft.irfftn(rs.fft.rfftn(a), s=a.shape)
    f = rs.fft.fftfreq(8, d=0.1)               # [0, 1.25, ..., -1.25] on the default client
"""

from __future__ import annotations

import operator
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _array
from ._array import ndarray, record
from ._manipulation import roll
from ._shape_ops import concatenate
from .v1 import resident_pb2 as pb

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")


def _check(x: Any, name: str) -> ndarray:
    if not isinstance(x, ndarray):
        raise TypeError(f"{name} needs a resident array, not {type(x).__name__}")
    if x.ndim == 0:
        raise ValueError(f"{name}: a 0-d array has no axis to transform")
    return x


def _axis(x: ndarray, axis: int) -> int:
    a = operator.index(axis)
    if not -x.ndim <= a < x.ndim:
        raise np.exceptions.AxisError(f"axis {a} is out of bounds for array of dimension {x.ndim}")
    return a % x.ndim


def _fit(x: ndarray, n: int, axis: int) -> ndarray:
    """x truncated or zero-padded to length n along axis (NumPy's n)."""
    have = x.shape[axis]
    if n == have:
        return x
    if n < have:
        key = [slice(None)] * x.ndim
        key[axis] = slice(0, n)
        return x[tuple(key)]
    pad = list(x.shape)
    pad[axis] = n - have
    from ._client import Client
    return concatenate([x, Client(x._node.session).zeros(tuple(pad), x.dtype)], axis=axis)


def _length(n: Optional[int], default: int) -> int:
    n = default if n is None else operator.index(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _scale(y: ndarray, norm: Optional[str], n: int, inverse: bool) -> ndarray:
    """NumPy's norm on top of the server's backward scaling (the inverse
    already divided by n)."""
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    if norm == "backward":
        return y
    if norm == "ortho":
        return y * (float(np.sqrt(n)) if inverse else 1.0 / float(np.sqrt(n)))
    return y * (float(n) if inverse else 1.0 / n)  # "forward"


def _transform(op: str, x: ndarray, axis: int, out_n: Optional[int] = None) -> ndarray:
    ins = pb.Instruction(has_axis=True, axis=axis)
    if out_n is not None:
        ins.shape.append(out_n)
    return record(op, [x._node], x._node.session, ins)


def _one(op: str, x: ndarray, n: Optional[int], axis: int, norm: Optional[str]) -> ndarray:
    x = _check(x, op)
    axis = _axis(x, axis)
    if op == "rfft" and x.dtype.kind == "c":
        raise TypeError(f"rfft needs a real array, got {x.dtype}")
    n = _length(n, x.shape[axis])
    return _scale(_transform(op, _fit(x, n, axis), axis), norm, n, op == "ifft")


def fft(x: ndarray, /, *, n: Optional[int] = None, axis: int = -1,
        norm: str = "backward") -> ndarray:
    """The one-dimensional discrete Fourier transform along ``axis``."""
    return _one("fft", x, n, axis, norm)


def ifft(x: ndarray, /, *, n: Optional[int] = None, axis: int = -1,
         norm: str = "backward") -> ndarray:
    """The one-dimensional inverse discrete Fourier transform."""
    return _one("ifft", x, n, axis, norm)


def rfft(x: ndarray, /, *, n: Optional[int] = None, axis: int = -1,
         norm: str = "backward") -> ndarray:
    """The transform of real input: the n // 2 + 1 non-negative frequencies."""
    return _one("rfft", x, n, axis, norm)


def irfft(x: ndarray, /, *, n: Optional[int] = None, axis: int = -1,
          norm: str = "backward") -> ndarray:
    """The inverse of rfft: n real points (default 2 * (m - 1) from m)."""
    x = _check(x, "irfft")
    axis = _axis(x, axis)
    n = _length(n, 2 * (x.shape[axis] - 1))
    y = _transform("irfft", _fit(x, n // 2 + 1, axis), axis, out_n=n)
    return _scale(y, norm, n, True)


def hfft(x: ndarray, /, *, n: Optional[int] = None, axis: int = -1,
         norm: str = "backward") -> ndarray:
    """The transform of a Hermitian-symmetric signal (real output), as
    numpy.fft.hfft: irfft of the conjugate with the norm's direction
    swapped."""
    x = _check(x, "hfft")
    axis = _axis(x, axis)
    n = _length(n, 2 * (x.shape[axis] - 1))
    swapped = {"backward": "forward", "forward": "backward"}.get(norm or "backward", norm)
    return irfft(_array.conj(x), n=n, axis=axis, norm=swapped)


def ihfft(x: ndarray, /, *, n: Optional[int] = None, axis: int = -1,
          norm: str = "backward") -> ndarray:
    """The inverse of hfft: the conjugate of rfft with the norm's direction
    swapped."""
    swapped = {"backward": "forward", "forward": "backward"}.get(norm or "backward", norm)
    return _array.conj(rfft(x, n=n, axis=axis, norm=swapped))


def _nd_args(x: ndarray, s: Optional[Sequence[int]],
             axes: Optional[Sequence[int]]) -> "tuple[list[int], list[Optional[int]]]":
    """NumPy's (axes, lengths) of an n-dimensional transform: every axis, or
    the last len(s), or those given; s's entries (None: the axis' own)."""
    if axes is None:
        axes = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    else:
        axes = [operator.index(a) for a in (axes if isinstance(axes, (list, tuple)) else [axes])]
    if s is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    axes = [_axis(x, a) for a in axes]
    lengths: "list[Optional[int]]" = (list(s) if s is not None else [None] * len(axes))
    lengths = [None if k is None or k == -1 else operator.index(k) for k in lengths]
    return axes, lengths


def _many(op: str, x: ndarray, axes: "list[int]") -> ndarray:
    """One server transform over up to three axes (unscaled but for the
    inverses' "backward" 1 / points)."""
    if len(axes) == 1:
        return _transform(op, x, axes[0])
    ins = pb.Instruction(has_axes=True, axes=axes)
    return record(op, [x._node], x._node.session, ins)


def _nd(op: str, x: ndarray, s: Any, axes: Any, norm: Optional[str],
        real_last: bool = False) -> ndarray:
    """fft/ifft over several axes: each axis fitted to its length first,
    then one multi-dimensional transform per three axes (the last three
    first, as NumPy transforms the last axis first; with ``real_last`` the
    last group is rfft, the others fft)."""
    x = _check(x, op)
    ax, lengths = _nd_args(x, s, axes)
    if not ax:
        if real_last:
            raise ValueError(f"{op}n needs at least one axis")
        return x  # NumPy's: no axis, no transform
    if op == "rfft" and x.dtype.kind == "c":
        raise TypeError(f"rfft needs a real array, got {x.dtype}")
    points = 1
    for a, n in zip(ax, lengths):
        n = _length(n, x.shape[a])
        x = _fit(x, n, a)
        points *= n
    groups = [ax[max(0, i - 3):i] for i in range(len(ax), 0, -3)]
    for i, group in enumerate(groups):
        x = _many(op if i == 0 or not real_last else "fft", x, group)
    return _scale(x, norm, points, op == "ifft")


def fftn(x: ndarray, /, *, s: Optional[Sequence[int]] = None,
         axes: Optional[Sequence[int]] = None, norm: str = "backward") -> ndarray:
    """The n-dimensional transform over ``axes`` (all by default)."""
    return _nd("fft", x, s, axes, norm)


def ifftn(x: ndarray, /, *, s: Optional[Sequence[int]] = None,
          axes: Optional[Sequence[int]] = None, norm: str = "backward") -> ndarray:
    """The n-dimensional inverse transform."""
    return _nd("ifft", x, s, axes, norm)


def rfftn(x: ndarray, /, *, s: Optional[Sequence[int]] = None,
          axes: Optional[Sequence[int]] = None, norm: str = "backward") -> ndarray:
    """The n-dimensional transform of real input: rfft over the last of
    ``axes``, then fft over the others."""
    return _nd("rfft", x, s, axes, norm, real_last=True)


def irfftn(x: ndarray, /, *, s: Optional[Sequence[int]] = None,
           axes: Optional[Sequence[int]] = None, norm: str = "backward") -> ndarray:
    """The inverse of rfftn: ifft over all of ``axes`` but the last, then
    irfft over the last (s[-1] real points, default 2 * (m - 1))."""
    x = _check(x, "irfftn")
    ax, lengths = _nd_args(x, s, axes)
    if len(ax) > 1:
        x = _nd("ifft", x, lengths[:-1], ax[:-1], norm)
    return irfft(x, n=lengths[-1], axis=ax[-1], norm=norm)


def _arange(client: Any, start: int, stop: int) -> ndarray:
    return client.arange(start, stop, 1, np.int64)


def _frequencies(n: int, d: float, dtype: Any, device: Any, full: bool) -> ndarray:
    from ._namespace import _client_for
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n should be a positive integer, got {n}")
    client = _client_for(device)
    val = 1.0 / (n * d)
    if full:  # numpy.fft.fftfreq: [0, 1, ..., (n-1)//2, -(n//2), ..., -1] * val
        k = (n - 1) // 2 + 1
        ints = concatenate([_arange(client, 0, k), _arange(client, -(n // 2), 0)])
    else:  # numpy.fft.rfftfreq: [0, 1, ..., n//2] * val
        ints = _arange(client, 0, n // 2 + 1)
    out = ints * val  # int64 times a weak Python float: float64, as NumPy
    if dtype is not None and np.dtype(dtype) != np.float64:
        if np.dtype(dtype).kind != "f":
            raise ValueError(f"fftfreq needs a real floating dtype, got {np.dtype(dtype)}")
        out = out.astype(dtype)
    return out


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> ndarray:
    """The sample frequencies of an n-point DFT with sample spacing d."""
    return _frequencies(n, d, dtype, device, full=True)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> ndarray:
    """The non-negative sample frequencies of an n-point real DFT."""
    return _frequencies(n, d, dtype, device, full=False)


def _shift(x: ndarray, axes: Union[None, int, Sequence[int]], sign: int) -> ndarray:
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    shifts = [sign * (x.shape[operator.index(a)] // 2) for a in axes]
    return roll(x, shifts, axis=tuple(axes))


def fftshift(x: ndarray, /, *, axes: Optional[Union[int, Sequence[int]]] = None) -> ndarray:
    """The zero-frequency term moved to the centre along ``axes`` (all)."""
    return _shift(x, axes, 1)


def ifftshift(x: ndarray, /, *, axes: Optional[Union[int, Sequence[int]]] = None) -> ndarray:
    """The inverse of fftshift."""
    return _shift(x, axes, -1)

"""The Array API's ``fft`` extension, so far the functions that need no
transform: ``fftfreq``, ``rfftfreq``, ``fftshift`` and ``ifftshift``, as
numpy.fft computes them (recorded into the same lazy program).

The transforms themselves (``fft``, ``ifft``, ``rfft``, ``fftn``, ...) need
cuFFT / FFTW on the server and are not built yet.

    import resident as rs
    f = rs.fft.fftfreq(8, d=0.1)               # [0, 1.25, ..., -1.25] on the default client
    y = rs.fft.fftshift(x, axes=(-1,))
"""

from __future__ import annotations

import operator
from typing import Any, Optional, Sequence, Union

import numpy as np

from ._array import ndarray
from ._manipulation import roll
from ._shape_ops import concatenate

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]


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

"""rs.fft's transforms through the real server (FFTW on the CPU backend,
cuFFT on CUDA), against numpy.fft computed in the test: dtypes (NumPy 2's
single/double precision rule), n (padding and truncation), axes, every
norm, the n-dimensional and Hermitian transforms, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs
import helpers
from helpers import sample


def close(result: rs.ndarray, want: np.ndarray) -> None:
    """NumPy's dtype and shape; values within the transform's rounding."""
    helpers.close(result, want, 2e-5, 1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128, np.int32],
                         ids=str)
def test_one_dimensional_transforms(client, dtype):
    a = sample(np.float64, (3, 10), 50)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * sample(np.float64, (3, 10), 51)
    a = a.astype(dtype)
    x = client.asarray(a)
    for n in (None, 10, 7, 16, 1):
        for norm in (None, "backward", "ortho", "forward"):
            kw = {} if norm is None else {"norm": norm}
            close(rs.fft.fft(x, n=n, **kw), np.fft.fft(a, n=n, **kw))
            close(rs.fft.ifft(x, n=n, axis=0, **kw), np.fft.ifft(a, n=n, axis=0, **kw))
            if np.dtype(dtype).kind != "c":
                close(rs.fft.rfft(x, n=n, **kw), np.fft.rfft(a, n=n, **kw))
                close(rs.fft.ihfft(x, n=n, **kw), np.fft.ihfft(a, n=n, **kw))
    spec = np.fft.rfft(a.real.astype(np.float64) if np.dtype(dtype).kind == "c" else a)
    s = client.asarray(spec)
    for n in (None, 18, 19, 5, 1):
        close(rs.fft.irfft(s, n=n), np.fft.irfft(spec, n=n))
        close(rs.fft.hfft(s, n=n, norm="ortho"), np.fft.hfft(spec, n=n, norm="ortho"))
    # numpy.fft through __array_function__ runs on the server too.
    close(np.fft.fft(x), np.fft.fft(a))


def test_n_dimensional_transforms(client):
    a = sample(np.float32, (4, 6, 5), 52)
    z = (a + 1j * sample(np.float32, (4, 6, 5), 53)).astype(np.complex64)
    x, y = client.asarray(a), client.asarray(z)
    close(rs.fft.fftn(y), np.fft.fftn(z))
    close(rs.fft.ifftn(y, axes=(0, 2)), np.fft.ifftn(z, axes=(0, 2)))
    close(rs.fft.fftn(y, s=(3, 8)), np.fft.fftn(z, s=(3, 8)))
    close(rs.fft.rfftn(x), np.fft.rfftn(a))
    close(rs.fft.rfftn(x, axes=(0, 1), norm="ortho"), np.fft.rfftn(a, axes=(0, 1), norm="ortho"))
    spec = np.fft.rfftn(a)
    close(rs.fft.irfftn(client.asarray(spec), s=a.shape), np.fft.irfftn(spec, s=a.shape))
    close(rs.fft.irfftn(client.asarray(spec)), np.fft.irfftn(spec))
    # A round trip gives the data back.
    back = rs.fft.irfftn(rs.fft.rfftn(x), s=a.shape).get()
    np.testing.assert_allclose(back, a, atol=1e-4 * np.abs(a).max())


def test_large_transform(client):
    """One row long enough for the libraries' multi-pass algorithms, and many
    short rows (the batched path)."""
    a = sample(np.float64, (1 << 16,), 54)
    close(rs.fft.fft(client.asarray(a)), np.fft.fft(a))
    b = sample(np.float32, (512, 24), 55)
    close(rs.fft.rfft(client.asarray(b)), np.fft.rfft(b))


def test_errors(client):
    x = client.asarray(np.ones((3, 4)))
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        rs.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="norm"):
        rs.fft.fft(x, norm="sideways")
    with pytest.raises(TypeError, match="real"):
        rs.fft.rfft(client.asarray(np.ones(4, np.complex64)))
    with pytest.raises(np.exceptions.AxisError):
        rs.fft.fft(x, axis=2)
    with pytest.raises(ValueError, match="different lengths"):
        rs.fft.fftn(x, s=(2,), axes=(0, 1))
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        rs.fft.irfft(client.asarray(np.ones(1, np.complex128)))  # n = 2 * (1 - 1) = 0


def test_transforms_over_many_axes(client):
    # fftn over up to three axes is one server transform, more in groups of
    # three; any axis order; NumPy's values within the transform's rounding.
    z = (sample(np.float64, (3, 4, 5, 6), 54) + 1j * sample(np.float64, (3, 4, 5, 6), 55))
    a = sample(np.float32, (3, 4, 5, 6), 56)
    y, x = client.asarray(z), client.asarray(a)
    close(rs.fft.fftn(y), np.fft.fftn(z))                       # four axes: 3 + 1
    close(rs.fft.ifftn(y, axes=(2, 0, 3)), np.fft.ifftn(z, axes=(2, 0, 3)))
    close(rs.fft.fftn(y, axes=(-1, 1)), np.fft.fftn(z, axes=(-1, 1)))
    close(rs.fft.rfftn(x), np.fft.rfftn(a))
    close(rs.fft.rfftn(x, axes=(3, 1), norm="forward"), np.fft.rfftn(a, axes=(3, 1), norm="forward"))
    close(rs.fft.fftn(y, s=(2, 7), axes=(0, 2)), np.fft.fftn(z, s=(2, 7), axes=(0, 2)))
    assert rs.fft.fftn(x, axes=()).dtype == np.float32  # no axis, no transform

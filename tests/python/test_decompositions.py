"""rs.linalg's routines of several results through the real server: qr,
svd, eigh and slogdet (one instruction, one output per result), and pinv
and lstsq composed from svd, against numpy.linalg computed in the test.

Q, the singular vectors and the eigenvectors are unique only up to signs
(phases), which differ between libraries, so those are checked by what
defines them (A = Q R with Q orthonormal and R upper triangular, A = U S Vh,
A V = V diag(w)) and by NumPy's shapes and dtypes; R's magnitudes, the
singular values, the eigenvalues, slogdet, pinv and lstsq against NumPy's
values."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs
import helpers
from helpers import sample

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def tol(dtype) -> float:
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def close(result: rs.ndarray, want: np.ndarray) -> None:
    helpers.close(result, want, 2e-4, 1e-9)


def matrices(dtype, shape, seed, hermitian=False):
    a = sample(np.float64, shape, seed) / 10
    if np.dtype(dtype).kind == "c":
        a = a + 1j * sample(np.float64, shape, seed + 1) / 10
    if hermitian:
        a = a + np.conj(np.swapaxes(a, -1, -2))
    return a.astype(dtype)


def h(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def near(got: np.ndarray, want: np.ndarray, dtype) -> None:
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got, want, rtol=0, atol=tol(dtype) * scale * 10)


def same_meta(result: rs.ndarray, want: np.ndarray) -> np.ndarray:
    got = result.get()
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    assert (result.dtype, result.shape) == (want.dtype, want.shape)
    return got


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(3, 5, 5), (2, 3, 6), (4, 2)], ids=str)
def test_qr(client, dtype, shape):
    a = matrices(dtype, shape, 80)
    x = client.asarray(a)
    for mode in ("reduced", "complete"):
        q, r = rs.linalg.qr(x, mode=mode)
        nq, nr = np.linalg.qr(a, mode=mode)
        gq, gr = same_meta(q, nq), same_meta(r, nr)
        near(gq @ gr, a, dtype)
        near(h(gq) @ gq, np.broadcast_to(np.eye(gq.shape[-1]), h(gq).shape[:-1] + (gq.shape[-1],)),
             dtype)
        assert np.all(np.tril(gr, -1) == 0)
        near(np.abs(gr), np.abs(nr), dtype)  # R is unique up to its rows' signs
    r_only = rs.linalg.qr(x, mode="r")
    near(np.abs(same_meta(r_only, np.linalg.qr(a, mode="r"))), np.abs(np.linalg.qr(a, mode="r")),
         dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(3, 5, 5), (2, 3, 6), (4, 2), (7, 3)], ids=str)
def test_svd(client, dtype, shape):
    a = matrices(dtype, shape, 82)
    x = client.asarray(a)
    k = min(shape[-2:])
    for full in (True, False):
        u, s, vh = rs.linalg.svd(x, full_matrices=full)
        nu, ns, nvh = np.linalg.svd(a, full_matrices=full)
        gu, gs, gvh = same_meta(u, nu), same_meta(s, ns), same_meta(vh, nvh)
        near(gs, ns, dtype)
        near((gu[..., :, :k] * gs[..., None, :]) @ gvh[..., :k, :], a, dtype)
        near(h(gu) @ gu, np.broadcast_to(np.eye(gu.shape[-1]), h(gu).shape[:-1] + (gu.shape[-1],)),
             dtype)
        near(gvh @ h(gvh),
             np.broadcast_to(np.eye(gvh.shape[-2]), gvh.shape[:-1] + (gvh.shape[-2],)), dtype)
    close(rs.linalg.svd(x, compute_uv=False), np.linalg.svd(a, compute_uv=False))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_eigh(client, dtype):
    a = matrices(dtype, (3, 6, 6), 84, hermitian=True)
    x = client.asarray(a)
    for uplo in ("L", "U"):
        w, v = rs.linalg.eigh(x, UPLO=uplo)
        nw, nv = np.linalg.eigh(a, UPLO=uplo)
        gw, gv = same_meta(w, nw), same_meta(v, nv)
        near(gw, nw, dtype)
        near(a @ gv, gv * gw[..., None, :], dtype)
        near(h(gv) @ gv, np.broadcast_to(np.eye(6), (3, 6, 6)), dtype)
    # Only the lower triangle is read: garbage above it changes nothing.
    lower = np.tril(a) + np.triu(np.full_like(a, 7), 1)
    near(rs.linalg.eigh(client.asarray(lower)).eigenvalues.get(), np.linalg.eigvalsh(a), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_slogdet(client, dtype):
    a = matrices(dtype, (4, 5, 5), 86)
    sign, logabs = rs.linalg.slogdet(client.asarray(a))
    nsign, nlog = np.linalg.slogdet(a)
    near(same_meta(sign, nsign), nsign, dtype)
    near(same_meta(logabs, nlog), nlog, dtype)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], dtype=dtype)
    singular[1] = 2 * singular[0]
    s2, l2 = rs.linalg.slogdet(client.asarray(singular))
    assert s2.get() == 0 and l2.get() == -np.inf  # NumPy's (0, -inf), no error
    s0, l0 = rs.linalg.slogdet(client.asarray(np.zeros((2, 0, 0), dtype=dtype)))
    np.testing.assert_array_equal(s0.get(), np.ones(2, dtype))
    np.testing.assert_array_equal(l0.get(), np.zeros(2))


def test_integers_compute_in_float64_and_numpy_protocol(client):
    a = np.arange(12).reshape(4, 3) % 5
    x = client.asarray(a)
    u, s, vh = np.linalg.svd(x, full_matrices=False)  # __array_function__
    assert isinstance(u, rs.ndarray) and u.dtype == np.float64
    near(s.get(), np.linalg.svd(a, compute_uv=False), np.float64)
    q, r = np.linalg.qr(x)
    near((q @ r).get(), a.astype(np.float64), np.float64)  # Q @ R on the server
    sign, logabs = np.linalg.slogdet(client.asarray(np.eye(3) * 2))
    assert sign.get() == 1 and abs(logabs.get() - 3 * np.log(2)) < 1e-12


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_pinv_and_lstsq(client, dtype):
    a = matrices(dtype, (2, 5, 3), 88)
    close(rs.linalg.pinv(client.asarray(a)), np.linalg.pinv(a))
    close(np.linalg.pinv(client.asarray(a[0])), np.linalg.pinv(a[0]))
    low = (a[0] @ np.diag(np.array([1, 1, 0], dtype=dtype)) @ a[1][:3]).astype(dtype)
    close(rs.linalg.pinv(client.asarray(low)), np.linalg.pinv(low, rtol=None))
    b = matrices(dtype, (5, 2), 90)
    # The rank-deficient case with a cutoff well above the rounding of its
    # zero singular value (at the default, float32's sits near the cutoff).
    for lhs, rhs, rcond in ((a[0], b, None), (a[0], b[:, 0], None), (low, b, 1e-4)):
        x, res, rank, s = rs.linalg.lstsq(client.asarray(lhs), client.asarray(rhs), rcond)
        nx, nres, nrank, ns = np.linalg.lstsq(lhs, rhs, rcond)
        close(x, nx)
        close(res, nres)
        assert rank == nrank
        close(s, ns)


def test_results_in_one_program_and_unused_results(server):
    with rs.connect(server.target, lazy=True) as c:
        lazy_results(c)


def lazy_results(c):
    a = matrices(np.float64, (6, 4), 92)
    x = c.asarray(a)
    u, s, vh = rs.linalg.svd(x, full_matrices=False)
    rebuilt = (u * s[None, :]) @ vh  # recorded: svd and its uses in one program
    near(rebuilt.get(), a, np.float64)
    only_r = rs.linalg.qr(x).R  # Q computed, never kept
    near(np.abs(only_r.get()), np.abs(np.linalg.qr(a).R), np.float64)
    w = rs.linalg.eigh(c.asarray(a.T @ a)).eigenvalues
    near(w.get(), np.linalg.eigvalsh(a.T @ a), np.float64)


def test_errors_and_empty(client):
    with pytest.raises(ValueError, match="square"):
        rs.linalg.eigh(client.asarray(np.ones((2, 3))))
    with pytest.raises(ValueError, match="square"):
        rs.linalg.slogdet(client.asarray(np.ones((2, 3))))
    with pytest.raises(ValueError, match="two-dimensional"):
        rs.linalg.svd(client.asarray(np.ones(3)))
    with pytest.raises(TypeError, match="unsupported in linalg"):
        rs.linalg.qr(client.asarray(np.eye(2, dtype=np.float16)))
    with pytest.raises(ValueError, match="mode"):
        rs.linalg.qr(client.asarray(np.eye(2)), mode="economic")
    with pytest.raises(rs.linalg.LinAlgError):
        rs.linalg.eigh(client.asarray(np.full((3, 3), np.nan))).eigenvalues.get()
    # Empty matrices: full bases are identities, as NumPy's.
    e = np.zeros((3, 0))
    u, s, vh = rs.linalg.svd(client.asarray(e))
    nu, ns, nvh = np.linalg.svd(e)
    np.testing.assert_array_equal(same_meta(u, nu), nu)
    same_meta(s, ns)
    same_meta(vh, nvh)
    q, r = rs.linalg.qr(client.asarray(e), mode="complete")
    nq, nr = np.linalg.qr(e, mode="complete")
    np.testing.assert_array_equal(same_meta(q, nq), nq)
    same_meta(r, nr)
    # The session still serves after the errors.
    close(rs.linalg.slogdet(client.asarray(np.eye(2))).sign, np.ones(()))

"""rs.linalg's factorisations through the real server (LAPACK on the CPU
backend, cuSOLVER on CUDA), against numpy.linalg computed in the test:
cholesky, solve, inv, det, eigvalsh, svdvals over stacks, in every float
and complex dtype (integers computing in float64), what is composed from
them (matrix_rank, matrix_norm's 2/-2/'nuc', negative matrix_power), and
NumPy's LinAlgError for matrices that cannot be factored."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs
import helpers
from helpers import sample


def close(result: rs.ndarray, want: np.ndarray) -> None:
    """NumPy's dtype and shape; values within the factorisation's rounding."""
    helpers.close(result, want, 2e-4, 1e-9)


def matrices(dtype, shape, seed, spd=False):
    a = sample(np.float64, shape, seed) / 10
    if np.dtype(dtype).kind == "c":
        a = a + 1j * sample(np.float64, shape, seed + 1) / 10
    if spd:  # Hermitian positive definite: A A^H + n I
        a = a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128],
                         ids=str)
def test_routines_match_numpy(client, dtype):
    a = matrices(dtype, (3, 5, 5), 60)
    h = matrices(dtype, (3, 5, 5), 62, spd=True)
    b = matrices(dtype, (3, 5, 2), 64)
    x, y, z = client.asarray(a), client.asarray(h), client.asarray(b)
    close(rs.linalg.cholesky(y), np.linalg.cholesky(h))
    close(rs.linalg.cholesky(y, upper=True), np.linalg.cholesky(h, upper=True))
    close(rs.linalg.solve(x, z), np.linalg.solve(a, b))
    close(rs.linalg.solve(x, z[0, :, 0]), np.linalg.solve(a, b[0, :, 0]))  # a vector: 1-D
    close(rs.linalg.solve(x, z[0]), np.linalg.solve(a, b[0]))              # batch broadcast
    close(rs.linalg.inv(x), np.linalg.inv(a))
    close(rs.linalg.det(x), np.linalg.det(a))
    close(rs.linalg.eigvalsh(y), np.linalg.eigvalsh(h))
    close(rs.linalg.svdvals(x), np.linalg.svdvals(a))
    wide = matrices(dtype, (2, 3, 6), 66)
    tall = matrices(dtype, (4, 2), 68)
    close(rs.linalg.svdvals(client.asarray(wide)), np.linalg.svdvals(wide))
    close(rs.linalg.svdvals(client.asarray(tall)), np.linalg.svdvals(tall))
    # numpy.linalg through __array_function__ runs on the server too.
    close(np.linalg.inv(x), np.linalg.inv(a))
    close(np.linalg.eigvalsh(y, UPLO="U"), np.linalg.eigvalsh(h, UPLO="U"))


def test_composed_from_the_routines(client):
    a = matrices(np.float64, (2, 4, 4), 70)
    x = client.asarray(a)
    for ord in (2, -2, "nuc"):
        close(rs.linalg.matrix_norm(x, ord=ord), np.linalg.matrix_norm(a, ord=ord))
    close(rs.linalg.matrix_norm(x, ord=2, keepdims=True),
          np.linalg.matrix_norm(a, ord=2, keepdims=True))
    close(rs.linalg.matrix_power(x, -3), np.linalg.matrix_power(a, -3))
    low = np.stack([a[0], a[1] @ np.diag([1.0, 1.0, 0.0, 0.0]) @ a[0]])  # ranks 4 and 2
    check_rank = rs.linalg.matrix_rank(client.asarray(low)).get()
    np.testing.assert_array_equal(check_rank, np.linalg.matrix_rank(low))
    assert check_rank.tolist() == [4, 2]
    close(rs.linalg.det(client.asarray(np.arange(9).reshape(3, 3))),
          np.linalg.det(np.arange(9).reshape(3, 3)))  # ints compute in float64; singular: 0
    close(rs.linalg.det(client.asarray(np.zeros((2, 0, 0)))), np.linalg.det(np.zeros((2, 0, 0))))


def test_errors(client):
    singular = client.asarray(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(rs.linalg.LinAlgError, match="Singular matrix"):
        rs.linalg.inv(singular).get()
    with pytest.raises(ValueError, match="Singular matrix"):  # LinAlgError is a ValueError
        rs.linalg.solve(singular, client.asarray(np.ones(2))).get()
    with pytest.raises(rs.linalg.LinAlgError, match="positive definite"):
        rs.linalg.cholesky(client.asarray(-np.eye(3))).get()
    with pytest.raises(ValueError, match="square"):
        rs.linalg.inv(client.asarray(np.ones((2, 3))))
    with pytest.raises(ValueError, match="two-dimensional"):
        rs.linalg.det(client.asarray(np.ones(3)))
    with pytest.raises(rs.InvalidArgument, match="unsupported in linalg"):
        rs.linalg.inv(client.asarray(np.eye(2, dtype=np.float16)))
    # A failed factorisation leaves the session usable.
    close(rs.linalg.inv(client.asarray(np.eye(2))), np.eye(2))

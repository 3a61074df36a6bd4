"""rs.linalg's routines given NaN, infinity, empty and singular matrices
through the real server (issue 43), against numpy.linalg computed in the
test: the same exception class, or NumPy's values with NaN wherever
NumPy's are NaN (how much further NaN spreads differs between LAPACK
builds: nan_spread).

One deliberate difference: the iterative routines (svd, svdvals, eigh,
eigvalsh and what is composed from them: pinv, lstsq, matrix_rank, the
2/-2/nuclear norms) raise LinAlgError for NaN and infinity alike, without
running LAPACK or cuSOLVER. NumPy raises it for NaN ("SVD did not
converge", "Eigenvalues did not converge"), but given infinity it returns
NaN or, on some matrices, never returns (svd of eye(3) with one infinity
hangs in NumPy too); a shared server cannot hang. Every call that could
hang runs under a time guard, so a regression fails instead of freezing
CI."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import resident as rs
from conftest import DEVICE

# NumPy warns of the NaN it computes from NaN.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

GUARD_S = 60  # far above any call here; the hang this guards against is forever

LA = np.linalg


def bounded(fn, seconds: float = GUARD_S):
    """fn()'s value (or its exception), run on a daemon thread: a call that
    does not return within `seconds` fails the test rather than hanging it."""
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 (re-raised below)
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        pytest.fail(f"no answer within {seconds} s: an iteration that never ends?")
    if "error" in box:
        raise box["error"]
    return box["value"]


def fetch(result):
    """A result (an array, a tuple of them, a Python number) as NumPy."""
    if isinstance(result, tuple):
        return tuple(fetch(r) for r in result)
    if isinstance(result, rs.ndarray):
        return result.get()
    return np.asarray(result)


def outcome(fn):
    """('value', the result as NumPy arrays) or ('raise', the exception)."""
    try:
        return "value", fetch(fn())
    except Exception as e:  # noqa: BLE001 (compared by class)
        return "raise", e


def nan_spread(got: np.ndarray, want: np.ndarray, loose: bool = False) -> None:
    """got is NumPy's answer to a matrix holding NaN or infinity, as far as
    LAPACK builds agree. NumPy's NaN is ours (no finite answer where NumPy
    knows there is none); NumPy's infinity ours or NaN; a finite value
    of NumPy's ours to rounding, or NaN: Debian 12's OpenBLAS (0.3.21)
    spreads NaN further than NumPy's in getrs (solve of eye(3) with NaN at
    (1, 1) gives x[2] NaN where NumPy's gives b[2]). With `loose` (qr's Q
    and R: a Householder reflector of a column holding infinity is NaN, and
    how far it spreads differs between LAPACK versions), only: NaN or
    infinity somewhere iff NumPy's has some."""
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    got_nan, want_nan = np.isnan(got), np.isnan(want)
    if loose:
        assert np.isfinite(got).all() == np.isfinite(want).all(), f"ours {got}, NumPy's {want}"
        return
    assert got_nan[want_nan].all(), f"a finite answer where NumPy's is NaN: {got} vs {want}"
    inf = np.isinf(want)
    assert np.all((got[inf] == want[inf]) | got_nan[inf]), f"ours {got}, NumPy's {want}"
    both = np.isfinite(want) & ~got_nan
    single = want.dtype in (np.float32, np.complex64)
    np.testing.assert_allclose(got[both], want[both], rtol=0, atol=1e-4 if single else 1e-9)


def same_nan_outcome(ours, numpy_fn, loose=()) -> None:
    """same_outcome's for a matrix holding NaN or infinity: NumPy's
    exception class, or its dtypes, shapes and NaN (nan_spread; results
    numbered in `loose` compared loosely)."""
    kind, want = outcome(numpy_fn)
    got_kind, got = ours
    if kind == "raise":
        assert got_kind == "raise" and isinstance(got, type(want)), (
            f"NumPy raises {type(want).__name__}: {want}; we gave {got!r}")
        return
    assert got_kind == "value", f"NumPy gives {want}; we raised {type(got).__name__}: {got}"
    wants = want if isinstance(want, tuple) else (want,)
    gots = got if isinstance(got, tuple) else (got,)
    assert len(gots) == len(wants)
    for i, (g, w) in enumerate(zip(gots, wants)):
        nan_spread(np.asarray(g), np.asarray(w), loose=i in loose)


# On CUDA the direct routines (solve, inv, det, slogdet, cholesky, qr) are
# cuSOLVER's and cuBLAS's LU and QR: given NaN or infinity, or a matrix that
# is exactly singular only in LAPACK's rounding, their answers differ from
# NumPy's (README, the linalg paragraph of "From Python"). There they must
# still answer at once with a value or LinAlgError, never hang or fail
# otherwise.
CUDA_DIRECT = DEVICE != "cpu"


def answered(ours, name: str) -> None:
    kind, got = ours
    assert kind == "value" or isinstance(got, rs.linalg.LinAlgError), f"{name}: {got!r}"


def same_outcome(ours, numpy_fn, approx: bool = False) -> None:
    """ours (an outcome()) is NumPy's: its exception class (ours derive from
    NumPy's: LinAlgError, ValueError) or its dtypes, shapes and values, NaN
    and infinities where NumPy's are (exactly, or with approx to the
    rounding of another build of the same LAPACK steps)."""
    kind, want = outcome(numpy_fn)
    got_kind, got = ours
    if kind == "raise":
        assert got_kind == "raise", f"NumPy raises {type(want).__name__}: {want}; we gave {got}"
        assert isinstance(got, type(want)), (
            f"NumPy raises {type(want).__name__}; we raised {type(got).__name__}: {got}")
        return
    assert got_kind == "value", f"NumPy gives {want}; we raised {type(got).__name__}: {got}"
    wants = want if isinstance(want, tuple) else (want,)
    gots = got if isinstance(got, tuple) else (got,)
    assert len(gots) == len(wants)
    for g, w in zip(gots, wants):
        w = np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        if approx:
            finite = np.abs(w[np.isfinite(w)])
            scale = max(1.0, float(finite.max(initial=0)))
            single = w.dtype in (np.float32, np.complex64)
            np.testing.assert_allclose(g, w, rtol=0, atol=(1e-4 if single else 1e-9) * scale,
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)  # NaN equals NaN here


def with_value(n: int, where, value, dtype=np.float64) -> np.ndarray:
    a = np.eye(n, dtype=dtype)
    a[where] = value
    return a


NONFINITE = {
    "nan_diag": with_value(3, (1, 1), np.nan),
    "nan_lower": with_value(3, (2, 0), np.nan),
    "posinf_upper": with_value(3, (0, 1), np.inf),
    "neginf_diag": with_value(3, (1, 1), -np.inf),
    "posinf_first": with_value(3, (0, 0), np.inf),  # NumPy's svd never returns on this one
    "neginf_lower": with_value(3, (2, 1), -np.inf),
    "dense_nan": np.array([[4.0, 1.0, 2.0], [1.0, np.nan, 0.5], [2.0, 0.5, 3.0]]),
}

# The routines that divide and multiply through LU, Cholesky or QR (no
# iteration): NumPy's NaN, infinities and errors are ours.
def direct_routines(client):
    """name -> (numpy function of a NumPy array, ours of a resident one)."""
    def rhs(n):
        return np.arange(1.0, n + 1)
    return {
        "solve": (lambda a: LA.solve(a, rhs(a.shape[-1])),
                  lambda x: rs.linalg.solve(x, client.asarray(rhs(x.shape[-1])))),
        "solve_matrix": (lambda a: LA.solve(a, np.ones(a.shape[:-1] + (2,))),
                         lambda x: rs.linalg.solve(x, client.asarray(np.ones(x.shape[:-1] + (2,))))),
        "inv": (LA.inv, rs.linalg.inv),
        "det": (LA.det, rs.linalg.det),
        "slogdet": (lambda a: tuple(LA.slogdet(a)), lambda x: tuple(rs.linalg.slogdet(x))),
        "cholesky": (LA.cholesky, rs.linalg.cholesky),
        "qr": (lambda a: tuple(LA.qr(a)), lambda x: tuple(rs.linalg.qr(x))),
        "matrix_power_-1": (lambda a: LA.matrix_power(a, -1),
                            lambda x: rs.linalg.matrix_power(x, -1)),
    }


def check_direct_routines(client, a: np.ndarray, x) -> None:
    """Each direct routine of x (a on the server) against NumPy's of a."""
    for name, (ours_np, ours_rs) in direct_routines(client).items():
        got = bounded(lambda: outcome(lambda: ours_rs(x)))
        if CUDA_DIRECT:
            answered(got, name)
            continue
        try:
            same_nan_outcome(got, lambda: ours_np(a), loose=(0, 1) if name == "qr" else ())
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128], ids=str)
@pytest.mark.parametrize("case", sorted(NONFINITE))
def test_direct_routines_give_numpys_nan(client, case, dtype):
    a = NONFINITE[case].astype(dtype)
    x = client.asarray(a)
    check_direct_routines(client, a, x)


# The iterative routines, and what is composed from them: name -> ours of a
# resident array, the NumPy routine (called only on NaN, where NumPy raises
# and returns at once; None where NumPy itself hangs or returns NaN).
def iterative_routines(client):
    return {
        "svd": (lambda x: tuple(rs.linalg.svd(x)), lambda a: LA.svd(a)),
        "svd_reduced": (lambda x: tuple(rs.linalg.svd(x, full_matrices=False)),
                        lambda a: LA.svd(a, full_matrices=False)),
        "svdvals": (rs.linalg.svdvals, LA.svdvals),
        "svd_no_uv": (lambda x: rs.linalg.svd(x, compute_uv=False),
                      lambda a: LA.svd(a, compute_uv=False)),
        "eigvalsh": (rs.linalg.eigvalsh, LA.eigvalsh),
        "eigvalsh_upper": (lambda x: np.linalg.eigvalsh(x, UPLO="U"),
                           lambda a: LA.eigvalsh(a, UPLO="U")),
        "eigh": (lambda x: tuple(rs.linalg.eigh(x)), None),  # NumPy gives NaN for NaN
        "pinv": (rs.linalg.pinv, LA.pinv),
        "matrix_rank": (rs.linalg.matrix_rank, LA.matrix_rank),
        "norm_2": (lambda x: rs.linalg.norm(x, 2), lambda a: LA.norm(a, 2)),
        "norm_-2": (lambda x: rs.linalg.norm(x, -2), lambda a: LA.norm(a, -2)),
        "matrix_norm_nuc": (lambda x: rs.linalg.matrix_norm(x, ord="nuc"),
                            lambda a: LA.matrix_norm(a, ord="nuc")),
        "lstsq": (lambda x: rs.linalg.lstsq(x, client.asarray(np.ones(x.shape[0])))[0],
                  None),  # NumPy's gelsd never returns on NaN
    }


def reads_nonfinite(name: str, a: np.ndarray) -> bool:
    """Whether the routine reads a non-finite element: eigh and eigvalsh
    read only the lower triangle (UPLO='U' the upper), as NumPy's."""
    if name.startswith("eig"):
        part = np.triu(a) if name.endswith("upper") else np.tril(a)
        return not np.all(np.isfinite(part))
    return not np.all(np.isfinite(a))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex64, np.complex128], ids=str)
@pytest.mark.parametrize("case", sorted(NONFINITE))
def test_iterative_routines_raise_linalgerror(client, case, dtype):
    a = NONFINITE[case].astype(dtype)
    x = client.asarray(a)
    for name, (ours, numpys) in iterative_routines(client).items():
        start = time.monotonic()
        kind, got = bounded(lambda: outcome(lambda: ours(x)))
        took = time.monotonic() - start
        if not reads_nonfinite(name, a):
            # The NaN or infinity is in the triangle eigh does not read:
            # NumPy's finite answer.
            assert kind == "value", f"{name}: {got}"
            np.testing.assert_allclose(got if not isinstance(got, tuple) else got[0],
                                       LA.eigvalsh(a, UPLO="U" if "upper" in name else "L"),
                                       atol=1e-5)
            continue
        assert kind == "raise" and isinstance(got, np.linalg.LinAlgError), (
            f"{name} of {case}: want LinAlgError, got {got!r}")
        assert isinstance(got, rs.linalg.LinAlgError) and isinstance(got, ValueError)
        assert "did not converge" in str(got), f"{name}: {got}"
        assert took < 10, f"{name} took {took:.1f} s"
        if numpys is not None and np.isnan(a).any():
            # NumPy itself raises the same class on NaN (the oracle).
            with pytest.raises(np.linalg.LinAlgError):
                numpys(a)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf], ids=str)
def test_nonfinite_imaginary_part(client, dtype, value):
    """A NaN or infinity in an imaginary part counts as one in the real part."""
    a = np.eye(3, dtype=dtype)
    a[1, 0] = complex(0.5, value)
    x = client.asarray(a)
    for name, (ours, _) in iterative_routines(client).items():
        kind, got = bounded(lambda: outcome(lambda: ours(x)))
        if name == "eigvalsh_upper":  # (1, 0) is below the diagonal
            assert kind == "value", f"{name}: {got}"
            continue
        assert kind == "raise" and isinstance(got, rs.linalg.LinAlgError), f"{name}: {got!r}"
    check_direct_routines(client, a, x)


def test_svd_of_eye_with_one_infinity_never_hangs(client):
    """Issue 43's case: svd of eye(3) with one -inf (NumPy's svd never
    returns on eye(3) with inf at (0, 0)), at every position, both signs,
    and in a stack where the other matrices are finite; then the server
    still serves."""
    for value in (-np.inf, np.inf):
        for i in range(3):
            for j in range(3):
                a = with_value(3, (i, j), value)
                x = client.asarray(a)
                for fn in (lambda: rs.linalg.svd(x).S.get(), lambda: rs.linalg.svdvals(x).get(),
                           lambda: rs.linalg.svd(x, full_matrices=False).U.get()):
                    with pytest.raises(rs.linalg.LinAlgError, match="SVD did not converge"):
                        bounded(fn, 30)
    stack = np.stack([np.eye(3), with_value(3, (0, 0), -np.inf), np.eye(3)])
    with pytest.raises(np.linalg.LinAlgError):
        bounded(lambda: rs.linalg.svd(client.asarray(stack)).S.get(), 30)
    np.testing.assert_allclose(rs.linalg.svdvals(client.asarray(np.diag([3.0, 2.0, 1.0]))).get(),
                               [3.0, 2.0, 1.0])


def test_concurrent_hang_cases_leave_the_server_serving(server):
    """Two such calls at once (a tenant's whole concurrency) and then a
    good call, from another client, answered within the guard."""
    def hostile():
        with rs.connect(server.target) as c:
            x = c.asarray(with_value(3, (0, 0), -np.inf))
            with pytest.raises(rs.linalg.LinAlgError):
                rs.linalg.svd(x).S.get()
            with pytest.raises(rs.linalg.LinAlgError):
                rs.linalg.eigh(x).eigenvalues.get()
            return True

    threads_done = []
    ts = [threading.Thread(target=lambda: threads_done.append(bounded(hostile, 30)))
          for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(GUARD_S)
    assert threads_done == [True, True]
    with rs.connect(server.target) as c:
        got = bounded(lambda: rs.linalg.svdvals(c.asarray(np.diag([2.0, 1.0]))).get(), 30)
    np.testing.assert_allclose(got, [2.0, 1.0])


EMPTY_SHAPES = [(0, 0), (0, 3), (3, 0), (0, 2, 2), (2, 0, 0), (2, 0, 3), (2, 3, 0)]


def all_routines(client):
    """name -> (NumPy's, ours, approx): every routine, on any shape."""
    routines = {name: (np_fn, rs_fn, False)
                for name, (np_fn, rs_fn) in direct_routines(client).items()
                if not name.startswith("solve")}
    routines["solve"] = (lambda a: LA.solve(a, np.ones(a.shape[:-1] + (1,))),
                         lambda x: rs.linalg.solve(x, client.asarray(np.ones(x.shape[:-1] + (1,)))),
                         False)
    routines.update({
        "svd": (lambda a: tuple(LA.svd(a)), lambda x: tuple(rs.linalg.svd(x)), True),
        "svd_reduced": (lambda a: tuple(LA.svd(a, full_matrices=False)),
                        lambda x: tuple(rs.linalg.svd(x, full_matrices=False)), True),
        "svdvals": (LA.svdvals, rs.linalg.svdvals, True),
        "eigvalsh": (LA.eigvalsh, rs.linalg.eigvalsh, True),
        "eigh_values": (lambda a: LA.eigh(a).eigenvalues,
                        lambda x: rs.linalg.eigh(x).eigenvalues, True),
        "pinv": (LA.pinv, rs.linalg.pinv, True),
        "matrix_rank": (LA.matrix_rank, rs.linalg.matrix_rank, False),
        "qr_complete": (lambda a: tuple(LA.qr(a, mode="complete")),
                        lambda x: tuple(rs.linalg.qr(x, mode="complete")), False),
    })
    for ord in (2, -2, "nuc", "fro", 1, -1, np.inf, -np.inf):
        routines[f"matrix_norm_{ord}"] = (
            lambda a, o=ord: LA.matrix_norm(a, ord=o),
            lambda x, o=ord: rs.linalg.matrix_norm(x, ord=o), True)
    return routines


@pytest.mark.parametrize("shape", EMPTY_SHAPES, ids=str)
def test_empty_matrices(client, shape):
    a = np.zeros(shape)
    x = client.asarray(a)
    for name, (np_fn, rs_fn, approx) in all_routines(client).items():
        got = bounded(lambda: outcome(lambda: rs_fn(x)))
        try:
            same_outcome(got, lambda: np_fn(a), approx=approx)
        except AssertionError as e:
            raise AssertionError(f"{name} of shape {shape}: {e}") from None


def test_lstsq_empty(client):
    for m, n in ((0, 0), (0, 3), (3, 0)):
        a, b = np.zeros((m, n)), np.ones(m)
        x, res, rank, sv = rs.linalg.lstsq(client.asarray(a), client.asarray(b))
        nx, nres, nrank, nsv = LA.lstsq(a, b)
        for g, w in ((x, nx), (res, nres), (sv, nsv)):
            g = g.get()
            assert g.shape == w.shape, (m, n)
            np.testing.assert_allclose(g, w)
        assert rank == nrank


SINGULAR = {
    "rank1": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "rank2": np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),
    "zero": np.zeros((3, 3)),
    "stack": np.stack([np.eye(3), np.zeros((3, 3))]),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128], ids=str)
@pytest.mark.parametrize("case", sorted(SINGULAR))
def test_singular_matrices(client, case, dtype):
    a = SINGULAR[case].astype(dtype)
    x = client.asarray(a)
    routines = all_routines(client)
    # Singular vectors and Q are unique only up to signs; their values are
    # checked by test_decompositions.py.
    for name in ("svd", "svd_reduced", "qr", "qr_complete"):
        routines.pop(name)
    routines["svd_values"] = (lambda a: LA.svd(a).S, lambda x: rs.linalg.svd(x).S, True)
    for name, (np_fn, rs_fn, approx) in routines.items():
        got = bounded(lambda: outcome(lambda: rs_fn(x)))
        if CUDA_DIRECT and case == "rank2" and name in ("inv", "solve", "matrix_power_-1", "det",
                                                         "slogdet"):
            answered(got, name)  # singular only in LAPACK's rounding
            continue
        loose = approx or name in ("det", "slogdet")
        try:
            same_outcome(got, lambda: np_fn(a), approx=loose)
        except AssertionError as e:
            raise AssertionError(f"{name} of {case}: {e}") from None
    # lstsq of the first matrix: NumPy's rank (a Python int here) and
    # singular values.
    a0 = a[0] if a.ndim > 2 else a
    b0 = np.ones(a0.shape[0], dtype=dtype)
    _, _, rank, sv = rs.linalg.lstsq(client.asarray(a0), client.asarray(b0))
    _, _, want_rank, want_sv = LA.lstsq(a0, b0)
    assert int(rank) == int(want_rank)
    same_outcome(("value", sv.get()), lambda: want_sv, approx=True)


def test_not_matrices_raise_numpys_linalgerror(client):
    """Too few dimensions or non-square matrices: NumPy's LinAlgError."""
    cases = [(np.ones(3), ("inv", "det", "svdvals", "eigvalsh", "cholesky", "qr", "svd", "eigh",
                           "slogdet")),
             (np.ones((2, 3)), ("inv", "det", "eigvalsh", "cholesky", "eigh", "slogdet"))]
    for a, names in cases:
        x = client.asarray(a)
        for name in names:
            with pytest.raises(np.linalg.LinAlgError):
                getattr(np.linalg, name)(a)
            with pytest.raises(np.linalg.LinAlgError):
                fetch(getattr(rs.linalg, name)(x))
    with pytest.raises(np.linalg.LinAlgError):
        rs.linalg.solve(client.asarray(np.ones(3)), client.asarray(np.ones(3)))

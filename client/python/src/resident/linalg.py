"""The Array API's ``linalg`` extension with numpy.linalg's semantics,
recorded into the same lazy program. The server's routines (cuSOLVER on
CUDA, LAPACK on the CPU) over stacks of matrices: ``cholesky``, ``solve``,
``inv``, ``det``, ``eigvalsh``, ``svdvals``; composed from them and the
other ops: ``matrix_rank``, ``matrix_norm`` (every order), negative
``matrix_power``, ``matmul``, ``matrix_transpose``, ``tensordot``,
``vecdot``, ``outer``, ``diagonal``, ``trace``, ``cross``,
``vector_norm`` and NumPy's ``norm``. A matrix the server cannot factor
raises ``LinAlgError`` (a ValueError, as NumPy's).

The routines of several results, ``qr``, ``svd``, ``eigh`` and
``slogdet``, are one instruction each with one output per result, and
return NumPy's named tuples (QRResult, SVDResult, EighResult,
SlogdetResult); ``pinv`` and NumPy's ``lstsq`` are composed from ``svd``
(NumPy's own method; lstsq reads the rank back to shape its residuals).

    import resident as rs
    n = rs.linalg.vector_norm(x, axis=-1)      # sqrt(sum(|x|^2)) per row
    t = rs.linalg.trace(a, offset=1)
"""

from __future__ import annotations

import math
import operator
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _array
from . import _infer_shape
from ._array import ndarray, record, record_many
from .v1 import resident_pb2 as pb
from ._errors import LinAlgError
from ._composed import matrix_transpose, tensordot, vecdot
from ._manipulation import _arange_on, _norm_axes
from ._shape_ops import broadcast_to, expand_dims, max as _max, min as _min, stack, sum as _sum
from ._sorting import take

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot", "outer", "diagonal", "trace",
           "cross", "vector_norm", "matrix_norm", "matrix_power", "norm", "cholesky", "solve",
           "inv", "det", "eigvalsh", "svdvals", "matrix_rank", "qr", "svd", "eigh", "slogdet",
           "pinv", "lstsq", "QRResult", "SVDResult", "EighResult", "SlogdetResult",
           "LinAlgError"]

matmul = _array.matmul

Axis = Union[None, int, Sequence[int]]


class QRResult(NamedTuple):
    Q: ndarray
    R: ndarray


class SVDResult(NamedTuple):
    U: ndarray
    S: ndarray
    Vh: ndarray


class EighResult(NamedTuple):
    eigenvalues: ndarray
    eigenvectors: ndarray


class SlogdetResult(NamedTuple):
    sign: ndarray
    logabsdet: ndarray


def _decompose(op: str, x: ndarray, count: int, full: bool = False) -> List[ndarray]:
    """One instruction of ``count`` results, each an array of its own."""
    if not isinstance(x, ndarray):
        raise TypeError(f"linalg.{op} needs a resident array, not {type(x).__name__}")
    metas: List[Any] = [None] * count
    if x._node.meta is not None:  # NumPy's errors at the call
        metas = _infer_shape.decomposition(op, x._node.meta, full)
    return record_many(op, [x._node], x._node.session, pb.Instruction(full=full), metas)


def _routine(op: str, *xs: ndarray) -> ndarray:
    for x in xs:
        if not isinstance(x, ndarray):
            raise TypeError(f"linalg.{op} needs resident arrays, not {type(x).__name__}")
    return record(op, [x._node for x in xs], xs[0]._node.session)


def cholesky(x: ndarray, /, *, upper: bool = False) -> ndarray:
    """The Cholesky factor of each Hermitian positive-definite matrix: lower
    (x = L L^H), or with upper=True U = L^H. LinAlgError if one is not
    positive definite."""
    lower = _routine("cholesky", x)
    if not upper:
        return lower
    u = matrix_transpose(lower)
    return _array.conj(u) if u.dtype.kind == "c" else u


def solve(x1: ndarray, x2: ndarray, /) -> ndarray:
    """The solution of x1 @ x = x2 for square x1 (..., M, M): x2 of shape
    (M,) is one vector, else (..., M, K) with the batch broadcast, as
    numpy.linalg.solve in NumPy 2. LinAlgError if x1 is singular."""
    if not isinstance(x1, ndarray) or not isinstance(x2, ndarray):
        raise TypeError("linalg.solve needs resident arrays")
    if x1.ndim < 2:
        raise LinAlgError(f"linalg.solve: {x1.ndim}-dimensional array given. Array must be at "
                          "least two-dimensional")
    m = x1.shape[-1]
    if x1.shape[-2] != m:
        raise LinAlgError("linalg.solve: Last 2 dimensions of the array must be square")
    vector = x2.ndim == 1
    b = x2.reshape((x2.shape[0], 1)) if vector else x2
    if b.shape[-2] != m:
        raise ValueError(f"linalg.solve: x2 has {b.shape[-2]} rows; x1's matrices are {m} x {m}")
    batch = tuple(np.broadcast_shapes(x1.shape[:-2], b.shape[:-2]))
    a = x1 if x1.shape[:-2] == batch else broadcast_to(x1, batch + x1.shape[-2:])
    b = b if b.shape[:-2] == batch else broadcast_to(b, batch + b.shape[-2:])
    out = _routine("solve", a, b)
    return out.reshape(batch + (m,)) if vector else out


def inv(x: ndarray, /) -> ndarray:
    """The inverse of each square matrix. LinAlgError if one is singular."""
    return _routine("inv", x)


def det(x: ndarray, /) -> ndarray:
    """The determinant of each square matrix (from an LU factorisation)."""
    return _routine("det", x)


def eigvalsh(x: ndarray, /) -> ndarray:
    """The eigenvalues of each Hermitian matrix (its lower triangle), in
    ascending order, in the real dtype."""
    return _routine("eigvalsh", x)


def svdvals(x: ndarray, /) -> ndarray:
    """The singular values of each matrix, in descending order, in the real
    dtype."""
    return _routine("svdvals", x)


def qr(x: ndarray, /, *, mode: str = "reduced") -> Any:
    """The QR factorisation of each matrix (..., M, N), K = min(M, N):
    mode 'reduced' Q (..., M, K) and R (..., K, N), 'complete' Q (..., M, M)
    and R (..., M, N), 'r' R alone, as numpy.linalg.qr (LAPACK's geqrf and
    orgqr: R's diagonal may be negative)."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    q, r = _decompose("qr", x, 2, full=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def svd(x: ndarray, /, *, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """The singular value decomposition x = U @ diag(S) @ Vh of each matrix:
    U (..., M, M), S (..., K) descending, Vh (..., N, N), or with
    full_matrices=False U (..., M, K), Vh (..., K, N). compute_uv=False is
    svdvals. The singular vectors' signs are the library's (as NumPy's,
    they may differ between libraries)."""
    if not compute_uv:
        return svdvals(x)
    u, sv, vh = _decompose("svd", x, 3, full=bool(full_matrices))
    return SVDResult(u, sv, vh)


def eigh(x: ndarray, /, UPLO: str = "L") -> EighResult:  # noqa: N803 (NumPy's name)
    """The eigenvalues (ascending, real) and eigenvectors (columns) of each
    Hermitian matrix, from its lower triangle (UPLO='U': the upper one)."""
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    if UPLO == "U" and isinstance(x, ndarray):
        x = matrix_transpose(x)
        x = _array.conj(x) if x.dtype.kind == "c" else x
    w, v = _decompose("eigh", x, 2)
    return EighResult(w, v)


def slogdet(x: ndarray, /) -> SlogdetResult:
    """The sign and natural log of |det| of each square matrix, from an LU
    factorisation: sign 0 and logabsdet -inf for a singular one; complex
    matrices give a complex sign of modulus 1."""
    sign, logabs = _decompose("slogdet", x, 2)
    return SlogdetResult(sign, logabs)


def _cutoff_factor(x: ndarray, rtol: Any) -> Any:
    if rtol is None:
        real = np.dtype(x.dtype.char.lower()) if x.dtype.kind == "c" else (
            x.dtype if x.dtype.kind == "f" else np.dtype(np.float64))
        return max(x.shape[-2:]) * float(np.finfo(real).eps)
    if isinstance(rtol, ndarray):
        return expand_dims(rtol, axis=-1) if rtol.ndim > 0 else rtol
    return rtol


def pinv(x: ndarray, /, *, rtol: Any = None, rcond: Any = None,
         hermitian: bool = False) -> ndarray:
    """The Moore-Penrose pseudo-inverse of each matrix, from its SVD:
    singular values at most rtol times the largest count as zero (rtol:
    max(M, N) times eps by default, the Array API's; NumPy's ``rcond`` is
    the same cutoff)."""
    if x.ndim < 2:
        raise ValueError("pinv needs an array of at least two dimensions")
    u, sv, vh = svd(x, full_matrices=False)
    factor = _cutoff_factor(x, rcond if rcond is not None else rtol)
    if sv.shape[-1] == 0:
        inv_s = sv
    else:
        top = _max(sv, axis=-1, keepdims=True)
        inv_s = _array.where(_array.greater(sv, top * factor), 1 / sv, 0)
    if x.dtype.kind == "c":
        u, vh = _array.conj(u), _array.conj(vh)
    scaled = expand_dims(inv_s, axis=-1).astype(u.dtype) * matrix_transpose(u)
    return matmul(matrix_transpose(vh), scaled)


def lstsq(a: ndarray, b: ndarray, rcond: Any = None) -> Tuple[ndarray, ndarray, int, ndarray]:
    """numpy.linalg.lstsq: the least-squares solution x of a @ x = b (a 2-D,
    b 1-D or 2-D), the residuals' sums of squares (empty unless a has full
    column rank and more rows than columns), the rank and the singular
    values; rcond as NumPy's (None: eps times max(M, N)). Reads the rank
    back (one round trip)."""
    if a.ndim != 2 or b.ndim not in (1, 2):
        raise ValueError("lstsq needs a 2-D a and a 1-D or 2-D b")
    m, n = a.shape
    if b.shape[0] != m:
        raise ValueError(f"lstsq: a has {m} rows, b {b.shape[0]}")
    sv = svdvals(a)
    factor = _cutoff_factor(a, rcond)
    x = matmul(pinv(a, rcond=factor), b)
    if sv.shape[0] == 0:
        rank = 0
    else:
        rank = int(_sum(_array.greater(sv, _max(sv) * factor).astype(np.int64)))
    if rank == n and m > n:
        r = _array.absolute(b - matmul(a, x))
        residuals = _sum(r * r, axis=0)
        if b.ndim == 1:
            residuals = residuals.reshape((1,))
    else:
        real = sv.dtype if sv.shape[0] else np.dtype(np.float64)
        residuals = _shape_empty(a, real)
    return x, residuals, rank, sv


def _shape_empty(like: ndarray, dtype: Any) -> ndarray:
    return _arange_on(like, 0, np.int64).astype(dtype)


def matrix_rank(x: ndarray, /, *, rtol: Any = None) -> ndarray:
    """The number of singular values above rtol times the largest (rtol:
    max(M, N) times the dtype's epsilon by default, or a float or an array
    broadcast against the stack), as the Array API's matrix_rank."""
    if x.ndim < 2:
        raise ValueError("matrix_rank needs an array of at least two dimensions")
    s = svdvals(x)
    if rtol is None:
        rtol = max(x.shape[-2:]) * float(np.finfo(s.dtype).eps)
    top = _max(s, axis=-1, keepdims=True) if s.shape[-1] > 0 else s
    if isinstance(rtol, ndarray):
        rtol = expand_dims(rtol, axis=-1) if rtol.ndim > 0 else rtol
    big = _array.greater(s, top * rtol)
    return _sum(big.astype(np.int64), axis=-1)


def outer(x1: ndarray, x2: ndarray, /) -> ndarray:
    """The outer product of two 1-D arrays: ``x1[i] * x2[j]``."""
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer needs two 1-D arrays, got {x1.ndim}-D and {x2.ndim}-D")
    return _array.multiply(x1.reshape((x1.shape[0], 1)), x2.reshape((1, x2.shape[0])))


def diagonal(x: ndarray, /, *, offset: int = 0) -> ndarray:
    """The ``offset`` diagonal of each matrix of the last two axes (above the
    main one for offset > 0): a gather from the matrices flattened."""
    if x.ndim < 2:
        raise ValueError("diagonal needs an array of at least two dimensions")
    offset = operator.index(offset)
    n, m = x.shape[-2], x.shape[-1]
    lead = x.shape[:-2]
    if offset >= 0:
        k, start = max(0, min(n, m - offset)), offset
    else:
        k, start = max(0, min(n + offset, m)), -offset * m
    flat = x.reshape(lead + (n * m,))
    if k == 0:
        return flat[(Ellipsis, slice(0, 0))]
    index = _arange_on(x, k, np.int64) * (m + 1) + start
    return take(flat, index, axis=-1)


def trace(x: ndarray, /, *, offset: int = 0, dtype: Any = None) -> ndarray:
    """The sum of each matrix's ``offset`` diagonal (NumPy's accumulator
    dtypes, or ``dtype``)."""
    return _sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def _along(x: ndarray, axis: int, i: int) -> ndarray:
    key: List[Any] = [slice(None)] * x.ndim
    key[axis] = i
    return x[tuple(key)]


def cross(x1: ndarray, x2: ndarray, /, *, axis: int = -1) -> ndarray:
    """The cross product of 3-vectors along ``axis`` (the operands
    broadcast against each other first)."""
    axis = operator.index(axis)
    for v in (x1, x2):
        if not -v.ndim <= axis < v.ndim:
            raise np.exceptions.AxisError(axis, v.ndim)
    # The axis counted from the end, so operands of different ranks agree.
    from_end = [axis if axis < 0 else axis - v.ndim for v in (x1, x2)]
    if x1.shape[from_end[0]] != 3 or x2.shape[from_end[1]] != 3:
        raise ValueError(f"cross needs length 3 along axis {axis}, got shapes {x1.shape} and "
                         f"{x2.shape}")
    if from_end[0] != from_end[1]:
        raise ValueError("cross: axis must name the same axis (from the end) in both arrays")
    shape = np.broadcast_shapes(x1.shape, x2.shape)
    ndim = len(shape)
    axis = from_end[0] % ndim
    a = broadcast_to(x1, shape) if x1.shape != shape else x1
    b = broadcast_to(x2, shape) if x2.shape != shape else x2
    a0, a1, a2 = (_along(a, axis, i) for i in range(3))
    b0, b1, b2 = (_along(b, axis, i) for i in range(3))
    parts = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
    return stack(parts, axis=axis)


def _axes(axis: Axis, ndim: int) -> Tuple[int, ...]:
    return tuple(_norm_axes(axis, ndim))


def vector_norm(x: ndarray, /, *, axis: Axis = None, keepdims: bool = False,
                ord: Union[int, float] = 2) -> ndarray:  # noqa: A002 (the standard's name)
    """The ``ord``-norm of the vectors along ``axis`` (all axes when None):
    ``sum(|x|**ord)**(1/ord)``; inf and -inf the largest and smallest
    ``|x|``, 0 the count of nonzeros. Real result (complex gives its parts'
    float), as numpy.linalg.vector_norm."""
    axes = _axes(axis, x.ndim)
    a = _array.absolute(x)
    if a.dtype.kind in "biu":
        a = a.astype(np.float64)
    if ord == math.inf:
        out = _max(a, axis=axes, keepdims=keepdims)
    elif ord == -math.inf:
        out = _min(a, axis=axes, keepdims=keepdims)
    elif ord == 0:
        out = _sum(_array.not_equal(a, 0).astype(a.dtype), axis=axes, keepdims=keepdims)
    elif ord == 1:
        out = _sum(a, axis=axes, keepdims=keepdims)
    elif ord == 2:
        out = _array.sqrt(_sum(a * a, axis=axes, keepdims=keepdims))
    else:
        p = float(ord)
        out = _array.power(_sum(_array.power(a, p), axis=axes, keepdims=keepdims), 1.0 / p)
    return out


def matrix_norm(x: ndarray, /, *, keepdims: bool = False,
                ord: Union[int, float, str, None] = "fro") -> ndarray:  # noqa: A002
    """The norm of each matrix of the last two axes: 'fro' (Frobenius), 1
    and -1 (largest / smallest column sum of |x|), inf and -inf (of row
    sums), 2, -2 and 'nuc' (the largest, the smallest and the sum of the
    singular values), as numpy.linalg.matrix_norm."""
    if x.ndim < 2:
        raise ValueError("matrix_norm needs an array of at least two dimensions")
    a = _array.absolute(x)
    if a.dtype.kind in "biu":
        a = a.astype(np.float64)
    if ord in ("fro", None):
        out = _array.sqrt(_sum(a * a, axis=(-2, -1), keepdims=keepdims))
    elif ord in (1, -1):
        cols = _sum(a, axis=-2, keepdims=True)
        pick = _max if ord == 1 else _min
        if ord == 1 and cols.shape[-1] == 0:
            pick = _sum  # NumPy's largest of no sums is 0 (the smallest an error)
        out = pick(cols, axis=-1, keepdims=True)
        if not keepdims:
            out = out.reshape(out.shape[:-2])
    elif ord in (math.inf, -math.inf):
        rows = _sum(a, axis=-1, keepdims=True)
        pick = _max if ord == math.inf else _min
        if ord == math.inf and rows.shape[-2] == 0:
            pick = _sum
        out = pick(rows, axis=-2, keepdims=True)
        if not keepdims:
            out = out.reshape(out.shape[:-2])
    elif ord in (2, -2, "nuc"):
        sv = svdvals(x)
        # No singular values (an empty matrix): NumPy's 2-norm is 0, as the
        # nuclear norm; its -2-norm an error, as _min's.
        largest = _sum if sv.shape[-1] == 0 else _max
        out = (largest(sv, axis=-1) if ord == 2 else _min(sv, axis=-1) if ord == -2
               else _sum(sv, axis=-1))
        if keepdims:
            out = out.reshape(out.shape + (1, 1))
    else:
        raise ValueError(f"Invalid norm order {ord!r} for matrices")
    return out


def matrix_power(x: ndarray, n: int, /) -> ndarray:
    """``x`` (square matrices in the last two axes) to the integer power
    ``n`` by repeated squaring, as numpy.linalg.matrix_power; n = 0 gives
    identities of x's dtype; a negative n is the inverse's power."""
    n = operator.index(n)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:  # NumPy's LinAlgError (a ValueError)
        raise LinAlgError(f"matrix_power needs square matrices in the last two axes, got shape "
                          f"{x.shape}")
    if n < 0:
        x = inv(x)
        n = -n
    if n == 0:
        k = x.shape[-1]
        rows = _arange_on(x, k, np.int64).reshape((k, 1))
        cols = _arange_on(x, k, np.int64).reshape((1, k))
        eye = _array.equal(rows, cols).astype(x.dtype)
        return broadcast_to(eye, x.shape) if x.ndim > 2 else eye
    result: Optional[ndarray] = None
    square = x
    while True:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if not n:
            break
        square = matmul(square, square)
    assert result is not None
    return result


def norm(x: ndarray, ord: Union[int, float, str, None] = None,  # noqa: A002
         axis: Union[None, int, Tuple[int, ...]] = None, keepdims: bool = False) -> ndarray:
    """numpy.linalg.norm: a vector norm (1-D, or one axis), a matrix norm
    (2-D, or two axes), or with neither ord nor axis the 2-norm of all
    elements flattened."""
    if axis is None:
        if ord is None:
            out = vector_norm(x, axis=None, keepdims=keepdims, ord=2)
            return out
        if x.ndim == 1:
            return vector_norm(x, keepdims=keepdims, ord=ord)
        if x.ndim == 2:
            return matrix_norm(x, keepdims=keepdims, ord=ord)
        raise ValueError("Improper number of dimensions to norm.")
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        return vector_norm(x, axis=axes, keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    row, col = (_axes(a, x.ndim)[0] for a in axes)
    if row == col:
        raise ValueError("Duplicate axes given.")
    rest = [d for d in range(x.ndim) if d not in (row, col)]
    moved = _array.transpose(x, rest + [row, col])
    out = matrix_norm(moved, ord="fro" if ord is None else ord)
    if keepdims:
        shape = list(x.shape)
        shape[row] = shape[col] = 1
        out = out.reshape(tuple(shape))
    return out

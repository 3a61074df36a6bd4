"""Local dtype and shape rules of the reductions and shaping ops, mirroring
the server's (server/program/infer_reduce.cc, infer_shape.cc). As in
_infer.py, a rule that raises leaves the metadata to the server."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from ._errors import LinAlgError
from ._infer import Meta
from .v1 import resident_pb2 as pb

_reduce_cache: Dict[tuple, np.dtype] = {}


def _reduce_dtype(name: str, dtype: np.dtype) -> np.dtype:
    key = (name, dtype)
    dt = _reduce_cache.get(key)
    if dt is None:
        with np.errstate(all="ignore"):
            dt = np.asarray(getattr(np, name)(np.ones((1,), dtype))).dtype
        _reduce_cache[key] = dt
    return dt


def _axes(ins: "pb.Instruction", rank: int) -> List[int]:
    """The reduced or given axes, normalised; all axes when none is given."""
    if ins.has_axes:
        given = list(ins.axes)
    elif ins.has_axis:
        given = [ins.axis]
    else:
        return list(range(rank))
    out = []
    for a in given:
        if rank == 0 and not ins.has_axes and a in (0, -1) and ins.op != "mean":
            continue  # NumPy lets a 0-d array take a single axis 0 or -1 (mean: no)
        if not -rank <= a < rank:
            raise np.exceptions.AxisError(
                f"axis {a} is out of bounds for array of dimension {rank}")
        a %= rank
        if a in out:
            raise ValueError("duplicate value in 'axis'")
        out.append(a)
    return sorted(out)


def reduction(name: str):
    def rule(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
        (a,) = ops
        axes = _axes(ins, len(a.shape))
        if name in ("argmax", "argmin") and ins.has_axes:
            raise TypeError("argmax/argmin take one axis")
        m = 1
        for ax in axes:
            m *= a.shape[ax]
        if m == 0 and name in ("max", "min", "argmax", "argmin"):
            raise ValueError("empty reduction")
        shape: List[int] = []
        for d, n in enumerate(a.shape):
            if d not in axes:
                shape.append(n)
            elif ins.keepdims:
                shape.append(1)
        return Meta(_reduce_dtype(name, a.dtype), tuple(shape))
    return rule


def slice_(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    (a,) = ops
    if len(ins.slices) > len(a.shape):
        raise ValueError("too many indices")  # record() expects ValueError
    shape = list(a.shape)
    for d, s in enumerate(ins.slices):
        py = slice(s.start if s.has_start else None, s.stop if s.has_stop else None,
                   s.step if s.has_step else None)
        shape[d] = len(range(*py.indices(a.shape[d])))
    return Meta(a.dtype, tuple(shape))


def _promoted(ops: Sequence[Meta]) -> np.dtype:
    return np.result_type(*(m.dtype for m in ops))


def concatenate(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    if not ops:
        raise ValueError("need at least one array")
    if not ins.has_axis:
        return Meta(_promoted(ops), (sum(int(np.prod(m.shape)) for m in ops),))
    first = ops[0].shape
    rank = len(first)
    if rank == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    if not -rank <= ins.axis < rank:
        raise ValueError(f"axis {ins.axis} is out of bounds for array of dimension {rank}")
    axis = ins.axis % rank
    total = 0
    for m in ops:
        if len(m.shape) != rank or any(m.shape[d] != first[d] for d in range(rank) if d != axis):
            raise ValueError("all the input array dimensions except for the concatenation axis "
                             f"must match exactly: {first} and {m.shape}")
        total += m.shape[axis]
    return Meta(_promoted(ops), first[:axis] + (total,) + first[axis + 1:])


def stack(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    if not ops:
        raise ValueError("need at least one array to stack")
    if any(m.shape != ops[0].shape for m in ops):
        raise ValueError("all input arrays must have the same shape")
    rank = len(ops[0].shape) + 1
    axis = ins.axis if ins.has_axis else 0
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {rank}")
    axis %= rank
    s = ops[0].shape
    return Meta(_promoted(ops), s[:axis] + (len(ops),) + s[axis:])


def broadcast_to(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    (a,) = ops
    to = tuple(ins.shape)
    try:
        ok = np.broadcast_shapes(a.shape, to) == to
    except ValueError:
        ok = False
    if not ok:
        raise ValueError("operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {a.shape} and requested shape {to}")
    return Meta(a.dtype, to)


def squeeze(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    (a,) = ops
    if not ins.has_axes and not ins.has_axis:
        return Meta(a.dtype, tuple(n for n in a.shape if n != 1))
    axes = _axes(ins, len(a.shape))
    if any(a.shape[ax] != 1 for ax in axes):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return Meta(a.dtype, tuple(n for d, n in enumerate(a.shape) if d not in axes))


def expand_dims(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    (a,) = ops
    given = list(ins.axes) if ins.has_axes else [ins.axis]
    rank = len(a.shape) + len(given)
    added = set()
    for g in given:
        if not -rank <= g < rank:
            raise np.exceptions.AxisError(
                f"axis {g} is out of bounds for array of dimension {rank}")
        if g % rank in added:
            raise ValueError("repeated axis")
        added.add(g % rank)
    rest = iter(a.shape)
    shape: Tuple[int, ...] = tuple(1 if d in added else next(rest) for d in range(rank))
    return Meta(a.dtype, shape)


def _one_axis(ins: "pb.Instruction", rank: int, op: str) -> int:
    """The sorting family's axis: ins.axis, or -1 (the last) when unset."""
    a = ins.axis if ins.has_axis else -1
    if rank == 0:
        raise ValueError(f"{op}: a 0-d array has no axis")
    if not -rank <= a < rank:
        raise np.exceptions.AxisError(f"axis {a} is out of bounds for array of dimension {rank}")
    return a % rank


def argsort(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    (a,) = ops
    _one_axis(ins, len(a.shape), "argsort")
    return Meta(np.dtype(np.int64), a.shape)


def sort(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    (a,) = ops
    _one_axis(ins, len(a.shape), "sort")
    return Meta(a.dtype, a.shape)


def take_along_axis(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
    a, idx = ops
    if idx.dtype.kind not in "iu":
        raise TypeError(f"take_along_axis: indices must be integers, not {idx.dtype}")
    if len(a.shape) != len(idx.shape):
        raise ValueError("take_along_axis: indices and array must have the same number of "
                         f"dimensions, got {len(idx.shape)} and {len(a.shape)}")
    axis = _one_axis(ins, len(a.shape), "take_along_axis")
    sa = a.shape[:axis] + (1,) + a.shape[axis + 1:]
    si = idx.shape[:axis] + (1,) + idx.shape[axis + 1:]
    out = list(np.broadcast_shapes(sa, si))
    out[axis] = idx.shape[axis]
    return Meta(a.dtype, tuple(out))


def extract(name: str):
    """flatnonzero (one operand) / extract (condition, arr): 1-D of the
    declared count (ins.shape), int64 positions or arr's dtype."""

    def rule(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
        size = int(np.prod(ops[0].shape))
        if name == "extract" and size != int(np.prod(ops[1].shape)):
            raise ValueError(f"extract: the condition has {size} elements and the array "
                             f"{int(np.prod(ops[1].shape))}; they must match")
        if len(ins.shape) != 1 or not 0 <= ins.shape[0] <= size:
            raise ValueError(f"{name}: shape must be (count,), 0 to {size}")
        dt = ops[1].dtype if name == "extract" else np.dtype(np.int64)
        return Meta(dt, (int(ins.shape[0]),))
    return rule


def transform(name: str):
    """fft, ifft, rfft, irfft along one axis (or, with ``axes``, one
    transform over up to three; irfft one): NumPy 2's dtypes (single
    precision from float16/float32/complex64, double otherwise); rfft halves
    the (last) axis to n // 2 + 1, irfft makes it ins.shape[0] (its n)."""

    def rule(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
        (a,) = ops
        if ins.has_axes:
            rank = len(a.shape)
            most = 1 if name == "irfft" else 3
            if not 1 <= len(ins.axes) <= most:
                raise ValueError(f"{name}: axes must name 1 to {most} axes")
            axes = []
            for x in ins.axes:
                if not -rank <= x < rank:
                    raise np.exceptions.AxisError(
                        f"axis {x} is out of bounds for array of dimension {rank}")
                axes.append(x % rank)
            if len(set(axes)) != len(axes):
                raise ValueError(f"{name}: repeated axis")
            for x in axes[:-1]:
                if a.shape[x] < 1:
                    raise ValueError(f"Invalid number of FFT data points ({a.shape[x]}) specified.")
            axis = axes[-1]
        else:
            axis = _one_axis(ins, len(a.shape), name)
        single = a.dtype in (np.float16, np.float32, np.complex64)
        complex_dt = np.dtype(np.complex64 if single else np.complex128)
        real_dt = np.dtype(np.float32 if single else np.float64)
        shape = list(a.shape)
        if name == "rfft" and a.dtype.kind == "c":
            raise TypeError(f"rfft of {a.dtype}: its input must be real")
        if name == "irfft":
            if len(ins.shape) != 1 or ins.shape[0] < 1 or shape[axis] != ins.shape[0] // 2 + 1:
                raise ValueError("irfft: shape must be (n,) with n // 2 + 1 the input's length")
            shape[axis] = int(ins.shape[0])
            return Meta(real_dt, tuple(shape))
        if shape[axis] < 1:
            raise ValueError(f"Invalid number of FFT data points ({shape[axis]}) specified.")
        if name == "rfft":
            shape[axis] = shape[axis] // 2 + 1
        return Meta(complex_dt, tuple(shape))
    return rule


def _linalg_types(name: str, a: Meta, dt: np.dtype, square: bool) -> Tuple[int, int, Any, Any]:
    """numpy.linalg's checks of a stack of matrices and the dtypes it
    computes in: (rows, columns, dtype, its real dtype); ints and bool
    compute in float64, float16/bfloat16 are refused."""
    if len(a.shape) < 2:
        raise LinAlgError(f"linalg.{name}: {len(a.shape)}-dimensional array given. Array must "
                          "be at least two-dimensional")
    m, n = a.shape[-2:]
    if square and m != n:
        raise LinAlgError(f"linalg.{name}: Last 2 dimensions of the array must be square")
    if dt.itemsize == 2 and dt.kind == "f" or dt.name == "bfloat16":
        raise TypeError(f"linalg.{name}: array type {dt} is unsupported in linalg")
    if dt.kind not in "fc":
        dt = np.dtype(np.float64)
    return m, n, dt, (np.dtype(dt.char.lower()) if dt.kind == "c" else dt)


def factorisation(name: str):
    """numpy.linalg's routines of stacks of matrices (the last two axes):
    ints and bool compute in float64, float16/bfloat16 are refused;
    eigvalsh and svdvals give the real dtype."""

    def rule(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
        a = ops[0]
        dt = np.result_type(a.dtype, ops[1].dtype) if name == "solve" else a.dtype
        m, n, dt, real = _linalg_types(name, a, dt, square=name != "svdvals")
        batch = tuple(a.shape[:-2])
        if name == "solve":
            b = ops[1]
            if len(b.shape) != len(a.shape) or tuple(b.shape[:-2]) != batch or b.shape[-2] != n:
                raise ValueError("linalg.solve: b must have a's batch shape and n rows")
            return Meta(dt, tuple(b.shape))
        if name == "det":
            return Meta(dt, batch)
        if name == "eigvalsh":
            return Meta(real, batch + (n,))
        if name == "svdvals":
            return Meta(real, batch + (min(m, n),))
        return Meta(dt, tuple(a.shape))
    return rule


def decomposition(name: str, a: Meta, full: bool) -> List[Meta]:
    """The results of qr (Q, R), svd (U, S, Vh), eigh (eigenvalues,
    eigenvectors) and slogdet (sign, logabsdet), as numpy.linalg's; ``full``
    is qr's mode='complete' and svd's full_matrices."""
    m, n, dt, real = _linalg_types(name, a, a.dtype, square=name in ("eigh", "slogdet"))
    batch = tuple(a.shape[:-2])
    k = min(m, n)
    if name == "qr":
        return [Meta(dt, batch + (m, m if full else k)), Meta(dt, batch + (m if full else k, n))]
    if name == "svd":
        return [Meta(dt, batch + (m, m if full else k)), Meta(real, batch + (k,)),
                Meta(dt, batch + (n if full else k, n))]
    if name == "eigh":
        return [Meta(real, batch + (n,)), Meta(dt, batch + (n, n))]
    return [Meta(dt, batch), Meta(real, batch)]


def cumulative(name: str):
    """cumulative_sum / cumulative_prod: numpy.cumsum's dtype (sum's), the
    operand's shape, flattened when no axis is given."""
    numpy_name = {"cumulative_sum": "sum", "cumulative_prod": "prod"}[name]

    def rule(ops: Sequence[Meta], ins: "pb.Instruction") -> Meta:
        (a,) = ops
        dt = _reduce_dtype(numpy_name, a.dtype)
        if not ins.has_axis:
            return Meta(dt, (int(np.prod(a.shape)),))
        _one_axis(ins, len(a.shape), name)
        return Meta(dt, a.shape)
    return rule

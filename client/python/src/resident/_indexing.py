"""Indexing beyond the basic kind, and assignment, composed from the
server's ops: ``nonzero``, ``x[mask]``, ``x[int_array]`` along one axis,
and ``x[...] = value`` as a functional update.

Data-dependent shapes: ``nonzero`` and ``x[mask]`` need the number of true
elements to know their result's shape, so the client evaluates
``count_nonzero(mask)`` (one round trip, the program so far included), then
records the rest lazily: the positions of the true elements are the first
``count`` entries of a stable argsort of ``logical_not(mask)`` (true sorts
before false, each group in its order), and the elements a gather of those.

Assignment records a new value and rebinds the Python array to it (arrays
are immutable on the server; an update whose old value nothing else holds
is computed in place there): ``x[mask] = v`` and ``x[slices] = v`` are
``where(region, v_full, x)``, the region a mask built from index
comparisons and ``v_full`` the value gathered to x's shape.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any, List, Tuple

import numpy as np

from . import _array, _sorting
from ._array import ndarray
from ._shape_ops import broadcast_to, sum as _sum


def _upload_like(x: ndarray, value: Any) -> ndarray:
    """A host index (a list, a NumPy array) uploaded to x's client."""
    host = np.asarray(value)
    if host.dtype == object:
        raise IndexError("only integers, slices, ellipsis, None and integer or boolean arrays "
                         "are valid indices")
    return ndarray._wrap(x._node.session.upload(host, False))


def _is_advanced(k: Any) -> bool:
    if isinstance(k, ndarray):
        return not (k.ndim == 0 and k.dtype.kind in "iu")  # a 0-d int is an integer
    return isinstance(k, (list, np.ndarray)) and not isinstance(k, (bool, np.bool_))


def nonzero(x: ndarray, /) -> Tuple[ndarray, ...]:
    """The int64 indices of the nonzero elements, one array per axis, in
    row-major order (numpy.nonzero). Evaluates their count first."""
    if x.ndim == 0:
        raise ValueError("nonzero of a 0-d array is not allowed; use atleast_1d first")
    flat = _array.not_equal(x.reshape(-1), 0)
    count = int(_sum(flat).get())
    order = _sorting.argsort(_array.logical_not(flat))
    positions = order[:count]
    out: List[ndarray] = []
    stride = 1
    for n in reversed(x.shape):
        out.append(_array.remainder(_array.floor_divide(positions, stride), n)
                   if x.ndim > 1 else positions)
        stride *= n
    return tuple(reversed(out))


def getitem_advanced(x: ndarray, key: Tuple[Any, ...]) -> ndarray:
    """x[key] with one boolean or integer array (or list) in ``key``; the
    other entries must be full slices (``:``) for now."""
    at = [i for i, k in enumerate(key) if _is_advanced(k)]
    if len(at) != 1 or builtins.any(not (isinstance(k, slice) and k == slice(None))
                                    for i, k in enumerate(key) if i != at[0]):
        raise IndexError("resident arrays take one index array (or mask) with full slices "
                         "(:) elsewhere; several index arrays, or one beside integers and "
                         "partial slices, are not supported yet")
    axis = at[0]
    idx = key[axis]
    if not isinstance(idx, ndarray):
        idx = _upload_like(x, idx)
    if idx.dtype == np.bool_:
        if axis != 0 or idx.shape != x.shape[:idx.ndim]:
            raise IndexError(f"boolean index of shape {idx.shape} does not match the indexed "
                             f"array of shape {x.shape}")
        rest = tuple(x.shape[idx.ndim:])
        positions = nonzero(idx.reshape(-1))[0]
        return _sorting.take(x.reshape((-1,) + rest), positions, axis=0)
    if idx.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if axis >= x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional")
    flat = _sorting.take(x, idx.reshape(-1), axis=axis)
    shape = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    return flat.reshape(shape)


def _region(x: ndarray, key: Tuple[Any, ...]) -> Tuple[ndarray, List[Any]]:
    """The boolean mask of x's elements a basic key selects, and per axis
    the int64 position in the selection (or None for an integer index)."""
    from ._manipulation import _arange_on
    if builtins.sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in key:
        at = key.index(Ellipsis)
        key = key[:at] + (slice(None),) * (x.ndim - len(key) + 1) + key[at + 1:]
    if builtins.any(k is None for k in key):
        raise IndexError("None (a new axis) cannot be assigned to")
    if len(key) > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but "
                         f"{len(key)} were indexed")
    key = key + (slice(None),) * (x.ndim - len(key))
    mask = None
    where: List[Any] = []
    for d, k in enumerate(key):
        n = x.shape[d]
        shape = [1] * x.ndim
        shape[d] = n
        pos = _arange_on(x, n, np.int64).reshape(tuple(shape))
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            rel = _array.subtract(pos, start) if step > 0 else _array.subtract(start, pos)
            step = builtins.abs(step)
            sel = _array.logical_and(_array.logical_and(_array.greater_equal(rel, 0),
                                                        _array.less(rel, length * step)),
                                     _array.equal(_array.remainder(rel, step), 0))
            where.append(_array.floor_divide(rel, step))
        else:
            i = operator.index(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
            sel = _array.equal(pos, i % n)
            where.append(None)
        mask = sel if mask is None else _array.logical_and(mask, sel)
    return mask, where


def setitem(x: ndarray, key: Any, value: Any) -> None:
    """x[key] = value, recorded as a new value of x (see the module doc)."""
    key = key if isinstance(key, tuple) else (key,)
    key = tuple(operator.index(k) if isinstance(k, ndarray) and not _is_advanced(k) else k
                for k in key)
    if isinstance(value, np.ndarray):
        value = _upload_like(x, value)
    if builtins.any(_is_advanced(k) for k in key):
        if len(key) != 1:
            raise IndexError("assignment through an index array takes a single boolean mask")
        mask = key[0] if isinstance(key[0], ndarray) else _upload_like(x, key[0])
        if mask.dtype != np.bool_:
            raise IndexError("assignment through integer index arrays is not supported yet; "
                             "use a boolean mask")
        if isinstance(value, ndarray) and value.ndim > 0:
            raise ValueError("assigning an array through a mask is not supported yet; "
                             "assign a scalar, or use where(mask, values, x)")
        if mask.ndim < x.ndim:
            mask = mask.reshape(mask.shape + (1,) * (x.ndim - mask.ndim))
        new = _array.where(mask, value, x)
    else:
        if x.ndim == 0:
            mask, where = None, []
        else:
            mask, where = _region(x, key)
        v = value
        if isinstance(v, ndarray) and v.ndim > 0:
            # The value's elements gathered to x's shape: along each sliced
            # axis, position p of x reads the value's (p - start) // step
            # (clipped: the mask hides the rest). Integer-indexed axes are
            # absent from the value.
            sel_axes = [d for d, w in enumerate(where) if w is not None]
            lead = len(sel_axes) - v.ndim
            if lead < 0:
                raise ValueError(f"could not broadcast input array from shape {v.shape} into the "
                                 "selection")
            shape = [1] * x.ndim
            for i, d in enumerate(sel_axes[lead:]):
                shape[d] = v.shape[i]
            v = v.reshape(tuple(shape))
            for d in sel_axes:
                if v.shape[d] == 1:
                    continue
                # where[d]: int64, x.shape[d] along d and 1 elsewhere.
                idx = _array.clip(where[d], 0, v.shape[d] - 1)
                bshape = list(v.shape)
                bshape[d] = x.shape[d]
                v = _sorting.take_along_axis(v, broadcast_to(idx, tuple(bshape)), axis=d)
        new = v if mask is None else _array.where(mask, v, x)
        if isinstance(new, ndarray) and new.shape != x.shape:
            new = broadcast_to(new, x.shape)
    if not isinstance(new, ndarray):  # a scalar into a 0-d array
        from ._composed import full_like
        new = full_like(x, new)
    if new.dtype != x.dtype:
        new = new.astype(x.dtype)  # NumPy casts the value to the array's dtype
    x._node = new._node

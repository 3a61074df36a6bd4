"""Indexing beyond the basic kind, and assignment, composed from the
server's ops: ``nonzero``, ``x[mask]``, ``x[int_arrays...]`` (NumPy's
advanced indexing: several index arrays broadcast together, beside
integers, slices, ``...`` and None), and ``x[...] = value`` as a
functional update.

Data-dependent shapes: ``nonzero`` and ``x[mask]`` need the number of true
elements to know their result's shape, so the client evaluates
``count_nonzero(mask)`` (one round trip, the program so far included), then
records the rest lazily, declaring that count: the server's ``flatnonzero``
gives the true elements' flat positions and ``extract`` the elements
themselves (a mask over all of x's axes: one pass, no gather); the server
checks the declared count against the data before writing anything.

Several index arrays are linearised into one index over the indexed axes
(moved to the front and flattened) and gathered with one ``take``.

Assignment records a new value and rebinds the Python array to it (arrays
are immutable on the server; an update whose old value nothing else holds
is computed in place there): ``x[mask] = scalar`` and ``x[slices] = v`` are
``where(region, v_full, x)``, the region a mask built from index
comparisons and ``v_full`` the value gathered to x's shape; through index
arrays (or a mask with an array of values) it is a scatter built from two
stable argsorts (``_scatter``), the last of repeated indices winning as in
NumPy.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any, List, Tuple

import numpy as np

from . import _array, _sorting
from ._array import ndarray, record
from ._shape_ops import broadcast_to, sum as _sum
from .v1 import resident_pb2 as pb


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


def _record_select(op: str, operands: List[ndarray], count: int) -> ndarray:
    return record(op, [a._node for a in operands], operands[0]._node.session,
                  pb.Instruction(shape=[count]))


def _count(flat: ndarray) -> int:
    """The number of true elements of a bool array: one evaluation."""
    return int(_sum(flat).get())


def flatnonzero(x: ndarray, /) -> ndarray:
    """numpy.flatnonzero: the int64 positions of x's nonzero elements in
    the flattened array. Evaluates their count first."""
    flat = _array.not_equal(x.reshape(-1), 0)
    return _record_select("flatnonzero", [flat], _count(flat))


def extract(condition: ndarray, arr: ndarray, /) -> ndarray:
    """numpy.extract of two arrays of one size: arr's elements, flattened,
    where condition is nonzero. Evaluates their count first."""
    if condition.size != arr.size:
        raise ValueError(f"extract: the condition has {condition.size} elements and the array "
                         f"{arr.size}; they must match")
    flat = _array.not_equal(condition.reshape(-1), 0)
    return _record_select("extract", [flat, arr.reshape(-1)], _count(flat))


def nonzero(x: ndarray, /) -> Tuple[ndarray, ...]:
    """The int64 indices of the nonzero elements, one array per axis, in
    row-major order (numpy.nonzero). Evaluates their count first."""
    if x.ndim == 0:
        raise ValueError("nonzero of a 0-d array is not allowed; use atleast_1d first")
    positions = flatnonzero(x)
    out: List[ndarray] = []
    stride = 1
    for n in reversed(x.shape):
        out.append(_array.remainder(_array.floor_divide(positions, stride), n)
                   if x.ndim > 1 else positions)
        stride *= n
    return tuple(reversed(out))


def _mask_getitem(x: ndarray, idx: ndarray) -> ndarray:
    """x[mask] for a boolean mask over x's leading axes: the elements where
    it is true (extract) when it covers every axis, else the rows at its
    true positions (flatnonzero, then a gather). A mask axis of length 0
    selects nothing (the Array API's rule)."""
    lead = x.shape[:idx.ndim]
    if idx.ndim > x.ndim or builtins.any(k not in (n, 0) for n, k in zip(lead, idx.shape)):
        raise IndexError(f"boolean index of shape {idx.shape} does not match the indexed "
                         f"array of shape {x.shape}")
    rest = tuple(x.shape[idx.ndim:])
    if idx.shape != lead:  # a zero-length mask axis: nothing selected
        return x.reshape((-1,) + rest)[(slice(0, 0),)]
    if not rest:
        return extract(idx, x)
    positions = flatnonzero(idx)
    return _sorting.take(x.reshape((-1,) + rest), positions, axis=0)


def _expand_ellipsis(x: ndarray, key: Tuple[Any, ...]) -> Tuple[Any, ...]:
    if builtins.sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(k.ndim if isinstance(k, ndarray) and k.dtype == np.bool_ else
                        0 if k is None or k is Ellipsis else 1 for k in key)
    if used > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but "
                         f"{used} were indexed")
    fill = (slice(None),) * (x.ndim - used)
    at = [i for i, k in enumerate(key) if k is Ellipsis]  # `in` would compare arrays
    if at:
        return key[:at[0]] + fill + key[at[0] + 1:]
    return key + fill


def getitem_advanced(x: ndarray, key: Tuple[Any, ...]) -> ndarray:
    """x[key] with integer index arrays (several broadcast together, NumPy's
    rules for where their dimensions go) or boolean masks, beside integers,
    slices, ``...`` and None. The arrays are linearised into one index of
    the indexed axes (moved to the front and flattened) and gathered with
    one ``take``; a mask becomes its nonzero() index arrays (its count is
    evaluated first). An index out of range in an index array on the server
    fails the program (INVALID_ARGUMENT); host index arrays are checked at
    the call, as NumPy does."""
    key = tuple(np.asarray(k) if isinstance(k, list) else k for k in key)
    for k in key:
        if isinstance(k, (ndarray, np.ndarray)) and k.dtype != np.bool_ and \
                k.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
    # One mask over the leading axes and nothing else: the direct path.
    if len(key) >= 1 and isinstance(key[0], (ndarray, np.ndarray)) and \
            key[0].dtype == np.bool_ and \
            builtins.all(isinstance(k, slice) and k == slice(None) for k in key[1:]):
        mask = key[0] if isinstance(key[0], ndarray) else _upload_like(x, key[0])
        return _mask_getitem(x, mask)
    # One integer array beside full slices: a gather along its axis (take
    # wraps negative indices and refuses ones out of range).
    at = [i for i, k in enumerate(key) if isinstance(k, (ndarray, np.ndarray))]
    if len(at) == 1 and key[at[0]].dtype.kind in "iu" and at[0] < x.ndim and builtins.all(
            isinstance(k, slice) and k == slice(None) for i, k in enumerate(key) if i != at[0]):
        axis, idx = at[0], key[at[0]]
        if isinstance(idx, np.ndarray):  # checked here, as NumPy would
            n = x.shape[axis]
            if idx.size and (idx.min() < -n or idx.max() >= n):
                bad = idx[(idx < -n) | (idx >= n)].flat[0]
                raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
            idx = _upload_like(x, idx)
        flat = _sorting.take(x, idx.reshape(-1), axis=axis)
        return flat.reshape(x.shape[:axis] + idx.shape + x.shape[axis + 1:])
    key = _expand_ellipsis(x, key)
    # Masks become their nonzero() index arrays (one per axis they cover):
    # a host mask's on the host, a server mask's on the server.
    flat_key: List[Any] = []
    for k in key:
        if isinstance(k, (ndarray, np.ndarray)) and k.dtype == np.bool_:
            if k.ndim == 0:
                raise IndexError("a 0-d boolean index beside other indices is not supported")
            flat_key.extend(np.nonzero(k) if isinstance(k, np.ndarray) else nonzero(k))
        else:
            flat_key.append(k)
    basic: List[Any] = []
    advanced: List[Tuple[int, Any]] = []  # (axis of the basic result, index)
    pos = 0
    for k in flat_key:
        if k is None or isinstance(k, slice):
            basic.append(k)
        elif isinstance(k, (ndarray, np.ndarray, int, np.integer)):
            basic.append(slice(None))
            advanced.append((pos, k))
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                             "(`None`) and integer or boolean arrays are valid indices")
        pos += 1
    y = x[tuple(basic)]
    return _gather(y, advanced)


def _gather(y: ndarray, advanced: List[Tuple[int, Any]]) -> ndarray:
    """y indexed at its axes ``advanced`` (each with an int, or an integer
    array on the server or the host; all broadcast together), the other
    axes kept."""
    axes = [a for a, _ in advanced]
    sizes = [y.shape[a] for a in axes]
    shapes = [k.shape if isinstance(k, (ndarray, np.ndarray)) else () for _, k in advanced]
    bshape = tuple(np.broadcast_shapes(*shapes))
    # Row-major linear index over the indexed axes; a component out of range
    # makes it out of range too (take then refuses it).
    linear: Any = 0
    bad: Any = None
    stride = 1
    for (a, k), n in reversed(list(zip(advanced, sizes))):
        if isinstance(k, np.ndarray):  # checked and normalised here, as NumPy would
            if k.size and (k.min() < -n or k.max() >= n):
                bad_i = k[(k < -n) | (k >= n)].flat[0]
                raise IndexError(f"index {bad_i} is out of bounds for axis {a} with size {n}")
            k = _upload_like(y, np.where(k < 0, k + n, k).astype(np.int64))
            norm = k
        elif isinstance(k, ndarray):
            k = k.astype(np.int64) if k.dtype != np.int64 else k
            norm = _array.where(_array.less(k, 0), _array.add(k, n), k)
            out_of_range = _array.logical_or(_array.less(norm, 0), _array.greater_equal(norm, n))
            bad = out_of_range if bad is None else _array.logical_or(bad, out_of_range)
        else:
            i = operator.index(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {a} with size {n}")
            norm = i % n
        linear = norm * stride + linear  # an array once any index is one
        stride *= n
    total = stride
    if not isinstance(linear, ndarray):  # integers only (not reached from getitem)
        linear = _upload_like(y, np.array(linear, np.int64))
    others = [d for d in range(y.ndim) if d not in axes]
    moved = _array.transpose(y, axes + others) if axes + others != list(range(y.ndim)) else y
    rest = tuple(y.shape[d] for d in others)
    flat = moved.reshape((total,) + rest)
    if bad is not None:
        linear = _array.where(bad, total, linear)  # out of range: take refuses it
    index = broadcast_to(linear, bshape) if linear.shape != bshape else linear
    out = _sorting.take(flat, index.reshape(-1), axis=0).reshape(bshape + rest)
    # Adjacent indexed axes keep their place (NumPy's rule); apart, the
    # broadcast axes come first.
    if axes == list(range(axes[0], axes[0] + len(axes))) and axes[0] > 0:
        nb = len(bshape)
        before = list(range(nb, nb + axes[0]))
        order = before + list(range(nb)) + list(range(nb + axes[0], nb + len(rest)))
        out = _array.transpose(out, order)
    return out


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


def _scatter(x: ndarray, key: Tuple[Any, ...], value: Any) -> ndarray:
    """x with x[key] = value for any key with index arrays or masks: the
    flat positions the key selects are arange(x.size) indexed by the same
    key (getitem's rules, so both agree); each position takes the value of
    the last selection naming it (NumPy's outcome for repeated indices).
    One stable argsort of [positions, all positions] puts each selection
    just before the position it names; a second finds every position's
    place in that order."""
    from ._manipulation import _arange_on
    n = x.size
    every = _arange_on(x, n, np.int64)  # every flat position, once
    positions = every.reshape(x.shape)[key]
    shape = positions.shape
    if not isinstance(value, ndarray):
        value = _upload_like(x, np.asarray(value))
    if value.dtype != x.dtype:
        value = value.astype(x.dtype)  # NumPy casts the value to the array's dtype
    try:
        np.broadcast_shapes(value.shape, shape)
    except ValueError:
        raise ValueError(f"shape mismatch: value array of shape {value.shape} could not be "
                         f"broadcast to indexing result of shape {shape}") from None
    values = broadcast_to(value, shape) if value.shape != shape else value
    m = positions.size
    if m == 0 or n == 0:
        return x
    from ._shape_ops import concatenate
    src = positions.reshape(-1)
    joined = concatenate([src, every])
    order = _sorting.argsort(joined)               # selections before the position they name
    place = _sorting.argsort(order)[m:]             # where each position sits in that order
    before = _sorting.take(order, _array.maximum(_array.subtract(place, 1), 0))
    from_selection = _array.logical_and(_array.greater(place, 0), _array.less(before, m))
    named = _array.logical_and(
        from_selection,
        _array.equal(_sorting.take(joined, _array.minimum(before, m - 1)),
                     every))
    gathered = _sorting.take(values.reshape(-1), _array.minimum(before, m - 1))
    return _array.where(named, gathered, x.reshape(-1)).reshape(x.shape)


def setitem(x: ndarray, key: Any, value: Any) -> None:
    """x[key] = value, recorded as a new value of x (see the module doc)."""
    key = key if isinstance(key, tuple) else (key,)
    key = tuple(operator.index(k) if isinstance(k, ndarray) and not _is_advanced(k) else k
                for k in key)
    if isinstance(value, np.ndarray):
        value = _upload_like(x, value)
    if builtins.any(_is_advanced(k) for k in key):
        mask = key[0] if len(key) == 1 else None
        if isinstance(mask, (list, np.ndarray)):
            mask = _upload_like(x, mask)
        scalar = not isinstance(value, ndarray) or value.ndim == 0
        if isinstance(mask, ndarray) and mask.dtype == np.bool_ and scalar:
            # A scalar through a mask: one select.
            if mask.ndim < x.ndim:
                mask = mask.reshape(mask.shape + (1,) * (x.ndim - mask.ndim))
            new = _array.where(mask, value, x)
        else:
            new = _scatter(x, key, value)
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

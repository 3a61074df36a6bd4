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
import math
import operator
from typing import Any, List, Tuple

import numpy as np

from . import _array, _sorting
from ._array import ndarray, record
from ._shape_ops import any as _any, broadcast_to, sum as _sum
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


def _too_many(ndim: int, used: int) -> IndexError:
    return IndexError(f"too many indices for array: array is {ndim}-dimensional, but {used} "
                      "were indexed")


def _check_mask(shape: Tuple[int, ...], mask_shape: Tuple[int, ...], first: int) -> None:
    """NumPy's check of a boolean index over the axes first, first + 1, ...
    of an array of ``shape``: each mask axis of nonzero length must be the
    array's; a zero-length one selects nothing and is not compared (NumPy
    compares only the others)."""
    if first + len(mask_shape) > len(shape):
        raise _too_many(len(shape), first + len(mask_shape))
    for j, k in enumerate(mask_shape):
        n = shape[first + j]
        if k and k != n:
            raise IndexError(f"boolean index did not match indexed array along axis {first + j}; "
                             f"size of axis is {n} but size of corresponding boolean axis is {k}")


def _mask_getitem(x: ndarray, idx: ndarray) -> ndarray:
    """x[mask] for a boolean mask over x's leading axes: the elements where
    it is true (extract) when it covers every axis, else the rows at its
    true positions (flatnonzero, then a gather). A mask axis of length 0
    selects nothing (NumPy's rule, see _check_mask)."""
    _check_mask(x.shape, idx.shape, 0)
    lead = x.shape[:idx.ndim]
    rest = tuple(x.shape[idx.ndim:])
    rows = x.reshape((math.prod(lead),) + rest)  # not -1: x may be empty
    if idx.shape != lead:  # a zero-length mask axis: nothing selected
        return rows[(slice(0, 0),)]
    if not rest:
        return extract(idx, x)
    positions = flatnonzero(idx)
    return _sorting.take(rows, positions, axis=0)


def _expand_ellipsis(x: ndarray, key: Tuple[Any, ...]) -> Tuple[Any, ...]:
    if builtins.sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(k.ndim if isinstance(k, (ndarray, np.ndarray)) and k.dtype == np.bool_
                        else 0 if k is None or k is Ellipsis else 1 for k in key)
    if used > x.ndim:
        raise _too_many(x.ndim, used)
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
    fails the program (IndexOutOfBounds: an InvalidArgument and an
    IndexError); host index arrays, masks' shapes and integers are checked
    at the call, as NumPy does (see _gather and _check_mask for when)."""
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
    # (An empty x with a server index goes the general way, which checks
    # the index even though nothing is gathered.)
    if len(at) == 1 and key[at[0]].dtype.kind in "iu" and at[0] < x.ndim and \
            (isinstance(key[at[0]], np.ndarray) or x.size > 0) and builtins.all(
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
    axis = 0
    for k in key:  # every mask against the axes it covers
        if isinstance(k, (ndarray, np.ndarray)) and k.dtype == np.bool_:
            _check_mask(x.shape, k.shape, axis)
            axis += k.ndim
        elif k is not None:
            axis += 1
    # Masks become their nonzero() index arrays (one per axis they cover):
    # a host mask's on the host, a server mask's on the server. A 0-d mask
    # is a new axis of length 1 indexed by [0] (True) or [] (False).
    flat_key: List[Any] = []
    for k in key:
        if isinstance(k, (ndarray, np.ndarray)) and k.dtype == np.bool_:
            if k.ndim == 0:
                one = k.reshape(1)
                flat_key.append(_NewAxis(np.nonzero(one)[0] if isinstance(one, np.ndarray)
                                         else flatnonzero(one)))
            else:
                flat_key.extend(np.nonzero(k) if isinstance(k, np.ndarray) else nonzero(k))
        else:
            flat_key.append(k)
    basic: List[Any] = []
    advanced: List[Tuple[int, Any]] = []  # (axis of the basic result, index)
    pos = 0
    for k in flat_key:
        if isinstance(k, _NewAxis):
            basic.append(None)
            advanced.append((pos, k.index))
        elif k is None or isinstance(k, slice):
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


class _NewAxis:
    """A 0-d boolean beside other indices: a new axis of length 1 and its
    index array ([0] where the boolean is true, [] where false)."""

    def __init__(self, index: Any) -> None:
        self.index = index


def _gather(y: ndarray, advanced: List[Tuple[int, Any]]) -> ndarray:
    """y indexed at its axes ``advanced`` (each with an int, or an integer
    array on the server or the host; all broadcast together), the other
    axes kept. As NumPy, index arrays are checked against their axes only
    when their broadcast selects something (``a[[], [9]]`` is empty, not an
    error), integers always; a server index is checked when the program
    runs, even where the result is empty (``e[:, [9]]`` with e of shape
    (0, 3))."""
    axes = [a for a, _ in advanced]
    sizes = [y.shape[a] for a in axes]
    shapes = [k.shape if isinstance(k, (ndarray, np.ndarray)) else () for _, k in advanced]
    try:
        bshape = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                         "shapes " + " ".join(str(s) for s in shapes)) from None
    checked = builtins.all(bshape)  # the broadcast selects something
    # Row-major linear index over the indexed axes; a component out of range
    # makes it out of range too (take then refuses it).
    linear: Any = 0
    bad: Any = None
    stride = 1
    for (a, k), n in reversed(list(zip(advanced, sizes))):
        if isinstance(k, np.ndarray):  # checked and normalised here, as NumPy would
            if checked and (k.min() < -n or k.max() >= n):
                bad_i = k[(k < -n) | (k >= n)].flat[0]
                raise IndexError(f"index {bad_i} is out of bounds for axis {a} with size {n}")
            k = _upload_like(y, np.where(k < 0, k + n, k).astype(np.int64))
            norm = k
        elif isinstance(k, ndarray):
            if checked and n == 0:  # every index is out of range: known without the values
                raise IndexError(f"index is out of bounds for axis {a} with size 0")
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
    if bad is not None and checked and not builtins.all(rest):
        from ._manipulation import _arange_on
        # Nothing to gather, but the server's indices are still checked (take
        # checks only what it gathers): the result is built from a probe.
        probe = _sorting.take(_arange_on(y, total, np.int64), index.reshape(-1))
        out = broadcast_to(probe.reshape(bshape + (1,) * len(rest)), bshape + rest)
        out = out.astype(y.dtype)
    else:
        out = _sorting.take(flat, index.reshape(-1), axis=0).reshape(bshape + rest)
    # Adjacent indexed axes keep their place (NumPy's rule); apart, the
    # broadcast axes come first.
    if axes == list(range(axes[0], axes[0] + len(axes))) and axes[0] > 0:
        nb = len(bshape)
        before = list(range(nb, nb + axes[0]))
        order = before + list(range(nb)) + list(range(nb + axes[0], nb + len(rest)))
        out = _array.transpose(out, order)
    return out


def _basic_selection(x: ndarray, key: Tuple[Any, ...]) -> Tuple[Tuple[Any, ...],
                                                                  Tuple[int, ...], List[int]]:
    """A basic key (integers, slices, ``...``, None) checked against x as
    NumPy does: the key with one integer or slice per axis of x, the shape
    of the selection (None's axes included, of length 1) and the positions
    of None's axes in it."""
    if builtins.sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(k is not None and k is not Ellipsis for k in key)
    if used > x.ndim:
        raise _too_many(x.ndim, used)
    fill = (slice(None),) * (x.ndim - used)
    at = [i for i, k in enumerate(key) if k is Ellipsis]
    key = key[:at[0]] + fill + key[at[0] + 1:] if at else key + fill
    plain: List[Any] = []
    shape: List[int] = []
    new_axes: List[int] = []
    for k in key:
        if k is None:
            new_axes.append(len(shape))
            shape.append(1)
            continue
        n = x.shape[len(plain)]
        if isinstance(k, slice):
            shape.append(len(range(*k.indices(n))))
        else:
            try:
                k = operator.index(k)
            except TypeError:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                                 "(`None`) and integer or boolean arrays are valid indices") \
                    from None
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {len(plain)} with size {n}")
        plain.append(k)
    return tuple(plain), tuple(shape), new_axes


def _value_shape(value: Tuple[int, ...], target: Tuple[int, ...], error: str) -> Tuple[int, ...]:
    """The value's shape as the target's rank (NumPy drops a value's extra
    leading axes of length 1 and prepends missing ones), checked to
    broadcast to the target; ValueError(error) if it does not."""
    v = tuple(value)
    while len(v) > len(target) and v[0] == 1:
        v = v[1:]
    v = (1,) * (len(target) - len(v)) + v
    if len(v) != len(target) or builtins.any(a not in (b, 1) for a, b in zip(v, target)):
        raise ValueError(error)
    return v


def _region(x: ndarray, key: Tuple[Any, ...]) -> Tuple[ndarray, List[Any]]:
    """The boolean mask of x's elements a basic key (one integer or slice
    per axis, checked: _basic_selection) selects, and per axis the int64
    position in the selection (or None for an integer index)."""
    from ._manipulation import _arange_on
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
            sel = _array.equal(pos, k % n)
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
    fitted = _value_shape(value.shape, shape, f"shape mismatch: value array of shape "
                          f"{value.shape} could not be broadcast to indexing result of shape "
                          f"{shape}")
    if fitted != value.shape:
        value = value.reshape(fitted)
    values = broadcast_to(value, shape) if value.shape != shape else value
    m = positions.size
    if m == 0 or n == 0:
        # Nothing is written. A server index array's check (getitem's
        # probe, when the selection is empty) still runs: x's new value
        # depends on it.
        if builtins.any(isinstance(k, ndarray) for k in key):
            return _array.where(_any(positions), x, x)
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
    """x[key] = value, recorded as a new value of x (see the module doc).
    The key is checked as NumPy checks it, and the value must broadcast to
    the selection; an empty selection leaves x as it is."""
    key = key if isinstance(key, tuple) else (key,)
    key = tuple(operator.index(k) if isinstance(k, ndarray) and not _is_advanced(k) else
                np.asarray(k) if isinstance(k, (bool, np.bool_)) else k for k in key)
    if isinstance(value, (np.ndarray, list, tuple)):
        value = _upload_like(x, value)
    if builtins.any(_is_advanced(k) for k in key):
        mask = key[0] if len(key) == 1 else None
        if isinstance(mask, (list, np.ndarray)):
            mask = _upload_like(x, mask)
        scalar = not isinstance(value, ndarray) or value.ndim == 0
        if isinstance(mask, ndarray) and mask.dtype == np.bool_ and scalar:
            # A scalar through a mask: one select.
            _check_mask(x.shape, mask.shape, 0)
            if mask.shape != x.shape[:mask.ndim]:
                return  # a zero-length mask axis selects nothing
            if mask.ndim < x.ndim:
                mask = mask.reshape(mask.shape + (1,) * (x.ndim - mask.ndim))
            new = _array.where(mask, value, x)
        else:
            new = _scatter(x, key, value)
    else:
        plain, selection, new_axes = _basic_selection(x, key)
        v = value
        if isinstance(v, ndarray) and v.ndim > 0:
            fitted = _value_shape(v.shape, selection, "could not broadcast input array from "
                                  f"shape {v.shape} into shape {selection}")
            # None's axes (length 1 in the value too) are not x's.
            fitted = tuple(n for i, n in enumerate(fitted) if i not in new_axes)
            if fitted != v.shape:
                v = v.reshape(fitted)
        if not builtins.all(selection):
            return  # nothing selected: x is unchanged
        if x.ndim == 0:
            mask, where = None, []
        else:
            mask, where = _region(x, plain)
        if isinstance(v, ndarray) and v.ndim > 0:
            # The value's elements gathered to x's shape: along each sliced
            # axis, position p of x reads the value's (p - start) // step
            # (clipped: the mask hides the rest). Integer-indexed axes are
            # absent from the value, which has one axis per sliced one.
            sel_axes = [d for d, w in enumerate(where) if w is not None]
            shape = [1] * x.ndim
            for i, d in enumerate(sel_axes):
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

"""The standard's set functions, ``unique_values``, ``unique_counts``,
``unique_inverse`` and ``unique_all``, composed on the server from a stable
sort: the sorted elements, a mask of where each run of equal elements starts
(NaNs are distinct, as the standard has them; -0.0 equals +0.0), the
unique values as the masked elements, the counts as the distances between
run starts, the first indices as the sort's order at each start, and the
inverse as each element's run number, read back through the inverse of the
sort's permutation (an argsort of it). The number of unique values sizes
the results, so it is evaluated first (one round trip), as for ``x[mask]``.
"""

from __future__ import annotations

from typing import NamedTuple, Tuple

import numpy as np

from . import _array, _indexing, _sorting
from ._array import ndarray
from ._composed import ones_like, zeros_like
from ._shape_ops import concatenate


class UniqueAllResult(NamedTuple):
    values: ndarray
    indices: ndarray
    inverse_indices: ndarray
    counts: ndarray


class UniqueCountsResult(NamedTuple):
    values: ndarray
    counts: ndarray


class UniqueInverseResult(NamedTuple):
    values: ndarray
    inverse_indices: ndarray


def _runs(x: ndarray) -> Tuple[ndarray, ndarray, ndarray, ndarray]:
    """The flattened x's stable sort order, its sorted values, the mask of
    run starts (bool) and their positions (int64, count evaluated)."""
    flat = x.reshape(-1)
    order = _sorting.argsort(flat)
    s = _sorting.take(flat, order)
    head = ones_like(flat, dtype=np.bool_, shape=(1,))
    first = concatenate([head, _array.not_equal(s[1:], s[:-1])])
    starts = _indexing.nonzero(first)[0]
    return order, s, first, starts


def _empty_like_index(x: ndarray, shape: Tuple[int, ...]) -> ndarray:
    return zeros_like(x, dtype=np.int64, shape=shape)


def unique_values(x: ndarray, /) -> ndarray:
    if x.size == 0:
        return x.reshape(-1)
    _, s, first, _ = _runs(x)
    return s[first]


def unique_counts(x: ndarray, /) -> UniqueCountsResult:
    if x.size == 0:
        return UniqueCountsResult(x.reshape(-1), _empty_like_index(x, (0,)))
    _, s, first, starts = _runs(x)
    end = _empty_like_index(x, (1,)) + x.size
    counts = _array.subtract(concatenate([starts[1:], end]), starts)
    return UniqueCountsResult(s[first], counts)


def _inverse(x: ndarray, order: ndarray, first: ndarray) -> ndarray:
    rank = _array.subtract(_sorting.cumulative_sum(first.astype(np.int64)), 1)
    return _sorting.take(rank, _sorting.argsort(order)).reshape(x.shape)


def unique_inverse(x: ndarray, /) -> UniqueInverseResult:
    if x.size == 0:
        return UniqueInverseResult(x.reshape(-1), _empty_like_index(x, x.shape))
    order, s, first, _ = _runs(x)
    return UniqueInverseResult(s[first], _inverse(x, order, first))


def unique_all(x: ndarray, /) -> UniqueAllResult:
    if x.size == 0:
        empty = _empty_like_index(x, (0,))
        return UniqueAllResult(x.reshape(-1), empty, _empty_like_index(x, x.shape), empty)
    order, s, first, starts = _runs(x)
    end = _empty_like_index(x, (1,)) + x.size
    counts = _array.subtract(concatenate([starts[1:], end]), starts)
    return UniqueAllResult(s[first], _sorting.take(order, starts), _inverse(x, order, first),
                           counts)

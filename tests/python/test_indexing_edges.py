"""Indexing's edge cases through the real server, each against NumPy's own
answer computed in the test (its values, or the class of its error):
integer index arrays out of range on axes of length 0 and beside an empty
selection, negative ones, boolean masks of the wrong length or shape (empty
ones included) and 0-d ones, and assignment through None, ``...``, empty
slices and empty selections with values that broadcast (or do not).

Every key is tried with its index arrays on the host (NumPy's or lists)
and on the server, in lazy and eager sessions; an error NumPy raises at
the call may come from us when the program runs (a server index's value is
known only there), but it is of NumPy's class."""

from __future__ import annotations

from typing import Any, Optional, Tuple, Type

import numpy as np
import pytest

import resident as rs
from helpers import check


@pytest.fixture(params=["lazy", "eager"])
def c(request, server):
    with rs.connect(server.target, lazy=request.param == "lazy") as client:
        yield client


def numpy_answer(f) -> Tuple[Any, Optional[Type[BaseException]]]:
    try:
        return f(), None
    except (IndexError, ValueError, TypeError) as e:
        return None, type(e)


def on_server(c, key: tuple) -> tuple:
    return tuple(c.asarray(k) if isinstance(k, np.ndarray) else k for k in key)


def as_lists(key: tuple) -> Optional[tuple]:
    """The key with its non-empty 1-D index arrays as lists, if it has any."""
    if not any(isinstance(k, np.ndarray) and k.ndim == 1 and k.size for k in key):
        return None
    return tuple(k.tolist() if isinstance(k, np.ndarray) and k.ndim == 1 and k.size else k
                 for k in key)


I = np.array  # noqa: E741  (an index array, briefly)
EMPTY = np.zeros(0, np.int64)
A = np.arange(12.0).reshape(3, 4)
E0 = np.zeros((0, 3))  # empty along its first axis
E1 = np.zeros(0)
E2 = np.arange(3.0).reshape(3, 1)[:, :0]  # (3, 0): empty along its last
A3 = np.arange(24.0).reshape(2, 3, 4)

GET_CASES = [
    # integer arrays on axes of length 0
    (E1, (I([0]),)), (E1, (I([-1]),)), (E1, (EMPTY,)),
    (E0, (I([0]),)), (E0, (slice(None), I([5]))), (E0, (slice(None), I([-4]))),
    (E0, (slice(None), I([2, -3]))), (E0, (I([0]), I([0]))), (E0, (EMPTY, I([5]))),
    (E2, (I([1]),)), (E2, (I([3]),)), (E2, (I([-4]),)), (E2, (slice(None), I([0]))),
    (E2, (slice(None), EMPTY)), (E2, (I([0, 2]), Ellipsis)),
    # an empty index array beside one out of range: nothing selected, no error
    (A, (EMPTY, I([5]))), (A, (I([5]), EMPTY)), (A, (np.zeros((1, 0), np.int64), I([9]))),
    (A, (EMPTY, 9)), (A, (np.zeros((1, 0), np.int64), 9)),  # an integer is always checked
    # out of range beside an empty slice: still an error
    (A, (I([9]), slice(0, 0))), (A, (I([0]), slice(0, 0))), (A, (slice(0, 0), I([9]))),
    (A, (slice(0, 0), I([-5]))), (A, (slice(0, 0), I([-4]))),
    # negative, in and out of range
    (A, (I([-3, -1]),)), (A, (I([-4]),)), (A, (slice(None), I([-5]))), (A, (I([5]),)),
    (A, (I([0, 1]), I([0, 1, 2]))),  # arrays that do not broadcast
    # masks of the wrong length or shape
    (A, (I([True, False]),)), (A, (I([True]),)), (A, (np.zeros(0, bool),)),
    (A, (np.zeros((3, 0), bool),)), (A, (np.zeros((0, 4), bool),)),
    (A, (np.zeros((2, 0), bool),)), (A, (np.ones((3, 4, 1), bool),)),
    (A, (np.ones(2, bool), 1)), (A, (np.zeros(0, bool), 1)), (A, (np.ones(4, bool), 1)),
    (A, (slice(None), np.zeros(5, bool))), (A, (slice(None), np.zeros(0, bool))),
    (A, (1, I([True, False, True]))), (A, (I([True, False, True]), I([0, 3]))),
    (E0, (np.zeros(0, bool),)), (E0, (np.zeros(1, bool),)), (E0, (np.zeros((0, 3), bool),)),
    (E0, (np.zeros((0, 2), bool),)), (E0, (np.zeros((0, 0), bool),)),
    (E0, (slice(None), np.zeros(2, bool))), (E0, (slice(None), np.ones(3, bool))),
    # 0-d masks, alone and beside other indices
    (A, (I(True),)), (A, (I(False),)), (A, (I(True), 1)), (A, (1, I(False))),
    (A, (I(True), Ellipsis, I([0, 3]))), (A, (slice(None), I(True), I([1]))),
    # masks over empty arrays (found by a random search against NumPy)
    (E0, (I(True),)), (E2, (I(False),)), (E1, (I(True),)),
    (np.zeros((2, 0, 3)), (I([True, True]),)), (np.zeros((2, 0, 3)), (I([True, False]), 0)),
    # host masks of two axes beside the ellipsis
    (A3, (np.arange(6).reshape(2, 3) % 2 == 0, Ellipsis)),
    (A3, (Ellipsis, np.arange(12).reshape(3, 4) % 3 == 0)),
    (A3, (Ellipsis, np.ones((3, 3), bool))),
]


def describe(k: Any) -> str:
    if k is Ellipsis:
        return "..."
    if isinstance(k, slice):
        return f"{'' if k.start is None else k.start}:{'' if k.stop is None else k.stop}"
    if isinstance(k, np.ndarray):
        return repr(k.tolist()) if k.size else f"empty{k.shape}{k.dtype}"
    return repr(k)


def ids(cases) -> list:
    return [f"{a.shape}[{', '.join(describe(k) for k in key)}]" for a, key, *_ in cases]


@pytest.mark.parametrize("a,key", GET_CASES, ids=ids(GET_CASES))
def test_getitem_as_numpy(c, a, key):
    want, error = numpy_answer(lambda: a[key])
    x = c.asarray(a)
    keys = [key, on_server(c, key)]
    if as_lists(key) is not None:
        keys.append(as_lists(key))
    for k in keys:
        if error is not None:
            with pytest.raises(error):
                x[k].get()
        else:
            check(x[k], want)


def test_server_index_out_of_range_is_an_index_error(c):
    """Found when the program runs, it is still NumPy's IndexError (and an
    InvalidArgument, as every refused program)."""
    x = c.asarray(A)
    for key in [(I([5]),), (slice(None), I([0, -5])), (I([0, 3]), I([1, 1]))]:
        with pytest.raises(IndexError, match="out of bounds") as info:
            x[on_server(c, key)].get()
        assert isinstance(info.value, rs.InvalidArgument)
        with pytest.raises(IndexError):
            A[key]
    check(x[on_server(c, (I([2]),))], A[[2]])  # the session is unharmed


SET_CASES = [
    # None and ... in the key
    (A, (None, Ellipsis), 5.0), (A, (None, Ellipsis), np.full((1, 3, 4), 2.0)),
    (A, (None, Ellipsis), np.arange(4.0)), (A, (None, Ellipsis), np.ones((2, 3, 4))),
    (A, (None,), np.arange(16.0, 28.0).reshape(1, 1, 3, 4)), (A, (0, None), np.ones((1, 4))),
    (A, (slice(None), None, 1), np.arange(3.0).reshape(3, 1)),
    (A, (slice(None), None, 1), np.arange(3.0)),
    (A, (Ellipsis, None), np.arange(12.0, 24.0).reshape(3, 4, 1)),
    (A, (Ellipsis, None), np.arange(4.0).reshape(4, 1)), (A, (Ellipsis, None), np.ones((3, 4))),
    (A, (None, 1, None, slice(1, 3)), np.array([[[7.0, 8.0]]])),
    (A, (I([0, 2]), None), np.arange(8.0).reshape(2, 1, 4)),
    (A, (None, None), 1.0), (A, (Ellipsis, None, Ellipsis), 1.0),
    # empty slices and empty selections, values that broadcast or not
    (A, (slice(None), slice(4, None)), np.ones((3, 0))),
    (A, (slice(None), slice(4, None)), np.ones((1,))),
    (A, (slice(None), slice(4, None)), np.ones((0,))),
    (A, (slice(None), slice(4, None)), np.ones((3, 1))),
    (A, (slice(None), slice(4, None)), np.ones((3, 2))),
    (A, (slice(None), slice(4, None)), np.ones((2,))),
    (A, (slice(None), slice(4, None)), np.ones((4, 1))),
    (A, (slice(3, None),), np.ones((0, 4))), (A, (slice(3, None),), np.ones((0, 1))),
    (A, (slice(3, None),), np.ones((5, 4))), (A, (slice(3, None), 1), 5.0),
    (A, (slice(3, None), 9), 5.0), (A, (slice(2, 0), slice(None, None, -1)), np.ones((1, 4))),
    (E0, (slice(None),), np.ones((0, 3))), (E0, (slice(None),), np.ones((3,))),
    (E0, (slice(None),), np.ones((2, 3))), (E0, (slice(None),), np.ones((0,))),
    (E0, (slice(None), 1), np.ones((0,))), (E0, (slice(None), 1), np.ones((5,))),
    (E0, (Ellipsis,), 1.0), (E0, (None,), np.ones((0, 3))), (E0, (0,), 1.0),
    (E0, (slice(None), 3), 1.0), (E1, (-1,), 1.0),
    # shapes that do not broadcast to a non-empty selection
    (A, (slice(1, 3),), np.ones((3, 4))), (A, (slice(1, 3),), np.ones((1, 1, 2, 4))),
    (A, (slice(1, 3),), np.ones((2, 1, 4))), (A, (slice(1, 3), 0), np.ones((3,))),
    (A, (slice(1, 3), 0), np.arange(2.0)), (A, (-4,), 1.0), (A, (1, -5), 1.0),
    # index arrays: out of range, empty, on empty axes
    (A, (I([9]), slice(0, 0)), 1.0), (A, (EMPTY, I([9])), 1.0), (A, (EMPTY,), 1.0),
    (A, (EMPTY,), np.ones((2, 4))), (A, (EMPTY,), np.ones((1, 4))), (A, (EMPTY,), np.ones(5)),
    (A, (I([-4]),), 1.0), (A, (slice(None), I([4])), 1.0),
    (A, (I([0, 1]),), np.arange(8.0).reshape(1, 1, 2, 4)), (A, (I([0, 1]),), np.ones((3, 4))),
    (E0, (I([0]),), 1.0), (E0, (slice(None), I([5])), 1.0), (E0, (slice(None), I([2])), 1.0),
    (E2, (I([3]),), 1.0), (E2, (I([2]),), 1.0), (E2, (I([2]),), np.ones((1, 0))),
    # masks of the wrong length or shape, empty ones, 0-d ones
    (A, (np.zeros(0, bool),), 1.0), (A, (np.zeros(0, bool),), np.zeros(0)),
    (A, (np.zeros(0, bool),), np.zeros((0, 4))), (A, (np.zeros(2, bool),), 1.0),
    (A, (I([True]),), 1.0), (A, (np.ones((3, 4, 1), bool),), 1.0),
    (A, (np.ones((3, 0), bool),), 1.0), (A, (np.ones((2, 0), bool),), 1.0),
    (A, (np.ones(2, bool), 1), 1.0), (A, (slice(None), np.zeros(5, bool)), 1.0),
    (A, (I([True, False, True]),), np.arange(4.0)), (A, (I([True, False]),), np.arange(4.0)),
    (A, (np.zeros(3, bool),), np.ones((0,))), (A, (np.zeros(3, bool),), np.ones((1, 4))),
    (A, (np.zeros(3, bool),), np.ones((2, 4))),
    (A, (I(True),), 3.0), (A, (I(False),), 3.0), (A, (I(True), 1), 3.0),
    (A, (I(True),), np.arange(4.0)), (E0, (np.zeros(0, bool),), 1.0),
    (E0, (np.zeros(1, bool),), 1.0), (E0, (slice(None), np.ones(3, bool)), 1.0),
    (E0, (I(True),), np.arange(3.0)), (E2, (I(False),), 1.0),
    (np.zeros((2, 0, 3)), (I([True, True]),), np.arange(3.0)),
]


@pytest.mark.parametrize("a,key,value", SET_CASES, ids=ids(SET_CASES))
def test_setitem_as_numpy(c, a, key, value):
    def numpy_set():
        b = a.copy()
        b[key] = value
        return b
    want, error = numpy_answer(numpy_set)
    keys = [key, on_server(c, key)]
    values = [value] if np.ndim(value) == 0 else [value, c.asarray(value)]
    for k in keys:
        for v in values:
            x = c.asarray(a)
            if error is not None:
                with pytest.raises(error):
                    x[k] = v
                    x.get()
            else:
                x[k] = v
                check(x, want)


def test_empty_slice_takes_an_empty_slice(c):
    """The issue's case: a[:, 1:] = b[:, 3:], both empty along axis 1."""
    a_host, b_host = np.arange(2.0).reshape(2, 1), np.arange(6.0).reshape(2, 3)
    a, b = c.asarray(a_host), c.asarray(b_host)
    a[:, 1:] = b[:, 3:]
    a_host[:, 1:] = b_host[:, 3:]
    check(a, a_host)
    x = c.asarray(np.zeros((0, 3), np.int32))
    x[:, 1:] = c.asarray(np.zeros((0, 2), np.int32))
    check(x, np.zeros((0, 3), np.int32))


def test_new_axis_assignment_with_python_values(c):
    """x[None, ...] = v with a list, a bool key (a 0-d mask) and a scalar."""
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    x = c.asarray(a)
    x[None, ...] = [[7, 8, 9]]
    a[None, ...] = [[7, 8, 9]]
    check(x, a)
    x[True] = 4
    a[True] = 4
    check(x, a)
    x[False] = 5
    a[False] = 5
    check(x, a)
    check(x[True], a[True])
    check(x[False, 0], a[False, 0])

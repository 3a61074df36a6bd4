"""Indexing beyond basic slices and assignment through the real server,
against NumPy computed in the test: masks, integer arrays (resident, NumPy
or lists), nonzero, x[...] = value for masks and basic keys (scalars and
arrays, steps of either sign, integers), 0-d integer arrays as indices,
iteration, and the errors for what is not supported yet."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs
from helpers import check, sample


@pytest.fixture(params=["lazy", "eager"])
def c(request, server):
    with rs.connect(server.target, lazy=request.param == "lazy") as client:
        yield client


def test_mask_and_integer_array_indexing(c):
    a = sample(np.float64, (4, 5), 30)
    x = c.asarray(a)
    mask = a > 0
    check(x[c.asarray(mask)], a[mask])
    check(x[x > 0], a[a > 0])
    rows = a[:, 0] > 0
    check(x[c.asarray(rows)], a[rows])  # a mask over the leading axis
    check(x[c.asarray(np.zeros((4, 5), bool))], a[np.zeros((4, 5), bool)])
    idx = np.array([[3, 0], [-1, 2]])
    check(x[c.asarray(idx)], a[idx])
    check(x[[2, 2, 0]], a[[2, 2, 0]])
    check(x[:, np.array([4, 0])], a[:, np.array([4, 0])])
    with pytest.raises(rs.InvalidArgument, match="out of bounds"):
        x[c.asarray(np.array([4]))].get()


def test_several_index_arrays_beside_integers_slices_and_none(c):
    a = sample(np.float64, (4, 5, 6), 31)
    x = c.asarray(a)
    i = np.array([[0, 3], [-1, 2]])
    j = np.array([1, -5])
    keys = [
        ([0, 1], [1, 2]),                    # two lists: pairs
        (i, j),                              # broadcast (2, 2) with (2,)
        (i, j, slice(1, 5, 2)),
        (slice(None), i, j),                 # adjacent after a slice: they stay in place
        (i, slice(None), j),                 # apart: the broadcast axes come first
        (1, slice(None), j),                 # an integer beside an array is an index too
        (0, j),
        (Ellipsis, j),
        (None, i, Ellipsis, 2),
        (slice(3, 0, -1), None, np.array([True, False, True, True, False])),
        (np.array([True, False, True, False]), 1, slice(None, 3)),
    ]
    for key in keys:
        want = a[key]
        server_key = tuple(c.asarray(k) if isinstance(k, np.ndarray) else k for k in key)
        check(x[server_key], want)                       # index arrays on the server
        check(x[key], want)                              # and NumPy's / lists on the host
    # Out of range: a host index at the call, a server one when the program runs.
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 1], [1, 5]]
    with pytest.raises(rs.InvalidArgument):
        x[c.asarray(np.array([0, 1])), c.asarray(np.array([1, 5]))].get()
    with pytest.raises(IndexError, match="integer"):
        x[np.array([0.5]), 0]
    # A zero-length mask axis selects nothing (the Array API's rule).
    check(c.asarray(np.array([True]))[c.asarray(np.zeros(0, bool))], np.zeros(0, bool))


def test_nonzero(c):
    a = np.array([[0, 3, 0], [4, 0, 5]], np.int16)
    x = c.asarray(a)
    for got, want in zip(rs.nonzero(x), np.nonzero(a)):
        check(got, want)
    for got, want in zip(np.nonzero(x), np.nonzero(a)):
        check(got, want)
    check(rs.nonzero(c.asarray(np.array([0.0, -0.0, np.nan, 1.0])))[0],
          np.nonzero(np.array([0.0, -0.0, np.nan, 1.0]))[0])


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128, np.bool_], ids=str)
def test_flatnonzero_and_extract(c, dtype):
    a = sample(dtype, (3, 7000), 33)  # several of CUB's tiles on a GPU
    cond = sample(np.bool_, (3, 7000), 34)
    x, m = c.asarray(a), c.asarray(cond)
    check(rs.flatnonzero(x), np.flatnonzero(a))
    check(np.flatnonzero(m), np.flatnonzero(cond))
    check(rs.extract(m, x), np.extract(cond, a))
    check(np.extract(x, x), np.extract(a, a))       # any dtype's truth as the condition
    check(x[m], a[cond])                              # a full mask: one extract
    check(x[m[:, 0]], a[cond[:, 0]])                  # a leading-axis mask: positions, gather
    check(rs.extract(c.asarray(np.zeros(5, bool)), x[0, :5]), np.zeros(0, dtype))
    with pytest.raises(ValueError, match="must match"):
        rs.extract(m, x[0])


def test_extract_refuses_a_count_the_data_does_not_have(c):
    """A client declaring another count than the mask's (a hostile or buggy
    one: more would write past the result) is refused; nothing is written."""
    import resident.v1.resident_pb2 as pb
    from resident._array import record
    cond = c.asarray(np.array([True, False, True, True]))
    vals = c.asarray(np.arange(4.0))
    for declared in (2, 4):
        with pytest.raises(rs.InvalidArgument, match="3 true elements"):
            record("extract", [cond._node, vals._node], cond._node.session,
                   pb.Instruction(shape=[declared])).get()
    check(rs.extract(cond, vals), np.array([0.0, 2.0, 3.0]))  # the session is unharmed


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_], ids=str)
def test_assignment(c, dtype):
    a = sample(dtype, (4, 6), 31)
    x = c.asarray(a)
    y = x  # the same Python object: it sees the update, as in NumPy
    mask = sample(np.bool_, (4, 6), 32)
    x[c.asarray(mask)] = 1
    a[mask] = 1
    check(x, a)
    assert y is x
    v = sample(dtype, (2, 3), 33)
    x[1:3, ::2] = c.asarray(v)
    a[1:3, ::2] = v
    check(x, a)
    x[::-2, 4] = 0
    a[::-2, 4] = 0
    check(x, a)
    row = sample(dtype, (6,), 34)
    x[-1] = row
    a[-1] = row
    check(x, a)
    x[..., 1] = c.asarray(np.array(True, dtype) if dtype == np.bool_ else np.array(7, dtype))
    a[..., 1] = 7 if dtype != np.bool_ else True
    check(x, a)
    x[:] = 0
    a[:] = 0
    check(x, a)


def test_zero_d_indices_iteration_and_scalars(c):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = c.asarray(a)
    i = c.asarray(np.array(2))
    check(x[i], a[2])
    check(x[1, :i], a[1, :2])
    assert operator_index(i) == 2
    rows = list(x)
    assert len(rows) == 3
    for got, want in zip(rows, a):
        check(got, want)
    z = c.asarray(np.array(5.0))
    z[()] = 2.5
    check(z, np.array(2.5))
    with pytest.raises(TypeError, match="0-d"):
        iter(z)
    with pytest.raises(TypeError):
        operator_index(c.asarray(np.array(1.5)))


def operator_index(v):
    import operator
    return operator.index(v)


def test_assignment_through_index_arrays_and_masks(c):
    a = sample(np.float64, (4, 5), 32)
    cases = [
        ((np.array([1, 3, -1]),), 7.5),                          # rows, a scalar
        ((np.array([1, 3]),), np.arange(10.0).reshape(2, 5)),    # rows, an array
        ((np.array([0, 2]), np.array([4, -5])), np.array([1.0, 2.0])),  # element pairs
        ((slice(None), np.array([0, 0, 3])), np.array([1.0, 2.0, 3.0])),  # repeated: last wins
        ((a > 0,), np.arange(float((a > 0).sum()))),              # a mask and its values
        ((a[:, 0] > 0, slice(1, 3)), -1.0),                       # a row mask and a slice
        ((np.array([[0], [2]]), np.array([1, 2, 3])), 9.0),       # broadcast index arrays
    ]
    for key, value in cases:
        want = a.copy()
        want[key] = value
        x = c.asarray(a)
        server_key = tuple(c.asarray(k) if isinstance(k, np.ndarray) else k for k in key)
        x[server_key] = c.asarray(value) if isinstance(value, np.ndarray) else value
        check(x, want)
        y = c.asarray(a)
        y[key] = value  # host keys and values
        check(y, want)
    xi = c.asarray(np.arange(6, dtype=np.int32))
    xi[[1, 4]] = 2.7  # cast to the array's dtype, as NumPy does
    check(xi, np.array([0, 2, 2, 3, 2, 5], np.int32))


def test_bad_assignments_are_clear(c):
    x = c.asarray(np.zeros(5))
    with pytest.raises(ValueError, match="shape mismatch"):
        x[[0, 1]] = np.ones(3)
    with pytest.raises(IndexError, match="out of bounds"):
        x[7] = 1.0
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 7]] = 1.0


def test_asarray_copy_semantics_under_assignment(server):
    with rs.connect(server.target) as client:
        previous = rs.set_default_client(client)
        try:
            x = client.asarray(np.zeros(3))
            same, copied = rs.asarray(x, copy=False), rs.asarray(x, copy=True)
            x[0] = 1.0
            check(same, np.array([1.0, 0, 0]))
            check(copied, np.zeros(3))
            with pytest.raises(ValueError, match="needs a copy"):
                rs.asarray(x, dtype=np.float32, copy=False)
        finally:
            rs.set_default_client(previous)

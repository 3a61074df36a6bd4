"""The Array API namespace pieces so far, through the real server: the
version, dtype objects and constants, data-type functions against NumPy's
answers, the default client behind module-level creation functions
(RESIDENT_SERVER), ``x.__array_namespace__()``, ``x.device`` and
``__array_namespace_info__``."""

from __future__ import annotations

import math

import numpy as np
import pytest

import resident as rs
from helpers import check


@pytest.fixture
def default(server):
    with rs.connect(server.target) as client:
        previous = rs.set_default_client(client)
        yield client
        rs.set_default_client(previous)


def test_version_dtypes_and_constants():
    assert rs.__array_api_version__ == "2024.12"
    for name in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float32", "float64", "complex64", "complex128"]:
        assert getattr(rs, name) == np.dtype(name)
    assert rs.e == math.e and rs.pi == math.pi and rs.inf == math.inf and math.isnan(rs.nan)
    assert rs.newaxis is None


@pytest.mark.parametrize("a,b", [(np.int8, np.uint8), (np.float32, np.int64),
                                 (np.float16, np.float32), (np.complex64, np.float64),
                                 (np.bool_, np.int16), (np.uint64, np.int64)], ids=str)
def test_data_type_functions_are_numpys(a, b):
    assert rs.result_type(a, b) == np.result_type(a, b)
    assert rs.result_type(a, 1.5) == np.result_type(a, 1.5)
    assert rs.can_cast(a, b) == np.can_cast(a, b)
    for kind in ["bool", "signed integer", "unsigned integer", "integral", "real floating",
                 "complex floating", "numeric", ("integral", "real floating")]:
        assert rs.isdtype(a, kind) == np.isdtype(np.dtype(a), kind)
    if np.dtype(a).kind in "iu":
        assert rs.iinfo(a).max == np.iinfo(a).max
    if np.dtype(a).kind in "fc":
        fi = rs.finfo(a)
        assert fi.eps == np.finfo(a).eps and fi.dtype == np.finfo(a).dtype
        # The standard's finfo holds Python floats, not NumPy scalars.
        assert all(type(v) is float for v in (fi.eps, fi.max, fi.min, fi.smallest_normal))


def test_module_functions_create_on_the_default_client(default):
    check(rs.ones((2, 3), dtype=rs.float32), np.ones((2, 3), np.float32))
    check(rs.zeros(4), np.zeros(4))
    check(rs.full((2,), 7, dtype=rs.int16), np.full((2,), 7, np.int16))
    check(rs.arange(1, 10, 2), np.arange(1, 10, 2))
    x = rs.asarray([[1.5, 2.5]], dtype=rs.float64)
    check(x, np.asarray([[1.5, 2.5]]))
    assert rs.asarray(x) is x  # immutable: no copy needed
    check(rs.asarray(x, dtype=rs.float32), np.asarray([[1.5, 2.5]], np.float32))
    assert rs.result_type(x, rs.float32) == np.float64
    assert rs.finfo(rs.ones(1, dtype=rs.float32)).bits == 32


def test_complex_float_int_and_bool_of_a_0d_array(default):
    z = rs.asarray(np.complex64(1.5 - 2j))
    assert complex(z) == 1.5 - 2j
    assert complex(rs.asarray(2.5)) == 2.5 + 0j
    assert float(rs.asarray(2.5)) == 2.5 and int(rs.asarray(7)) == 7 and bool(rs.asarray(1))


def test_the_array_names_its_namespace_and_device(default):
    x = rs.ones(3)
    assert x.__array_namespace__() is rs
    assert x.__array_namespace__(api_version="2024.12") is rs
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="1999.01")
    assert x.device == rs.Device(default.device)
    info = rs.__array_namespace_info__()
    assert info.default_device() == x.device
    assert x.device in info.devices()
    assert info.default_dtypes()["real floating"] == rs.float64
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32", "int64", "uint8",
                                                  "uint16", "uint32", "uint64"}
    check(rs.ones(2, device=x.device), np.ones(2))


def test_resident_server_names_the_default_client(server, monkeypatch):
    previous = rs.set_default_client(None)
    monkeypatch.setenv("RESIDENT_SERVER", server.target)
    try:
        check(rs.arange(5), np.arange(5))
        client = rs.get_default_client()
        assert rs.get_default_client() is client  # one connection, reused
        client.close()
        check(rs.ones(1), np.ones(1))  # a closed default is replaced
        rs.get_default_client().close()
    finally:
        rs.set_default_client(previous)

"""Uploads and downloads, chunked, of any size; NumPy's bytes round-trip."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs
from helpers import DTYPES, check, sample
from resident._errors import from_rpc_error
from resident.v1 import resident_pb2 as pb


@pytest.fixture
def grpc_client(server):
    """The chunked gRPC path, even on the server's host (test_local_data.py
    covers shared memory)."""
    with rs.connect(server.target, local_data=False) as c:
        assert c.transport == "grpc"
        yield c


def test_upload_and_download_over_64_mib(grpc_client):
    client = grpc_client
    n = (80 << 20) // 8  # 80 MiB of float64
    a = np.arange(n, dtype=np.float64) * 0.5
    x = client.asarray(a)
    assert (x.shape, x.dtype, x.nbytes) == ((n,), np.float64, 80 << 20)
    uploads = client.stats["Upload"]
    got = x.get()
    np.testing.assert_array_equal(got, a)
    assert uploads == 1
    # computed on the server from the upload, and downloaded (> the inline limit)
    y = (x * 2.0 - 1.0).get()
    np.testing.assert_array_equal(y, a * 2.0 - 1.0)


def test_download_ranges_outside_the_array_are_out_of_range(grpc_client):
    x = grpc_client.asarray(np.arange(10.0))
    s = grpc_client._s
    h = x._evaluate().handle

    def ranged(offset, length):
        return b"".join(c.data for c in s.stub.Download(
            pb.DownloadRequest(session=s.id, handle=h, offset=offset, length=length),
            metadata=s.metadata))

    assert ranged(8, 16) == np.arange(10.0)[1:3].tobytes()
    assert ranged(72, 0) == np.arange(10.0)[9:].tobytes()  # 0: to the end
    assert ranged(80, 0) == b""
    for offset, length in ((81, 0), (0, 81), (-1, 4), (8, -1), (40, 41)):
        with pytest.raises(rs.OutOfRange):
            try:
                ranged(offset, length)
            except Exception as e:  # the raw stub raises gRPC's error
                raise from_rpc_error(e) from None


def test_large_computed_result_is_downloaded_in_chunks(server):
    with rs.connect(server.target, local_data=False) as c:
        before = server.requests("Download")
        shape = (3000, 3000)  # 72 MB of float64: more than the 64 MiB message limit
        got = (c.ones(shape) * 3.0).get()
        # 72 MB: over four concurrent streams of byte ranges
        assert server.requests("Download") == before + 4
    np.testing.assert_array_equal(got, np.full(shape, 3.0))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (5, 0, 3), (7, 3)], ids=str)
def test_round_trip_of_every_dtype_and_odd_shapes(client, dtype, shape):
    a = sample(dtype, shape, 30)
    check(client.asarray(a), a)


def test_non_contiguous_and_big_endian_input(client):
    a = np.arange(24.0).reshape(4, 6)[:, ::2].T
    check(client.asarray(a), a)
    b = np.arange(10, dtype=">i4")
    got = client.asarray(b)
    check(got, b.astype(np.int32))


def test_lists_and_scalars_upload_as_numpy_would(client):
    check(client.asarray([[1, 2], [3, 4]]), np.asarray([[1, 2], [3, 4]]))
    check(client.asarray(2.5), np.asarray(2.5))
    check(client.asarray([True, False]), np.asarray([True, False]))
    check(client.asarray([1, 2], dtype=np.float32), np.asarray([1, 2], np.float32))


def test_unsupported_dtype_is_a_clear_type_error(client):
    with pytest.raises(TypeError, match="float128 is not supported"):
        client.asarray(np.ones(3, np.longdouble))
    with pytest.raises(TypeError, match="datetime64.* is not supported"):
        client.asarray(np.ones(3, "datetime64[s]"))


def test_asnumpy(client):
    x = client.arange(5)
    np.testing.assert_array_equal(rs.asnumpy(x), np.arange(5))
    np.testing.assert_array_equal(rs.asnumpy(np.arange(3)), np.arange(3))


def test_progress_bar_when_asked(client, capsys):
    a = np.ones(1 << 20)
    client.asarray(a, progress=True).get(progress=True)
    err = capsys.readouterr().err
    assert "upload [" in err and "download [" in err and "100%" in err


def test_no_progress_bar_when_not_a_terminal(client, capsys):
    client.asarray(np.ones(9 << 20)).get()  # 72 MiB, but stderr is captured
    assert capsys.readouterr().err == ""


def test_scalars_from_arrays(client):
    x = client.arange(5).sum()
    assert x.item() == 10 and int(x) == 10 and float(x) == 10.0 and bool(x)
    assert len(client.ones((4, 2))) == 4
    with pytest.raises(ValueError):
        client.ones(3).item()

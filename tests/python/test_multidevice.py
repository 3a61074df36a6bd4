"""A server of two devices (the test device twice: cpu,cpu in CI): the
device list, placement, peer copies and budgets per device; and bad
--device values refused at startup."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import resident as rs
from conftest import DEVICE, server_binary

LIMIT = 1 << 20  # --max-memory, per device


@pytest.fixture(scope="module")
def two(start_server):
    return start_server("--device", f"{DEVICE},{DEVICE}", "--max-memory", str(LIMIT))


def dev(c: rs.Client, i: int) -> rs.DeviceInfo:
    return c.info().devices[i]


def test_info_lists_both_devices(two):
    with rs.connect(two.target) as c:
        devices = c.info().devices
        assert [d.name for d in devices] == [DEVICE, f"{DEVICE}#1"]
        assert [d.index for d in devices] == [0, 1]
        assert all(d.backend == DEVICE and d.limit_bytes == LIMIT for d in devices)
        assert all(d.kind == ("cpu" if DEVICE == "cpu" else "cuda") for d in devices)
    metrics = two.metrics()
    assert f'resident_device_memory_limit_bytes{{device="{DEVICE}#1"}} {LIMIT}' in metrics
    assert f'resident_device_peer_copies_total{{device="{DEVICE}"}}' in metrics


def test_placement_explicit_default_and_unknown(two):
    with rs.connect(two.target, device=1) as b, rs.connect(two.target, device=DEVICE) as a:
        assert (a.device, b.device) == (DEVICE, f"{DEVICE}#1")
        keep = b.asarray(np.ones(4096))  # device 1 now holds more
        with rs.connect(two.target) as c:
            assert c.device == DEVICE  # the least loaded
        del keep
    for bad in (2, "gpu", f"{DEVICE}#7", "x" * 5000):
        with pytest.raises(rs.InvalidArgument):
            rs.connect(two.target, device=bad)


def test_named_array_read_from_another_device_is_copied(two):
    x_np = np.linspace(-3.0, 5.0, 12).reshape(3, 4)
    with rs.connect(two.target, device=0) as a, rs.connect(two.target, device=1) as b:
        x = a.asarray(x_np)
        a.keep(x, "md_shared")
        xb = b.attach("md_shared")
        before = dev(b, 1)
        y = (rs.sqrt(rs.abs(xb)) * xb + 0.5).get()
        np.testing.assert_array_equal(y, np.sqrt(np.abs(x_np)) * x_np + 0.5)
        after = dev(b, 1)
        assert after.peer_copies == before.peer_copies + 1
        assert after.peer_copy_bytes == before.peer_copy_bytes + x_np.nbytes
        # copy_to: an explicit copy, charged on the destination
        moved = a.copy_to(x, 1)
        assert dev(a, 1).used_bytes == after.used_bytes + x_np.nbytes
        np.testing.assert_array_equal((moved * 2.0).get(), x_np * 2.0)
        with pytest.raises(rs.InvalidArgument):
            a.copy_to(x, 9)
        a.delete("md_shared")


def test_filling_one_device_leaves_the_other(two):
    n = LIMIT // 8
    with rs.connect(two.target, device=0) as a, rs.connect(two.target, device=1) as b:
        full = a.asarray(np.zeros(n))
        with pytest.raises(rs.ResourceExhausted):
            a.asarray(np.zeros(1))
        other = b.asarray(np.full(n // 4, 2.0))
        assert float(rs.sum(other + 1.0).get()) == float(np.sum(np.full(n // 4, 2.0) + 1.0))
        del full


@pytest.mark.parametrize("bad,says", [
    ("", "empty"), ("cpu,,cpu", "entry 1 is empty"), ("gpu", "unknown device 'gpu'"),
    ("cuda:99", "cuda:99"), ("all,all", "stands alone"), ("cpu,cuda:0", "cuda:0"),
])
def test_bad_device_lists_stop_the_server_at_startup(bad, says):
    r = subprocess.run([server_binary(), "--listen", "127.0.0.1:0", "--device", bad],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert says in r.stdout + r.stderr

"""Fixtures: the real resident-server binary on a free port.

The binary comes from $RESIDENT_SERVER_BINARY (ctest passes the build
tree's); the device from $RESIDENT_TEST_DEVICE (default cpu).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import pytest

import resident as rs

DEVICE = os.environ.get("RESIDENT_TEST_DEVICE", "cpu")


def server_binary() -> str:
    path = os.environ.get("RESIDENT_SERVER_BINARY")
    if not path or not os.access(path, os.X_OK):
        raise RuntimeError("set RESIDENT_SERVER_BINARY to the resident-server binary "
                           f"(got {path!r})")
    return path


class Server:
    """A resident-server process; ``port``, ``metrics_port`` and ``health_port`` from its log."""

    def __init__(self, args: List[str], workdir: Path) -> None:
        self.log_path = workdir / f"server-{secrets.token_hex(4)}.log"
        self._log = open(self.log_path, "wb")
        self.args = args
        self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT)
        self.port = 0
        self.metrics_port: Optional[int] = None
        self.health_port: Optional[int] = None  # with --health-listen
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            text = self.log()
            m = re.search(r"\(port (\d+)\)", text)
            hm = re.search(r"\(health port (\d+)\)", text)
            wants_health = any(a.startswith("--health-listen") for a in args)
            if m and (hm or not wants_health):
                self.health_port = int(hm.group(1)) if hm else None
                self.port = int(m.group(1))
                mm = re.search(r"metrics on http://[^:]+:(\d+)/metrics", text)
                self.metrics_port = int(mm.group(1)) if mm else None
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}:\n{text}")
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"server did not report its port:\n{self.log()}")

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def metrics(self) -> str:
        assert self.metrics_port, "server started without --metrics-listen"
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics",
                                    timeout=10) as r:
            return r.read().decode()

    def requests(self, method: str) -> int:
        """The server's own count of finished calls of Resident/<method>."""
        total = 0
        for m in re.finditer(
                r'^resident_requests_total\{method="Resident/' + method + r'",code="[A-Z_]+"\} (\d+)',
                self.metrics(), re.M):
            total += int(m.group(1))
        return total

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode


@pytest.fixture(scope="session")
def server_binary_path() -> str:
    return server_binary()


@pytest.fixture(scope="session")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="resident-pytest-") as d:
        yield Path(d)


@pytest.fixture(scope="session")
def start_server(workdir: Path) -> Iterator:
    """start_server(*flags) -> Server, stopped at the end of the session."""
    started: List[Server] = []

    def start(*flags: str, listen: str = "127.0.0.1:0") -> Server:
        s = Server([server_binary(), "--listen", listen, "--device", DEVICE,
                    "--metrics-listen", "127.0.0.1:0", *flags], workdir)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


@pytest.fixture(scope="session")
def server(start_server) -> Server:
    """One shared single-user server."""
    return start_server()


@pytest.fixture
def client(server: Server) -> Iterator[rs.Client]:
    with rs.connect(server.target) as c:
        yield c


@pytest.fixture
def eager(server: Server) -> Iterator[rs.Client]:
    with rs.connect(server.target, lazy=False) as c:
        yield c


def make_tokens(workdir: Path, entries: Dict[str, str]) -> tuple:
    """A tokens file for {tenant: role}; returns (path, {tenant: token})."""
    tokens = {tenant: secrets.token_urlsafe(32) for tenant in entries}
    path = workdir / f"tokens-{secrets.token_hex(4)}"
    path.write_text("".join(f"{hashlib.sha256(tokens[t].encode()).hexdigest()} {t} {role}\n"
                            for t, role in entries.items()))
    return path, tokens


def wait_until(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()

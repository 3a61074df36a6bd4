"""The container's command line, run for real: the server starts with
exactly the ENTRYPOINT and CMD of docker/Dockerfile's runtime stages, with
only the secret and data paths moved into a scratch folder and the ports
made free ones on loopback; the secrets come from docker/make-lab-secrets.sh;
the HEALTHCHECK command is run as written (with the image's ENV)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import resident as rs
from conftest import Server
from helpers import check

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "deploy"))
from dockerfile_parse import parse  # noqa: E402

STAGES = parse(ROOT / "docker" / "Dockerfile")


def cli_binary() -> str:
    path = os.environ.get("RESIDENT_CLI_BINARY")
    if not path or not os.access(path, os.X_OK):
        raise RuntimeError(f"set RESIDENT_CLI_BINARY to the resident CLI (got {path!r})")
    return path


def localize(arg: str, secrets: Path, data: Path) -> str:
    """The container's paths and ports, moved to this machine's scratch."""
    arg = arg.replace("/run/secrets/", f"{secrets}/").replace("/var/lib/resident", str(data))
    arg = arg.replace("/run/resident/", f"{data.parent}/run-resident-")  # the socket's volume
    for port in (":50051", ":9464", ":8081"):
        arg = arg.replace("0.0.0.0" + port, "127.0.0.1:0")
    return arg


@pytest.fixture(scope="module")
def lab(workdir):
    """docker/make-lab-secrets.sh's secrets, renamed as the image mounts them."""
    d = workdir / "lab"
    subprocess.run([str(ROOT / "docker" / "make-lab-secrets.sh"), "-o", str(d), "alice",
                    "ops:admin"], check=True, capture_output=True)
    secrets = workdir / "run-secrets"
    secrets.mkdir(exist_ok=True)
    for src, dst in [("tokens", "resident-tokens"), ("server.pem", "resident-tls-cert"),
                     ("server.key", "resident-tls-key"), ("ca.pem", "resident-tls-ca")]:
        (secrets / dst).write_bytes((d / src).read_bytes())
    tokens = dict(line.split() for line in (d / "tokens.txt").read_text().splitlines())
    data = workdir / "var-lib-resident"
    data.mkdir(exist_ok=True)
    return secrets, data, tokens


@pytest.mark.parametrize("stage", ["cpu", "cuda"])
def test_image_command_line_serves_and_persists(stage, lab, workdir, server_binary_path):
    secrets, data, tokens = lab
    line = STAGES[stage].command_line()
    assert line[0] == "resident-server"
    args = [server_binary_path] + [localize(a, secrets, data) for a in line[1:]]
    assert "--device=auto" in args  # as in the image: CUDA when present, else the CPU
    s = Server(args, workdir)
    try:
        assert "tokens" in s.log() and "TLS" in s.log()
        assert s.metrics_port and "resident_device_memory_total_bytes" in s.metrics()
        # The HEALTHCHECK, as the image's ENV sets it up.
        env = dict(os.environ)
        env.update({k: localize(v, secrets, data) for k, v in STAGES[stage].env().items()
                    if k.startswith("RESIDENT_")})
        env["RESIDENT_SERVER"] = s.target
        assert s.health_port and s.health_port != s.port
        env["RESIDENT_HEALTH_SERVER"] = f"127.0.0.1:{s.health_port}"
        env["PATH"] = f"{Path(cli_binary()).parent}:{env['PATH']}"
        health = subprocess.run(STAGES[stage].healthcheck(), env=env, capture_output=True,
                                text=True, timeout=30)
        assert health.returncode == 0 and health.stdout.strip() == "SERVING", health
        # The health port is plaintext and serves nothing but health.
        with pytest.raises(rs.Unimplemented):
            rs.connect(f"127.0.0.1:{s.health_port}", token=tokens["alice"])
        with rs.connect(s.target, token=tokens["alice"], tls_ca=secrets / "resident-tls-ca",
                        tls_server_name="resident") as c:
            check(c.arange(6) * 7, np.arange(6) * 7)
            # A client of this host (TLS, a token) gets the shared-memory path.
            assert c.transport == "shared-memory", c.transport_detail
            check(c.asarray(np.arange(1 << 18, dtype=np.float64)), np.arange(float(1 << 18)))
            try:
                c.delete(f"kept-{stage}")
            except rs.NotFound:
                pass
            c.keep(c.asarray(np.arange(4.0)), f"kept-{stage}")
        with pytest.raises(rs.Unauthenticated):
            rs.connect(s.target, tls_ca=secrets / "resident-tls-ca", tls_server_name="resident",
                       token="")
    finally:
        assert s.stop() == 0
    # --data-dir: the named array is back after a restart.
    s = Server(args, workdir)
    try:
        with rs.connect(s.target, token=tokens["alice"], tls_ca=secrets / "resident-tls-ca",
                        tls_server_name="resident") as c:
            check(c.attach(f"kept-{stage}"), np.arange(4.0))
    finally:
        s.stop()


def test_health_command(server, workdir):
    ok = subprocess.run([cli_binary(), "--server", server.target, "health"],
                        capture_output=True, text=True, timeout=30)
    assert ok.returncode == 0 and ok.stdout.strip() == "SERVING"
    down = subprocess.run([cli_binary(), "--server", "127.0.0.1:1", "health"],
                          capture_output=True, text=True, timeout=30)
    assert down.returncode == 1 and "UNAVAILABLE" in down.stderr


def test_health_command_checks_the_certificate(lab, start_server):
    secrets, _, _ = lab
    s = start_server("--tls-cert", str(secrets / "resident-tls-cert"),
                     "--tls-key", str(secrets / "resident-tls-key"))
    base = [cli_binary(), "--server", s.target, "--tls-ca", str(secrets / "resident-tls-ca")]
    ok = subprocess.run(base + ["--tls-server-name", "resident", "health"],
                        capture_output=True, text=True, timeout=30)
    assert ok.returncode == 0, ok.stderr
    wrong = subprocess.run(base + ["--tls-server-name", "elsewhere", "health"],
                           capture_output=True, text=True, timeout=30)
    assert wrong.returncode == 1 and "UNAVAILABLE" in wrong.stderr
    plain = subprocess.run([cli_binary(), "--server", s.target, "health"],
                           capture_output=True, text=True, timeout=30)
    assert plain.returncode == 1

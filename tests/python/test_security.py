"""Tokens and TLS, with certificates made by openssl for the test."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

import resident as rs
from conftest import make_tokens
from helpers import check


@pytest.fixture(scope="module")
def tokens(workdir):
    return make_tokens(workdir, {"alice": "user", "bob": "user", "ops": "admin"})


@pytest.fixture(scope="module")
def token_server(start_server, tokens):
    path, _ = tokens
    return start_server("--auth-tokens", str(path))


def test_token_is_required_and_checked(token_server, tokens):
    _, tok = tokens
    with pytest.raises(rs.Unauthenticated, match="no credentials"):
        rs.connect(token_server.target, token="")
    with pytest.raises(rs.Unauthenticated, match="invalid token"):
        rs.connect(token_server.target, token="not-a-token")
    with rs.connect(token_server.target, token=tok["alice"]) as c:
        check(c.ones(3) * 2.0, np.full(3, 2.0))


def test_token_from_the_environment(token_server, tokens, monkeypatch):
    _, tok = tokens
    monkeypatch.setenv("RESIDENT_TOKEN", tok["bob"])
    monkeypatch.setenv("RESIDENT_SERVER", token_server.target)
    with rs.connect() as c:
        check(c.arange(3), np.arange(3))


def test_tenants_are_isolated(token_server, tokens):
    _, tok = tokens
    with rs.connect(token_server.target, token=tok["alice"]) as alice, \
            rs.connect(token_server.target, token=tok["bob"]) as bob:
        alice.keep(alice.arange(4), "alice-secret")
        try:
            with pytest.raises(rs.NotFound):
                bob.attach("alice-secret")
            assert not any(a.name == "alice-secret" for a in bob.ls())
            check(alice.attach("alice-secret"), np.arange(4))
        finally:
            alice.delete("alice-secret")


def test_admin_role(token_server, tokens):
    _, tok = tokens
    with rs.connect(token_server.target, token=tok["alice"]) as alice:
        with pytest.raises(rs.PermissionDenied):
            alice.admin_sessions()
        with rs.connect(token_server.target, token=tok["ops"]) as ops:
            listing = {s.session: s.tenant for s in ops.admin_sessions()}
            assert listing[alice.session_id] == "alice"
            assert ops.admin_close(alice.session_id[:12]) == alice.session_id
        with pytest.raises(rs.NotFound):
            alice.ones(2).get()


# --- TLS -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certs(workdir) -> Path:
    d = workdir / "certs"
    d.mkdir(exist_ok=True)
    (d / "server.ext").write_text("subjectAltName=DNS:localhost,DNS:resident,IP:127.0.0.1\n")
    (d / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
    script = f"""set -e
openssl req -x509 {ec} -keyout ca.key -out ca.pem -days 1 -subj /CN=test-ca
openssl req -x509 {ec} -keyout other-ca.key -out other-ca.pem -days 1 -subj /CN=other-ca
openssl req {ec} -keyout server.key -out server.csr -subj /CN=localhost
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 1 -extfile server.ext
openssl req {ec} -keyout client.key -out client.csr -subj /CN=alice
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 1 -extfile client.ext
"""
    subprocess.run(["sh", "-c", script], cwd=d, check=True, capture_output=True)
    return d


def test_tls(start_server, certs, tokens):
    path, tok = tokens
    s = start_server("--auth-tokens", str(path), "--tls-cert", str(certs / "server.pem"),
                     "--tls-key", str(certs / "server.key"))
    with rs.connect(s.target, token=tok["alice"], tls_ca=certs / "ca.pem") as c:
        check(c.asarray(np.arange(5.0)) + 1.0, np.arange(5.0) + 1.0)
    pem = (certs / "ca.pem").read_bytes()
    with rs.connect(f"localhost:{s.port}", token=tok["alice"], tls_ca=pem) as c:
        check(c.ones(2), np.ones(2))
    with rs.connect(s.target, token=tok["alice"], tls_ca=certs / "ca.pem",
                    tls_server_name="resident") as c:
        check(c.ones(2), np.ones(2))
    with pytest.raises(rs.Unavailable):  # a CA that did not sign the server's certificate
        rs.connect(s.target, token=tok["alice"], tls_ca=certs / "other-ca.pem", timeout=3)
    with pytest.raises(rs.Unavailable):  # plaintext to a TLS port
        rs.connect(s.target, token=tok["alice"], timeout=3)


def test_mutual_tls(start_server, certs, tokens):
    path, tok = tokens
    s = start_server("--auth-tokens", str(path), "--tls-cert", str(certs / "server.pem"),
                     "--tls-key", str(certs / "server.key"),
                     "--tls-client-ca", str(certs / "ca.pem"))
    with rs.connect(s.target, token=tok["alice"], tls_ca=certs / "ca.pem",
                    tls_cert=certs / "client.pem", tls_key=certs / "client.key") as c:
        check(c.arange(4) * 2, np.arange(4) * 2)
    with pytest.raises(rs.Unavailable):  # no client certificate
        rs.connect(s.target, token=tok["alice"], tls_ca=certs / "ca.pem", timeout=3)
    with pytest.raises(ValueError, match="go together"):
        rs.connect(s.target, tls_ca=certs / "ca.pem", tls_cert=certs / "client.pem")
    with pytest.raises(FileNotFoundError, match="cannot read CA file"):
        rs.connect(s.target, tls_ca=certs / "missing.pem")

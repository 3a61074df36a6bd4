"""python -m resident seed|info [--server HOST:PORT] [--token T] [--tls-ca FILE] ..."""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from ._client import connect
from ._errors import ResidentError
from ._seed import run_seed


def _bytes(n: int) -> str:
    v, units = float(n), ["B", "KiB", "MiB", "GiB", "TiB"]
    u = 0
    while v >= 1024 and u < 4:
        v /= 1024
        u += 1
    return f"{n} B" if u == 0 else f"{v:.1f} {units[u]}"


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m resident", description=__doc__)
    p.add_argument("command", choices=["seed", "info"])
    p.add_argument("--server", help="HOST:PORT (default $RESIDENT_SERVER or 127.0.0.1:50051)")
    p.add_argument("--token", help="bearer token (default $RESIDENT_TOKEN)")
    p.add_argument("--tls-ca", help="PEM CA of the server's certificate (enables TLS)")
    p.add_argument("--tls-cert", help="PEM client certificate, for mutual TLS")
    p.add_argument("--tls-key", help="PEM key of --tls-cert")
    p.add_argument("--tls-server-name", help="name to verify in the server's certificate")
    p.add_argument("--iterations", type=int, default=1024, help="seed: number of adds")
    a = p.parse_args(argv)
    args = dict(target=a.server, token=a.token, tls_ca=a.tls_ca, tls_cert=a.tls_cert,
                tls_key=a.tls_key, tls_server_name=a.tls_server_name)
    try:
        if a.command == "seed":
            return 0 if run_seed(args, a.iterations) else 1
        with connect(**args) as c:
            i = c.info()
        for d in i.devices:
            print(f"server     {i.server_version} (protocol {i.protocol_version}) at {c._s.target}")
            print(f"device     {d.name}: {d.description}")
            print(f"memory     {_bytes(d.total_bytes)} total, {_bytes(d.free_bytes)} free")
            print(f"limit      {_bytes(d.limit_bytes)} (--max-memory), {_bytes(d.used_bytes)} used")
        return 0
    except ResidentError as e:
        print(f"resident: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# The quick start: install, build, start resident-server on the default
# device, run the seed job against it, stop the server.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
port=${RESIDENT_PORT:-50051}
build/server/rpc/resident-server --listen "127.0.0.1:$port" --device auto &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  build/client/resident --server "127.0.0.1:$port" info >/dev/null 2>&1 && break
  sleep 0.2
done
build/client/resident --server "127.0.0.1:$port" info
build/client/resident --server "127.0.0.1:$port" seed

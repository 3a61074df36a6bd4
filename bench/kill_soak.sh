#!/usr/bin/env bash
# The long kill soak: 10,000 clients killed or cancelled at random points of
# upload, download and run against the real server (CI runs 1,000).
#   bench/kill_soak.sh [BUILD_DIR] [extra kill_soak flags, e.g. --device cuda:0]
set -euo pipefail
build=${1:-build}
shift || true
exec "$build/tests/soak/kill_soak" --server "$build/server/rpc/resident-server" \
  --kills 10000 --workers 8 --log "${TMPDIR:-/tmp}/resident-kill-soak-10k.log" "$@"

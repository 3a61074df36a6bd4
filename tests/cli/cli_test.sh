#!/usr/bin/env bash
# Drives the real binaries: resident-server on a free port, every CLI
# command against it, then SIGTERM must drain and exit 0.
#   cli_test.sh SERVER_BIN CLI_BIN DATA_DIR
set -euo pipefail
server_bin=$1 cli=$2 data=$3
work=$(mktemp -d)
log=$work/server.log
fail() { echo "FAIL: $*"; echo "--- server log"; cat "$log"; exit 1; }

"$server_bin" --listen 127.0.0.1:0 --device "${RESIDENT_TEST_DEVICE:-cpu}" --log-level info >"$log" 2>&1 &
pid=$!
trap 'kill -9 $pid 2>/dev/null || true; rm -rf "$work"' EXIT
port=""
for _ in $(seq 100); do
  port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$log" | head -1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || fail "server did not report its port"
export RESIDENT_SERVER=127.0.0.1:$port

"$cli" info | tee "$work/info" | grep -q "device     ${RESIDENT_TEST_DEVICE:-cpu}" || fail "info does not name the device"
grep -q "device ${RESIDENT_TEST_DEVICE:-cpu}" "$log" || fail "start-up log does not name the device"

# put/ls/get/rm round trip with NumPy-written files: bytes must be identical.
for f in float64 int32 bool scalar_f64 v2_int64 complex128; do
  h=$("$cli" put "$data/$f.npy")
  [[ $h =~ ^[0-9a-f]{32}$ ]] || fail "put $f printed '$h'"
  "$cli" ls | grep -q "^$h" || fail "ls does not list $h"
  "$cli" get "$h" "$work/$f.out.npy" >/dev/null
  # NumPy's writer and ours agree byte for byte for version-1 files.
  if [ "$f" != v2_int64 ]; then
    cmp "$data/$f.npy" "$work/$f.out.npy" || fail "get $f differs from what was put"
  fi
  "$cli" rm "$h"
  if "$cli" get "$h" "$work/gone.npy" 2>"$work/err"; then fail "get after rm succeeded"; fi
  grep -q NOT_FOUND "$work/err" || fail "get after rm: $(cat "$work/err")"
done

# Files NumPy can write but we do not support get a clear error.
if "$cli" put "$data/fortran_f64.npy" 2>"$work/err"; then fail "Fortran file accepted"; fi
grep -q "Fortran" "$work/err" || fail "Fortran error unclear: $(cat "$work/err")"
if "$cli" put "$data/object.npy" 2>"$work/err"; then fail "object file accepted"; fi
grep -q "not supported" "$work/err" || fail "object error unclear: $(cat "$work/err")"
if "$cli" rm 0123 2>"$work/err"; then fail "bad handle accepted"; fi

# The seed job, small, with its NumPy check.
"$cli" seed --iterations 3 | tee "$work/seed" | grep -q "expected every element = 8" || fail "seed"
[ "$(grep -c ' ok$' "$work/seed")" -eq 4 ] || fail "seed rows not all ok"

# SIGTERM: drain and exit 0.
kill -TERM $pid
status=0
wait $pid || status=$?
[ $status -eq 0 ] || fail "server exited $status after SIGTERM"
grep -q "stopped" "$log" || fail "no shutdown log line"
echo "cli_test: all checks passed"

#!/usr/bin/env bash
# Runs resident-bench against a fresh server, then the CuPy/NumPy baseline,
# and prints one side-by-side table. Results go to $OUT (default ./bench-out).
#   bench/run.sh SERVER_BIN BENCH_BIN [--device cpu|cuda:0] [--quick]
# Python: $PYTHON, default python3 from PATH (needs NumPy; CuPy optional).
set -euo pipefail

usage() { echo "usage: $0 SERVER_BIN BENCH_BIN [--device cpu|cuda:0] [--quick]" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
server_bin=$1 bench_bin=$2
shift 2
device=auto quick=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --device) [[ $# -ge 2 ]] || usage; device=$2; shift 2 ;;
    --device=*) device=${1#--device=}; shift ;;
    --quick) quick=(--quick); shift ;;
    *) usage ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-./bench-out}
python=${PYTHON:-python3}
mkdir -p "$out"

# Server on a free port; its log names the port it got.
# Metrics on a free port too: resident-bench reads the server's time per Run phase there.
"$server_bin" --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 --device "$device" >"$out/server.log" 2>&1 &
server_pid=$!
stop_server() {
  if kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" || true
  fi
}
trap stop_server EXIT
port=
for _ in $(seq 600); do  # CUDA start-up can take a while
  port=$(grep -o '(port [0-9]*)' "$out/server.log" | grep -o '[0-9]*' || true)
  [[ -n $port ]] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$out/server.log" >&2; echo "server exited" >&2; exit 1; }
  sleep 0.1
done
[[ -n $port ]] || { cat "$out/server.log" >&2; echo "server did not report a port" >&2; exit 1; }

metrics_port=$(grep -o 'metrics on http://[0-9.]*:[0-9]*' "$out/server.log" | grep -o '[0-9]*$' || echo 0)
echo "== resident-bench (server pid $server_pid, port $port, metrics port $metrics_port, device $device)"
"$bench_bin" --server "127.0.0.1:$port" --metrics_port "$metrics_port" --json "$out/resident.json" "${quick[@]}" | tee "$out/resident.txt"
# The baseline gets the device to itself.
stop_server

echo "== baseline.py ($python)"
if ! "$python" "$here/baseline.py" --json "$out/baseline.json" "${quick[@]}" | tee "$out/baseline.txt"; then
  echo "baseline.py failed; its columns will read n/a" >&2
  rm -f "$out/baseline.json"
fi

echo "== results"
"$python" "$here/report.py" "$out/resident.json" "$out/baseline.json" | tee "$out/table.md"
echo "(written to $out)"

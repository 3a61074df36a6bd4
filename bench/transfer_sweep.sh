#!/usr/bin/env bash
# The transfer chunk size by measurement: for each candidate, a fresh server
# with --chunk-bytes (the download chunk, and the one the client uploads in,
# from Describe) and `resident-bench --only transfer` (1 GiB each way, median
# of --reps, with the loopback TCP copy of the same run beside it); then a
# table and the size that won each direction.
#   bench/transfer_sweep.sh SERVER_BIN BENCH_BIN [--device cpu|cuda:0] [--quick]
#   SIZES="262144 1048576 4194304 16777216" to choose the candidates.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 SERVER_BIN BENCH_BIN [--device D] [--quick]" >&2; exit 2; }
server_bin=$1 bench_bin=$2
shift 2
device=auto quick=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --device) device=$2; shift 2 ;;
    --quick) quick=(--quick); shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
out=${OUT:-./bench-out}/sweep
mkdir -p "$out"
sizes=${SIZES:-"262144 1048576 4194304 16777216"}
printf '| chunk (KiB) | upload (GB/s) | download (GB/s) | loopback TCP (GB/s) |\n| ---: | ---: | ---: | ---: |\n' \
  >"$out/table.md"
best_up=0 best_dn=0 up_at=0 dn_at=0
for size in $sizes; do
  log=$out/server-$size.log
  "$server_bin" --listen 127.0.0.1:0 --device "$device" --chunk-bytes "$size" >"$log" 2>&1 &
  pid=$!
  port=
  for _ in $(seq 600); do
    port=$(grep -o '(port [0-9]*)' "$log" | grep -o '[0-9]*' || true)
    [[ -n $port ]] && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
  done
  "$bench_bin" --server "127.0.0.1:$port" --only transfer --json "$out/transfer-$size.json" \
    "${quick[@]}" >"$out/transfer-$size.txt"
  kill -TERM "$pid"; wait "$pid" || true
  read -r up dn tcp < <(python3 - "$out/transfer-$size.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["metrics"]
print(m["transfer.upload_gbs"], m["transfer.download_gbs"], m["transfer.tcp_gbs"])
PY
)
  printf '| %d | %.2f | %.2f | %.2f |\n' $((size / 1024)) "$up" "$dn" "$tcp" >>"$out/table.md"
  if python3 -c "import sys; sys.exit(0 if $up > $best_up else 1)"; then best_up=$up up_at=$size; fi
  if python3 -c "import sys; sys.exit(0 if $dn > $best_dn else 1)"; then best_dn=$dn dn_at=$size; fi
done
cat "$out/table.md"
echo "upload best at $((up_at / 1024)) KiB ($best_up GB/s); download best at $((dn_at / 1024)) KiB ($best_dn GB/s)"

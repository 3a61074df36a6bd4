#!/usr/bin/env bash
# One whole check on a GPU host, from a bundle made by scripts/bundle.sh:
# backend conformance on cuda:0 against the CPU reference, compute-sanitizer
# (memcheck, racecheck), the end-to-end suites against a CUDA server, the CLI
# test and seed job, and the benchmarks (end to end, and each device op). Logs go to $OUT (or ./gpu-out); a
# short table is printed at the end.
#   scripts/gpu_check.sh DIST_DIR
set -uo pipefail
dist=$(cd "$1" && pwd)
final=${OUT:-$PWD/gpu-out}
out=$(mktemp -d)  # every log here; $final gets a few files and logs.tgz
mkdir -p "$final"
export LD_LIBRARY_PATH=$dist/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
summary=$out/summary.txt
: >"$summary"
step() {  # step NAME COMMAND...: runs, logs, records pass/fail and seconds
  local name=$1; shift
  local t0=$(date +%s.%N)
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '%-28s %-5s %6.1fs\n' "$name" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" \
    "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b - a}')" | tee -a "$summary"
  # What has run so far comes back even if the call is cut off.
  cp "$summary" "$final/"
  tail -60 "$out/$name.log" >"$final/last_step.log"
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/gpu.txt" 2>&1
step conformance "$dist/tests/backend_conformance_test"
step cpu_backend "$dist/tests/cpu_backend_test"
[ -x "$dist/tests/cuda_fused_source_test" ] && step fused_source "$dist/tests/cuda_fused_source_test"
[ -x "$dist/tests/elementwise_literals_test" ] && step elementwise_literals \
  "$dist/tests/elementwise_literals_test"
[ -x "$dist/tests/cast_literals_test" ] && step cast_literals "$dist/tests/cast_literals_test"
step memcheck compute-sanitizer --tool memcheck --error-exitcode 1 \
  "$dist/tests/backend_conformance_test" --gtest_filter='*cuda*:-*Huge*:*Large*'
step racecheck compute-sanitizer --tool racecheck --error-exitcode 1 \
  "$dist/tests/backend_conformance_test" --gtest_filter='*cuda*:-*Huge*:*Large*'
for t in "$dist"/tests/e2e_*_test "$dist"/tests/compute_hog_test; do
  step "$(basename "$t")_cuda" env RESIDENT_TEST_DEVICE=cuda:0 "$t"
done
step concurrency_soak_cuda env RESIDENT_TEST_DEVICE=cuda:0 RESIDENT_SOAK_SECONDS=30 \
  RESIDENT_SOAK_ORACLE_DIR="$dist/data/oracle" "$dist/tests/concurrency_soak_test"
step kill_soak_cuda "$dist/tests/kill_soak" --server "$dist/bin/resident-server" \
  --device cuda:0 --kills 2000 --workers 8 --log "$out/kill_soak_server.log"
step cli_cuda env RESIDENT_TEST_DEVICE=cuda:0 bash "$dist/tests/cli_test.sh" \
  "$dist/bin/resident-server" "$dist/bin/resident" "$dist/data"
seed() {  # the full seed job against a CUDA server
  "$dist/bin/resident-server" --listen 127.0.0.1:50551 --device cuda:0 &
  local pid=$!
  sleep 2
  "$dist/bin/resident" --server 127.0.0.1:50551 seed
  local rc=$?
  kill -TERM $pid; wait $pid
  return $rc
}
step seed_cuda seed
if [ -x "$dist/bin/resident-backend-bench" ]; then
  step backend_bench "$dist/bin/resident-backend-bench" --device cuda:0 --json "$out/backend_bench.json"
  # The float matmuls at resident-bench's dot size: cuBLAS below the server.
  step backend_matmul_8192 "$dist/bin/resident-backend-bench" --device cuda:0 --only "matmul float" --matmul_n 8192
fi
if [ -x "$dist/bin/resident-bench" ] && [ -f "$dist/bin/run.sh" ]; then
  OUT=$out/bench step bench bash "$dist/bin/run.sh" "$dist/bin/resident-server" "$dist/bin/resident-bench" --device cuda:0
fi
echo "--- $(cat "$out/gpu.txt")"
cat "$summary"
tail -8 "$out/seed_cuda.log"
[ -f "$out/bench/table.md" ] && cat "$out/bench/table.md"
[ -f "$out/backend_bench.log" ] && cat "$out/backend_bench.log"
cp "$summary" "$final/"
[ -f "$out/bench/table.md" ] && cp "$out/bench/table.md" "$final/"
tar -C "$out" -czf "$final/logs.tgz" .
exit 0

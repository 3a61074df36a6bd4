#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang (ASan + UBSan) into
# build-fuzz/ and runs each over its committed seed corpus.
#
#   scripts/fuzz.sh               1,000,000 executions per target
#   scripts/fuzz.sh --runs N      N executions per target
#   scripts/fuzz.sh --ci          bounded time: 2 minutes in all, build included
#                                 (scripts/test.sh runs this after ctest)
#   scripts/fuzz.sh --seconds S   S seconds per target
#
# New inputs that add coverage go to build-fuzz/corpus/<target>/ (kept between
# runs, never into the source tree); crash, timeout and out-of-memory inputs
# to $FUZZ_ARTIFACTS (default build-fuzz/artifacts/), and the script then
# exits 1 naming them. Replay one with build-fuzz/tests/fuzz/<target> FILE.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=1000000
seconds=""
ci_total=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --seconds) seconds="$2"; runs=""; shift 2 ;;
    --ci) ci_total=116; runs=""; shift ;;  # 120 s less start-up and reporting
    *) echo "usage: $0 [--runs N | --seconds S | --ci]" >&2; exit 2 ;;
  esac
done

targets=(program_fuzzer npy_fuzzer)
artifacts="${FUZZ_ARTIFACTS:-$PWD/build-fuzz/artifacts}"
start=$(date +%s)

# -O1 with line tables only: what ASan needs for its reports, and much
# less build time than -O2 -g (the fuzz build is CI's longest step).
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DRESIDENT_CUDA=OFF -DRESIDENT_FUZZ=ON >/dev/null
cmake --build build-fuzz --target "${targets[@]}" --parallel "$(nproc)"
built=$(date +%s)
echo "fuzz: built in $((built - start)) s"

if [ -n "$ci_total" ]; then
  left=$((ci_total - (built - start)))
  seconds=$((left / ${#targets[@]}))
  [ "$seconds" -ge 20 ] || seconds=20
fi

mkdir -p "$artifacts"
# npy_fuzzer writes a scratch file per input: in memory it runs ~9x faster.
if [ -z "${FUZZ_TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
  FUZZ_TMPDIR=/dev/shm
fi
export TMPDIR="${FUZZ_TMPDIR:-${TMPDIR:-/tmp}}"
failed=()
for t in "${targets[@]}"; do
  name="${t%_fuzzer}"
  corpus="build-fuzz/corpus/$name"
  mkdir -p "$corpus"
  log="build-fuzz/fuzz-$name.log"
  limit=(-runs="$runs")
  [ -z "$seconds" ] || limit=(-max_total_time="$seconds")
  echo "fuzz: $t ${limit[*]}"
  # -timeout: an input running 10 s is a hang; -malloc_limit_mb: one
  # allocation over 256 MiB is a finding (nothing here needs that much).
  if ! "build-fuzz/tests/fuzz/$t" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 \
      -malloc_limit_mb=256 -dict="tests/fuzz/$name.dict" -print_final_stats=1 \
      -artifact_prefix="$artifacts/$name-" "$corpus" "tests/fuzz/corpus/$name" >"$log" 2>&1; then
    failed+=("$t")
    grep -E "FINDING|ERROR|SUMMARY|Test unit written" "$log" | head -20 || true
  fi
  # The last status line (cov, ft, corpus) and the executions per second.
  grep -E "^#[0-9]+" "$log" | tail -1 || true
  grep -E "stat::(number_of_executed_units|average_exec_per_sec)" "$log" || true
done

echo "fuzz: done in $(( $(date +%s) - start )) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FINDINGS in ${failed[*]}: inputs in $artifacts, logs in build-fuzz/fuzz-*.log" >&2
  exit 1
fi

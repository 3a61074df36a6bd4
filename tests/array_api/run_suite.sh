#!/usr/bin/env bash
# The Array API consortium's test suite (../shared/array-api-tests, read
# only: copied to a temporary folder, where hypothesis keeps its database)
# against a CPU-backend server of this build, through the `resident`
# namespace, test_linalg.py and test_fft.py included.
# Tests listed in xfails.txt (each with its reason) are expected to fail;
# any other failure fails the run.
#   run_suite.sh VENV_DIR SERVER_BIN [MAX_EXAMPLES [REPORT_JSON]]
# ctest runs it with 3 examples per test, derandomised, no deadline (a CI
# machine's load is not a defect); the full report uses 20 and the
# defaults, as NumPy's reference run in RUNNING.md does.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# Absolute paths: the suite runs from a temporary folder.
venv=$(realpath -m "$1") server=$(realpath -m "$2") examples=${3:-3} report=${4:+$(realpath -m "$4")}
suite=${ARRAY_API_TESTS_DIR:-$root/../shared/array-api-tests}
if [ ! -d "$suite/array_api_tests" ]; then
  echo "array_api_suite: the test suite is not at $suite (set ARRAY_API_TESTS_DIR)" >&2
  exit 1
fi
# shellcheck source=../python/venv.sh
source "$root/tests/python/venv.sh"
cd "$root"
ensure_venv "$venv" client/python proto/resident/v1/resident.proto -- \
  "./client/python[bfloat16]" "pytest>=7" "hypothesis>=6.151.0" "ndindex>=1.8" pytest-json-report

tmp=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
cp -r "$suite" "$tmp/suite"
"$server" --listen 127.0.0.1:0 --device cpu >"$tmp/server.log" 2>&1 &
server_pid=$!
port=
for _ in $(seq 300); do
  port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$tmp/server.log" | head -1)
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/server.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "array_api_suite: the server reported no port" >&2; exit 1; }

args=(--max-examples="$examples" --xfails-file "$root/tests/array_api/xfails.txt")
if [ -z "$report" ]; then
  args+=(--derandomize --disable-deadline)
else
  args+=(--json-report --json-report-file="$report")
fi
cd "$tmp/suite"
RESIDENT_SERVER=127.0.0.1:$port ARRAY_API_TESTS_MODULE=resident ARRAY_API_TESTS_VERSION=2024.12 \
  "$venv/bin/python" -m pytest array_api_tests -q -p no:cacheprovider -p no:warnings "${args[@]}"

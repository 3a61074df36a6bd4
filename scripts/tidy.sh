#!/usr/bin/env bash
# clang-tidy (.clang-tidy: bugprone, performance, readability) over every C++
# source in build/compile_commands.json (run scripts/build.sh first); --fix
# applies the fix-its. About 15 minutes on 2 cores, so it is not a ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
fix=()
[ "${1:-}" = "--fix" ] && fix=(-fix)
run-clang-tidy -p build -quiet "${fix[@]}" -j "$(nproc)" \
  -header-filter "$PWD/(core|server|client|kernels|bench|tests)/" \
  "^$PWD/(core|server|client|kernels|bench|tests)/.*\.cc$"

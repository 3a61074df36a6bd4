#!/usr/bin/env bash
# Installs what is missing, builds, runs the whole test suite via ctest, then
# the fuzzers for two minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
(cd build && ctest --output-on-failure --parallel "$(nproc)" --timeout 600)
# The fuzzers over their seed corpora, 2 minutes in all (build included).
scripts/fuzz.sh --ci

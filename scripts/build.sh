#!/usr/bin/env bash
# Configures and builds into build/ (extra arguments go to cmake's configure).
set -euo pipefail
cd "$(dirname "$0")/.."
# nvcc from the CUDA toolkit, when installed but not on PATH.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build build --parallel "$(nproc)"

#!/usr/bin/env bash
# Installs the Debian 12 packages Resident builds with, skipping those present.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev libfftw3-dev libhwy-dev liblapacke-dev libssl-dev libmicrohttpd-dev openssl
  python3 python3-venv
  clang libclang-rt-14-dev  # scripts/fuzz.sh: libFuzzer, ASan and UBSan runtimes
  clang-format clang-tidy  # scripts/format.sh and scripts/tidy.sh
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all Debian packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

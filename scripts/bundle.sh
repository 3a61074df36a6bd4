#!/usr/bin/env bash
# Builds a relocatable bundle in dist/: bin/ (resident-server, resident,
# resident-bench, resident-backend-bench), tests/ (the test binaries), lib/ (every shared library they
# need besides glibc and the NVIDIA driver), all with RPATH $ORIGIN/../lib, so
# it runs on a GPU host that has only the driver.
#
#   scripts/bundle.sh                 # everything, CUDA libraries included
#   scripts/bundle.sh --no-cuda-libs  # leave cuBLAS/cudart out (the host has a
#                                     # CUDA toolkit; keeps dist/ small)
set -euo pipefail
cd "$(dirname "$0")/.."
cuda_libs=1
[ "${1:-}" = "--no-cuda-libs" ] && cuda_libs=0
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
cmake -S . -B build-dist -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DRESIDENT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90-real;80-virtual}" \
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON -DCMAKE_INSTALL_RPATH='$ORIGIN/../lib'
cmake --build build-dist --parallel "$(nproc)"

rm -rf dist
mkdir -p dist/bin dist/lib dist/tests dist/data
cp build-dist/server/rpc/resident-server build-dist/client/resident dist/bin/
[ -f build-dist/bench/resident-bench ] && cp build-dist/bench/resident-bench dist/bin/
[ -f build-dist/bench/resident-backend-bench ] && cp build-dist/bench/resident-backend-bench dist/bin/
find build-dist/tests -maxdepth 2 -type f -name '*_test' -perm -u+x -exec cp {} dist/tests/ \;
cp build-dist/tests/soak/kill_soak dist/tests/
cp tests/cli/cli_test.sh dist/tests/
cp -r tests/client/data/. dist/data/
mkdir -p dist/data/oracle && cp tests/soak/oracle/*.npy dist/data/oracle/
[ -d bench ] && cp bench/*.py bench/*.sh dist/bin/ 2>/dev/null || true

# Libraries: everything ldd resolves, except glibc's own and the driver's.
skip='^(linux-vdso|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|ld-linux|libcuda\.so)'
[ $cuda_libs -eq 0 ] && skip="$skip|^(libcublas|libcublasLt|libcudart|libnvrtc)"
for f in dist/bin/resident-server dist/bin/resident dist/bin/resident-bench \
    dist/bin/resident-backend-bench dist/tests/*_test dist/tests/kill_soak; do
  [ -f "$f" ] || continue
  ldd "$f" | awk '/=> \// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ $name =~ $skip ]] && continue
  cp -L "$path" dist/lib/
done
echo "bundle: $(du -sh dist | cut -f1) in dist/ (lib: $(ls dist/lib | wc -l) files)"

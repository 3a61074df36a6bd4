// Batched 2-D transpose through a shared-memory tile (32x32, padded by one
// word against bank conflicts) so reads and writes are both coalesced. Other
// permutations run as strided copies (CastStrided with from == to).
#include <cstdint>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/kernels.h"

namespace resident::cuda_kernels {
namespace {

constexpr int kTile = 32, kLanes = kThreads / kTile;

template <typename W>
__global__ void __launch_bounds__(kThreads)
    TransposeKernel(const W* in, W* out, int64_t batch, int64_t rows, int64_t cols) {
  __shared__ W tile[kTile][kTile + 1];
  const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;
  const int64_t rtiles = (rows + kTile - 1) / kTile;
  const int64_t ctiles = (cols + kTile - 1) / kTile;
  const int64_t tiles = batch * rtiles * ctiles;
  for (int64_t w = blockIdx.x; w < tiles; w += gridDim.x) {
    const int64_t bi = w / (rtiles * ctiles);
    const int64_t rest = w % (rtiles * ctiles);
    const int64_t r0 = (rest / ctiles) * kTile, c0 = (rest % ctiles) * kTile;
    const W* src = in + bi * rows * cols;
    W* dst = out + bi * rows * cols;
#pragma unroll
    for (int j = ty; j < kTile; j += kLanes) {
      const int64_t r = r0 + j, c = c0 + tx;
      if (r < rows && c < cols) tile[j][tx] = src[r * cols + c];
    }
    __syncthreads();
#pragma unroll
    for (int j = ty; j < kTile; j += kLanes) {
      const int64_t c = c0 + j, r = r0 + tx;  // out is [cols][rows]
      if (r < rows && c < cols) dst[c * rows + r] = tile[tx][j];
    }
    __syncthreads();
  }
}

template <typename W>
cudaError_t Launch(const LaunchContext& ctx, const void* in, void* out, int64_t batch, int64_t rows,
                   int64_t cols) {
  const int64_t tiles = batch * ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
  TransposeKernel<W><<<GridFor(ctx, tiles, 1, 32), kThreads, 0, ctx.stream>>>(
      static_cast<const W*>(in), static_cast<W*>(out), batch, rows, cols);
  return cudaGetLastError();
}

}  // namespace

cudaError_t TransposeBatched2D(const LaunchContext& ctx, int item_size, const void* in, void* out,
                               int64_t batch, int64_t rows, int64_t cols) {
  if (batch <= 0 || rows <= 0 || cols <= 0) return cudaSuccess;
  switch (item_size) {
    case 1:
      return Launch<uint8_t>(ctx, in, out, batch, rows, cols);
    case 2:
      return Launch<uint16_t>(ctx, in, out, batch, rows, cols);
    case 4:
      return Launch<uint32_t>(ctx, in, out, batch, rows, cols);
    case 8:
      return Launch<uint64_t>(ctx, in, out, batch, rows, cols);
    case 16:  // complex128
      return Launch<ulonglong2>(ctx, in, out, batch, rows, cols);
  }
  return cudaErrorInvalidValue;
}

}  // namespace resident::cuda_kernels

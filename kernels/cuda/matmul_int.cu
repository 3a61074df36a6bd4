// Matrix products of bool (or of ands), int32 and int64 (wrapping): a tiled
// kernel, 32x32 outputs per block of 32x8 threads (4 per thread), operand
// tiles through shared memory. cuBLAS has no integer GEMM with these
// semantics; float dtypes go through cuBLAS in the backend.
#include <cstdint>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/kernels.h"

namespace resident::cuda_kernels {
namespace {

constexpr int kTile = 32;          // output tile edge and k step
constexpr int kRowsPerThread = 4;  // kTile / (kThreads / kTile)

// Wrapping multiply-accumulate in unsigned arithmetic (at least 32 bits, so
// narrow types never promote to int and overflow); bool is or of ands.
template <typename T>
struct IntMac {
  using Acc = std::conditional_t<kIsBool<T> || (sizeof(T) < 4), uint32_t, UnsignedT<T>>;
  __device__ __forceinline__ static Acc Load(T x) {
    if constexpr (kIsBool<T>) {
      return x != 0 ? 1u : 0u;
    } else {
      return static_cast<Acc>(x);
    }
  }
  __device__ __forceinline__ static Acc Step(Acc acc, Acc x, Acc y) {
    if constexpr (kIsBool<T>) {
      return acc | (x & y);
    } else {
      return acc + x * y;
    }
  }
  __device__ __forceinline__ static T Store(Acc acc) {
    if constexpr (kIsBool<T>) {
      return static_cast<T>(acc != 0);
    } else {
      return static_cast<T>(acc);
    }
  }
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    MatmulIntKernel(const T* a, const T* b, T* out, int64_t batch, int64_t m, int64_t k, int64_t n,
                    int64_t a_stride, int64_t b_stride) {
  using M = IntMac<T>;
  using Acc = typename M::Acc;
  __shared__ Acc as[kTile][kTile + 1];
  __shared__ Acc bs[kTile][kTile + 1];
  const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;
  const int64_t mtiles = (m + kTile - 1) / kTile;
  const int64_t ntiles = (n + kTile - 1) / kTile;
  const int64_t tiles = batch * mtiles * ntiles;
  for (int64_t w = blockIdx.x; w < tiles; w += gridDim.x) {
    const int64_t bi = w / (mtiles * ntiles);
    const int64_t rest = w % (mtiles * ntiles);
    const int64_t row0 = (rest / ntiles) * kTile, col0 = (rest % ntiles) * kTile;
    const T* ab = a + bi * a_stride;
    const T* bb = b + bi * b_stride;
    Acc acc[kRowsPerThread];
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) acc[r] = 0;
    for (int64_t k0 = 0; k0 < k; k0 += kTile) {
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r) {
        const int rr = ty + r * (kThreads / kTile);
        const int64_t arow = row0 + rr, acol = k0 + tx;
        as[rr][tx] = (arow < m && acol < k) ? M::Load(ab[arow * k + acol]) : 0;
        const int64_t brow = k0 + rr, bcol = col0 + tx;
        bs[rr][tx] = (brow < k && bcol < n) ? M::Load(bb[brow * n + bcol]) : 0;
      }
      __syncthreads();
#pragma unroll 8
      for (int kk = 0; kk < kTile; ++kk) {
        const Acc y = bs[kk][tx];
#pragma unroll
        for (int r = 0; r < kRowsPerThread; ++r) {
          acc[r] = M::Step(acc[r], as[ty + r * (kThreads / kTile)][kk], y);
        }
      }
      __syncthreads();
    }
    T* ob = out + bi * m * n;
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      const int64_t row = row0 + ty + r * (kThreads / kTile), col = col0 + tx;
      if (row < m && col < n) ob[row * n + col] = M::Store(acc[r]);
    }
  }
}

}  // namespace

cudaError_t MatmulInt(const LaunchContext& ctx, DType t, const void* a, const void* b, void* out,
                      int64_t batch, int64_t m, int64_t k, int64_t n, int64_t a_stride,
                      int64_t b_stride) {
  if (batch <= 0 || m <= 0 || n <= 0) return cudaSuccess;
  return DispatchType(t, [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || kIsHalfStorage<T>) {
      return cudaErrorInvalidValue;  // cuBLAS's
    } else {
      const int64_t tiles = batch * ((m + kTile - 1) / kTile) * ((n + kTile - 1) / kTile);
      MatmulIntKernel<T><<<GridFor(ctx, tiles, 1, 32), kThreads, 0, ctx.stream>>>(
          static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), batch, m, k, n,
          a_stride, b_stride);
      return cudaGetLastError();
    }
  });
}

}  // namespace resident::cuda_kernels

// Fill (a bit pattern, with 16-byte stores) and arange.
#include <cstdint>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/kernels.h"

namespace resident::cuda_kernels {
namespace {

// Writes n words of W (the pattern repeated) as 16-byte packs, then the tail.
template <typename W, int V>
__global__ void __launch_bounds__(kThreads) FillKernel(W* out, W value, int64_t n) {
  using P = Pack<W, V>;
  P pack;
#pragma unroll
  for (int v = 0; v < V; ++v) pack.v[v] = value;
  const int64_t npacks = n / V;
  P* op = reinterpret_cast<P*>(out);
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = tid; i < npacks; i += step) op[i] = pack;
  if (npacks * V + tid < n) out[npacks * V + tid] = value;
}

template <typename W>
cudaError_t LaunchFill(const LaunchContext& ctx, void* out, W value, int64_t n) {
  W* w = static_cast<W*>(out);
  if (Aligned16(out)) {
    constexpr int V = kVec16<W>;
    FillKernel<W, V><<<GridFor(ctx, n / V + V, kThreads), kThreads, 0, ctx.stream>>>(w, value, n);
  } else {  // never for whole buffers
    FillKernel<W, 1><<<GridFor(ctx, n, kThreads), kThreads, 0, ctx.stream>>>(w, value, n);
  }
  return cudaGetLastError();
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    ArangeIntKernel(T* out, uint64_t start, uint64_t delta, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    // Wrapping int64 arithmetic then truncation equals wrapping in T.
    out[i] = static_cast<T>(start + static_cast<uint64_t>(i) * delta);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) ArangeFloatKernel(T* out, T start, T delta, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    // T's own arithmetic, multiply then add (no FMA: --fmad=false), as
    // NumPy's arange fill does.
    out[i] = start + static_cast<T>(i) * delta;
  }
}

// float16 / bfloat16: NumPy's HALF_fill, in float, each element rounded.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ArangeHalfKernel(T* out, float start, float delta, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    out[i] = resident_store<T>(start + static_cast<float>(i) * delta);
  }
}

}  // namespace

cudaError_t FillBits(const LaunchContext& ctx, void* out, int item_size, uint64_t bits, int64_t n) {
  if (n <= 0) return cudaSuccess;
  // Byte patterns (and zero of any width) are a memset.
  if (item_size == 1 || bits == 0) {
    return cudaMemsetAsync(out, static_cast<int>(bits & 0xff), static_cast<size_t>(n) * item_size,
                           ctx.stream);
  }
  switch (item_size) {
    case 2:
      return LaunchFill<uint16_t>(ctx, out, static_cast<uint16_t>(bits), n);
    case 4:
      return LaunchFill<uint32_t>(ctx, out, static_cast<uint32_t>(bits), n);
    case 8:
      return LaunchFill<uint64_t>(ctx, out, bits, n);
  }
  return cudaErrorInvalidValue;
}

cudaError_t FillBits128(const LaunchContext& ctx, void* out, uint64_t lo, uint64_t hi, int64_t n) {
  if (n <= 0) return cudaSuccess;
  if (lo == 0 && hi == 0) return cudaMemsetAsync(out, 0, static_cast<size_t>(n) * 16, ctx.stream);
  ulonglong2 v;
  v.x = lo;
  v.y = hi;
  return LaunchFill<ulonglong2>(ctx, out, v, n);
}

cudaError_t ArangeInt(const LaunchContext& ctx, DType t, int64_t start, int64_t delta, void* out,
                      int64_t n) {
  if (n <= 0) return cudaSuccess;
  return DispatchType(t, [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || kIsBool<T> || kIsHalfStorage<T>) {
      return cudaErrorInvalidValue;
    } else {
      ArangeIntKernel<T><<<GridFor(ctx, n, kThreads), kThreads, 0, ctx.stream>>>(
          static_cast<T*>(out), static_cast<uint64_t>(start), static_cast<uint64_t>(delta), n);
      return cudaGetLastError();
    }
  });
}

cudaError_t ArangeFloat(const LaunchContext& ctx, DType t, double start, double delta, void* out,
                        int64_t n) {
  if (n <= 0) return cudaSuccess;
  return DispatchType(t, [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    if constexpr (kIsHalfStorage<T>) {
      ArangeHalfKernel<T><<<GridFor(ctx, n, kThreads), kThreads, 0, ctx.stream>>>(
          static_cast<T*>(out), static_cast<float>(start), static_cast<float>(delta), n);
      return cudaGetLastError();
    } else if constexpr (!std::is_floating_point_v<T>) {
      return cudaErrorInvalidValue;
    } else {
      ArangeFloatKernel<T><<<GridFor(ctx, n, kThreads), kThreads, 0, ctx.stream>>>(
          static_cast<T*>(out), static_cast<T>(start), static_cast<T>(delta), n);
      return cudaGetLastError();
    }
  });
}

}  // namespace resident::cuda_kernels

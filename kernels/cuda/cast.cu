// Dtype conversion (Convert in common.cuh holds the semantics) and strided
// copies. A same-dtype strided cast is a copy of item-size words, which is
// also how Transpose's general path runs, so copies instantiate per item size
// (1, 2, 4, 8 bytes), not per dtype.
#include <cstdint>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/kernels.h"

namespace resident::cuda_kernels {
namespace {

constexpr int kUnroll = 4;

template <typename From, typename To>
__global__ void __launch_bounds__(kThreads)
    CastContiguousKernel(const From* a, To* out, int64_t n) {
  // Element-strided with a few loads in flight: every access is coalesced.
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x * kUnroll;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x * kUnroll + threadIdx.x;
       base < n; base += step) {
    From x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + static_cast<int64_t>(u) * blockDim.x;
      if (i < n) x[u] = a[i];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + static_cast<int64_t>(u) * blockDim.x;
      if (i < n) out[i] = Convert<To>(x[u]);
    }
  }
}

template <typename From, typename To, typename IndexT>
__global__ void __launch_bounds__(kThreads)
    CastStridedKernel(const From* a, To* out, const StridedLayout layout, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[1];
    StridedOffsets<1, IndexT>(layout, static_cast<IndexT>(i), off);
    out[i] = Convert<To>(a[off[0]]);
  }
}

template <typename From, typename To>
cudaError_t LaunchStrided(const LaunchContext& ctx, const void* a, void* out,
                          const StridedLayout& layout, int64_t n) {
  const unsigned grid = GridFor(ctx, n, kThreads);
  if (n <= INT64_C(0xffffffff)) {
    CastStridedKernel<From, To, uint32_t><<<grid, kThreads, 0, ctx.stream>>>(
        static_cast<const From*>(a), static_cast<To*>(out), layout, n);
  } else {
    CastStridedKernel<From, To, uint64_t><<<grid, kThreads, 0, ctx.stream>>>(
        static_cast<const From*>(a), static_cast<To*>(out), layout, n);
  }
  return cudaGetLastError();
}

// Calls f(From{}, To{}) for two different dtypes; same-dtype casts are
// copies, which the callers do themselves.
template <typename F>
cudaError_t DispatchPair(DType from, DType to, F&& f) {
  return DispatchAnyType(from, [&](auto from_tag) -> cudaError_t {
    using From = decltype(from_tag);
    return DispatchAnyType(to, [&](auto to_tag) -> cudaError_t {
      using To = decltype(to_tag);
      if constexpr (std::is_same_v<From, To>) {
        return cudaErrorInvalidValue;  // a copy: handled by the caller
      } else {
        return f(from_tag, to_tag);
      }
    });
  });
}

}  // namespace

cudaError_t CastContiguous(const LaunchContext& ctx, DType from, DType to, const void* a, void* out,
                           int64_t n) {
  if (n <= 0) return cudaSuccess;
  if (from == to) {
    if (a == out) return cudaSuccess;
    return cudaMemcpyAsync(out, a, static_cast<size_t>(n * ItemSize(from)),
                           cudaMemcpyDeviceToDevice, ctx.stream);
  }
  return DispatchPair(from, to, [&](auto from_tag, auto to_tag) -> cudaError_t {
    using From = decltype(from_tag);
    using To = decltype(to_tag);
    CastContiguousKernel<From, To>
        <<<GridFor(ctx, n / kUnroll + 1, kThreads), kThreads, 0, ctx.stream>>>(
            static_cast<const From*>(a), static_cast<To*>(out), n);
    return cudaGetLastError();
  });
}

cudaError_t CastStrided(const LaunchContext& ctx, DType from, DType to, const void* a, void* out,
                        const StridedLayout& layout) {
  const int64_t n = LayoutElements(layout);
  if (n <= 0) return cudaSuccess;
  if (from == to) {
    switch (ItemSize(from)) {
      case 1:
        return LaunchStrided<uint8_t, uint8_t>(ctx, a, out, layout, n);
      case 2:
        return LaunchStrided<uint16_t, uint16_t>(ctx, a, out, layout, n);
      case 4:
        return LaunchStrided<uint32_t, uint32_t>(ctx, a, out, layout, n);
      case 8:
        return LaunchStrided<uint64_t, uint64_t>(ctx, a, out, layout, n);
      case 16:  // complex128
        return LaunchStrided<ulonglong2, ulonglong2>(ctx, a, out, layout, n);
    }
    return cudaErrorInvalidValue;  // an item size without a copy kernel
  }
  return DispatchPair(from, to, [&](auto from_tag, auto to_tag) -> cudaError_t {
    return LaunchStrided<decltype(from_tag), decltype(to_tag)>(ctx, a, out, layout, n);
  });
}

}  // namespace resident::cuda_kernels

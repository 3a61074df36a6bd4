// Dtype conversion (Convert in common.cuh holds the semantics) and strided
// copies. A same-dtype strided cast is a copy of item-size words, which is
// also how Transpose's general path runs, so copies instantiate per item size
// (1, 4, 8 bytes), not per dtype.
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
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x * kUnroll +
                      threadIdx.x;
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
    CastStridedKernel(const From* a, To* out, const StridedLayout layout,
                      int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += step) {
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

int ItemBytes(ElemType t) {
  switch (t) {
    case ElemType::kBool:
      return 1;
    case ElemType::kInt32:
    case ElemType::kFloat32:
      return 4;
    case ElemType::kInt64:
    case ElemType::kFloat64:
      return 8;
  }
  return 0;
}

}  // namespace

cudaError_t CastContiguous(const LaunchContext& ctx, ElemType from,
                           ElemType to, const void* a, void* out, int64_t n) {
  if (n <= 0) return cudaSuccess;
  if (from == to) {
    if (a == out) return cudaSuccess;
    return cudaMemcpyAsync(out, a, static_cast<size_t>(n * ItemBytes(from)),
                           cudaMemcpyDeviceToDevice, ctx.stream);
  }
  return DispatchType(from, [&](auto from_tag) -> cudaError_t {
    using From = decltype(from_tag);
    return DispatchType(to, [&](auto to_tag) -> cudaError_t {
      using To = decltype(to_tag);
      if constexpr (std::is_same_v<From, To>) {
        return cudaErrorInvalidValue;  // handled above
      } else {
        CastContiguousKernel<From, To>
            <<<GridFor(ctx, n / kUnroll + 1, kThreads), kThreads, 0,
               ctx.stream>>>(static_cast<const From*>(a), static_cast<To*>(out),
                             n);
        return cudaGetLastError();
      }
    });
  });
}

cudaError_t CastStrided(const LaunchContext& ctx, ElemType from, ElemType to,
                        const void* a, void* out, const StridedLayout& layout) {
  const int64_t n = LayoutElements(layout);
  if (n <= 0) return cudaSuccess;
  if (from == to) {
    switch (ItemBytes(from)) {
      case 1:
        return LaunchStrided<uint8_t, uint8_t>(ctx, a, out, layout, n);
      case 4:
        return LaunchStrided<uint32_t, uint32_t>(ctx, a, out, layout, n);
      case 8:
        return LaunchStrided<uint64_t, uint64_t>(ctx, a, out, layout, n);
    }
    return cudaErrorInvalidValue;
  }
  return DispatchType(from, [&](auto from_tag) -> cudaError_t {
    using From = decltype(from_tag);
    return DispatchType(to, [&](auto to_tag) -> cudaError_t {
      using To = decltype(to_tag);
      if constexpr (std::is_same_v<From, To>) {
        return cudaErrorInvalidValue;  // handled above
      } else {
        return LaunchStrided<From, To>(ctx, a, out, layout, n);
      }
    });
  });
}

}  // namespace resident::cuda_kernels

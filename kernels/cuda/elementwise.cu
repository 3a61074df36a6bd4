// The elementwise launches of kernels/cuda/kernels.h: each call goes to the
// shard file that compiles its kind (elementwise_shard.h); negation has its
// own kernel here.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/elementwise_shard.h"
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/elementwise_shard.h"
#include "kernels/cuda/kernels.h"

namespace resident::cuda_kernels {
namespace {

template <typename T>
__global__ void __launch_bounds__(kThreads) NegateKernel(const T* a, T* out, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    if constexpr (std::is_integral_v<T>) {
      out[i] = static_cast<T>(UnsignedT<T>(0) - static_cast<UnsignedT<T>>(a[i]));
    } else {
      // Flip the sign bit, as x86's xorps/xorpd and NumPy's float16 loop
      // do (NaNs included).
      using U = std::conditional_t<sizeof(T) == 2, uint16_t,
                                   std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
      U bits;
      memcpy(&bits, &a[i], sizeof(T));
      bits ^= U(1) << (8 * sizeof(T) - 1);
      memcpy(&out[i], &bits, sizeof(T));
    }
  }
}

}  // namespace

cudaError_t BinaryContiguous(const LaunchContext& ctx, DType t, ElementwiseKind op, const void* a,
                             const void* b, void* out, int64_t n) {
  return VisitElementwiseShard(op, [&](auto s) {
    return elementwise_internal::BinaryContiguousShard<decltype(s)::value>(ctx, t, op, a, b, out,
                                                                           n);
  });
}

cudaError_t BinaryScalar(const LaunchContext& ctx, DType t, ElementwiseKind op, const void* a,
                         const void* scalar, bool scalar_on_left, void* out, int64_t n) {
  return VisitElementwiseShard(op, [&](auto s) {
    return elementwise_internal::BinaryScalarShard<decltype(s)::value>(ctx, t, op, a, scalar,
                                                                       scalar_on_left, out, n);
  });
}

cudaError_t BinaryStrided(const LaunchContext& ctx, DType t, ElementwiseKind op, const void* a,
                          const void* b, void* out, const StridedLayout& layout) {
  return VisitElementwiseShard(op, [&](auto s) {
    return elementwise_internal::BinaryStridedShard<decltype(s)::value>(ctx, t, op, a, b, out,
                                                                        layout);
  });
}

cudaError_t Negate(const LaunchContext& ctx, DType t, const void* a, void* out, int64_t n) {
  if (n <= 0) return cudaSuccess;
  return DispatchType(t, [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    if constexpr (kIsBool<T>) {
      return cudaErrorInvalidValue;
    } else {
      NegateKernel<T><<<GridFor(ctx, n, kThreads), kThreads, 0, ctx.stream>>>(
          static_cast<const T*>(a), static_cast<T*>(out), n);
      return cudaGetLastError();
    }
  });
}

}  // namespace resident::cuda_kernels

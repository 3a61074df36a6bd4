// Elementwise kinds over complex64 / complex128: one strided kernel per
// (type, kind), the arithmetic of core/complex.h (shared with the CPU, so
// results are the same bit for bit: this folder builds with --fmad=false and
// core/complex.h asks for its fmas explicitly). Never fused.
#include <cstdint>

#include "core/complex.h"
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/kernels.h"

namespace resident::cuda_kernels {
namespace {

template <typename C, ElementwiseKind kKind>
__device__ __forceinline__ C ComplexApply(C x, C y) {
  using F = typename ResidentIsComplex<C>::component;
  using K = ElementwiseKind;
  auto truth = [](bool b) { return resident_cx_make<C>(b ? F(1) : F(0), F(0)); };
  if constexpr (kKind == K::kAdd) return resident_cx_add(x, y);
  if constexpr (kKind == K::kSubtract) return resident_cx_sub(x, y);
  if constexpr (kKind == K::kMultiply) return resident_cx_mul(x, y);
  if constexpr (kKind == K::kDivide) return resident_cx_div(x, y);
  if constexpr (kKind == K::kNegative) return resident_cx_neg(x);
  if constexpr (kKind == K::kAbsolute) return resident_cx_make<C>(resident_cx_abs(x), F(0));
  if constexpr (kKind == K::kMaximum) return resident_cx_maximum(x, y);
  if constexpr (kKind == K::kMinimum) return resident_cx_minimum(x, y);
  if constexpr (kKind == K::kEqual) return truth(resident_cx_eq(x, y));
  if constexpr (kKind == K::kNotEqual) return truth(!resident_cx_eq(x, y));
  if constexpr (kKind == K::kLess) return truth(resident_cx_lt(x, y));
  if constexpr (kKind == K::kLessEqual) return truth(resident_cx_le(x, y));
  if constexpr (kKind == K::kGreater) return truth(resident_cx_gt(x, y));
  if constexpr (kKind == K::kGreaterEqual) return truth(resident_cx_ge(x, y));
  if constexpr (kKind == K::kLogicalAnd) {
    return truth(resident_cx_nonzero(x) && resident_cx_nonzero(y));
  }
  if constexpr (kKind == K::kLogicalOr) {
    return truth(resident_cx_nonzero(x) || resident_cx_nonzero(y));
  }
  if constexpr (kKind == K::kLogicalNot) return truth(!resident_cx_nonzero(x));
  if constexpr (kKind == K::kIsnan) return truth(resident_cx_isnan_value(x));
  if constexpr (kKind == K::kIsfinite) return truth(resident_cx_isfinite(x));
  return C{};  // not a complex kind: refused before the launch
}

template <typename C, ElementwiseKind kKind, typename IndexT>
__global__ void __launch_bounds__(kThreads)
    ComplexStridedKernel(const C* a, const C* b, C* out, const StridedLayout layout, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[2];
    StridedOffsets<2, IndexT>(layout, static_cast<IndexT>(i), off);
    out[i] = ComplexApply<C, kKind>(a[off[0]], b[off[1]]);
  }
}

template <typename C, ElementwiseKind kKind>
cudaError_t Launch(const LaunchContext& ctx, const void* a, const void* b, void* out,
                   const StridedLayout& layout, int64_t n) {
  const unsigned grid = GridFor(ctx, n, kThreads);
  if (n <= INT64_C(0xffffffff)) {
    ComplexStridedKernel<C, kKind, uint32_t><<<grid, kThreads, 0, ctx.stream>>>(
        static_cast<const C*>(a), static_cast<const C*>(b), static_cast<C*>(out), layout, n);
  } else {
    ComplexStridedKernel<C, kKind, uint64_t><<<grid, kThreads, 0, ctx.stream>>>(
        static_cast<const C*>(a), static_cast<const C*>(b), static_cast<C*>(out), layout, n);
  }
  return cudaGetLastError();
}

template <typename C>
cudaError_t LaunchKind(const LaunchContext& ctx, ElementwiseKind op, const void* a, const void* b,
                       void* out, const StridedLayout& layout, int64_t n) {
  switch (op) {
#define RESIDENT_CX_CASE(k) \
  case ElementwiseKind::k:  \
    return Launch<C, ElementwiseKind::k>(ctx, a, b, out, layout, n);
    RESIDENT_CX_CASE(kAdd)
    RESIDENT_CX_CASE(kSubtract)
    RESIDENT_CX_CASE(kMultiply)
    RESIDENT_CX_CASE(kDivide)
    RESIDENT_CX_CASE(kNegative)
    RESIDENT_CX_CASE(kAbsolute)
    RESIDENT_CX_CASE(kMaximum)
    RESIDENT_CX_CASE(kMinimum)
    RESIDENT_CX_CASE(kEqual)
    RESIDENT_CX_CASE(kNotEqual)
    RESIDENT_CX_CASE(kLess)
    RESIDENT_CX_CASE(kLessEqual)
    RESIDENT_CX_CASE(kGreater)
    RESIDENT_CX_CASE(kGreaterEqual)
    RESIDENT_CX_CASE(kLogicalAnd)
    RESIDENT_CX_CASE(kLogicalOr)
    RESIDENT_CX_CASE(kLogicalNot)
    RESIDENT_CX_CASE(kIsnan)
    RESIDENT_CX_CASE(kIsfinite)
#undef RESIDENT_CX_CASE
    default:
      break;
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t ComplexStrided(const LaunchContext& ctx, DType t, ElementwiseKind op, const void* a,
                           const void* b, void* out, const StridedLayout& layout) {
  const int64_t n = LayoutElements(layout);
  if (n <= 0) return cudaSuccess;
  if (t == DType::kComplex64) return LaunchKind<Complex64>(ctx, op, a, b, out, layout, n);
  if (t == DType::kComplex128) return LaunchKind<Complex128>(ctx, op, a, b, out, layout, n);
  return cudaErrorInvalidValue;
}

}  // namespace resident::cuda_kernels

// Elementwise kinds over complex64 / complex128: one strided kernel per
// (type, kind) of core/complex.h's RESIDENT_COMPLEX_KINDS, with its
// arithmetic (shared with the CPU, so results are the same bit for bit: this
// folder builds with --fmad=false and core/complex.h asks for its fmas
// explicitly), but sign (CUDA's hypot) and the library functions (sqrt,
// exp, log, the trigonometric and hyperbolic functions and their inverses,
// log2, log10, power: core/complex_math.h's, on CUDA's real math
// functions), which agree with glibc's within the README's ULP bound and
// give C99 Annex G's special values as glibc does. Never fused.
#include <cstdint>

#include "core/complex.h"
#include "core/complex_math.h"
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/kernels.h"

namespace resident::cuda_kernels {
namespace {

// The kinds core/complex.h leaves to the backend, from core/complex_math.h
// (libcu++'s cuda::std::complex missed glibc by up to 3e12 ULP in clog
// and differed in special values). power's general case is glibc's cpow,
// exp(y log x).
#define RESIDENT_CX_CMATH(name, fn)                          \
  template <typename C>                                      \
  __device__ __forceinline__ C resident_cxk_##name(C x, C) { \
    return resident_cmath_##fn(x);                           \
  }
RESIDENT_CX_CMATH(sqrt, sqrt)
RESIDENT_CX_CMATH(exp, exp)
RESIDENT_CX_CMATH(log, log)
RESIDENT_CX_CMATH(sin, sin)
RESIDENT_CX_CMATH(cos, cos)
RESIDENT_CX_CMATH(tan, tan)
RESIDENT_CX_CMATH(sinh, sinh)
RESIDENT_CX_CMATH(cosh, cosh)
RESIDENT_CX_CMATH(tanh, tanh)
RESIDENT_CX_CMATH(arcsin, asin)
RESIDENT_CX_CMATH(arccos, acos)
RESIDENT_CX_CMATH(arctan, atan)
RESIDENT_CX_CMATH(arcsinh, asinh)
RESIDENT_CX_CMATH(arccosh, acosh)
RESIDENT_CX_CMATH(arctanh, atanh)
RESIDENT_CX_CMATH(log1p, log1p)
RESIDENT_CX_CMATH(expm1, expm1)
RESIDENT_CX_CMATH(reciprocal, reciprocal)
RESIDENT_CX_CMATH(rint, rint)
#undef RESIDENT_CX_CMATH

template <typename C>
__device__ __forceinline__ C resident_cxk_log2(C x, C) {
  typedef typename ResidentIsComplex<C>::component F;
  return resident_cmath_scale(resident_cmath_log(x), ResidentCmathConsts<F>::log2e());
}
template <typename C>
__device__ __forceinline__ C resident_cxk_log10(C x, C) {
  typedef typename ResidentIsComplex<C>::component F;
  return resident_cmath_scale(resident_cmath_log(x), ResidentCmathConsts<F>::log10e());
}
template <typename C>
__device__ __forceinline__ C resident_cxk_power(C x, C y) {
  C r;
  if (resident_cmath_pow_special(x, y, &r)) return r;
  return resident_cmath_exp(resident_cmath_mul_c99(y, resident_cmath_log(x)));
}

template <typename C, ElementwiseKind kKind>
__device__ __forceinline__ C ComplexApply(C x, C y) {
#define RESIDENT_CX_APPLY(k, name) \
  if constexpr (kKind == ElementwiseKind::k) return resident_cxk_##name(x, y);
  RESIDENT_COMPLEX_KINDS(RESIDENT_CX_APPLY)
#undef RESIDENT_CX_APPLY
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
#define RESIDENT_CX_CASE(k, name) \
  case ElementwiseKind::k:        \
    return Launch<C, ElementwiseKind::k>(ctx, a, b, out, layout, n);
    RESIDENT_COMPLEX_KINDS(RESIDENT_CX_CASE)
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

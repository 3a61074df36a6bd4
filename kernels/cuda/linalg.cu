#include "kernels/cuda/linalg.h"

#include <cstdint>

#include "kernels/cuda/common.cuh"

namespace resident::cuda_kernels {
namespace {

template <typename R>
struct Cx {
  R re, im;
};

template <typename T>
__device__ __forceinline__ T Zero() {
  return T{};
}

template <typename T>
__global__ void ZeroAbove(T* a, int64_t total, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t within = i % (n * n);
    if (within % n > within / n) a[i] = Zero<T>();
  }
}

template <typename R>
__device__ __forceinline__ R One(R*) {
  return R(1);
}
template <typename R>
__device__ __forceinline__ Cx<R> One(Cx<R>*) {
  return {R(1), R(0)};
}

template <typename T>
__global__ void Identity(T* a, int64_t total, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t within = i % (n * n);
    a[i] = within % n == within / n ? One(static_cast<T*>(nullptr)) : Zero<T>();
  }
}

template <typename R>
__device__ __forceinline__ R Mul(R a, R b) {
  return a * b;
}
template <typename R>
__device__ __forceinline__ Cx<R> Mul(Cx<R> a, Cx<R> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <typename R>
__device__ __forceinline__ R Neg(R a) {
  return -a;
}
template <typename R>
__device__ __forceinline__ Cx<R> Neg(Cx<R> a) {
  return {-a.re, -a.im};
}

// One thread per matrix: the product down the diagonal, in order.
template <typename T>
__global__ void Det(const T* lu, const int64_t* ipiv, int64_t batch, int64_t n, T* out) {
  for (int64_t b = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; b < batch;
       b += int64_t{gridDim.x} * blockDim.x) {
    T d = One(static_cast<T*>(nullptr));
    const T* m = lu + b * n * n;
    for (int64_t i = 0; i < n; ++i) {
      d = Mul(d, m[i * n + i]);
      if (ipiv[b * n + i] != i + 1) d = Neg(d);
    }
    out[b] = d;
  }
}

template <typename F>
cudaError_t ByType(DType t, F&& f) {
  switch (t) {
    case DType::kFloat32:
      return f(float{});
    case DType::kFloat64:
      return f(double{});
    case DType::kComplex64:
      return f(Cx<float>{});
    case DType::kComplex128:
      return f(Cx<double>{});
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t ZeroAboveDiagonal(const LaunchContext& ctx, DType t, void* a, int64_t batch,
                              int64_t n) {
  const int64_t total = batch * n * n;
  if (total == 0) return cudaSuccess;
  return ByType(t, [&](auto zero) {
    using T = decltype(zero);
    ZeroAbove<T>
        <<<GridFor(ctx, total, kThreads), kThreads, 0, ctx.stream>>>(static_cast<T*>(a), total, n);
    return cudaGetLastError();
  });
}

cudaError_t IdentityMatrices(const LaunchContext& ctx, DType t, void* a, int64_t batch, int64_t n) {
  const int64_t total = batch * n * n;
  if (total == 0) return cudaSuccess;
  return ByType(t, [&](auto zero) {
    using T = decltype(zero);
    Identity<T>
        <<<GridFor(ctx, total, kThreads), kThreads, 0, ctx.stream>>>(static_cast<T*>(a), total, n);
    return cudaGetLastError();
  });
}

cudaError_t DetFromLu(const LaunchContext& ctx, DType t, const void* lu, const int64_t* ipiv,
                      int64_t batch, int64_t n, void* out) {
  if (batch == 0) return cudaSuccess;
  return ByType(t, [&](auto zero) {
    using T = decltype(zero);
    Det<T><<<GridFor(ctx, batch, 128), 128, 0, ctx.stream>>>(static_cast<const T*>(lu), ipiv, batch,
                                                             n, static_cast<T*>(out));
    return cudaGetLastError();
  });
}

}  // namespace resident::cuda_kernels

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

template <typename R>
__device__ __forceinline__ bool IsZero(R x) {
  return x == R(0);
}
template <typename R>
__device__ __forceinline__ bool IsZero(Cx<R> x) {
  return x.re == R(0) && x.im == R(0);
}

// One thread per matrix: the product down the diagonal, in order; 0 when a
// pivot is exactly 0 (getrf's "singular"), as NumPy's, even if another
// pivot is inf or NaN.
template <typename T>
__global__ void Det(const T* lu, const int64_t* ipiv, int64_t batch, int64_t n, T* out) {
  for (int64_t b = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; b < batch;
       b += int64_t{gridDim.x} * blockDim.x) {
    T d = One(static_cast<T*>(nullptr));
    const T* m = lu + b * n * n;
    bool singular = false;
    for (int64_t i = 0; i < n; ++i) {
      singular = singular || IsZero(m[i * n + i]);
      d = Mul(d, m[i * n + i]);
      if (ipiv[b * n + i] != i + 1) d = Neg(d);
    }
    out[b] = singular ? Zero<T>() : d;
  }
}

template <typename R>
__device__ __forceinline__ R RealOf(R) {
  return R(0);
}
template <typename R>
__device__ __forceinline__ R RealOf(Cx<R>) {
  return R(0);
}

// A pivot's sign (x / |x|; a real one's -1 or 1) and |x|.
template <typename R>
__device__ __forceinline__ void Split(R x, R& sign, R& magnitude) {
  sign = x < R(0) ? R(-1) : R(1);
  magnitude = fabs(x);
}
template <typename R>
__device__ __forceinline__ void Split(Cx<R> x, Cx<R>& sign, R& magnitude) {
  magnitude = hypot(x.re, x.im);
  sign = {x.re / magnitude, x.im / magnitude};
}

// One thread per matrix, in order down the diagonal (NumPy's order).
template <typename T>
__global__ void Slogdet(const T* lu, const int64_t* ipiv, int64_t batch, int64_t n, T* sign,
                        decltype(RealOf(T{}))* logabs) {
  using R = decltype(RealOf(T{}));
  for (int64_t b = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; b < batch;
       b += int64_t{gridDim.x} * blockDim.x) {
    T s = One(static_cast<T*>(nullptr));
    R l = R(0);
    const T* m = lu + b * n * n;
    bool singular = false;
    for (int64_t i = 0; i < n && !singular; ++i) {
      const T d = m[i * n + i];
      if (IsZero(d)) {
        singular = true;
        break;
      }
      T part;
      R magnitude;
      Split(d, part, magnitude);
      s = Mul(s, part);
      l += log(magnitude);
      if (ipiv[b * n + i] != i + 1) s = Neg(s);
    }
    if (singular) {
      s = Zero<T>();
      l = -R(INFINITY);
    }
    sign[b] = s;
    logabs[b] = l;
  }
}

template <typename T>
__global__ void UpperRowMajor(const T* factor, int64_t total, int64_t m, int64_t n, int64_t rows,
                              T* out) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t b = e / (rows * n), within = e % (rows * n);
    const int64_t i = within / n, j = within % n;
    out[e] = j >= i ? factor[b * m * n + j * m + i] : Zero<T>();
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

// The batched routines' argument arrays: one pointer per matrix.
__global__ void Pointers(char* base, int64_t stride, int64_t batch, void** out) {
  for (int64_t b = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; b < batch;
       b += int64_t{gridDim.x} * blockDim.x) {
    out[b] = base + b * stride;
  }
}

__global__ void Widen(const int* in, int64_t count, int64_t* out) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = in[i];
  }
}

// One thread per output element; the matrices are small, so the strided
// reads stay in cache.
template <typename T>
__global__ void TransposeEach(const T* in, int64_t total, int64_t rows, int64_t cols, T* out) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t within = i % (rows * cols), base = i - within;
    const int64_t r = within / rows, c = within % rows;  // out is cols x rows
    out[i] = in[base + c * cols + r];
  }
}

template <typename R>
__device__ __forceinline__ bool Finite(R x) {
  return isfinite(x);
}
template <typename R>
__device__ __forceinline__ bool Finite(Cx<R> x) {
  return isfinite(x.re) && isfinite(x.im);
}

// Every thread that meets a non-finite element writes 1 (the same value, so
// the race is benign); the flag was zeroed first.
template <typename T>
__global__ void NonFinite(const T* a, int64_t total, int64_t rows, int64_t cols, bool lower_only,
                          int* flag) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t within = i % (rows * cols);
    if (lower_only && within % cols > within / cols) continue;
    if (!Finite(a[i])) *flag = 1;
  }
}

}  // namespace

cudaError_t AnyNonFinite(const LaunchContext& ctx, DType t, const void* a, int64_t batch,
                         int64_t rows, int64_t cols, bool lower_only, int* flag) {
  cudaError_t e = cudaMemsetAsync(flag, 0, sizeof(int), ctx.stream);
  const int64_t total = batch * rows * cols;
  if (e != cudaSuccess || total == 0) return e;
  return ByType(t, [&](auto zero) {
    using T = decltype(zero);
    NonFinite<T><<<GridFor(ctx, total, kThreads), kThreads, 0, ctx.stream>>>(
        static_cast<const T*>(a), total, rows, cols, lower_only, flag);
    return cudaGetLastError();
  });
}

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

cudaError_t SlogdetFromLu(const LaunchContext& ctx, DType t, const void* lu, const int64_t* ipiv,
                          int64_t batch, int64_t n, void* sign, void* logabs) {
  if (batch == 0) return cudaSuccess;
  return ByType(t, [&](auto zero) {
    using T = decltype(zero);
    using R = decltype(RealOf(T{}));
    Slogdet<T><<<GridFor(ctx, batch, 128), 128, 0, ctx.stream>>>(
        static_cast<const T*>(lu), ipiv, batch, n, static_cast<T*>(sign), static_cast<R*>(logabs));
    return cudaGetLastError();
  });
}

cudaError_t UpperTriangleToRowMajor(const LaunchContext& ctx, DType t, const void* factor,
                                    int64_t batch, int64_t m, int64_t n, int64_t rows, void* out) {
  const int64_t total = batch * rows * n;
  if (total == 0) return cudaSuccess;
  return ByType(t, [&](auto zero) {
    using T = decltype(zero);
    UpperRowMajor<T><<<GridFor(ctx, total, kThreads), kThreads, 0, ctx.stream>>>(
        static_cast<const T*>(factor), total, m, n, rows, static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t MatrixPointers(const LaunchContext& ctx, void* base, int64_t stride_bytes,
                           int64_t batch, void** out) {
  if (batch == 0) return cudaSuccess;
  Pointers<<<GridFor(ctx, batch, kThreads), kThreads, 0, ctx.stream>>>(static_cast<char*>(base),
                                                                       stride_bytes, batch, out);
  return cudaGetLastError();
}

cudaError_t WidenPivots(const LaunchContext& ctx, const int* in, int64_t count, int64_t* out) {
  if (count == 0) return cudaSuccess;
  Widen<<<GridFor(ctx, count, kThreads), kThreads, 0, ctx.stream>>>(in, count, out);
  return cudaGetLastError();
}

cudaError_t TransposeMatrices(const LaunchContext& ctx, DType t, const void* in, int64_t batch,
                              int64_t rows, int64_t cols, void* out) {
  const int64_t total = batch * rows * cols;
  if (total == 0) return cudaSuccess;
  return ByType(t, [&](auto zero) {
    using T = decltype(zero);
    TransposeEach<T><<<GridFor(ctx, total, kThreads), kThreads, 0, ctx.stream>>>(
        static_cast<const T*>(in), total, rows, cols, static_cast<T*>(out));
    return cudaGetLastError();
  });
}

}  // namespace resident::cuda_kernels

// The elementwise kernels of the op table, included only by the shard files
// (elementwise_shard<S>.cu), each of which instantiates the launches of the
// kinds with ElementwiseShard(kind) == S; kernels/cuda/elementwise.cu routes
// each call to its kind's shard.
//
// Every kind with NumPy's semantics: plain IEEE operations for floats (this
// folder builds with --fmad=false), libdevice for transcendentals, wrapping
// unsigned arithmetic for integers, or/and for bool add/multiply. Unary
// kinds run through the binary launches with b == a; negation has its own
// kernel (elementwise.cu).
//
// Paths, fastest first: same-shape contiguous operands (16-byte packs, a few
// packs in flight per thread, a == b read once), a single-element operand
// (read once per thread), and general broadcasting through strided indexing.
#ifndef RESIDENT_KERNELS_CUDA_ELEMENTWISE_SHARD_CUH_
#define RESIDENT_KERNELS_CUDA_ELEMENTWISE_SHARD_CUH_

#include <cstdint>

#include "core/elementwise_expr.h"
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/elementwise_shard.h"

namespace resident::cuda_kernels::elementwise_internal {
namespace {

// A bool element is computed as C++'s bool (the shared expressions'
// register type) and stored as its byte; a float16 / bfloat16 one as its
// float, the result rounded back to nearest even (NumPy's float16 loops).
template <typename T>
__device__ __forceinline__ auto Reg(T x) {
  if constexpr (kIsBool<T>) {
    return x != 0;
  } else {
    return resident_load(x);
  }
}
template <typename T, typename R>
__device__ __forceinline__ T Store(R r) {
  if constexpr (kIsHalfStorage<T>) {
    return resident_store<T>(static_cast<float>(r));
  } else {
    return static_cast<T>(r);
  }
}

// The op table's expression (core/elementwise_expr.h) of a kind. A unary
// kind runs through the binary launches with b == a and reads only x; a
// bool-valued kind stores 0/1 of T (the program layer casts to bool).
template <typename T, ElementwiseKind kOp>
struct BinaryFn {
  __device__ __forceinline__ T operator()(T x, [[maybe_unused]] T y) const {
#define RESIDENT_EW_BINARY(kind, name, arity, rule)        \
  if constexpr (kOp == ElementwiseKind::kind) {            \
    if constexpr ((arity) == 2) {                          \
      return Store<T>(resident_ew_##name(Reg(x), Reg(y))); \
    } else {                                               \
      return Store<T>(resident_ew_##name(Reg(x)));         \
    }                                                      \
  }
    RESIDENT_ELEMENTWISE_OPS(RESIDENT_EW_BINARY)
#undef RESIDENT_EW_BINARY
    return T{};  // unreached: every kind is a row of the table
  }
};

// ml_dtypes' bfloat16 sign keeps -0 (core/elementwise_expr.h).
template <>
struct BinaryFn<BFloat16, ElementwiseKind::kSign> {
  __device__ __forceinline__ BFloat16 operator()(BFloat16 x, BFloat16) const {
    return resident_store<BFloat16>(resident_ew_sign_bf16(resident_load(x)));
  }
};

// How the two operands of a contiguous launch are read. A run-time
// argument, uniform over the launch (no divergence), rather than a template
// parameter: four instantiations per (dtype, op) made this file the
// longest compile of the build.
enum class Mode { kBoth, kSelf, kScalarRight, kScalarLeft };

constexpr int kUnroll = 4;  // packs in flight per thread

template <typename T, ElementwiseKind kOp, int V>
__global__ void __launch_bounds__(kThreads)
    BinaryContiguousKernel(const T* a, const T* b, T* out, int64_t n, Mode mode) {
  using P = Pack<T, V>;
  const BinaryFn<T, kOp> fn;
  const bool load_b = mode == Mode::kBoth;
  const bool self = mode == Mode::kSelf;
  const bool left = mode == Mode::kScalarLeft;
  const T s = (mode == Mode::kScalarRight || left) ? *b : T{};
  // x from a; y from b, a itself or the scalar; swapped for a scalar on the
  // left. Selects, not branches.
  auto apply = [&](T x, T y) -> T {
    const T other = load_b ? y : (self ? x : s);
    return left ? fn(other, x) : fn(x, other);
  };
  const int64_t npacks = n / V;
  const P* ap = reinterpret_cast<const P*>(a);
  const P* bp = reinterpret_cast<const P*>(b);
  P* op = reinterpret_cast<P*>(out);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x * kUnroll;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x * kUnroll + threadIdx.x;
       base < npacks; base += step) {
    P x[kUnroll], y[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t idx = base + static_cast<int64_t>(u) * blockDim.x;
      if (idx < npacks) {
        x[u] = ap[idx];
        if (load_b) y[u] = bp[idx];
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t idx = base + static_cast<int64_t>(u) * blockDim.x;
      if (idx < npacks) {
        P r;
#pragma unroll
        for (int v = 0; v < V; ++v) {
          r.v[v] = apply(x[u].v[v], load_b ? y[u].v[v] : T{});
        }
        op[idx] = r;
      }
    }
  }
  // The last n % V elements.
  const int64_t tail = npacks * V;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tail + tid < n) {
    const int64_t i = tail + tid;
    out[i] = apply(a[i], load_b ? b[i] : T{});
  }
}

template <typename T, ElementwiseKind kOp, typename IndexT>
__global__ void __launch_bounds__(kThreads)
    BinaryStridedKernel(const T* a, const T* b, T* out, const StridedLayout layout, int64_t n) {
  const BinaryFn<T, kOp> fn;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[2];
    StridedOffsets<2, IndexT>(layout, static_cast<IndexT>(i), off);
    out[i] = fn(a[off[0]], b[off[1]]);
  }
}

template <typename T, ElementwiseKind kOp>
cudaError_t LaunchContiguous(const LaunchContext& ctx, Mode mode, const T* a, const T* b, T* out,
                             int64_t n) {
  if (n <= 0) return cudaSuccess;
  constexpr int V = kVec16<T>;
  const bool vec = Aligned16(a) && Aligned16(out) && (mode != Mode::kBoth || Aligned16(b));
  if (vec) {
    const int64_t packs = n / V;
    // Enough threads for the packs, and at least one per tail element.
    const int64_t threads_needed = packs / kUnroll + V;
    BinaryContiguousKernel<T, kOp, V>
        <<<GridFor(ctx, threads_needed, kThreads), kThreads, 0, ctx.stream>>>(a, b, out, n, mode);
  } else {
    // Misaligned (never for whole buffers): one element per "pack".
    BinaryContiguousKernel<T, kOp, 1>
        <<<GridFor(ctx, n / kUnroll + 1, kThreads), kThreads, 0, ctx.stream>>>(a, b, out, n, mode);
  }
  return cudaGetLastError();
}

// Calls f(T{}, integral_constant<op>) for the (type, op) pairs the op table
// accepts, every kind of shard S but negative (its own kernel); the switch
// is generated from the table.
template <int S, typename F>
cudaError_t DispatchBinary(DType t, ElementwiseKind op, F&& f) {
  using K = ElementwiseKind;
  auto with_type = [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    switch (op) {
#define RESIDENT_EW_DISPATCH(kind, name, arity, rule)                          \
  case K::kind:                                                                \
    if constexpr (K::kind != K::kNegative && ElementwiseShard(K::kind) == S && \
                  ElementwiseAccepts(K::kind, DTypeOfStorage<T>())) {          \
      return f(tag, std::integral_constant<K, K::kind>{});                     \
    } else {                                                                   \
      return cudaErrorInvalidValue;                                            \
    }
      RESIDENT_ELEMENTWISE_OPS(RESIDENT_EW_DISPATCH)
#undef RESIDENT_EW_DISPATCH
    }
    return cudaErrorInvalidValue;
  };
  return DispatchType(t, with_type);
}

}  // namespace

template <int S>
cudaError_t BinaryContiguousShard(const LaunchContext& ctx, DType t, ElementwiseKind op,
                                  const void* a, const void* b, void* out, int64_t n) {
  return DispatchBinary<S>(t, op, [&](auto tag, auto op_c) -> cudaError_t {
    using T = decltype(tag);
    constexpr ElementwiseKind kOp = decltype(op_c)::value;
    const T* ta = static_cast<const T*>(a);
    const T* tb = static_cast<const T*>(b);
    return LaunchContiguous<T, kOp>(ctx, ta == tb ? Mode::kSelf : Mode::kBoth, ta, tb,
                                    static_cast<T*>(out), n);
  });
}

template <int S>
cudaError_t BinaryScalarShard(const LaunchContext& ctx, DType t, ElementwiseKind op, const void* a,
                              const void* scalar, bool scalar_on_left, void* out, int64_t n) {
  return DispatchBinary<S>(t, op, [&](auto tag, auto op_c) -> cudaError_t {
    using T = decltype(tag);
    constexpr ElementwiseKind kOp = decltype(op_c)::value;
    const T* ta = static_cast<const T*>(a);
    const T* ts = static_cast<const T*>(scalar);
    return LaunchContiguous<T, kOp>(ctx, scalar_on_left ? Mode::kScalarLeft : Mode::kScalarRight,
                                    ta, ts, static_cast<T*>(out), n);
  });
}

template <int S>
cudaError_t BinaryStridedShard(const LaunchContext& ctx, DType t, ElementwiseKind op, const void* a,
                               const void* b, void* out, const StridedLayout& layout) {
  const int64_t n = LayoutElements(layout);
  if (n <= 0) return cudaSuccess;
  return DispatchBinary<S>(t, op, [&](auto tag, auto op_c) -> cudaError_t {
    using T = decltype(tag);
    constexpr ElementwiseKind kOp = decltype(op_c)::value;
    const unsigned grid = GridFor(ctx, n, kThreads);
    if (n <= INT64_C(0xffffffff)) {
      BinaryStridedKernel<T, kOp, uint32_t><<<grid, kThreads, 0, ctx.stream>>>(
          static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), layout, n);
    } else {
      BinaryStridedKernel<T, kOp, uint64_t><<<grid, kThreads, 0, ctx.stream>>>(
          static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), layout, n);
    }
    return cudaGetLastError();
  });
}

}  // namespace resident::cuda_kernels::elementwise_internal

// Instantiates shard S's launches in the including file.
#define RESIDENT_CUDA_ELEMENTWISE_SHARD(S)                                                    \
  namespace resident::cuda_kernels::elementwise_internal {                                    \
  template cudaError_t BinaryContiguousShard<S>(const LaunchContext&, DType, ElementwiseKind, \
                                                const void*, const void*, void*, int64_t);    \
  template cudaError_t BinaryScalarShard<S>(const LaunchContext&, DType, ElementwiseKind,     \
                                            const void*, const void*, bool, void*, int64_t);  \
  template cudaError_t BinaryStridedShard<S>(const LaunchContext&, DType, ElementwiseKind,    \
                                             const void*, const void*, void*,                 \
                                             const StridedLayout&);                           \
  }

#endif  // RESIDENT_KERNELS_CUDA_ELEMENTWISE_SHARD_CUH_

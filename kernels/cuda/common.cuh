// Shared device-side pieces of the CUDA kernels: dtype dispatch, conversions
// with NumPy's semantics, grid sizing, vector packs and strided indexing.
// Internal to kernels/cuda; only .cu files include it.
#ifndef RESIDENT_KERNELS_CUDA_COMMON_CUH_
#define RESIDENT_KERNELS_CUDA_COMMON_CUH_

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/elementwise_expr.h"
#include "kernels/cuda/kernels.h"

namespace resident::cuda_kernels {

inline constexpr int kThreads = 256;

// Blocks for `work_items` items of `per_block` each, at most `per_sm` blocks
// per multiprocessor (the rest is covered by grid-stride loops), at least 1.
inline unsigned GridFor(const LaunchContext& ctx, int64_t work_items, int64_t per_block,
                        int per_sm = 16) {
  int64_t blocks = (work_items + per_block - 1) / per_block;
  const int64_t cap = static_cast<int64_t>(ctx.sm_count > 0 ? ctx.sm_count : 1) * per_sm;
  if (blocks > cap) blocks = cap;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned>(blocks);
}

// Bool's storage type (core/dtype.h: one byte, 0 or 1): kernels recognise
// bool by it, and read any byte without undefined behaviour.
template <typename T>
inline constexpr bool kIsBool = kIsBoolStorage<T>;

// Unsigned type of the same width, for wrapping integer arithmetic.
template <typename T>
using UnsignedT = std::make_unsigned_t<T>;

// --- conversions (Cast's semantics) ------------------------------------------

template <typename To, typename From>
__device__ __forceinline__ To Convert(From x);

// Casts with a complex side, as the CPU's ConvertComplexElement: a real
// value is the real part; complex -> bool is either part nonzero; complex ->
// another real dtype converts the real part.
template <typename To, typename From>
__device__ __forceinline__ To ConvertComplex(From x) {
  if constexpr (kIsComplexStorage<From> && kIsComplexStorage<To>) {
    using F = typename ResidentIsComplex<To>::component;
    return To{static_cast<F>(x.re), static_cast<F>(x.im)};
  } else if constexpr (kIsComplexStorage<From>) {
    if constexpr (kIsBool<To>) {
      return static_cast<To>(resident_cx_nonzero(x));
    } else {
      return Convert<To>(x.re);
    }
  } else {
    using F = typename ResidentIsComplex<To>::component;
    return To{Convert<F>(x), F(0)};
  }
}

template <typename To, typename From>
__device__ __forceinline__ To Convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (kIsComplexStorage<From> || kIsComplexStorage<To>) {
    return ConvertComplex<To>(x);
  } else if constexpr (kIsHalfStorage<From>) {
    // float16 / bfloat16 through their exact float value; to integers by
    // NumPy's (float16) and ml_dtypes' (bfloat16) rules, as the CPU's.
    const float f = resident_load(x);
    if constexpr (kIsBool<To>) {
      return static_cast<To>(f != 0.0f);
    } else if constexpr (std::is_integral_v<To> && std::is_same_v<From, Float16>) {
      return resident_half_to_int<To>(f);
    } else if constexpr (std::is_integral_v<To>) {
      return resident_bf16_to_int<To>(f);
    } else if constexpr (kIsHalfStorage<To>) {
      return resident_store<To>(f);
    } else {
      return static_cast<To>(f);
    }
  } else if constexpr (kIsHalfStorage<To>) {
    // One rounding from the double value, as the CPU's ConvertElement.
    if constexpr (kIsBool<From>) {
      return resident_store<To>(x != 0 ? 1.0f : 0.0f);
    } else if constexpr (std::is_same_v<From, float>) {
      return resident_store<To>(x);
    } else {
      return resident_store_double<To>(static_cast<double>(x));
    }
  } else if constexpr (kIsBool<To>) {
    return static_cast<To>(x != From(0));  // NaN != 0 is true, as in NumPy
  } else if constexpr (kIsBool<From>) {
    return x != From(0) ? To(1) : To(0);
  } else if constexpr (std::is_integral_v<To> && std::is_integral_v<From>) {
    return static_cast<To>(x);  // sign-extends, or wraps modulo 2^bits (C++20)
  } else if constexpr (std::is_integral_v<To>) {
    return resident_float_to_int<To>(static_cast<double>(x));  // NumPy's x86 answers
  } else {
    return static_cast<To>(x);  // int->float and float<->float: round once
  }
}

// An element into a reduction's accumulator: bool is 0/1; an integer into an
// integer accumulator sign-extends (then wraps in uint64); anything into a
// double converts directly (uint64 too: no int64 detour).
template <typename Acc, typename T>
__host__ __device__ __forceinline__ Acc Widen(T x) {
  if constexpr (kIsHalfStorage<T>) {
    return static_cast<Acc>(resident_load(x));
  } else if constexpr (kIsBool<T>) {
    return x != 0 ? Acc(1) : Acc(0);
  } else if constexpr (std::is_integral_v<T> && std::is_integral_v<Acc>) {
    return static_cast<Acc>(static_cast<int64_t>(x));
  } else {
    return static_cast<Acc>(x);
  }
}

// --- vector packs ------------------------------------------------------------

// V elements of T, aligned to their total size so a whole pack moves in one
// load/store instruction (16 bytes at most).
template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

// Elements per 16-byte pack.
template <typename T>
inline constexpr int kVec16 = 16 / static_cast<int>(sizeof(T));

inline bool Aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// --- strided indexing --------------------------------------------------------

// Offsets in elements of output index i in the first kInputs inputs of a
// layout. IndexT is uint32_t when every index fits, to keep divisions short.
template <int kInputs, typename IndexT>
__device__ __forceinline__ void StridedOffsets(const StridedLayout& layout, IndexT i,
                                               int64_t* off) {
#pragma unroll
  for (int k = 0; k < kInputs; ++k) off[k] = 0;
  for (int d = layout.rank - 1; d >= 0; --d) {
    const IndexT extent = static_cast<IndexT>(layout.shape[d]);
    const IndexT q = i / extent;
    const int64_t r = static_cast<int64_t>(i - q * extent);
#pragma unroll
    for (int k = 0; k < kInputs; ++k) off[k] += r * layout.stride[k][d];
    i = q;
  }
}

inline int64_t LayoutElements(const StridedLayout& layout) {
  int64_t n = 1;
  for (int d = 0; d < layout.rank; ++d) n *= layout.shape[d];
  return n;
}

// Calls f(T{}) with T = StorageType of `t` (core's one table, shared with
// the CPU kernels); a value naming no dtype is cudaErrorInvalidValue.
template <typename F>
cudaError_t DispatchType(DType t, F&& f) {
  return VisitDType(t, static_cast<F&&>(f), [] { return cudaErrorInvalidValue; });
}

// DispatchType over every dtype, complex ones included (casts).
template <typename F>
cudaError_t DispatchAnyType(DType t, F&& f) {
  return VisitAnyDType(t, static_cast<F&&>(f), [] { return cudaErrorInvalidValue; });
}

}  // namespace resident::cuda_kernels

#endif  // RESIDENT_KERNELS_CUDA_COMMON_CUH_

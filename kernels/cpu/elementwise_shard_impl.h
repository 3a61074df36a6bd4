// The loops of kernels/cpu/elementwise_shard.h, included only by the
// shard files (elementwise_shard<S>.cc), each of which instantiates
// RunShard<S>, TileShard<S> and ChainShard<S>: the dispatch below compiles
// only the kinds of its shard.
#ifndef RESIDENT_KERNELS_CPU_ELEMENTWISE_SHARD_IMPL_H_
#define RESIDENT_KERNELS_CPU_ELEMENTWISE_SHARD_IMPL_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/elementwise_expr.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/elementwise_shard.h"

namespace resident::cpu::elementwise_internal {
namespace {

// The op's expression from core/elementwise_expr.h over the register type:
// a bool element is loaded as `x != 0` and stored as 0/1; a float16 or
// bfloat16 one is loaded as its float and the result rounded back
// (NumPy's float16 loops compute in float32 so).
template <typename T>
auto Reg(T x) {
  if constexpr (kIsBoolStorage<T>) {
    return x != 0;
  } else {
    return resident_load(x);
  }
}
template <typename T, typename R>
T Store(R r) {
  if constexpr (kIsHalfStorage<T>) {
    return resident_store<T>(static_cast<float>(r));
  } else {
    return static_cast<T>(r);
  }
}

#define RESIDENT_EW_FUNCTOR(kind, name, arity, rule)         \
  struct kind##Op {                                          \
    template <typename T>                                    \
    static T Apply(T x, [[maybe_unused]] T y) {              \
      if constexpr ((arity) == 1) {                          \
        return Store<T>(resident_ew_##name(Reg(x)));         \
      } else {                                               \
        return Store<T>(resident_ew_##name(Reg(x), Reg(y))); \
      }                                                      \
    }                                                        \
  };
RESIDENT_ELEMENTWISE_OPS(RESIDENT_EW_FUNCTOR)
#undef RESIDENT_EW_FUNCTOR

// ml_dtypes' bfloat16 sign keeps -0 (core/elementwise_expr.h).
// (Unused in the shards without sign.)
template <>
[[maybe_unused]] BFloat16 kSignOp::Apply<BFloat16>(BFloat16 x, BFloat16) {
  return resident_store<BFloat16>(resident_ew_sign_bf16(resident_load(x)));
}

// One run of elements. Contiguous operands use blocks of 8 computed into a
// temporary before storing, which the compiler vectorises and which stays
// correct when out is exactly a or b (every load of a block precedes its
// stores).
template <typename T, typename Op>
void Row(const T* a, int64_t sa, const T* b, int64_t sb, T* out, int64_t n) {
  int64_t i = 0;
  if (sa == 1 && sb == 1) {
    for (; i + 8 <= n; i += 8) {
      T r[8];
      for (int j = 0; j < 8; ++j) r[j] = Op::Apply(a[i + j], b[i + j]);
      for (int j = 0; j < 8; ++j) out[i + j] = r[j];
    }
    for (; i < n; ++i) out[i] = Op::Apply(a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    const T y = *b;
    for (; i + 8 <= n; i += 8) {
      T r[8];
      for (int j = 0; j < 8; ++j) r[j] = Op::Apply(a[i + j], y);
      for (int j = 0; j < 8; ++j) out[i + j] = r[j];
    }
    for (; i < n; ++i) out[i] = Op::Apply(a[i], y);
  } else if (sa == 0 && sb == 1) {
    const T x = *a;
    for (; i + 8 <= n; i += 8) {
      T r[8];
      for (int j = 0; j < 8; ++j) r[j] = Op::Apply(x, b[i + j]);
      for (int j = 0; j < 8; ++j) out[i + j] = r[j];
    }
    for (; i < n; ++i) out[i] = Op::Apply(x, b[i]);
  } else {
    for (; i < n; ++i) out[i] = Op::Apply(a[i * sa], b[i * sb]);
  }
}

template <typename T, typename Op>
absl::Status RunTyped(ThreadPool* pool, const ConstView& a, const ConstView& b,
                      const MutView& out) {
  const absl::Span<const int64_t> shapes[] = {a.shape, b.shape, out.shape};
  absl::StatusOr<BroadcastLayout> made = MakeBroadcastLayout(out.shape, shapes);
  if (!made.ok()) return made.status();
  const BroadcastLayout& layout = *made;
  const T* pa = static_cast<const T*>(a.data);
  const T* pb = static_cast<const T*>(b.data);
  T* po = static_cast<T*>(out.data);
  const int last = static_cast<int>(layout.dims.size()) - 1;
  const int64_t sa = last < 0 ? 0 : layout.strides[0][last];
  const int64_t sb = last < 0 ? 0 : layout.strides[1][last];
  ParallelFor(pool, out.size(), kParallelGrain, [&](int64_t begin, int64_t end) {
    ForEachRow(layout, begin, end, [&](const int64_t* off, int64_t count) {
      Row<T, Op>(pa + off[0], sa, pb + off[1], sb, po + off[2], count);
    });
  });
  return absl::OkStatus();
}

// Runs Op in out.dtype, instantiated only for dtypes the table's rule
// accepts (a unary op reads its one input as both operands; Apply ignores
// the second).
template <typename Op, ElementwiseKind kKind>
absl::Status RunAccepted(ThreadPool* pool, absl::Span<const ConstView> in, const MutView& out) {
  const ConstView& b = in.size() > 1 ? in[1] : in[0];
  return DispatchDType(out.dtype, [&](auto zero) {
    using T = decltype(zero);
    constexpr DType kD = DTypeOfStorage<T>();
    if constexpr (ElementwiseAccepts(kKind, kD)) {
      return RunTyped<T, Op>(pool, in[0], b, out);
    } else {
      return Refused(kKind, kD);
    }
  });
}

// Cloned for AVX-512 and AVX2 (picked at load time) by GCC; clang (the
// fuzz build) does not clone templates. -O3 for this file vectorises it
// (kernels/cpu/CMakeLists.txt). No FMA: -ffp-contract=off.
#if defined(__GNUC__) && !defined(__clang__)
#define RESIDENT_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RESIDENT_CPU_CLONES
#endif
template <typename T, typename Op>
RESIDENT_CPU_CLONES void Tile(const T* a, bool a_one, const T* b, bool b_one, T* out, int64_t n) {
  // Separate loops so each vectorises without a per-element branch.
  if (!a_one && !b_one) {
    for (int64_t k = 0; k < n; ++k) out[k] = Op::Apply(a[k], b[k]);
  } else if (!a_one) {
    const T y = b[0];
    for (int64_t k = 0; k < n; ++k) out[k] = Op::Apply(a[k], y);
  } else if (!b_one) {
    const T x = a[0];
    for (int64_t k = 0; k < n; ++k) out[k] = Op::Apply(x, b[k]);
  } else {
    const T v = Op::Apply(a[0], b[0]);
    for (int64_t k = 0; k < n; ++k) out[k] = v;
  }
}

// Tile in `dtype`, instantiated only for dtypes the table's rule accepts.
template <typename Op, ElementwiseKind kKind>
absl::Status TileAccepted(DType dtype, const void* a, bool a_one, const void* b, bool b_one,
                          void* out, int64_t n) {
  return DispatchDType(dtype, [&](auto zero) {
    using T = decltype(zero);
    constexpr DType kD = DTypeOfStorage<T>();
    if constexpr (ElementwiseAccepts(kKind, kD)) {
      Tile<T, Op>(static_cast<const T*>(a), a_one, static_cast<const T*>(b), b_one,
                  static_cast<T*>(out), n);
      return absl::OkStatus();
    } else {
      return Refused(kKind, kD);
    }
  });
}

// The whole of a one-op loop for each element, kChunk elements at a time
// held in registers (8 AVX-512 vectors: enough independent chains to hide
// the add latency) for every trip: no load or store per trip. The last,
// partial chunk runs padded (with copies of its first element) through the
// same loop: GCC 12 miscompiled a scalar tail loop of this shape (a trip
// count of 20 ran as 4).
template <typename T, typename Op, ChainSide kSide>
RESIDENT_CPU_CLONES void ChainRows(const T* x, const T* c, bool c_one, T* out, int64_t n,
                                   int64_t trips) {
  constexpr int64_t kChunk = 512 / sizeof(T);
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = std::min(kChunk, n - i);
    T v[kChunk], k[kChunk];
    for (int64_t j = 0; j < kChunk; ++j) {
      const int64_t e = i + (j < m ? j : 0);
      v[j] = x[e];
      k[j] = kSide == ChainSide::kBoth ? T{} : c[c_one ? 0 : e];
    }
    for (int64_t t = 0; t < trips; ++t) {
      for (int64_t j = 0; j < kChunk; ++j) {
        if constexpr (kSide == ChainSide::kBoth) {
          v[j] = Op::Apply(v[j], v[j]);
        } else if constexpr (kSide == ChainSide::kFirst) {
          v[j] = Op::Apply(v[j], k[j]);
        } else {
          v[j] = Op::Apply(k[j], v[j]);
        }
      }
    }
    for (int64_t j = 0; j < m; ++j) out[i + j] = v[j];
  }
}

template <typename Op, ElementwiseKind kKind>
absl::Status ChainAccepted(ThreadPool* pool, DType dtype, ChainSide side, const void* x,
                           const void* c, bool c_one, void* out, int64_t n, int64_t trips) {
  return DispatchDType(dtype, [&](auto zero) {
    using T = decltype(zero);
    constexpr DType kD = DTypeOfStorage<T>();
    // A bool-valued kind chains only in bool (anywhere else a cast to bool
    // follows each trip, which is no one-op chain): no loops for the rest.
    constexpr bool kChains =
        Arity(kKind) == 2 &&
        (FindElementwise(kKind)->rule != ElementwiseRule::kBoolResult || kD == DType::kBool);
    if constexpr (ElementwiseAccepts(kKind, kD) && kChains) {
      const T* px = static_cast<const T*>(x);
      const T* pc = static_cast<const T*>(c);
      T* po = static_cast<T*>(out);
      // Whole chunks per task, so threads never share a cache line of out.
      constexpr int64_t kChunk = 512 / sizeof(T);
      ParallelFor(pool, (n + kChunk - 1) / kChunk, 16, [&](int64_t b, int64_t e) {
        const int64_t lo = b * kChunk, hi = std::min(n, e * kChunk);
        const T* cl = c_one || pc == nullptr ? pc : pc + lo;
        switch (side) {
          case ChainSide::kBoth:
            return ChainRows<T, Op, ChainSide::kBoth>(px + lo, cl, c_one, po + lo, hi - lo, trips);
          case ChainSide::kFirst:
            return ChainRows<T, Op, ChainSide::kFirst>(px + lo, cl, c_one, po + lo, hi - lo, trips);
          case ChainSide::kSecond:
            return ChainRows<T, Op, ChainSide::kSecond>(px + lo, cl, c_one, po + lo, hi - lo,
                                                        trips);
        }
      });
      return absl::OkStatus();
    } else {
      return Refused(kKind, kD);
    }
  });
}

}  // namespace

// The switches are generated from the op table; a kind of another shard
// (never routed here) compiles to nothing.
template <int S>
absl::Status RunShard(ThreadPool* pool, ElementwiseKind kind, absl::Span<const ConstView> in,
                      const MutView& out) {
  switch (kind) {
#define RESIDENT_EW_CASE(kind, name, arity, rule)                         \
  case ElementwiseKind::kind:                                             \
    if constexpr (ElementwiseShard(ElementwiseKind::kind) == S) {         \
      return RunAccepted<kind##Op, ElementwiseKind::kind>(pool, in, out); \
    }                                                                     \
    break;
    RESIDENT_ELEMENTWISE_OPS(RESIDENT_EW_CASE)
#undef RESIDENT_EW_CASE
  }
  return absl::InternalError("elementwise kind routed to the wrong shard");
}

template <int S>
absl::Status TileShard(ElementwiseKind kind, DType dtype, const void* a, bool a_one, const void* b,
                       bool b_one, void* out, int64_t n) {
  switch (kind) {
#define RESIDENT_EW_CASE(kind, name, arity, rule)                                              \
  case ElementwiseKind::kind:                                                                  \
    if constexpr (ElementwiseShard(ElementwiseKind::kind) == S) {                              \
      return TileAccepted<kind##Op, ElementwiseKind::kind>(dtype, a, a_one, b, b_one, out, n); \
    }                                                                                          \
    break;
    RESIDENT_ELEMENTWISE_OPS(RESIDENT_EW_CASE)
#undef RESIDENT_EW_CASE
  }
  return absl::InternalError("elementwise kind routed to the wrong shard");
}

template <int S>
absl::Status ChainShard(ThreadPool* pool, ElementwiseKind kind, DType dtype, ChainSide side,
                        const void* x, const void* c, bool c_one, void* out, int64_t n,
                        int64_t trips) {
  switch (kind) {
#define RESIDENT_EW_CASE(kind, name, arity, rule)                                                \
  case ElementwiseKind::kind:                                                                    \
    if constexpr (ElementwiseShard(ElementwiseKind::kind) == S) {                                \
      return ChainAccepted<kind##Op, ElementwiseKind::kind>(pool, dtype, side, x, c, c_one, out, \
                                                            n, trips);                           \
    }                                                                                            \
    break;
    RESIDENT_ELEMENTWISE_OPS(RESIDENT_EW_CASE)
#undef RESIDENT_EW_CASE
  }
  return absl::InternalError("elementwise kind routed to the wrong shard");
}

}  // namespace resident::cpu::elementwise_internal

// Defines shard S's three entry points in the including file.
#define RESIDENT_CPU_ELEMENTWISE_SHARD(S)                                                          \
  namespace resident::cpu::elementwise_internal {                                                  \
  template absl::Status RunShard<S>(ThreadPool*, ElementwiseKind, absl::Span<const ConstView>,     \
                                    const MutView&);                                               \
  template absl::Status TileShard<S>(ElementwiseKind, DType, const void*, bool, const void*, bool, \
                                     void*, int64_t);                                              \
  template absl::Status ChainShard<S>(ThreadPool*, ElementwiseKind, DType, ChainSide, const void*, \
                                      const void*, bool, void*, int64_t, int64_t);                 \
  }

#endif  // RESIDENT_KERNELS_CPU_ELEMENTWISE_SHARD_IMPL_H_

#include "kernels/cpu/elementwise.h"

#include <cstdint>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/shape.h"
#include "kernels/cpu/broadcast.h"

namespace resident::cpu {
namespace {

// Integer arithmetic goes through the unsigned type: wrapping, never UB.
template <typename T>
using Unsigned = std::make_unsigned_t<T>;

struct AddOp {
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (kIsBoolStorage<T>) {
      return static_cast<T>((x | y) != 0);
    } else if constexpr (std::is_floating_point_v<T>) {
      return x + y;
    } else {
      return static_cast<T>(static_cast<Unsigned<T>>(x) + static_cast<Unsigned<T>>(y));
    }
  }
};

struct SubtractOp {
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (std::is_floating_point_v<T>) {
      return x - y;
    } else {
      return static_cast<T>(static_cast<Unsigned<T>>(x) - static_cast<Unsigned<T>>(y));
    }
  }
};

struct MultiplyOp {
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (kIsBoolStorage<T>) {
      return static_cast<T>(x != 0 && y != 0);
    } else if constexpr (std::is_floating_point_v<T>) {
      return x * y;
    } else {
      // uint32 * uint32 stays unsigned (no promotion to signed int).
      return static_cast<T>(static_cast<Unsigned<T>>(x) * static_cast<Unsigned<T>>(y));
    }
  }
};

struct DivideOp {
  template <typename T>
  static T Apply(T x, T y) {
    return x / y;  // floats only (checked by the caller)
  }
};

struct NegateOp {
  template <typename T>
  static T Apply(T x, T /*unused*/) {
    if constexpr (std::is_floating_point_v<T>) {
      return -x;
    } else {
      return static_cast<T>(Unsigned<T>{0} - static_cast<Unsigned<T>>(x));
    }
  }
};

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

template <typename Op>
absl::Status RunOp(ThreadPool* pool, const ConstView& a, const ConstView& b, const MutView& out) {
  return DispatchDType(out.dtype,
                       [&](auto zero) { return RunTyped<decltype(zero), Op>(pool, a, b, out); });
}

// Why `kind` cannot run in `dtype` (ElementwiseAccepts said no).
absl::Status Refused(ElementwiseKind kind, DType dtype) {
  if (kind == ElementwiseKind::kDivide) {
    return absl::InvalidArgumentError(
        absl::StrCat("divide needs a float dtype, got ", NameOf(dtype)));
  }
  return absl::InvalidArgumentError(absl::StrCat(ElementwiseName(kind), " is not supported for ",
                                                 NameOf(dtype), " (NumPy refuses it too)"));
}

// Cloned for AVX-512 and AVX2 (picked at load time); -O3 for this file
// vectorises it (kernels/cpu/CMakeLists.txt). No FMA: -ffp-contract=off.
template <typename T, typename Op>
__attribute__((target_clones("avx512f", "avx2", "default"))) void Tile(const T* a, bool a_one,
                                                                       const T* b, bool b_one,
                                                                       T* out, int64_t n) {
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

template <typename Op>
absl::Status TileOp(DType dtype, const void* a, bool a_one, const void* b, bool b_one, void* out,
                    int64_t n) {
  return DispatchDType(dtype, [&](auto zero) {
    using T = decltype(zero);
    Tile<T, Op>(static_cast<const T*>(a), a_one, static_cast<const T*>(b), b_one,
                static_cast<T*>(out), n);
    return absl::OkStatus();
  });
}

}  // namespace

absl::Status ElementwiseTile(ElementwiseKind kind, DType dtype, const void* a, bool a_one,
                             const void* b, bool b_one, void* out, int64_t n) {
  if (!ElementwiseAccepts(kind, dtype)) return Refused(kind, dtype);
  // One switch over every kind (no default: a new kind fails to compile).
  switch (kind) {
    case ElementwiseKind::kAdd:
      return TileOp<AddOp>(dtype, a, a_one, b, b_one, out, n);
    case ElementwiseKind::kSubtract:
      return TileOp<SubtractOp>(dtype, a, a_one, b, b_one, out, n);
    case ElementwiseKind::kMultiply:
      return TileOp<MultiplyOp>(dtype, a, a_one, b, b_one, out, n);
    case ElementwiseKind::kDivide:
      return TileOp<DivideOp>(dtype, a, a_one, b, b_one, out, n);
    case ElementwiseKind::kNegative:
      return TileOp<NegateOp>(dtype, a, a_one, a, a_one, out, n);
  }
  return absl::InvalidArgumentError("unknown elementwise kind");
}

absl::Status Elementwise(ThreadPool* pool, ElementwiseKind kind, absl::Span<const ConstView> in,
                         const MutView& out) {
  if (static_cast<int>(in.size()) != Arity(kind)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ElementwiseName(kind), " takes ", Arity(kind), " operands, got ", in.size()));
  }
  for (const ConstView& v : in) {
    if (v.dtype != out.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat(ElementwiseName(kind), " needs one dtype, got ", NameOf(in[0].dtype),
                       in.size() > 1 ? ", " : "", in.size() > 1 ? NameOf(in[1].dtype) : "", " -> ",
                       NameOf(out.dtype)));
    }
  }
  if (!ElementwiseAccepts(kind, out.dtype)) return Refused(kind, out.dtype);
  // One switch over every kind (no default: a new kind fails to compile).
  switch (kind) {
    case ElementwiseKind::kAdd:
      return RunOp<AddOp>(pool, in[0], in[1], out);
    case ElementwiseKind::kSubtract:
      return RunOp<SubtractOp>(pool, in[0], in[1], out);
    case ElementwiseKind::kMultiply:
      return RunOp<MultiplyOp>(pool, in[0], in[1], out);
    case ElementwiseKind::kDivide:
      return RunOp<DivideOp>(pool, in[0], in[1], out);
    case ElementwiseKind::kNegative:
      // The second operand is ignored by NegateOp; pass the input again.
      return RunOp<NegateOp>(pool, in[0], in[0], out);
  }
  return absl::InvalidArgumentError("unknown elementwise kind");
}

}  // namespace resident::cpu

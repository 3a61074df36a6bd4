#include "kernels/cpu/complex_ops.h"

#include "absl/strings/str_cat.h"
#include "core/complex.h"
#include "core/shape.h"
#include "kernels/cpu/broadcast.h"

namespace resident::cpu {
namespace {

// One kind's value for one pair of elements (a unary kind reads only x).
template <typename C>
C Apply(ElementwiseKind kind, C x, C y) {
  using F = typename ResidentIsComplex<C>::component;
  auto truth = [](bool b) { return C{b ? F(1) : F(0), F(0)}; };
  switch (kind) {
    case ElementwiseKind::kAdd:
      return resident_cx_add(x, y);
    case ElementwiseKind::kSubtract:
      return resident_cx_sub(x, y);
    case ElementwiseKind::kMultiply:
      return resident_cx_mul(x, y);
    case ElementwiseKind::kDivide:
      return resident_cx_div(x, y);
    case ElementwiseKind::kNegative:
      return resident_cx_neg(x);
    case ElementwiseKind::kAbsolute:
      return C{resident_cx_abs(x), F(0)};
    case ElementwiseKind::kMaximum:
      return resident_cx_maximum(x, y);
    case ElementwiseKind::kMinimum:
      return resident_cx_minimum(x, y);
    case ElementwiseKind::kEqual:
      return truth(resident_cx_eq(x, y));
    case ElementwiseKind::kNotEqual:
      return truth(!resident_cx_eq(x, y));
    case ElementwiseKind::kLess:
      return truth(resident_cx_lt(x, y));
    case ElementwiseKind::kLessEqual:
      return truth(resident_cx_le(x, y));
    case ElementwiseKind::kGreater:
      return truth(resident_cx_gt(x, y));
    case ElementwiseKind::kGreaterEqual:
      return truth(resident_cx_ge(x, y));
    case ElementwiseKind::kLogicalAnd:
      return truth(resident_cx_nonzero(x) && resident_cx_nonzero(y));
    case ElementwiseKind::kLogicalOr:
      return truth(resident_cx_nonzero(x) || resident_cx_nonzero(y));
    case ElementwiseKind::kLogicalNot:
      return truth(!resident_cx_nonzero(x));
    case ElementwiseKind::kIsnan:
      return truth(resident_cx_isnan_value(x));
    case ElementwiseKind::kIsfinite:
      return truth(resident_cx_isfinite(x));
    default:
      return C{};  // refused before: ComplexKernelKind
  }
}

template <typename C, ElementwiseKind kKind>
void Row(const C* a, int64_t sa, const C* b, int64_t sb, C* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = Apply<C>(kKind, a[i * sa], b[i * sb]);
}

template <typename C, ElementwiseKind kKind>
absl::Status RunTyped(ThreadPool* pool, const ConstView& a, const ConstView& b,
                      const MutView& out) {
  const absl::Span<const int64_t> shapes[] = {a.shape, b.shape, out.shape};
  absl::StatusOr<BroadcastLayout> made = MakeBroadcastLayout(out.shape, shapes);
  if (!made.ok()) return made.status();
  const BroadcastLayout& layout = *made;
  const C* pa = static_cast<const C*>(a.data);
  const C* pb = static_cast<const C*>(b.data);
  C* po = static_cast<C*>(out.data);
  const int last = static_cast<int>(layout.dims.size()) - 1;
  const int64_t sa = last < 0 ? 0 : layout.strides[0][last];
  const int64_t sb = last < 0 ? 0 : layout.strides[1][last];
  // Each element is read before it is written, so out may be a or b.
  ParallelFor(pool, out.size(), kParallelGrain, [&](int64_t begin, int64_t end) {
    ForEachRow(layout, begin, end, [&](const int64_t* off, int64_t count) {
      Row<C, kKind>(pa + off[0], sa, pb + off[1], sb, po + off[2], count);
    });
  });
  return absl::OkStatus();
}

template <typename C>
absl::Status RunKind(ThreadPool* pool, ElementwiseKind kind, const ConstView& a, const ConstView& b,
                     const MutView& out) {
  switch (kind) {
#define RESIDENT_CX_CASE(k) \
  case ElementwiseKind::k:  \
    return RunTyped<C, ElementwiseKind::k>(pool, a, b, out);
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
  return absl::InvalidArgumentError(
      absl::StrCat(ElementwiseName(kind), " is not supported for ", NameOf(out.dtype)));
}

}  // namespace

absl::Status ComplexElementwise(ThreadPool* pool, ElementwiseKind kind,
                                absl::Span<const ConstView> in, const MutView& out) {
  if (!ComplexKernelKind(kind) || !IsComplex(out.dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ElementwiseName(kind), " is not supported for ", NameOf(out.dtype)));
  }
  if (static_cast<int>(in.size()) != Arity(kind) || in.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ElementwiseName(kind), " takes ", Arity(kind), " operands, got ", in.size()));
  }
  for (const ConstView& v : in) {
    if (v.dtype != out.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(ElementwiseName(kind),
                                                     " needs one dtype, got ", NameOf(v.dtype),
                                                     " -> ", NameOf(out.dtype)));
    }
  }
  const ConstView& b = in.size() > 1 ? in[1] : in[0];
  if (out.dtype == DType::kComplex64) return RunKind<Complex64>(pool, kind, in[0], b, out);
  return RunKind<Complex128>(pool, kind, in[0], b, out);
}

}  // namespace resident::cpu

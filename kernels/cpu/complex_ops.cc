#include "kernels/cpu/complex_ops.h"

#include <complex>

#include "absl/strings/str_cat.h"
#include "core/complex.h"
#include "core/complex_math.h"
#include "core/shape.h"
#include "kernels/cpu/broadcast.h"

namespace resident::cpu {
namespace {

// The kinds core/complex.h leaves to the backend. The C library's
// functions (csqrt, cexp, clog, csin, ccos, ctan, their hyperbolic and
// inverse forms, cpow) through libstdc++'s std::complex (its __builtin_c*
// calls): the functions NumPy's npy_c* call on glibc, so results agree with
// NumPy on the same machine. log2, log10, log1p, expm1, reciprocal, rint
// and power's integer exponents are NumPy's own formulas
// (core/complex_math.h).
template <typename C>
C FromStd(std::complex<typename ResidentIsComplex<C>::component> z) {
  return resident_cx_make<C>(z.real(), z.imag());
}
template <typename C>
std::complex<typename ResidentIsComplex<C>::component> ToStd(C z) {
  return {z.re, z.im};
}
#define RESIDENT_CX_STD(name, fn)         \
  template <typename C>                   \
  C resident_cxk_##name(C x, C) {         \
    return FromStd<C>(std::fn(ToStd(x))); \
  }
RESIDENT_CX_STD(sqrt, sqrt)
RESIDENT_CX_STD(exp, exp)
RESIDENT_CX_STD(log, log)
RESIDENT_CX_STD(sin, sin)
RESIDENT_CX_STD(cos, cos)
RESIDENT_CX_STD(tan, tan)
RESIDENT_CX_STD(sinh, sinh)
RESIDENT_CX_STD(cosh, cosh)
RESIDENT_CX_STD(tanh, tanh)
RESIDENT_CX_STD(arcsin, asin)
RESIDENT_CX_STD(arccos, acos)
RESIDENT_CX_STD(arctan, atan)
RESIDENT_CX_STD(arcsinh, asinh)
RESIDENT_CX_STD(arccosh, acosh)
RESIDENT_CX_STD(arctanh, atanh)
#undef RESIDENT_CX_STD

template <typename C>
C resident_cxk_log2(C x, C) {
  typedef typename ResidentIsComplex<C>::component F;
  return resident_cmath_scale(FromStd<C>(std::log(ToStd(x))), ResidentCmathConsts<F>::log2e());
}
template <typename C>
C resident_cxk_log10(C x, C) {
  typedef typename ResidentIsComplex<C>::component F;
  return resident_cmath_scale(FromStd<C>(std::log(ToStd(x))), ResidentCmathConsts<F>::log10e());
}
template <typename C>
C resident_cxk_log1p(C x, C) {
  return resident_cmath_log1p(x);
}
template <typename C>
C resident_cxk_expm1(C x, C) {
  return resident_cmath_expm1(x);
}
template <typename C>
C resident_cxk_reciprocal(C x, C) {
  return resident_cmath_reciprocal(x);
}
template <typename C>
C resident_cxk_rint(C x, C) {
  return resident_cmath_rint(x);
}
template <typename C>
C resident_cxk_power(C x, C y) {
  C r;
  if (resident_cmath_pow_special(x, y, &r)) return r;
  return FromStd<C>(std::pow(ToStd(x), ToStd(y)));
}

// One kind's value for one pair of elements (a unary kind reads only x).
template <typename C, ElementwiseKind kKind>
C Apply(C x, C y) {
#define RESIDENT_CX_APPLY(k, name) \
  if constexpr (kKind == ElementwiseKind::k) return resident_cxk_##name(x, y);
  RESIDENT_COMPLEX_KINDS(RESIDENT_CX_APPLY)
#undef RESIDENT_CX_APPLY
  return C{};  // refused before: ComplexKernelKind
}

template <typename C, ElementwiseKind kKind>
void Row(const C* a, int64_t sa, const C* b, int64_t sb, C* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = Apply<C, kKind>(a[i * sa], b[i * sb]);
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
#define RESIDENT_CX_CASE(k, name) \
  case ElementwiseKind::k:        \
    return RunTyped<C, ElementwiseKind::k>(pool, a, b, out);
    RESIDENT_COMPLEX_KINDS(RESIDENT_CX_CASE)
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

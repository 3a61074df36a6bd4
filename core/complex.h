// The two complex dtypes' storage types and their scalar arithmetic, for g++
// (kernels/cpu) and nvcc (kernels/cuda), so it includes nothing and uses no
// std:: names. Complex values are never fused (server/program/fusion.cc
// keeps them out), so NVRTC never sees this file.
//
// complex64 is two float32 (real, imaginary), complex128 two float64:
// NumPy's layout, 8 and 16 bytes. Each operation reproduces the loop x86
// NumPy 2 runs on a machine with AVX-512F (the SIMD loops of
// loops_arithm_fp / loops_unary_complex), so results are NumPy's bit for
// bit there:
//   multiply   re = fma(ar, br, -(ai * bi)), im = fma(ar, bi, ai * br)
//   divide     Smith's method as NumPy's CFLOAT_divide / CDOUBLE_divide
//   absolute   max * sqrt(fma(r, r, 1)) with r = min / max (inf and NaN
//              first, as NumPy's simd_cabsolute)
// NumPy without AVX-512F multiplies without the fma (ar*br - ai*bi), which
// differs in the last bit for some operands.
//
//   ResidentComplex64 z = resident_cx_mul(x, y);
#ifndef RESIDENT_CORE_COMPLEX_H_
#define RESIDENT_CORE_COMPLEX_H_

#if defined(__CUDACC__)
#define RESIDENT_CX_HD __host__ __device__ __forceinline__
#else
#define RESIDENT_CX_HD inline
#endif

struct ResidentComplex64 {
  float re;
  float im;
};
struct ResidentComplex128 {
  double re;
  double im;
};

// Whether T is one of the two complex storage types, and its component.
template <typename T>
struct ResidentIsComplex {
  static constexpr bool value = false;
};
template <>
struct ResidentIsComplex<ResidentComplex64> {
  static constexpr bool value = true;
  typedef float component;
};
template <>
struct ResidentIsComplex<ResidentComplex128> {
  static constexpr bool value = true;
  typedef double component;
};

// The complex storage type of component F (float or double).
template <typename F>
struct ResidentComplexOf;
template <>
struct ResidentComplexOf<float> {
  typedef ResidentComplex64 type;
};
template <>
struct ResidentComplexOf<double> {
  typedef ResidentComplex128 type;
};

// Exact fused multiply-add (one rounding), on host and device.
RESIDENT_CX_HD float resident_cx_fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return fmaf(a, b, c);
#else
  return __builtin_fmaf(a, b, c);
#endif
}
RESIDENT_CX_HD double resident_cx_fma(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return fma(a, b, c);
#else
  return __builtin_fma(a, b, c);
#endif
}
RESIDENT_CX_HD float resident_cx_sqrt(float a) {
#if defined(__CUDA_ARCH__)
  return sqrtf(a);
#else
  return __builtin_sqrtf(a);
#endif
}
RESIDENT_CX_HD double resident_cx_sqrt(double a) {
#if defined(__CUDA_ARCH__)
  return sqrt(a);
#else
  return __builtin_sqrt(a);
#endif
}
RESIDENT_CX_HD float resident_cx_hypot(float a, float b) {
#if defined(__CUDA_ARCH__)
  return hypotf(a, b);
#else
  return __builtin_hypotf(a, b);  // glibc's, as NumPy's npy_hypotf
#endif
}
RESIDENT_CX_HD double resident_cx_hypot(double a, double b) {
#if defined(__CUDA_ARCH__)
  return hypot(a, b);
#else
  return __builtin_hypot(a, b);
#endif
}
template <typename F>
RESIDENT_CX_HD F resident_cx_fabs(F a) {
  return a < F(0) || (a == F(0) && 1 / a < F(0)) ? -a : a;  // -0 -> +0; NaN as is
}
template <typename F>
RESIDENT_CX_HD bool resident_cx_isnan(F a) {
  return a != a;
}

template <typename C>
RESIDENT_CX_HD C resident_cx_make(typename ResidentIsComplex<C>::component re,
                                  typename ResidentIsComplex<C>::component im) {
  C c;
  c.re = re;
  c.im = im;
  return c;
}

template <typename C>
RESIDENT_CX_HD C resident_cx_add(C a, C b) {
  return resident_cx_make<C>(a.re + b.re, a.im + b.im);
}
template <typename C>
RESIDENT_CX_HD C resident_cx_sub(C a, C b) {
  return resident_cx_make<C>(a.re - b.re, a.im - b.im);
}
template <typename C>
RESIDENT_CX_HD C resident_cx_mul(C a, C b) {
  return resident_cx_make<C>(resident_cx_fma(a.re, b.re, -(a.im * b.im)),
                             resident_cx_fma(a.re, b.im, a.im * b.re));
}
// NumPy's complex divide (Smith's method; a zero divisor divides each part
// by +0, giving NumPy's infs and NaNs).
template <typename C>
RESIDENT_CX_HD C resident_cx_div(C a, C b) {
  typedef typename ResidentIsComplex<C>::component F;
  const F br_abs = resident_cx_fabs(b.re), bi_abs = resident_cx_fabs(b.im);
  if (br_abs >= bi_abs) {
    if (br_abs == F(0) && bi_abs == F(0)) {
      return resident_cx_make<C>(a.re / br_abs, a.im / br_abs);
    }
    const F rat = b.im / b.re;
    const F scl = F(1) / (b.re + b.im * rat);
    return resident_cx_make<C>((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
  }
  const F rat = b.re / b.im;
  const F scl = F(1) / (b.im + b.re * rat);
  return resident_cx_make<C>((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}
// Flips both sign bits (NaNs too), as NumPy's negative does.
template <typename C>
RESIDENT_CX_HD C resident_cx_neg(C a) {
  return resident_cx_make<C>(-a.re, -a.im);
}
// NumPy's simd_cabsolute: an infinite part gives inf (even beside a NaN),
// then a NaN part gives NaN; else max * sqrt(1 + (min/max)^2) with the
// square added by one fma, and 0/0, inf/inf avoided.
template <typename C>
RESIDENT_CX_HD typename ResidentIsComplex<C>::component resident_cx_abs(C a) {
  typedef typename ResidentIsComplex<C>::component F;
  const F inf = F(1) / F(0);
  F re = resident_cx_fabs(a.re), im = resident_cx_fabs(a.im);
  if (re == inf || im == inf) return inf;
  if (resident_cx_isnan(re) || resident_cx_isnan(im)) return re + im;  // a NaN
  const F larger = re > im ? re : im;
  const F smaller = re > im ? im : re;
  const F ratio = larger == F(0) ? F(0) : smaller / larger;
  return resident_cx_sqrt(resident_cx_fma(ratio, ratio, F(1))) * larger;
}

template <typename C>
RESIDENT_CX_HD bool resident_cx_isnan_value(C a) {
  return resident_cx_isnan(a.re) || resident_cx_isnan(a.im);
}
template <typename C>
RESIDENT_CX_HD bool resident_cx_isfinite(C a) {
  typedef typename ResidentIsComplex<C>::component F;
  return a.re - a.re == F(0) && a.im - a.im == F(0);
}
// Either part infinite (the other may be NaN), as NumPy's isinf.
template <typename C>
RESIDENT_CX_HD bool resident_cx_isinf_value(C a) {
  return (a.re == a.re && a.re - a.re != a.re - a.re) ||
         (a.im == a.im && a.im - a.im != a.im - a.im);
}
template <typename C>
RESIDENT_CX_HD bool resident_cx_nonzero(C a) {
  typedef typename ResidentIsComplex<C>::component F;
  return a.re != F(0) || a.im != F(0);  // NaN is nonzero, as in NumPy
}
template <typename C>
RESIDENT_CX_HD bool resident_cx_eq(C a, C b) {
  return a.re == b.re && a.im == b.im;
}
// NumPy's lexicographic order (CGT, CGE, CLT, CLE of loops.c.src): the real
// parts decide unless they are equal; a NaN imaginary part makes a
// real-part decision false.
template <typename C>
RESIDENT_CX_HD bool resident_cx_gt(C a, C b) {
  return (a.re > b.re && !resident_cx_isnan(a.im) && !resident_cx_isnan(b.im)) ||
         (a.re == b.re && a.im > b.im);
}
template <typename C>
RESIDENT_CX_HD bool resident_cx_ge(C a, C b) {
  return (a.re > b.re && !resident_cx_isnan(a.im) && !resident_cx_isnan(b.im)) ||
         (a.re == b.re && a.im >= b.im);
}
template <typename C>
RESIDENT_CX_HD bool resident_cx_lt(C a, C b) {
  return (a.re < b.re && !resident_cx_isnan(a.im) && !resident_cx_isnan(b.im)) ||
         (a.re == b.re && a.im < b.im);
}
template <typename C>
RESIDENT_CX_HD bool resident_cx_le(C a, C b) {
  return (a.re < b.re && !resident_cx_isnan(a.im) && !resident_cx_isnan(b.im)) ||
         (a.re == b.re && a.im <= b.im);
}
// NumPy's complex maximum / minimum: a (NaN parts included) unless b is
// ordered after (before) it.
template <typename C>
RESIDENT_CX_HD C resident_cx_maximum(C a, C b) {
  if (resident_cx_isnan(a.re) || resident_cx_isnan(a.im) || resident_cx_ge(a, b)) return a;
  return b;
}
template <typename C>
RESIDENT_CX_HD C resident_cx_minimum(C a, C b) {
  if (resident_cx_isnan(a.re) || resident_cx_isnan(a.im) || resident_cx_le(a, b)) return a;
  return b;
}

// NumPy's fmax / fmin: a NaN part on one side gives the other operand (a
// when both have one); otherwise maximum / minimum's order.
template <typename C>
RESIDENT_CX_HD C resident_cx_fmax(C a, C b) {
  if (resident_cx_isnan(b.re) || resident_cx_isnan(b.im) || resident_cx_ge(a, b)) return a;
  return b;
}
template <typename C>
RESIDENT_CX_HD C resident_cx_fmin(C a, C b) {
  if (resident_cx_isnan(b.re) || resident_cx_isnan(b.im) || resident_cx_le(a, b)) return a;
  return b;
}
// NumPy 2's complex sign, z / |z| with |z| from hypot: NaN when |z| is; an
// infinite part gives its unit direction (NaN when both are infinite); 0
// stays +0.
template <typename C>
RESIDENT_CX_HD C resident_cx_sign(C a) {
  typedef typename ResidentIsComplex<C>::component F;
  const F inf = F(1) / F(0);
  const F nan = inf - inf;
  const F abs = resident_cx_hypot(a.re, a.im);
  if (resident_cx_isnan(abs)) return resident_cx_make<C>(nan, nan);
  if (abs == inf) {
    const bool re_inf = a.re == inf || a.re == -inf, im_inf = a.im == inf || a.im == -inf;
    if (re_inf && im_inf) return resident_cx_make<C>(nan, nan);
    if (re_inf) return resident_cx_make<C>(a.re > F(0) ? F(1) : F(-1), F(0));
    return resident_cx_make<C>(F(0), a.im > F(0) ? F(1) : F(-1));
  }
  if (abs == F(0)) return resident_cx_make<C>(F(0), F(0));
  return resident_cx_make<C>(a.re / abs, a.im / abs);
}

// Every kind a backend computes in a complex dtype, with the name of its
// expression resident_cxk_<name>(x, y) -> C below (a unary kind ignores y;
// a bool-valued kind gives 1 or 0 as a complex; absolute gives |z| as the
// real part, which the program layer casts to the parts' float). The one
// list: core/elementwise_kind.h's ComplexKernelKind and both backends'
// dispatch expand it. The library functions (sqrt, exp, log, sin, cos, tan,
// their hyperbolic and inverse forms, log2, log10, power) each backend
// defines itself: glibc's (what NumPy calls) on the CPU, core/complex_math.h's
// on the GPU, which follow glibc's; log1p, expm1, reciprocal and rint are
// NumPy's own formulas, core/complex_math.h's on both. Such a row needs
// those two definitions.
#define RESIDENT_COMPLEX_KINDS(X) \
  X(kAdd, add)                    \
  X(kSubtract, subtract)          \
  X(kMultiply, multiply)          \
  X(kDivide, divide)              \
  X(kNegative, negative)          \
  X(kAbsolute, absolute)          \
  X(kSign, sign)                  \
  X(kMaximum, maximum)            \
  X(kMinimum, minimum)            \
  X(kFmax, fmax)                  \
  X(kFmin, fmin)                  \
  X(kEqual, equal)                \
  X(kNotEqual, not_equal)         \
  X(kLess, less)                  \
  X(kLessEqual, less_equal)       \
  X(kGreater, greater)            \
  X(kGreaterEqual, greater_equal) \
  X(kLogicalAnd, logical_and)     \
  X(kLogicalOr, logical_or)       \
  X(kLogicalXor, logical_xor)     \
  X(kLogicalNot, logical_not)     \
  X(kIsnan, isnan)                \
  X(kIsfinite, isfinite)          \
  X(kSqrt, sqrt)                  \
  X(kExp, exp)                    \
  X(kLog, log)                    \
  X(kSin, sin)                    \
  X(kCos, cos)                    \
  X(kTanh, tanh)                  \
  X(kPositive, positive)          \
  X(kConjugate, conjugate)        \
  X(kReal, real)                  \
  X(kImag, imag)                  \
  X(kSquare, square)              \
  X(kIsinf, isinf)                \
  X(kTan, tan)                    \
  X(kArcsin, arcsin)              \
  X(kArccos, arccos)              \
  X(kArctan, arctan)              \
  X(kSinh, sinh)                  \
  X(kCosh, cosh)                  \
  X(kArcsinh, arcsinh)            \
  X(kArccosh, arccosh)            \
  X(kArctanh, arctanh)            \
  X(kLog2, log2)                  \
  X(kLog10, log10)                \
  X(kLog1p, log1p)                \
  X(kExpm1, expm1)                \
  X(kReciprocal, reciprocal)      \
  X(kRint, rint)                  \
  X(kPower, power)

template <typename C>
RESIDENT_CX_HD C resident_cx_truth(bool b) {
  typedef typename ResidentIsComplex<C>::component F;
  return resident_cx_make<C>(b ? F(1) : F(0), F(0));
}
#define RESIDENT_CXK(name, expr)                   \
  template <typename C>                            \
  RESIDENT_CX_HD C resident_cxk_##name(C x, C y) { \
    (void)y;                                       \
    return expr;                                   \
  }
RESIDENT_CXK(add, resident_cx_add(x, y))
RESIDENT_CXK(subtract, resident_cx_sub(x, y))
RESIDENT_CXK(multiply, resident_cx_mul(x, y))
RESIDENT_CXK(divide, resident_cx_div(x, y))
RESIDENT_CXK(negative, resident_cx_neg(x))
RESIDENT_CXK(absolute, resident_cx_make<C>(resident_cx_abs(x), 0))
RESIDENT_CXK(sign, resident_cx_sign(x))
RESIDENT_CXK(maximum, resident_cx_maximum(x, y))
RESIDENT_CXK(minimum, resident_cx_minimum(x, y))
RESIDENT_CXK(fmax, resident_cx_fmax(x, y))
RESIDENT_CXK(fmin, resident_cx_fmin(x, y))
RESIDENT_CXK(equal, resident_cx_truth<C>(resident_cx_eq(x, y)))
RESIDENT_CXK(not_equal, resident_cx_truth<C>(!resident_cx_eq(x, y)))
RESIDENT_CXK(less, resident_cx_truth<C>(resident_cx_lt(x, y)))
RESIDENT_CXK(less_equal, resident_cx_truth<C>(resident_cx_le(x, y)))
RESIDENT_CXK(greater, resident_cx_truth<C>(resident_cx_gt(x, y)))
RESIDENT_CXK(greater_equal, resident_cx_truth<C>(resident_cx_ge(x, y)))
RESIDENT_CXK(logical_and, resident_cx_truth<C>(resident_cx_nonzero(x) && resident_cx_nonzero(y)))
RESIDENT_CXK(logical_or, resident_cx_truth<C>(resident_cx_nonzero(x) || resident_cx_nonzero(y)))
RESIDENT_CXK(logical_xor, resident_cx_truth<C>(resident_cx_nonzero(x) != resident_cx_nonzero(y)))
RESIDENT_CXK(logical_not, resident_cx_truth<C>(!resident_cx_nonzero(x)))
RESIDENT_CXK(isnan, resident_cx_truth<C>(resident_cx_isnan_value(x)))
RESIDENT_CXK(isfinite, resident_cx_truth<C>(resident_cx_isfinite(x)))
RESIDENT_CXK(positive, x)
RESIDENT_CXK(conjugate, resident_cx_make<C>(x.re, -x.im))
RESIDENT_CXK(real, resident_cx_make<C>(x.re, 0))
RESIDENT_CXK(imag, resident_cx_make<C>(x.im, 0))
RESIDENT_CXK(square, resident_cx_mul(x, x))
RESIDENT_CXK(isinf, resident_cx_truth<C>(resident_cx_isinf_value(x)))
#undef RESIDENT_CXK

// NumPy's order of complex numbers (its CLT) as three sort keys, most
// significant first: cls = 2 isnan(re) + isnan(im), so NaN-free numbers
// come first, then R + nanj, nan + Rj and nan + nanj; k1 = re (cls 0, 1),
// im (cls 2) or 0; k2 = im (cls 0) or 0. Both backends' sorts order by
// (cls, k1, k2), where -0.0 ties with 0.0.
template <typename C>
struct ResidentCxSortKeys {
  typename ResidentIsComplex<C>::component cls, k1, k2;
};
template <typename C>
RESIDENT_CX_HD ResidentCxSortKeys<C> resident_cx_sort_keys(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  const bool nr = z.re != z.re, ni = z.im != z.im;
  return {F(2 * nr + ni), !nr ? z.re : !ni ? z.im : F(0), !nr && !ni ? z.im : F(0)};
}

#endif  // RESIDENT_CORE_COMPLEX_H_

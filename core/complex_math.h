// The complex library functions of complex64 / complex128, for g++ (tests,
// the CPU if it wants them) and nvcc (kernels/cuda/complex.cu): sqrt, exp,
// log, sin, cos, tan and their hyperbolic forms as glibc computes csqrt,
// cexp, clog, ... (what NumPy calls): C99 Annex G's special values, with
// glibc's choices where Annex G leaves one open (the sign of a zero or
// infinity beside a NaN), and finite results within 4 ULP of glibc's at the
// larger part; the inverse functions (asin, acos, atan and their hyperbolic
// forms) by Hull, Fairgrieve and Tang's method, within 2 ULP of the true
// value and 8 of glibc's (which is up to 3 off); and NumPy's own formulas
// for log1p, expm1, reciprocal, rint and power's integer exponents
// (tests/unit/complex_math_test.cc checks them against glibc).
//
// complex64 computes in float throughout (the float overloads of the real
// functions), complex128 in double. Like core/complex.h it includes nothing
// and uses no std:: names: on the host the real functions are GCC's
// builtins (glibc's libm), on the device CUDA's. Nothing here relies on FMA
// contraction (kernels/cuda builds with --fmad=false); the few exact
// products ask for fma explicitly.
//
//   ResidentComplex64 r = resident_cmath_sqrt(z);
#ifndef RESIDENT_CORE_COMPLEX_MATH_H_
#define RESIDENT_CORE_COMPLEX_MATH_H_

#include "core/complex.h"

// resident_rmath_<name>(float) and (double): the real function of that
// precision, glibc's on the host and CUDA's on the device.
#if defined(__CUDA_ARCH__)
#define RESIDENT_RMATH_FLOAT(name) name##f
#define RESIDENT_RMATH_DOUBLE(name) name
#else
#define RESIDENT_RMATH_FLOAT(name) __builtin_##name##f
#define RESIDENT_RMATH_DOUBLE(name) __builtin_##name
#endif
#define RESIDENT_RMATH_UNARY(name)                                                              \
  RESIDENT_CX_HD float resident_rmath_##name(float a) { return RESIDENT_RMATH_FLOAT(name)(a); } \
  RESIDENT_CX_HD double resident_rmath_##name(double a) { return RESIDENT_RMATH_DOUBLE(name)(a); }
#define RESIDENT_RMATH_BINARY(name)                                 \
  RESIDENT_CX_HD float resident_rmath_##name(float a, float b) {    \
    return RESIDENT_RMATH_FLOAT(name)(a, b);                        \
  }                                                                 \
  RESIDENT_CX_HD double resident_rmath_##name(double a, double b) { \
    return RESIDENT_RMATH_DOUBLE(name)(a, b);                       \
  }
RESIDENT_RMATH_UNARY(fabs)
RESIDENT_RMATH_UNARY(exp)
RESIDENT_RMATH_UNARY(log)
RESIDENT_RMATH_UNARY(sin)
RESIDENT_RMATH_UNARY(cos)
RESIDENT_RMATH_UNARY(sinh)
RESIDENT_RMATH_UNARY(cosh)
RESIDENT_RMATH_UNARY(sqrt)
RESIDENT_RMATH_UNARY(log1p)
RESIDENT_RMATH_UNARY(expm1)
RESIDENT_RMATH_UNARY(asin)
RESIDENT_RMATH_UNARY(acos)
RESIDENT_RMATH_UNARY(atan)
RESIDENT_RMATH_UNARY(atanh)
RESIDENT_RMATH_UNARY(rint)
RESIDENT_RMATH_BINARY(atan2)
RESIDENT_RMATH_BINARY(copysign)
RESIDENT_RMATH_BINARY(hypot)
RESIDENT_CX_HD float resident_rmath_frexp(float a, int* e) {
  return RESIDENT_RMATH_FLOAT(frexp)(a, e);
}
RESIDENT_CX_HD double resident_rmath_frexp(double a, int* e) {
  return RESIDENT_RMATH_DOUBLE(frexp)(a, e);
}
RESIDENT_CX_HD float resident_rmath_ldexp(float a, int e) {
  return RESIDENT_RMATH_FLOAT(ldexp)(a, e);
}
RESIDENT_CX_HD double resident_rmath_ldexp(double a, int e) {
  return RESIDENT_RMATH_DOUBLE(ldexp)(a, e);
}
#undef RESIDENT_RMATH_UNARY
#undef RESIDENT_RMATH_BINARY
#undef RESIDENT_RMATH_FLOAT
#undef RESIDENT_RMATH_DOUBLE

// Per-precision constants. Hex literals, so each is exact.
template <typename F>
struct ResidentCmathConsts;
template <>
struct ResidentCmathConsts<float> {
  RESIDENT_CX_HD static float max() { return 0x1.fffffep127f; }
  // Beyond big() (below small()) the squares of csqrt and clog could
  // overflow (lose bits to underflow): parts are scaled by down() (up()),
  // powers of two whose square roots are down_root() (up_root()), and
  // ln_scale() (hi + lo) is the log of up().
  RESIDENT_CX_HD static float big() { return 0x1p50f; }
  RESIDENT_CX_HD static float small() { return 0x1p-50f; }
  RESIDENT_CX_HD static float down() { return 0x1p-100f; }
  RESIDENT_CX_HD static float up() { return 0x1p100f; }
  RESIDENT_CX_HD static float down_root() { return 0x1p-50f; }
  RESIDENT_CX_HD static float up_root() { return 0x1p50f; }
  RESIDENT_CX_HD static float ln_scale_hi() { return 0x1.154246p+6f; }  // 100 ln 2
  RESIDENT_CX_HD static float ln_scale_lo() { return -0x1.199058p-19f; }
  // exp(x) for x above exp_cut() (floor(127 ln 2), glibc's choice) is taken
  // as exp(x - cut) * exp_of_cut(), so a finite result beside a huge
  // exponential stays finite. tanh_cut() is half of it (floor(127 ln 2 / 2)),
  // exp_of_2tanh_cut() = exp(2 * tanh_cut()).
  RESIDENT_CX_HD static float exp_cut() { return 88.0f; }
  RESIDENT_CX_HD static float exp_of_cut() { return 0x1.f1056ep+126f; }  // exp(88)
  RESIDENT_CX_HD static float tanh_cut() { return 44.0f; }
  RESIDENT_CX_HD static float exp_of_2tanh_cut() { return 0x1.f1056ep+126f; }  // exp(88)
  // For the inverse functions (Hull, Fairgrieve and Tang's method, as
  // FreeBSD's catrig.c has it): the epsilon, sqrt(6 eps), sqrt(3 eps),
  // 4 sqrt(min), sqrt(max) / 4 and sqrt(min).
  RESIDENT_CX_HD static float eps() { return 0x1p-23f; }
  RESIDENT_CX_HD static float sqrt_6_eps() { return 8.4572793338e-4f; }
  RESIDENT_CX_HD static float sqrt_3_eps() { return 5.9801995673e-4f; }
  RESIDENT_CX_HD static float four_sqrt_min() { return 4.3368086899420177e-19f; }
  RESIDENT_CX_HD static float quarter_sqrt_max() { return 4.611685743549481e+18f; }
  RESIDENT_CX_HD static float sqrt_min() { return 1.0842021724855044e-19f; }
  // NumPy's NPY_PI_2f, NPY_LOGE2f, NPY_Ef, NPY_LOG2Ef and NPY_LOG10Ef.
  RESIDENT_CX_HD static float pi_2() { return 1.570796326794896619231321691639751442f; }
  RESIDENT_CX_HD static float ln2() { return 0.693147180559945309417232121458176568f; }
  RESIDENT_CX_HD static float e() { return 2.718281828459045235360287471352662498f; }
  RESIDENT_CX_HD static float log2e() { return 1.442695040888963407359924681001892137f; }
  RESIDENT_CX_HD static float log10e() { return 0.434294481903251827651128918916605082f; }
};
template <>
struct ResidentCmathConsts<double> {
  RESIDENT_CX_HD static double max() { return 0x1.fffffffffffffp1023; }
  RESIDENT_CX_HD static double big() { return 0x1p500; }
  RESIDENT_CX_HD static double small() { return 0x1p-500; }
  RESIDENT_CX_HD static double down() { return 0x1p-1000; }
  RESIDENT_CX_HD static double up() { return 0x1p1000; }
  RESIDENT_CX_HD static double down_root() { return 0x1p-500; }
  RESIDENT_CX_HD static double up_root() { return 0x1p500; }
  RESIDENT_CX_HD static double ln_scale_hi() { return 0x1.5a92d6d005c94p+9; }  // 1000 ln 2
  RESIDENT_CX_HD static double ln_scale_lo() { return -0x1.971e6bd14ec61p-45; }
  RESIDENT_CX_HD static double exp_cut() { return 709.0; }
  RESIDENT_CX_HD static double exp_of_cut() { return 0x1.d422d2be5dc9bp+1022; }  // exp(709)
  RESIDENT_CX_HD static double tanh_cut() { return 354.0; }
  RESIDENT_CX_HD static double exp_of_2tanh_cut() { return 0x1.586f6bf260cf1p+1021; }  // exp(708)
  RESIDENT_CX_HD static double eps() { return 0x1p-52; }
  RESIDENT_CX_HD static double sqrt_6_eps() { return 3.65002414998885671e-08; }
  RESIDENT_CX_HD static double sqrt_3_eps() { return 2.5809568279517849e-8; }
  RESIDENT_CX_HD static double four_sqrt_min() { return 5.9666725849601654e-154; }
  RESIDENT_CX_HD static double quarter_sqrt_max() { return 3.3519519824856489e+153; }
  RESIDENT_CX_HD static double sqrt_min() { return 1.4916681462400413e-154; }
  RESIDENT_CX_HD static double pi_2() { return 1.570796326794896619231321691639751442; }
  RESIDENT_CX_HD static double ln2() { return 0.693147180559945309417232121458176568; }
  RESIDENT_CX_HD static double e() { return 2.718281828459045235360287471352662498; }
  RESIDENT_CX_HD static double log2e() { return 1.442695040888963407359924681001892137; }
  RESIDENT_CX_HD static double log10e() { return 0.434294481903251827651128918916605082; }
};

template <typename F>
RESIDENT_CX_HD F resident_cmath_inf() {
  return F(1) / F(0);
}
template <typename F>
RESIDENT_CX_HD F resident_cmath_nan() {
  return resident_cmath_inf<F>() - resident_cmath_inf<F>();
}
template <typename F>
RESIDENT_CX_HD bool resident_cmath_isinf(F a) {
  return resident_rmath_fabs(a) == resident_cmath_inf<F>();
}
template <typename F>
RESIDENT_CX_HD bool resident_cmath_isfinite(F a) {
  return a - a == F(0);  // inf - inf and NaN - NaN are NaN
}
template <typename F>
RESIDENT_CX_HD bool resident_cmath_signbit(F a) {
  return resident_rmath_copysign(F(1), a) < F(0);
}

// Error-free transformations: a + b == *s + *e and a * b == *p + *e
// exactly (Knuth's TwoSum, whatever the order of a and b; one fma).
template <typename F>
RESIDENT_CX_HD void resident_cmath_two_sum(F a, F b, F* s, F* e) {
  *s = a + b;
  const F b_part = *s - a;
  *e = (a - (*s - b_part)) + (b - b_part);
}
template <typename F>
RESIDENT_CX_HD void resident_cmath_two_prod(F a, F b, F* p, F* e) {
  *p = a * b;
  *e = resident_cx_fma(a, b, -*p);
}

// exp(a) * factor * (c, s) for finite a, c, s and factor 1 or 1/2 (sinh
// and cosh), where exp(a) alone may overflow: beyond the cut,
// exp(cut) * factor goes into c and s first (exp(cut) a second time if
// needed), so the products are finite whenever the true ones are (glibc's
// scheme), and a subnormal c or s is not halved into zero.
template <typename C>
RESIDENT_CX_HD C resident_cmath_exp_times(typename ResidentIsComplex<C>::component a,
                                          typename ResidentIsComplex<C>::component factor,
                                          typename ResidentIsComplex<C>::component c,
                                          typename ResidentIsComplex<C>::component s) {
  typedef typename ResidentIsComplex<C>::component F;
  typedef ResidentCmathConsts<F> K;
  if (a > K::exp_cut()) {
    a -= K::exp_cut();  // exact (Sterbenz), as below
    c *= K::exp_of_cut() * factor;
    s *= K::exp_of_cut() * factor;
    if (a > K::exp_cut()) {
      a -= K::exp_cut();
      c *= K::exp_of_cut();
      s *= K::exp_of_cut();
    }
    // Beyond three cuts everything but an exact zero overflows.
    if (a > K::exp_cut()) return resident_cx_make<C>(c * K::max(), s * K::max());
    factor = F(1);  // applied
  }
  const F e = resident_rmath_exp(a) * factor;
  return resident_cx_make<C>(e * c, e * s);
}

// Complex square root, principal branch (Re >= 0; Im with the sign of
// z.im, zeros included). Kahan's method: t = sqrt((|x| + |z|) / 2) is the
// larger part, |y| / (2t) the other, so neither part is a difference of
// near-equal values; |z| and t carried as double-words (error-free
// products and sums, a Newton step on each sqrt) so t is within about
// 0.5 ULP, with both parts scaled by an even power of two when the
// squares could overflow or lose bits (huge, tiny and subnormal parts).
template <typename C>
RESIDENT_CX_HD C resident_cmath_sqrt(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  typedef ResidentCmathConsts<F> K;
  const F x = z.re, y = z.im;
  const F inf = resident_cmath_inf<F>();
  if (resident_cmath_isinf(y)) return resident_cx_make<C>(inf, y);  // even beside a NaN
  if (resident_cmath_isinf(x)) {
    const F other = resident_cx_isnan(y) ? y : F(0);
    if (x > F(0)) return resident_cx_make<C>(x, resident_rmath_copysign(other, y));
    return resident_cx_make<C>(other, resident_rmath_copysign(inf, y));
  }
  if (resident_cx_isnan(x) || resident_cx_isnan(y)) {
    return resident_cx_make<C>(resident_cmath_nan<F>(), resident_cmath_nan<F>());
  }
  if (y == F(0)) {  // exact zeros: sqrt(-1 + 0i) is (0, 1), sqrt(-0 + 0i) is (+0, +0)
    if (x < F(0)) {
      return resident_cx_make<C>(F(0), resident_rmath_copysign(resident_cx_sqrt(-x), y));
    }
    return resident_cx_make<C>(resident_cx_sqrt(x) + F(0), y);  // -0 + 0 is +0
  }
  F ax = resident_rmath_fabs(x), ay = resident_rmath_fabs(y);
  const F larger = ax > ay ? ax : ay;
  F unscale = F(1);  // the result's scale: the square root of the parts'
  if (larger > K::big()) {
    ax *= K::down();
    ay *= K::down();
    unscale = K::up_root();
  } else if (larger < K::small()) {
    ax *= K::up();
    ay *= K::up();
    unscale = K::down_root();
  }
  F t, other;
  if (ax == F(0)) {  // sqrt(+-iy) = sqrt(|y| / 2) (1 +- i): both parts equal
    t = resident_cx_sqrt(ay * F(0.5));
    other = t;
  } else {
    // |z|^2 = sq + sq_lo, |z| = abs + abs_lo, (|x| + |z|) / 2 = half + half_lo,
    // each as a double-word, so t is rounded about once (within ~0.5 ULP).
    F xx, xx_lo, yy, yy_lo, sq, sq_err, sum, sum_err;
    resident_cmath_two_prod(ax, ax, &xx, &xx_lo);
    resident_cmath_two_prod(ay, ay, &yy, &yy_lo);
    resident_cmath_two_sum(xx, yy, &sq, &sq_err);
    const F sq_lo = sq_err + (xx_lo + yy_lo);
    const F abs = resident_cx_sqrt(sq);
    const F abs_lo = (resident_cx_fma(-abs, abs, sq) + sq_lo) / (abs + abs);
    resident_cmath_two_sum(ax, abs, &sum, &sum_err);
    const F half = sum * F(0.5), half_lo = (sum_err + abs_lo) * F(0.5);
    const F root = resident_cx_sqrt(half);
    t = root + (resident_cx_fma(-root, root, half) + half_lo) / (root + root);
    other = (ay / t) * F(0.5);  // halved last, as glibc, so a tiny part rounds as glibc's
  }
  t *= unscale;
  other *= unscale;
  if (x >= F(0)) return resident_cx_make<C>(t, resident_rmath_copysign(other, y));
  return resident_cx_make<C>(other, resident_rmath_copysign(t, y));
}

// Complex exponential: exp(x) (cos y, sin y), with exp(x) folded into the
// parts when it alone would overflow.
template <typename C>
RESIDENT_CX_HD C resident_cmath_exp(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  const F x = z.re, y = z.im;
  const F inf = resident_cmath_inf<F>(), nan = resident_cmath_nan<F>();
  if (resident_cmath_isfinite(x)) {
    if (!resident_cmath_isfinite(y)) return resident_cx_make<C>(nan, nan);
    return resident_cmath_exp_times<C>(x, F(1), resident_rmath_cos(y), resident_rmath_sin(y));
  }
  if (resident_cmath_isinf(x)) {
    if (resident_cmath_isfinite(y)) {
      const F magnitude = x > F(0) ? inf : F(0);
      if (y == F(0)) return resident_cx_make<C>(magnitude, y);
      return resident_cx_make<C>(resident_rmath_copysign(magnitude, resident_rmath_cos(y)),
                                 resident_rmath_copysign(magnitude, resident_rmath_sin(y)));
    }
    // y infinite or NaN: (+inf, NaN) for +inf, (+0, +-0) for -inf.
    if (x > F(0)) return resident_cx_make<C>(inf, nan);
    return resident_cx_make<C>(F(0), resident_rmath_copysign(F(0), y));
  }
  return resident_cx_make<C>(nan, y == F(0) ? y : nan);  // NaN x keeps a zero y
}

// Complex natural log, principal branch: (log|z|, atan2(y, x)), with
// log|z| = log(s) / 2 for s = |z|^2 held as a double-word s_hi + s_lo:
// log(s_hi) + s_lo / s_hi, so only log's rounding and one addition's
// remain. Near |z| = 1, where log|z| is small and |z|^2 - 1 cancels, s is
// built as 1 + (|z|^2 - 1) with |z|^2 - 1 = 2u + u^2 + y^2 (|x| = 1 + u,
// exact) summed from error-free products and sums. log rather than
// log1p: glibc's log is the more accurate of the two. Huge and tiny parts
// are scaled by a power of two first, so the squares neither overflow nor
// lose bits.
template <typename C>
RESIDENT_CX_HD C resident_cmath_log(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  typedef ResidentCmathConsts<F> K;
  const F x = z.re, y = z.im;
  const F inf = resident_cmath_inf<F>(), nan = resident_cmath_nan<F>();
  if (x == F(0) && y == F(0)) {
    return resident_cx_make<C>(-inf, resident_rmath_atan2(y, x));  // atan2: +-0 or +-pi
  }
  if (resident_cx_isnan(x) || resident_cx_isnan(y)) {
    return resident_cx_make<C>(resident_cmath_isinf(x) || resident_cmath_isinf(y) ? inf : nan, nan);
  }
  const F im = resident_rmath_atan2(y, x);
  F ax = resident_rmath_fabs(x), ay = resident_rmath_fabs(y);
  if (ax < ay) {
    const F swap = ax;
    ax = ay;
    ay = swap;
  }
  if (ax == inf) return resident_cx_make<C>(inf, im);
  F s_hi, s_err, s_lo;
  int scaled = 0;
  if (ax >= F(0.5) && ax <= F(2)) {
    const F u = ax - F(1);  // exact (Sterbenz)
    F uu_hi, uu_lo, yy_hi, yy_lo, s1, e1, s2, e2, r, r_lo;
    resident_cmath_two_prod(u, u, &uu_hi, &uu_lo);
    resident_cmath_two_prod(ay, ay, &yy_hi, &yy_lo);
    // When the sum cancels, 2u + yy_hi and then + uu_hi are exact
    // (Sterbenz) and only the low words are rounded.
    resident_cmath_two_sum(u + u, yy_hi, &s1, &e1);
    resident_cmath_two_sum(s1, uu_hi, &s2, &e2);
    resident_cmath_two_sum(s2, (e1 + e2) + (uu_lo + yy_lo), &r, &r_lo);
    resident_cmath_two_sum(F(1), r, &s_hi, &s_err);
    s_lo = s_err + r_lo;
  } else {
    if (ax > K::big()) {
      ax *= K::down();
      ay *= K::down();
      scaled = 1;
    } else if (ax < K::small()) {
      ax *= K::up();
      ay *= K::up();
      scaled = -1;
    }
    F xx_hi, xx_lo, yy_hi, yy_lo;
    resident_cmath_two_prod(ax, ax, &xx_hi, &xx_lo);
    resident_cmath_two_prod(ay, ay, &yy_hi, &yy_lo);
    resident_cmath_two_sum(xx_hi, yy_hi, &s_hi, &s_err);
    s_lo = s_err + (xx_lo + yy_lo);
  }
  // log(hi + lo) = log(hi) + lo / hi to within (lo / hi)^2 / 2.
  F re = (resident_rmath_log(s_hi) + s_lo / s_hi) * F(0.5);
  if (scaled > 0) re = (re + K::ln_scale_hi()) + K::ln_scale_lo();
  if (scaled < 0) re = (re - K::ln_scale_hi()) - K::ln_scale_lo();
  return resident_cx_make<C>(re, im);
}

// Complex hyperbolic sine and cosine (for sin and cos below):
// sinh(x + iy) = sinh x cos y + i cosh x sin y,
// cosh(x + iy) = cosh x cos y + i sinh x sin y, with exp(|x|) / 2 for
// sinh and cosh when exp(|x|) alone would overflow. Special values as
// Annex G G.6.2.4 / G.6.2.5 with glibc's open choices.
template <typename C>
RESIDENT_CX_HD C resident_cmath_sinh(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  typedef ResidentCmathConsts<F> K;
  const F x = z.re, y = z.im;
  const F inf = resident_cmath_inf<F>(), nan = resident_cmath_nan<F>();
  if (resident_cmath_isfinite(x)) {
    if (!resident_cmath_isfinite(y)) {
      return resident_cx_make<C>(x == F(0) ? x : nan, nan);  // sinh(+-0 + i inf) = +-0 + i NaN
    }
    const F c = resident_rmath_cos(y), s = resident_rmath_sin(y);
    const F ax = resident_rmath_fabs(x);
    if (ax > K::exp_cut()) {
      const C r = resident_cmath_exp_times<C>(ax, F(0.5), c, s);  // exp(|x|) / 2
      return resident_cx_make<C>(resident_rmath_copysign(F(1), x) * r.re, r.im);
    }
    return resident_cx_make<C>(resident_rmath_sinh(x) * c, resident_rmath_cosh(x) * s);
  }
  if (resident_cmath_isinf(x)) {
    if (y == F(0)) return z;  // sinh(+-inf +- i0) = +-inf +- i0
    if (resident_cmath_isfinite(y)) {
      return resident_cx_make<C>(
          resident_rmath_copysign(inf, resident_rmath_cos(y)) * resident_rmath_copysign(F(1), x),
          resident_rmath_copysign(inf, resident_rmath_sin(y)));
    }
    return resident_cx_make<C>(inf, nan);  // glibc: +inf whatever x's sign
  }
  return resident_cx_make<C>(nan, y == F(0) ? y : nan);
}
template <typename C>
RESIDENT_CX_HD C resident_cmath_cosh(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  typedef ResidentCmathConsts<F> K;
  const F x = z.re, y = z.im;
  const F inf = resident_cmath_inf<F>(), nan = resident_cmath_nan<F>();
  if (resident_cmath_isfinite(x)) {
    if (!resident_cmath_isfinite(y)) {
      return resident_cx_make<C>(nan, x == F(0) ? F(0) : nan);  // glibc: +0 beside the NaN
    }
    const F c = resident_rmath_cos(y), s = resident_rmath_sin(y);
    const F ax = resident_rmath_fabs(x);
    if (ax > K::exp_cut()) {
      const C r = resident_cmath_exp_times<C>(ax, F(0.5), c, s);
      return resident_cx_make<C>(r.re, resident_rmath_copysign(F(1), x) * r.im);
    }
    return resident_cx_make<C>(resident_rmath_cosh(x) * c, resident_rmath_sinh(x) * s);
  }
  if (resident_cmath_isinf(x)) {
    if (y == F(0)) return resident_cx_make<C>(inf, y * resident_rmath_copysign(F(1), x));
    if (resident_cmath_isfinite(y)) {
      return resident_cx_make<C>(
          resident_rmath_copysign(inf, resident_rmath_cos(y)),
          resident_rmath_copysign(inf, resident_rmath_sin(y)) * resident_rmath_copysign(F(1), x));
    }
    return resident_cx_make<C>(inf, nan);
  }
  return resident_cx_make<C>(nan, y == F(0) ? y : nan);
}

// sin z = -i sinh(iz), cos z = cosh(iz), with iz = -y + ix (Annex G's
// definitions, so their special values follow from sinh's and cosh's).
template <typename C>
RESIDENT_CX_HD C resident_cmath_sin(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  const C w = resident_cmath_sinh(resident_cx_make<C>(-z.im, z.re));
  // sin(x +- i inf) for infinite or NaN x: glibc gives NaN + i inf (the
  // sign is unspecified), -i sinh gives NaN - i inf.
  if (resident_cmath_isinf(w.re) && resident_cx_isnan(w.im)) {
    return resident_cx_make<C>(w.im, resident_cmath_inf<F>());
  }
  return resident_cx_make<C>(w.im, -w.re);
}
template <typename C>
RESIDENT_CX_HD C resident_cmath_cos(C z) {
  return resident_cmath_cosh(resident_cx_make<C>(-z.im, z.re));
}

// Complex hyperbolic tangent:
// tanh(x + iy) = (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y).
// For |x| beyond tanh_cut() that overflows, and the result is
// (+-1, 4 sin y cos y exp(-2|x|)), the exponential applied in steps so the
// imaginary part underflows gradually. Special values as Annex G G.6.2.6
// with glibc's choices (tanh(+-inf + iy) = +-1 + i0 sin 2y).
template <typename C>
RESIDENT_CX_HD C resident_cmath_tanh(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  typedef ResidentCmathConsts<F> K;
  const F x = z.re, y = z.im;
  const F nan = resident_cmath_nan<F>();
  if (!resident_cmath_isfinite(x) || !resident_cmath_isfinite(y)) {
    if (resident_cmath_isinf(x)) {
      F im = resident_rmath_copysign(F(0), y);
      // sin 2y has y's sign for |y| <= 1; beyond, ask sin and cos.
      if (resident_cmath_isfinite(y) && resident_rmath_fabs(y) > F(1)) {
        im = resident_rmath_copysign(F(0), resident_rmath_sin(y) * resident_rmath_cos(y));
      }
      return resident_cx_make<C>(resident_rmath_copysign(F(1), x), im);
    }
    if (y == F(0)) return z;                               // NaN + i0
    return resident_cx_make<C>(x == F(0) ? x : nan, nan);  // +-0 + i inf: +-0 + i NaN
  }
  const F s = resident_rmath_sin(y), c = resident_rmath_cos(y);
  F ax = resident_rmath_fabs(x);
  if (ax > K::tanh_cut()) {
    F im = F(4) * s * c / K::exp_of_2tanh_cut();
    ax -= K::tanh_cut();
    im /= ax > K::tanh_cut() ? K::exp_of_2tanh_cut() : resident_rmath_exp(ax + ax);
    return resident_cx_make<C>(resident_rmath_copysign(F(1), x), im);
  }
  const F sh = resident_rmath_sinh(x), ch = resident_rmath_cosh(x);
  const F den = sh * sh + c * c;
  return resident_cx_make<C>(sh * ch / den, s * c / den);
}

// tan z = -i tanh(iz), iz = -y + ix (Annex G's definition, so its special
// values follow from tanh's).
template <typename C>
RESIDENT_CX_HD C resident_cmath_tan(C z) {
  const C w = resident_cmath_tanh(resident_cx_make<C>(-z.im, z.re));
  return resident_cx_make<C>(w.im, -w.re);
}

// The inverse functions, by Hull, Fairgrieve and Tang's method
// ("Implementing the complex arcsine and arccosine functions using
// exception handling", 1997) in the form of FreeBSD's catrig.c, which
// NumPy carries for platforms without them: with A = (|z+i| + |z-i|) / 2
// and B = (|z+i| - |z-i|) / 2, asinh(x + iy) = log(A + sqrt(A^2 - 1)) +
// i asin(B) for x, y >= 0, each piece computed from differences that do not
// cancel; huge parts through a log of |z|, tiny ones as the identity.

// (hypot(a, b) - b) / 2 without cancellation; h = hypot(a, b).
template <typename F>
RESIDENT_CX_HD F resident_cmath_half_gap(F a, F b, F h) {
  if (b < F(0)) return (h - b) / F(2);
  if (b == F(0)) return a / F(2);
  return a * a / (h + b) / F(2);
}

// For x, y >= 0 below 1 / eps: *rx = Re asinh(x + iy) and either
// *b_usable with *b = B, or *sqrt_a2my2 = sqrt(A^2 - y^2) and *new_y = y
// scaled alike (when B is near 1 or y would underflow in y / A).
template <typename F>
RESIDENT_CX_HD void resident_cmath_asinh_parts(F x, F y, F* rx, bool* b_usable, F* b, F* sqrt_a2my2,
                                               F* new_y) {
  typedef ResidentCmathConsts<F> K;
  const F r = resident_rmath_hypot(x, y + F(1));  // |z + i|
  const F s = resident_rmath_hypot(x, y - F(1));  // |z - i|
  F a = (r + s) / F(2);
  if (a < F(1)) a = F(1);  // rounding
  const F eps = K::eps();
  if (a < F(10)) {
    if (y == F(1) && x < eps * eps / F(128)) {
      *rx = resident_rmath_sqrt(x);
    } else if (x >= eps * resident_rmath_fabs(y - F(1))) {
      const F am1 =
          resident_cmath_half_gap(x, F(1) + y, r) + resident_cmath_half_gap(x, F(1) - y, s);
      *rx = resident_rmath_log1p(am1 + resident_rmath_sqrt(am1 * (a + F(1))));
    } else if (y < F(1)) {
      *rx = x / resident_rmath_sqrt((F(1) - y) * (F(1) + y));
    } else {
      *rx = resident_rmath_log1p((y - F(1)) + resident_rmath_sqrt((y - F(1)) * (y + F(1))));
    }
  } else {
    *rx = resident_rmath_log(a + resident_rmath_sqrt(a * a - F(1)));
  }
  *new_y = y;
  if (y < K::four_sqrt_min()) {
    *b_usable = false;
    *sqrt_a2my2 = a * (F(2) / eps);
    *new_y = y * (F(2) / eps);
    return;
  }
  *b = y / a;
  *b_usable = true;
  if (*b > F(0.6417)) {
    *b_usable = false;
    if (y == F(1) && x < eps / F(128)) {
      *sqrt_a2my2 = resident_rmath_sqrt(x) * resident_rmath_sqrt((a + y) / F(2));
    } else if (x >= eps * resident_rmath_fabs(y - F(1))) {
      const F amy =
          resident_cmath_half_gap(x, y + F(1), r) + resident_cmath_half_gap(x, y - F(1), s);
      *sqrt_a2my2 = resident_rmath_sqrt(amy * (a + y));
    } else if (y > F(1)) {
      *sqrt_a2my2 = x * (F(4) / eps / eps) * y / resident_rmath_sqrt((y + F(1)) * (y - F(1)));
      *new_y = y * (F(4) / eps / eps);
    } else {
      *sqrt_a2my2 = resident_rmath_sqrt((F(1) - y) * (F(1) + y));
    }
  }
}

// log(x + iy) for finite parts, one of them beyond 1 / eps.
template <typename F>
RESIDENT_CX_HD void resident_cmath_log_large(F x, F y, F* rr, F* ri) {
  typedef ResidentCmathConsts<F> K;
  F ax = resident_rmath_fabs(x), ay = resident_rmath_fabs(y);
  if (ax < ay) {
    const F t = ax;
    ax = ay;
    ay = t;
  }
  if (ax > K::max() / F(2)) {
    *rr = resident_rmath_log(resident_rmath_hypot(x / K::e(), y / K::e())) + F(1);
  } else if (ax > K::quarter_sqrt_max() || ay < K::sqrt_min()) {
    *rr = resident_rmath_log(resident_rmath_hypot(x, y));
  } else {
    *rr = resident_rmath_log(ax * ax + ay * ay) / F(2);
  }
  *ri = resident_rmath_atan2(y, x);
}

template <typename C>
RESIDENT_CX_HD C resident_cmath_asinh(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  typedef ResidentCmathConsts<F> K;
  const F x = z.re, y = z.im;
  const F ax = resident_rmath_fabs(x), ay = resident_rmath_fabs(y);
  const F nan = resident_cmath_nan<F>();
  if (resident_cx_isnan(x) || resident_cx_isnan(y)) {
    if (resident_cmath_isinf(x)) return resident_cx_make<C>(x, nan);
    if (resident_cmath_isinf(y)) return resident_cx_make<C>(resident_rmath_copysign(y, x), nan);
    if (y == F(0)) return resident_cx_make<C>(nan, y);
    return resident_cx_make<C>(nan, nan);
  }
  if (ax > F(1) / K::eps() || ay > F(1) / K::eps()) {
    F wx, wy;
    if (resident_cmath_signbit(x)) {
      resident_cmath_log_large(-x, -y, &wx, &wy);
    } else {
      resident_cmath_log_large(x, y, &wx, &wy);
    }
    return resident_cx_make<C>(resident_rmath_copysign(wx + K::ln2(), x),
                               resident_rmath_copysign(wy, y));
  }
  if (ax < K::sqrt_6_eps() / F(4) && ay < K::sqrt_6_eps() / F(4)) return z;  // zeros included
  F rx, ry, b, sqrt_a2my2, new_y;
  bool b_usable;
  resident_cmath_asinh_parts(ax, ay, &rx, &b_usable, &b, &sqrt_a2my2, &new_y);
  ry = b_usable ? resident_rmath_asin(b) : resident_rmath_atan2(new_y, sqrt_a2my2);
  return resident_cx_make<C>(resident_rmath_copysign(rx, x), resident_rmath_copysign(ry, y));
}

template <typename C>
RESIDENT_CX_HD C resident_cmath_acos(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  typedef ResidentCmathConsts<F> K;
  const F x = z.re, y = z.im;
  const F ax = resident_rmath_fabs(x), ay = resident_rmath_fabs(y);
  const F inf = resident_cmath_inf<F>(), nan = resident_cmath_nan<F>();
  const bool sx = resident_cmath_signbit(x), sy = resident_cmath_signbit(y);
  if (resident_cx_isnan(x) || resident_cx_isnan(y)) {
    if (resident_cmath_isinf(x)) return resident_cx_make<C>(nan, -inf);
    if (resident_cmath_isinf(y)) return resident_cx_make<C>(nan, -y);
    if (x == F(0)) return resident_cx_make<C>(K::pi_2(), nan);
    return resident_cx_make<C>(nan, nan);
  }
  if (ax > F(1) / K::eps() || ay > F(1) / K::eps()) {
    F wx, wy;
    resident_cmath_log_large(x, y, &wx, &wy);
    const F ry = wx + K::ln2();
    return resident_cx_make<C>(resident_rmath_fabs(wy), sy ? ry : -ry);
  }
  if (x == F(1) && y == F(0)) return resident_cx_make<C>(F(0), -y);
  if (ax < K::sqrt_6_eps() / F(4) && ay < K::sqrt_6_eps() / F(4)) {
    return resident_cx_make<C>(K::pi_2() - x, -y);
  }
  F rx, ry, b, sqrt_a2mx2, new_x;
  bool b_usable;
  resident_cmath_asinh_parts(ay, ax, &ry, &b_usable, &b, &sqrt_a2mx2, &new_x);
  if (b_usable) {
    rx = resident_rmath_acos(sx ? -b : b);
  } else {
    rx = resident_rmath_atan2(sqrt_a2mx2, sx ? -new_x : new_x);
  }
  return resident_cx_make<C>(rx, sy ? ry : -ry);
}

// asin z = -i asinh(iz) and acosh z = +-i acos z (Re >= 0), as Annex G.
template <typename C>
RESIDENT_CX_HD C resident_cmath_asin(C z) {
  const C w = resident_cmath_asinh(resident_cx_make<C>(z.im, z.re));
  return resident_cx_make<C>(w.im, w.re);
}
template <typename C>
RESIDENT_CX_HD C resident_cmath_acosh(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  // glibc: acosh(+-0 + i NaN) = NaN + i pi/2.
  if (z.re == F(0) && resident_cx_isnan(z.im)) {
    return resident_cx_make<C>(z.im, ResidentCmathConsts<F>::pi_2());
  }
  const C w = resident_cmath_acos(z);
  if (resident_cx_isnan(w.re) && resident_cx_isnan(w.im)) return w;
  if (resident_cx_isnan(w.re)) return resident_cx_make<C>(resident_rmath_fabs(w.im), w.re);
  if (resident_cx_isnan(w.im)) return resident_cx_make<C>(w.im, w.im);
  return resident_cx_make<C>(resident_rmath_fabs(w.im), resident_rmath_copysign(w.re, z.im));
}

// Re(1 / (x + iy)) = x / (x^2 + y^2) without a spurious overflow or
// underflow, for one part beyond 1 / eps.
template <typename F>
RESIDENT_CX_HD F resident_cmath_re_reciprocal(F x, F y) {
  if (resident_cmath_isinf(x)) return F(1) / x;
  if (resident_cmath_isinf(y)) return x / y / y;  // +-0
  int ex, ey;
  resident_rmath_frexp(resident_rmath_fabs(x), &ex);
  resident_rmath_frexp(resident_rmath_fabs(y), &ey);
  const int cutoff = (sizeof(F) == 4 ? 24 : 53) / 2 + 1;
  const int max_exp = sizeof(F) == 4 ? 128 : 1024;
  if (ex - ey >= cutoff) return F(1) / x;
  if (ey - ex >= cutoff) return x / y / y;
  if (ex - 1 <= max_exp / 2 - cutoff) return x / (x * x + y * y);
  const F scale = resident_rmath_ldexp(F(1), 2 - ex);  // 2^(1 - ilogb x)
  x *= scale;
  y *= scale;
  return x / (x * x + y * y) * scale;
}

template <typename C>
RESIDENT_CX_HD C resident_cmath_atanh(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  typedef ResidentCmathConsts<F> K;
  const F x = z.re, y = z.im;
  const F ax = resident_rmath_fabs(x), ay = resident_rmath_fabs(y);
  const F nan = resident_cmath_nan<F>();
  if (y == F(0) && ax <= F(1)) return resident_cx_make<C>(resident_rmath_atanh(x), y);
  if (x == F(0)) return resident_cx_make<C>(x, resident_rmath_atan(y));
  if (resident_cx_isnan(x) || resident_cx_isnan(y)) {
    if (resident_cmath_isinf(x)) return resident_cx_make<C>(resident_rmath_copysign(F(0), x), nan);
    if (resident_cmath_isinf(y)) {
      return resident_cx_make<C>(resident_rmath_copysign(F(0), x),
                                 resident_rmath_copysign(K::pi_2(), y));
    }
    return resident_cx_make<C>(nan, nan);
  }
  if (ax > F(1) / K::eps() || ay > F(1) / K::eps()) {
    return resident_cx_make<C>(resident_cmath_re_reciprocal(x, y),
                               resident_rmath_copysign(K::pi_2(), y));
  }
  if (ax < K::sqrt_3_eps() / F(2) && ay < K::sqrt_3_eps() / F(2)) return z;
  F rx, ry;
  if (ax == F(1) && ay < K::eps()) {
    rx = (K::ln2() - resident_rmath_log(ay)) / F(2);
  } else {
    const F d = ax - F(1);
    const F sum_squares = ay < K::sqrt_min() ? d * d : d * d + ay * ay;
    rx = resident_rmath_log1p(F(4) * ax / sum_squares) / F(4);
  }
  if (ax == F(1)) {
    ry = resident_rmath_atan2(F(2), -ay) / F(2);
  } else if (ay < K::eps()) {
    ry = resident_rmath_atan2(F(2) * ay, (F(1) - ax) * (F(1) + ax)) / F(2);
  } else {
    ry = resident_rmath_atan2(F(2) * ay, (F(1) - ax) * (F(1) + ax) - ay * ay) / F(2);
  }
  return resident_cx_make<C>(resident_rmath_copysign(rx, x), resident_rmath_copysign(ry, y));
}

// atan z = -i atanh(iz), as Annex G.
template <typename C>
RESIDENT_CX_HD C resident_cmath_atan(C z) {
  const C w = resident_cmath_atanh(resident_cx_make<C>(z.im, z.re));
  return resident_cx_make<C>(w.im, w.re);
}

// NumPy's own complex loops (funcs.inc.src, loops.c.src), on the real
// functions: the same arithmetic on both backends.
// log2 and log10: the natural log's parts times log2(e) and log10(e).
template <typename C>
RESIDENT_CX_HD C resident_cmath_scale(C w, typename ResidentIsComplex<C>::component k) {
  return resident_cx_make<C>(w.re * k, w.im * k);
}
// log1p: log|z + 1| + i arg(z + 1).
template <typename C>
RESIDENT_CX_HD C resident_cmath_log1p(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  const F l = resident_rmath_hypot(z.re + F(1), z.im);
  return resident_cx_make<C>(resident_rmath_log(l), resident_rmath_atan2(z.im, z.re + F(1)));
}
// expm1: (expm1 x cos y - 2 sin^2(y / 2)) + i exp x sin y.
template <typename C>
RESIDENT_CX_HD C resident_cmath_expm1(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  const F a = resident_rmath_sin(z.im / F(2));
  return resident_cx_make<C>(resident_rmath_expm1(z.re) * resident_rmath_cos(z.im) - F(2) * a * a,
                             resident_rmath_exp(z.re) * resident_rmath_sin(z.im));
}
// reciprocal: 1 / z by Smith's method, NumPy's loop.
template <typename C>
RESIDENT_CX_HD C resident_cmath_reciprocal(C z) {
  typedef typename ResidentIsComplex<C>::component F;
  if (resident_rmath_fabs(z.im) <= resident_rmath_fabs(z.re)) {
    const F r = z.im / z.re;
    const F d = z.re + z.im * r;
    return resident_cx_make<C>(F(1) / d, -r / d);
  }
  const F r = z.re / z.im;
  const F d = z.re * r + z.im;
  return resident_cx_make<C>(r / d, F(-1) / d);
}
// rint of each part.
template <typename C>
RESIDENT_CX_HD C resident_cmath_rint(C z) {
  return resident_cx_make<C>(resident_rmath_rint(z.re), resident_rmath_rint(z.im));
}

// NumPy's npy_cpow before its general case: a^0 = 1, 0^b (0 for Re b > 0,
// NaN otherwise), and integer exponents below 100 in magnitude by repeated
// squaring with plain products (a reciprocal by Smith's division for a
// negative one). Returns false for the general case, which NumPy gives to
// the C library's cpow, exp(b log a).
template <typename C>
RESIDENT_CX_HD C resident_cmath_mul_plain(C a, C b) {
  return resident_cx_make<C>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
// a * b as C99 Annex G's (GCC's __muldc3, which glibc's cpow's y * clog(x)
// compiles to): the plain products, then, when both parts are NaN, an
// infinite operand or product recovered as an infinity.
template <typename C>
RESIDENT_CX_HD C resident_cmath_mul_c99(C x, C y) {
  typedef typename ResidentIsComplex<C>::component F;
  F a = x.re, b = x.im, c = y.re, d = y.im;
  const F ac = a * c, bd = b * d, ad = a * d, bc = b * c;
  const C plain = resident_cx_make<C>(ac - bd, ad + bc);
  if (!resident_cx_isnan(plain.re) || !resident_cx_isnan(plain.im)) return plain;
  auto unit = [](F v) { return resident_rmath_copysign(resident_cmath_isinf(v) ? F(1) : F(0), v); };
  auto zero_nan = [](F v) { return resident_cx_isnan(v) ? resident_rmath_copysign(F(0), v) : v; };
  bool recalc = false;
  if (resident_cmath_isinf(a) || resident_cmath_isinf(b)) {
    a = unit(a);
    b = unit(b);
    c = zero_nan(c);
    d = zero_nan(d);
    recalc = true;
  }
  if (resident_cmath_isinf(c) || resident_cmath_isinf(d)) {
    c = unit(c);
    d = unit(d);
    a = zero_nan(a);
    b = zero_nan(b);
    recalc = true;
  }
  if (!recalc && (resident_cmath_isinf(ac) || resident_cmath_isinf(bd) ||
                  resident_cmath_isinf(ad) || resident_cmath_isinf(bc))) {
    a = zero_nan(a);
    b = zero_nan(b);
    c = zero_nan(c);
    d = zero_nan(d);
    recalc = true;
  }
  if (!recalc) return plain;
  const F inf = resident_cmath_inf<F>();
  return resident_cx_make<C>(inf * (a * c - b * d), inf * (a * d + b * c));
}

template <typename C>
RESIDENT_CX_HD bool resident_cmath_pow_special(C a, C b, C* out) {
  typedef typename ResidentIsComplex<C>::component F;
  if (b.re == F(0) && b.im == F(0)) {
    *out = resident_cx_make<C>(F(1), F(0));
    return true;
  }
  if (a.re == F(0) && a.im == F(0)) {
    const F nan = resident_cmath_nan<F>();
    *out = b.re > F(0) ? resident_cx_make<C>(F(0), F(0)) : resident_cx_make<C>(nan, nan);
    return true;
  }
  if (b.im != F(0) || !(b.re > F(-100) && b.re < F(100))) return false;
  const long long n0 = static_cast<long long>(b.re);
  if (static_cast<F>(n0) != b.re) return false;
  if (n0 == 1) {
    *out = a;
    return true;
  }
  if (n0 == 2) {
    *out = resident_cmath_mul_plain(a, a);
    return true;
  }
  if (n0 == 3) {
    *out = resident_cmath_mul_plain(a, resident_cmath_mul_plain(a, a));
    return true;
  }
  long long n = n0 < 0 ? -n0 : n0;
  C acc = resident_cx_make<C>(F(1), F(0)), p = a;
  for (long long mask = 1;; mask <<= 1) {
    if (n & mask) acc = resident_cmath_mul_plain(acc, p);
    if (n < (mask << 1)) break;
    p = resident_cmath_mul_plain(p, p);
  }
  *out = n0 < 0 ? resident_cx_div(resident_cx_make<C>(F(1), F(0)), acc) : acc;
  return true;
}

#endif  // RESIDENT_CORE_COMPLEX_MATH_H_

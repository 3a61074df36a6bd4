// sqrt, exp, log, sin, cos and tanh of complex64 / complex128, for g++
// (tests, the CPU if it wants them) and nvcc (kernels/cuda/complex.cu), as
// glibc computes csqrt, cexp, clog, csin, ccos and ctanh (what NumPy calls):
// C99 Annex G's special values, with glibc's choices where Annex G leaves
// one open (the sign of a zero or infinity beside a NaN), and finite
// results within 4 ULP of glibc's at the larger part
// (tests/unit/complex_math_test.cc checks both against glibc).
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
RESIDENT_RMATH_BINARY(atan2)
RESIDENT_RMATH_BINARY(copysign)
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

#endif  // RESIDENT_CORE_COMPLEX_MATH_H_

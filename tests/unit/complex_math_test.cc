// core/complex_math.h, compiled as plain C++, against glibc's csqrt, cexp,
// clog, csin, ccos, ctan, csinh, ccosh, ctanh and the inverse functions
// casin, cacos, catan, casinh, cacosh, catanh (what NumPy calls) for complex64 and
// complex128: every pair of a grid of special and edge parts, where a
// special part (NaN, infinity, zero with its sign) must match exactly and
// a finite one be within 4 ULP; and random inputs (log-uniform magnitudes
// over the whole range, then moderate ones, then |z| near 1), within 4 ULP.
// ULPs are counted at the larger-magnitude part of glibc's result, the
// README's bound for the GPU.
#include "core/complex_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

// glibc's, declared directly (C's <complex.h> does not mix with C++).
extern "C" {
__complex__ float csqrtf(__complex__ float);
__complex__ float cexpf(__complex__ float);
__complex__ float clogf(__complex__ float);
__complex__ float csinf(__complex__ float);
__complex__ float ccosf(__complex__ float);
__complex__ float ctanhf(__complex__ float);
__complex__ float ctanf(__complex__ float);
__complex__ float csinhf(__complex__ float);
__complex__ float ccoshf(__complex__ float);
__complex__ float casinf(__complex__ float);
__complex__ float cacosf(__complex__ float);
__complex__ float catanf(__complex__ float);
__complex__ float casinhf(__complex__ float);
__complex__ float cacoshf(__complex__ float);
__complex__ float catanhf(__complex__ float);
__complex__ double csqrt(__complex__ double);
__complex__ double cexp(__complex__ double);
__complex__ double clog(__complex__ double);
__complex__ double csin(__complex__ double);
__complex__ double ccos(__complex__ double);
__complex__ double ctanh(__complex__ double);
__complex__ double ctan(__complex__ double);
__complex__ double csinh(__complex__ double);
__complex__ double ccosh(__complex__ double);
__complex__ double casin(__complex__ double);
__complex__ double cacos(__complex__ double);
__complex__ double catan(__complex__ double);
__complex__ double casinh(__complex__ double);
__complex__ double cacosh(__complex__ double);
__complex__ double catanh(__complex__ double);
}

namespace {

constexpr double kMaxUlp = 4.0;
// The inverse functions: glibc's own casinh, cacos, catanh, ... are up to
// 3 ULP from the true value where ours are within 2 (against mpmath at 200
// bits on the worst cases found), so they may differ by 5.
constexpr double kMaxUlpInverse = 8.0;

double MaxUlp(const char* name) {
  return name[0] == 'a' ? kMaxUlpInverse : kMaxUlp;  // asin, acos, atan, asinh, ...
}

template <typename F>
struct Glibc;
template <>
struct Glibc<float> {
  typedef __complex__ float (*Fn)(__complex__ float);
  static ResidentComplex64 Call(Fn fn, ResidentComplex64 z) {
    __complex__ float in;
    __real__ in = z.re;
    __imag__ in = z.im;
    const __complex__ float out = fn(in);
    return resident_cx_make<ResidentComplex64>(__real__ out, __imag__ out);
  }
};
template <>
struct Glibc<double> {
  typedef __complex__ double (*Fn)(__complex__ double);
  static ResidentComplex128 Call(Fn fn, ResidentComplex128 z) {
    __complex__ double in;
    __real__ in = z.re;
    __imag__ in = z.im;
    const __complex__ double out = fn(in);
    return resident_cx_make<ResidentComplex128>(__real__ out, __imag__ out);
  }
};

template <typename F>
struct Function {
  typedef typename ResidentComplexOf<F>::type C;
  const char* name;
  C (*ours)(C);
  typename Glibc<F>::Fn glibc;
};

template <typename F>
std::vector<Function<F>> Functions();
template <>
std::vector<Function<float>> Functions() {
  typedef ResidentComplex64 C;
  return {{"sqrt", resident_cmath_sqrt<C>, csqrtf},    {"exp", resident_cmath_exp<C>, cexpf},
          {"log", resident_cmath_log<C>, clogf},       {"sin", resident_cmath_sin<C>, csinf},
          {"cos", resident_cmath_cos<C>, ccosf},       {"tanh", resident_cmath_tanh<C>, ctanhf},
          {"tan", resident_cmath_tan<C>, ctanf},       {"sinh", resident_cmath_sinh<C>, csinhf},
          {"cosh", resident_cmath_cosh<C>, ccoshf},    {"asin", resident_cmath_asin<C>, casinf},
          {"acos", resident_cmath_acos<C>, cacosf},    {"atan", resident_cmath_atan<C>, catanf},
          {"asinh", resident_cmath_asinh<C>, casinhf}, {"acosh", resident_cmath_acosh<C>, cacoshf},
          {"atanh", resident_cmath_atanh<C>, catanhf}};
}
template <>
std::vector<Function<double>> Functions() {
  typedef ResidentComplex128 C;
  return {{"sqrt", resident_cmath_sqrt<C>, csqrt},    {"exp", resident_cmath_exp<C>, cexp},
          {"log", resident_cmath_log<C>, clog},       {"sin", resident_cmath_sin<C>, csin},
          {"cos", resident_cmath_cos<C>, ccos},       {"tanh", resident_cmath_tanh<C>, ctanh},
          {"tan", resident_cmath_tan<C>, ctan},       {"sinh", resident_cmath_sinh<C>, csinh},
          {"cosh", resident_cmath_cosh<C>, ccosh},    {"asin", resident_cmath_asin<C>, casin},
          {"acos", resident_cmath_acos<C>, cacos},    {"atan", resident_cmath_atan<C>, catan},
          {"asinh", resident_cmath_asinh<C>, casinh}, {"acosh", resident_cmath_acosh<C>, cacosh},
          {"atanh", resident_cmath_atanh<C>, catanh}};
}

// The unit in the last place at magnitude m (the subnormal spacing below
// the normal range).
template <typename F>
long double UlpAt(long double m) {
  typedef std::numeric_limits<F> L;
  if (m < static_cast<long double>(L::min())) return L::denorm_min();
  return std::ldexp(1.0L, std::ilogb(m) - (L::digits - 1));
}

// How far got is from want, in ULPs of want's larger finite part; infinite
// when a special part differs (a NaN for a NaN, an infinity of the same
// sign for an infinity, and, when exact_zeros or both are zero, a zero of
// the same sign for a zero).
template <typename C>
double UlpError(C got, C want, bool exact_zeros) {
  typedef typename ResidentIsComplex<C>::component F;
  const double kFail = std::numeric_limits<double>::infinity();
  const F got_parts[2] = {got.re, got.im}, want_parts[2] = {want.re, want.im};
  long double larger = 0;
  for (int i = 0; i < 2; ++i) {
    const F g = got_parts[i], w = want_parts[i];
    if (std::isnan(w) || std::isnan(g)) {
      if (std::isnan(w) != std::isnan(g)) return kFail;
      continue;
    }
    if (std::isinf(w) || std::isinf(g)) {
      if (g != w) return kFail;
      continue;
    }
    if (g == 0 && w == 0 && std::signbit(g) != std::signbit(w)) return kFail;
    if (exact_zeros && (g == 0) != (w == 0)) return kFail;
    larger = std::fmax(larger, std::fabs(static_cast<long double>(w)));
  }
  const long double ulp = UlpAt<F>(larger);
  double worst = 0;
  for (int i = 0; i < 2; ++i) {
    const F g = got_parts[i], w = want_parts[i];
    if (!std::isfinite(g) || !std::isfinite(w)) continue;
    const long double diff = std::fabs(static_cast<long double>(g) - static_cast<long double>(w));
    worst = std::fmax(worst, static_cast<double>(diff / ulp));
  }
  return worst;
}

template <typename F>
std::string Show(typename ResidentComplexOf<F>::type z) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "(%.*g, %.*g)", std::numeric_limits<F>::max_digits10,
                static_cast<double>(z.re), std::numeric_limits<F>::max_digits10,
                static_cast<double>(z.im));
  return buf;
}

// The worst error of fn over inputs, with up to 10 failures added to
// failures.
template <typename F>
double Worst(const Function<F>& fn, const std::vector<typename ResidentComplexOf<F>::type>& inputs,
             bool exact_zeros, std::vector<std::string>* failures) {
  double worst = 0;
  for (const auto& z : inputs) {
    const auto got = fn.ours(z);
    const auto want = Glibc<F>::Call(fn.glibc, z);
    const double err = UlpError(got, want, exact_zeros);
    if (!(err <= MaxUlp(fn.name)) && failures->size() < 10) {
      failures->push_back(std::string(fn.name) + Show<F>(z) + " = " + Show<F>(got) + ", glibc " +
                          Show<F>(want) + " (" + std::to_string(err) + " ULP)");
    }
    worst = std::fmax(worst, err);
  }
  return worst;
}

// Special and edge parts: zeros, infinities, NaN, small integers and
// halves, huge and tiny, the subnormal and finite extremes, the
// neighbourhood of exp's overflow threshold and of 1.
template <typename F>
std::vector<F> EdgeParts() {
  typedef std::numeric_limits<F> L;
  const bool is_float = sizeof(F) == 4;
  const F huge = is_float ? F(1e30) : F(1e300), tiny = is_float ? F(1e-30) : F(1e-300);
  const F near_overflow = is_float ? F(88.7) : F(709.7);
  const F past_overflow = is_float ? F(89.96) : F(710.5);
  const F magnitudes[] = {F(0),
                          F(0.5),
                          F(1),
                          F(2.5),
                          F(3),
                          tiny,
                          huge,
                          L::denorm_min(),
                          L::min(),
                          L::max(),
                          near_overflow,
                          past_overflow,
                          F(1) + L::epsilon(),
                          F(1) - L::epsilon() / 2,
                          L::infinity()};
  std::vector<F> parts;
  for (F m : magnitudes) {
    parts.push_back(m);
    parts.push_back(-m);
  }
  parts.push_back(L::quiet_NaN());
  return parts;
}

template <typename F>
std::vector<typename ResidentComplexOf<F>::type> EdgeGrid() {
  typedef typename ResidentComplexOf<F>::type C;
  std::vector<C> grid;
  for (F re : EdgeParts<F>()) {
    for (F im : EdgeParts<F>()) grid.push_back(resident_cx_make<C>(re, im));
  }
  return grid;
}

// n values with random signs and magnitudes 2^e, e uniform in
// [lo_exp, hi_exp).
template <typename F>
std::vector<typename ResidentComplexOf<F>::type> Random(int n, long double lo_exp,
                                                        long double hi_exp, uint64_t seed) {
  typedef typename ResidentComplexOf<F>::type C;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<long double> exponent(lo_exp, hi_exp);
  auto part = [&] {
    const F m = static_cast<F>(std::exp2(exponent(rng)));
    return rng() & 1 ? -m : m;
  };
  std::vector<C> out;
  for (int i = 0; i < n; ++i) {
    const F re = part();
    out.push_back(resident_cx_make<C>(re, part()));
  }
  return out;
}

// n values with |z| within 2^-10 of 1 (clog's and csqrt's cancellation).
template <typename F>
std::vector<typename ResidentComplexOf<F>::type> NearUnitCircle(int n, uint64_t seed) {
  typedef typename ResidentComplexOf<F>::type C;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<long double> angle(-3.2L, 3.2L), offset(-20, -10);
  std::vector<C> out;
  for (int i = 0; i < n; ++i) {
    const long double r = 1 + (rng() & 1 ? -1 : 1) * std::exp2(offset(rng));
    const long double a = angle(rng);
    out.push_back(
        resident_cx_make<C>(static_cast<F>(r * std::cos(a)), static_cast<F>(r * std::sin(a))));
  }
  return out;
}

template <typename F>
void CheckAll(const char* dtype) {
  typedef std::numeric_limits<F> L;
  const auto grid = EdgeGrid<F>();
  const long double lo = std::log2(static_cast<long double>(L::denorm_min()));
  const long double hi = std::log2(static_cast<long double>(L::max()));
  const auto whole = Random<F>(200000, lo, hi, 1);
  // Moderate magnitudes reach exp's overflow thresholds (88.7, 709.8).
  const auto moderate = Random<F>(100000, -8, sizeof(F) == 4 ? 7 : 10, 2);
  const auto ring = NearUnitCircle<F>(50000, 3);
  for (const auto& fn : Functions<F>()) {
    std::vector<std::string> failures;
    const double grid_worst = Worst(fn, grid, /*exact_zeros=*/true, &failures);
    const double whole_worst = Worst(fn, whole, false, &failures);
    const double moderate_worst = Worst(fn, moderate, false, &failures);
    const double ring_worst = Worst(fn, ring, false, &failures);
    std::printf(
        "%-10s %-5s worst ULP: edge grid %.3f, whole range %.3f, moderate %.3f, |z|~1 %.3f\n",
        dtype, fn.name, grid_worst, whole_worst, moderate_worst, ring_worst);
    for (const auto& f : failures) ADD_FAILURE() << dtype << " " << f;
  }
}

TEST(ComplexMathTest, Complex64MatchesGlibc) { CheckAll<float>("complex64"); }
TEST(ComplexMathTest, Complex128MatchesGlibc) { CheckAll<double>("complex128"); }

}  // namespace

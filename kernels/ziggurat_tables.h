// The ziggurat tables of numpy.random.Generator's standard_normal (random_standard_normal and
// random_standard_normal_f in numpy/random/src/distributions/distributions.c) and
// standard_exponential (random_standard_exponential[_f]), recomputed here so that our draws match
// NumPy's bit for bit. Host-only; copy the result to the device.
//
// Normal: 256 layers with tail cut r and layer area v. With f(x) = exp(-x^2 / 2),
//   x_255 = r,  x_i = sqrt(-2 log(f(x_{i+1}) + v / x_{i+1}))  (i = 254 .. 1),  x_0 = 0,
// every operation rounded to double, as NumPy's float64 generator script did. exp and log are
// taken in long double and rounded once, which makes them correctly rounded here (no other
// result lies within 0.0014 ulp of a tie). Then, with 2^52 for the double tables and 2^23 for
// the float ones (the float tables are the double values scaled by 2^23, rounded to float):
//   wi_i = x_i / 2^52,  ki_i = rint(x_{i-1} / x_i * 2^52),  fi_i = f(x_i)   (i >= 1),
//   wi_0 = (v / f(r)) / 2^52,  ki_0 = rint(r f(r) / v * 2^52),  fi_0 = 1,
// rint rounding half to even (np.round). One quirk is reproduced: the libm that built NumPy's
// tables rounded f(x_38) up (its exact value is 0.498 ulp above the double below), and x_37 ..
// x_1 inherit that through the recurrence.
//
// Exponential: f(x) = exp(-x), the same 256 layers with x_i = -log(f(x_{i+1}) + v / x_{i+1}),
// but NumPy's values are the exact ones, rounded once: r = 7.6971174701310497140446280481 to
// all its digits (r rounded to double moves most entries) and v = (r + 1) exp(-r), the area
// that makes the base layer, r f(r) plus the tail, equal the others. The recurrence in double
// is not enough, nor in long double (some entries lie 2.3e-19, relatively, from a rounding
// boundary), so it runs in double-double (error below 1e-24). With 2^53 for the double
// draw's 53-bit ri and 2^23 for the float draw's 23-bit one:
//   we_i = x_i / 2^53,  ke_i = 2 floor(x_{i-1} / x_i * 2^52),  fe_i = f(x_i)   (i >= 1),
//   we_0 = (r + 1) / 2^53 (= v / f(r)),  ke_0 = 2 floor(r / (r + 1) * 2^52),  fe_0 = 1,
// (ke_double is floored at 52 bits and doubled: all its entries are even), and
//   ke_float_i = rint(x_{i-1} / x_i * 2^23),
// while we_float and fe_float are the values printed to 9 significant digits (as NumPy's header
// holds them) and read back as float, which puts we_float[226] and fe_float[128], [154] and
// [171] one float off the nearest.
#ifndef RESIDENT_KERNELS_ZIGGURAT_TABLES_H_
#define RESIDENT_KERNELS_ZIGGURAT_TABLES_H_

#include <charconv>
#include <cmath>
#include <cstdint>

namespace resident {

struct ZigguratTables {
  uint64_t ki_double[256];
  double wi_double[256];
  double fi_double[256];
  uint32_t ki_float[256];
  float wi_float[256];
  float fi_float[256];
  double nor_r, nor_inv_r;
  float nor_r_f, nor_inv_r_f;
  uint64_t ke_double[256];
  double we_double[256];
  double fe_double[256];
  uint32_t ke_float[256];
  float we_float[256];
  float fe_float[256];
  double exp_r;
  float exp_r_f;
};

namespace ziggurat_internal {
// Apart from kernels/ziggurat.h's ziggurat_internal::Exp and friends, which draw.
namespace table_math {

inline double Exp(double a) { return static_cast<double>(std::exp(static_cast<long double>(a))); }
inline double Log(double a) { return static_cast<double>(std::log(static_cast<long double>(a))); }
inline double Pdf(double x) { return Exp(-0.5 * x * x); }

// Double-double: hi + lo with |lo| <= ulp(hi) / 2, so hi is the value rounded to double. Needs
// IEEE double arithmetic rounded to nearest (no x87, no -ffast-math).
struct DD {
  double hi, lo;
};
inline DD QuickTwoSum(double a, double b) {  // |a| >= |b|
  const double s = a + b;
  return {s, b - (s - a)};
}
inline DD TwoSum(double a, double b) {
  const double s = a + b, bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
inline DD Add(DD a, DD b) {
  const DD s = TwoSum(a.hi, b.hi), t = TwoSum(a.lo, b.lo);
  const DD u = QuickTwoSum(s.hi, s.lo + t.hi);
  return QuickTwoSum(u.hi, u.lo + t.lo);
}
inline DD Neg(DD a) { return {-a.hi, -a.lo}; }
inline DD Mul(DD a, DD b) {
  const double p = a.hi * b.hi;
  return QuickTwoSum(p, std::fma(a.hi, b.hi, -p) + (a.hi * b.lo + a.lo * b.hi));
}
inline DD Div(DD a, DD b) {  // long division, three double digits
  const double q1 = a.hi / b.hi;
  const DD r1 = Add(a, Neg(Mul(b, {q1, 0.0})));
  const double q2 = r1.hi / b.hi;
  const DD r2 = Add(r1, Neg(Mul(b, {q2, 0.0})));
  return Add(QuickTwoSum(q1, q2), {r2.hi / b.hi, 0.0});
}
// exp for |a| <= 16: Taylor series at a / 2^12 (12 terms reach 1e-40), squared back 12 times.
inline DD ExpDD(DD a) {
  const DD s = {a.hi / 4096.0, a.lo / 4096.0};
  DD p = {1.0, 0.0};
  for (int n = 12; n >= 1; --n) p = Add({1.0, 0.0}, Div(Mul(s, p), {static_cast<double>(n), 0.0}));
  for (int k = 0; k < 12; ++k) p = Mul(p, p);
  return p;
}
// log for y > 0: Newton's z += y exp(-z) - 1 from the double log, each step doubling the digits.
inline DD LogDD(DD y) {
  DD z = {std::log(y.hi), 0.0};
  for (int k = 0; k < 2; ++k) z = Add(z, Add(Mul(y, ExpDD(Neg(z))), {-1.0, 0.0}));
  return z;
}
inline double Floor(DD a) {
  const double f = std::floor(a.hi);
  return f == a.hi && a.lo < 0.0 ? f - 1.0 : f;
}
// a printed to 9 significant digits, then read as float (locale-free).
inline float Float9(double a) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, a, std::chars_format::scientific, 8).ptr;
  float out = 0.0f;
  std::from_chars(buf, end, out);
  return out;
}

}  // namespace table_math

inline void BuildNormal(ZigguratTables& t) {
  using namespace table_math;
  constexpr double kR = 3.6541528853610087963519472518;  // NumPy's ziggurat_nor_r
  constexpr double kV = 0.0049286732339746519;           // the area of each layer
  constexpr double kScale = 4503599627370496.0;          // 2^52
  constexpr double kScaleF = 8388608.0;                  // 2^23
  double x[256], f[256];
  x[255] = kR;
  f[255] = Pdf(kR);
  for (int i = 254; i >= 1; --i) {
    x[i] = std::sqrt(-2.0 * Log(f[i + 1] + kV / x[i + 1]));
    f[i] = Pdf(x[i]);
    if (i == 38) f[i] = std::nextafter(f[i], 1.0);  // NumPy's table rounded up here
  }
  x[0] = 0.0;
  f[0] = 1.0;
  for (int i = 0; i < 256; ++i) {
    const double ratio = i == 0 ? kR * f[255] / kV : x[i - 1] / x[i];
    const double w = i == 0 ? kV / f[255] : x[i];
    t.ki_double[i] = static_cast<uint64_t>(std::nearbyint(ratio * kScale));
    t.wi_double[i] = w / kScale;
    t.fi_double[i] = f[i];
    t.ki_float[i] = static_cast<uint32_t>(std::nearbyint(ratio * kScaleF));
    t.wi_float[i] = static_cast<float>(w / kScaleF);
    t.fi_float[i] = static_cast<float>(f[i]);
  }
  t.nor_r = kR;
  t.nor_inv_r = 1.0 / kR;
  t.nor_r_f = static_cast<float>(kR);
  t.nor_inv_r_f = static_cast<float>(1.0 / kR);
}

inline void BuildExponential(ZigguratTables& t) {
  using namespace table_math;
  // NumPy's ziggurat_exp_r, whose literal has more digits than the double keeps; lo holds them.
  const DD r = {7.6971174701310497140446280481, -3.6248703662397484e-16};
  const DD one = {1.0, 0.0};
  const DD v = Mul(Add(r, one), ExpDD(Neg(r)));
  DD x[256], f[256];
  x[255] = r;
  f[255] = ExpDD(Neg(r));
  for (int i = 254; i >= 1; --i) {
    x[i] = Neg(LogDD(Add(f[i + 1], Div(v, x[i + 1]))));
    f[i] = ExpDD(Neg(x[i]));
  }
  x[0] = {0.0, 0.0};
  f[0] = one;
  constexpr double kScale = 9007199254740992.0;  // 2^53
  constexpr double kScaleF = 8388608.0;          // 2^23
  for (int i = 0; i < 256; ++i) {
    const DD ratio = i == 0 ? Div(r, Add(r, one)) : Div(x[i - 1], x[i]);
    const double w = i == 0 ? Add(r, one).hi : x[i].hi;
    const DD k = {ratio.hi * (kScale / 2), ratio.lo * (kScale / 2)};  // exact: a power of 2
    t.ke_double[i] = 2 * static_cast<uint64_t>(Floor(k));
    t.we_double[i] = w / kScale;
    t.fe_double[i] = f[i].hi;
    t.ke_float[i] = static_cast<uint32_t>(std::nearbyint(ratio.hi * kScaleF));
    t.we_float[i] = Float9(w / kScaleF);
    t.fe_float[i] = Float9(f[i].hi);
  }
  t.exp_r = 7.6971174701310497140446280481;
  t.exp_r_f = 7.6971174701310497140446280481f;
}

inline ZigguratTables Build() {
  ZigguratTables t;
  BuildNormal(t);
  BuildExponential(t);
  return t;
}

}  // namespace ziggurat_internal

// Computed once, on first use (thread-safe).
inline const ZigguratTables& NumpyZigguratTables() {
  static const ZigguratTables tables = ziggurat_internal::Build();
  return tables;
}

}  // namespace resident

#endif  // RESIDENT_KERNELS_ZIGGURAT_TABLES_H_

// The ziggurat tables of numpy.random.Generator's standard_normal (random_standard_normal and
// random_standard_normal_f in numpy/random/src/distributions/distributions.c), recomputed here
// so that our normal draws match NumPy's bit for bit. Host-only; copy the result to the device.
//
// How: 256 layers with tail cut r and layer area v. With f(x) = exp(-x^2 / 2),
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
#ifndef RESIDENT_KERNELS_ZIGGURAT_TABLES_H_
#define RESIDENT_KERNELS_ZIGGURAT_TABLES_H_

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
};

namespace ziggurat_internal {

inline double Exp(double a) { return static_cast<double>(std::exp(static_cast<long double>(a))); }
inline double Log(double a) { return static_cast<double>(std::log(static_cast<long double>(a))); }
inline double Pdf(double x) { return Exp(-0.5 * x * x); }

inline ZigguratTables Build() {
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
  ZigguratTables t;
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

// numpy.random.Generator's standard_normal draw (distributions.c's
// random_standard_normal and random_standard_normal_f), one draw at a time,
// for the host and for nvcc: Marsaglia and Tsang's ziggurat over
// kernels/ziggurat_tables.h's tables.
//
// A draw reads the fill's unit stream (kernels/pcg64.h: 64-bit units for
// float64, 32-bit units for float32) from some unit on: the first unit
// alone decides 99.3 % of draws (Pcg64NormalFast); the rest read one or
// more further units (a wedge test, or the tail's pairs of uniforms, and a
// fresh first unit after a rejection). So the draws of a fill start at
// units s_0 = 0, s_{k+1} = s_k + units(s_k): the parallel fills find the
// rare draws of more than one unit first and place the others around them.
#ifndef RESIDENT_KERNELS_NORMAL_H_
#define RESIDENT_KERNELS_NORMAL_H_

#include <cmath>
#include <cstdint>

#include "kernels/pcg64.h"

namespace resident {

// One width's tables (pointers into a ZigguratTables or a device copy of
// its arrays): T is double or float, K uint64_t or uint32_t.
template <typename T, typename K>
struct NormalTables {
  const K* ki;
  const T* wi;
  const T* fi;
  T r, inv_r;
};
using NormalTablesDouble = NormalTables<double, uint64_t>;
using NormalTablesFloat = NormalTables<float, uint32_t>;

namespace normal_internal {

RESIDENT_HD double Exp(double x) {
#if defined(__CUDA_ARCH__)
  return ::exp(x);
#else
  return std::exp(x);
#endif
}
RESIDENT_HD double Log1p(double x) {
#if defined(__CUDA_ARCH__)
  return ::log1p(x);
#else
  return std::log1p(x);
#endif
}
RESIDENT_HD float Log1p(float x) {
#if defined(__CUDA_ARCH__)
  return ::log1pf(x);
#else
  return std::log1p(x);
#endif
}

// The first unit's fields: the layer, the sign and the magnitude.
template <typename T>
struct Fields;
template <>
struct Fields<double> {
  using U = uint64_t;
  RESIDENT_HD Fields(uint64_t u)
      : idx(static_cast<int>(u & 0xff)),
        sign((u >> 8) & 1),
        rabs((u >> 9) & 0x000fffffffffffffull) {}
  int idx;
  uint64_t sign, rabs;
};
template <>
struct Fields<float> {
  using U = uint32_t;
  RESIDENT_HD Fields(uint64_t u)
      : idx(static_cast<int>(u & 0xff)),
        sign(static_cast<uint32_t>((u >> 8) & 1)),
        rabs(static_cast<uint32_t>((u >> 9) & 0x0007fffff)) {}
  int idx;
  uint32_t sign, rabs;
};

RESIDENT_HD double Uniform(double, uint64_t u) { return Pcg64ToDouble(u); }
RESIDENT_HD float Uniform(float, uint64_t u) { return Pcg64ToFloat(static_cast<uint32_t>(u)); }

}  // namespace normal_internal

// The draw's value if its first unit `u` decides it alone (rabs < ki, the
// base of a layer), as *value; false when it needs more units.
template <typename T, typename K>
RESIDENT_HD bool Pcg64NormalFast(uint64_t u, const NormalTables<T, K>& t, T* value) {
  const normal_internal::Fields<T> f(u);
  T x = static_cast<T>(f.rabs) * t.wi[f.idx];
  if (f.sign) x = -x;
  *value = x;
  return f.rabs < t.ki[f.idx];
}

// The whole draw from its first unit `u`, `next()` giving the units after
// it; *units = the units it read (first included). As NumPy's loop: a
// rejected wedge test starts over with a fresh first unit; the float
// draw's wedge test compares against exp in double, as NumPy's does.
template <typename T, typename K, typename Next>
RESIDENT_HD T Pcg64Normal(uint64_t u, Next&& next, const NormalTables<T, K>& t, uint32_t* units) {
  using normal_internal::Exp;
  using normal_internal::Log1p;
  using normal_internal::Uniform;
  uint32_t used = 1;
  for (;;) {
    const normal_internal::Fields<T> f(u);
    T x = static_cast<T>(f.rabs) * t.wi[f.idx];
    if (f.sign) x = -x;
    if (f.rabs < t.ki[f.idx]) {
      *units = used;
      return x;
    }
    if (f.idx == 0) {
      for (;;) {
        // 1 - U keeps log's argument positive (NumPy's GH 13361).
        const T xx = -t.inv_r * Log1p(-Uniform(T{}, next()));
        const T yy = -Log1p(-Uniform(T{}, next()));
        used += 2;
        if (yy + yy > xx * xx) {
          *units = used;
          return ((f.rabs >> 8) & 1) ? -(t.r + xx) : t.r + xx;
        }
      }
    }
    const T w = Uniform(T{}, next());
    ++used;
    if ((t.fi[f.idx - 1] - t.fi[f.idx]) * w + t.fi[f.idx] <
        Exp(-0.5 * static_cast<double>(x) * static_cast<double>(x))) {
      *units = used;
      return x;
    }
    u = next();
    ++used;
  }
}

}  // namespace resident

#endif  // RESIDENT_KERNELS_NORMAL_H_

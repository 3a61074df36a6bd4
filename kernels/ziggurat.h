// numpy.random.Generator's ziggurat draws, one at a time, for the host and
// for nvcc: standard_normal (distributions.c's random_standard_normal[_f])
// and standard_exponential (random_standard_exponential[_f]), Marsaglia and
// Tsang's ziggurat over kernels/ziggurat_tables.h's tables.
//
// A draw reads the fill's unit stream (kernels/pcg64.h: 64-bit units for
// float64, 32-bit units for float32) from some unit on: the first unit
// alone decides 99.3 % of normal and 98.9 % of exponential draws
// (ZigguratFast); the rest read one or more further units (a wedge test,
// the tail's uniforms, and a fresh first unit after a rejection). So the
// draws of a fill start at units s_0 = 0, s_{k+1} = s_k + units(s_k): the
// parallel fills find the rare draws of more than one unit first and place
// the others around them.
#ifndef RESIDENT_KERNELS_ZIGGURAT_H_
#define RESIDENT_KERNELS_ZIGGURAT_H_

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/elementwise_expr.h"
#include "kernels/pcg64.h"
#include "kernels/ziggurat_tables.h"

namespace resident {

enum class Ziggurat : uint8_t { kNormal, kExponential };

// One distribution's tables at one width (pointers into a ZigguratTables or
// a device copy of its arrays): T is double or float, K uint64_t or
// uint32_t; inv_r is the normal tail's 1 / r.
template <typename T, typename K>
struct ZigguratView {
  const K* k;
  const T* w;
  const T* f;
  T r, inv_r;
};

// The host tables' view of Z at T's width (K its integer type).
template <Ziggurat Z, typename T>
auto ZigguratViewOf(const ZigguratTables& z) {
  if constexpr (Z == Ziggurat::kNormal && sizeof(T) == 8) {
    return ZigguratView<double, uint64_t>{z.ki_double, z.wi_double, z.fi_double, z.nor_r,
                                          z.nor_inv_r};
  } else if constexpr (Z == Ziggurat::kNormal) {
    return ZigguratView<float, uint32_t>{z.ki_float, z.wi_float, z.fi_float, z.nor_r_f,
                                         z.nor_inv_r_f};
  } else if constexpr (sizeof(T) == 8) {
    return ZigguratView<double, uint64_t>{z.ke_double, z.we_double, z.fe_double, z.exp_r, 0.0};
  } else {
    return ZigguratView<float, uint32_t>{z.ke_float, z.we_float, z.fe_float, z.exp_r_f, 0.0f};
  }
}

// What a draw on the GPU leaves to the host, whose libm is NumPy's: kTail,
// the value is the tail's r plus or minus a log1p of `unit`'s uniform
// (CUDA's log1p may round it otherwise); kWhole, a comparison came within
// a hair of a tie, so the last bit of exp or log1p could decide it.
struct ZigguratHostWork {
  enum Kind : uint8_t { kNone, kTail, kWhole };
  Kind kind = kNone;
  bool negative = false;  // kTail: the normal value's sign
  uint64_t unit = 0;      // kTail: the unit of the uniform given to log1p
};

namespace ziggurat_internal {

// Whether a and b are too close for another libm's last bit not to matter.
template <typename T>
RESIDENT_HD bool Close(double a, double b) {
  const double margin = sizeof(T) == 8 ? 1e-9 : 1e-5;
  const double d = a > b ? a - b : b - a;
  const double m = (a < 0 ? -a : a) > (b < 0 ? -b : b) ? (a < 0 ? -a : a) : (b < 0 ? -b : b);
  return d <= margin * m;
}

// libm as the elementwise kernels call it (CUDA's on the device, the C
// library's on the host).
RESIDENT_HD double Exp(double x) { return resident_m_exp(x); }
RESIDENT_HD float Exp(float x) { return resident_m_exp(x); }
RESIDENT_HD double Log1p(double x) { return resident_m_log1p(x); }
RESIDENT_HD float Log1p(float x) { return resident_m_log1p(x); }

RESIDENT_HD double Uniform(double, uint64_t u) { return Pcg64ToDouble(u); }
RESIDENT_HD float Uniform(float, uint64_t u) { return Pcg64ToFloat(static_cast<uint32_t>(u)); }

// The first unit's fields: the layer, the sign (normal) and the magnitude.
template <Ziggurat Z, typename T>
struct Fields {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  RESIDENT_HD explicit Fields(uint64_t unit) {
    if constexpr (Z == Ziggurat::kNormal) {
      // r = e3n52sb8 (float: n23sb8): 8 layer bits, a sign bit, the rest.
      idx = static_cast<int>(unit & 0xff);
      sign = static_cast<int>((unit >> 8) & 1);
      rabs = static_cast<U>((unit >> 9) & (sizeof(T) == 8 ? 0x000fffffffffffffull : 0x7fffffull));
    } else {
      // 3 (float: 1) bits dropped, 8 layer bits, the rest.
      const U ri = static_cast<U>(unit) >> (sizeof(T) == 8 ? 3 : 1);
      idx = static_cast<int>(ri & 0xff);
      sign = 0;
      rabs = ri >> 8;
    }
  }
  int idx;
  int sign;
  U rabs;
};

}  // namespace ziggurat_internal

// The draw's value if its first unit `u` decides it alone (the base of a
// layer), as *value; false when it needs more units.
template <Ziggurat Z, typename T, typename K>
RESIDENT_HD bool ZigguratFast(uint64_t u, const ZigguratView<T, K>& t, T* value) {
  const ziggurat_internal::Fields<Z, T> f(u);
  T x = static_cast<T>(f.rabs) * t.w[f.idx];
  if (f.sign) x = -x;
  *value = x;
  return f.rabs < t.k[f.idx];
}

// The whole draw from its first unit `u`, `next()` giving the units after
// it; *units = the units it read (first included). As NumPy's loops: a
// rejected wedge test starts over with a fresh first unit; the float
// normal's wedge test compares against exp in double, the float
// exponential's against expf, as NumPy's do. With `work` (a GPU's draw),
// what only the host's libm decides exactly is noted there.
template <Ziggurat Z, typename T, typename K, typename Next>
RESIDENT_HD T ZigguratDraw(uint64_t u, Next&& next, const ZigguratView<T, K>& t, uint32_t* units,
                           ZigguratHostWork* work = nullptr) {
  using ziggurat_internal::Close;
  using ziggurat_internal::Exp;
  using ziggurat_internal::Log1p;
  using ziggurat_internal::Uniform;
  uint32_t used = 1;
  for (;;) {
    const ziggurat_internal::Fields<Z, T> f(u);
    T x = static_cast<T>(f.rabs) * t.w[f.idx];
    if (f.sign) x = -x;
    if (f.rabs < t.k[f.idx]) {
      *units = used;
      return x;
    }
    if constexpr (Z == Ziggurat::kNormal) {
      if (f.idx == 0) {
        for (;;) {
          // 1 - U keeps log's argument positive (NumPy's GH 13361).
          const uint64_t ux = next();
          const T xx = -t.inv_r * Log1p(-Uniform(T{}, ux));
          const T yy = -Log1p(-Uniform(T{}, next()));
          used += 2;
          if (work != nullptr && Close<T>(yy + yy, xx * xx)) work->kind = ZigguratHostWork::kWhole;
          if (yy + yy > xx * xx) {
            *units = used;
            const bool negative = (f.rabs >> 8) & 1;
            if (work != nullptr && work->kind == ZigguratHostWork::kNone) {
              *work = ZigguratHostWork{ZigguratHostWork::kTail, negative, ux};
            }
            return negative ? -(t.r + xx) : t.r + xx;
          }
        }
      }
      const T w = Uniform(T{}, next());
      ++used;
      const T lhs = (t.f[f.idx - 1] - t.f[f.idx]) * w + t.f[f.idx];
      const double e = Exp(-0.5 * static_cast<double>(x) * static_cast<double>(x));
      if (work != nullptr && Close<T>(lhs, e)) work->kind = ZigguratHostWork::kWhole;
      if (lhs < e) {
        *units = used;
        return x;
      }
    } else {
      if (f.idx == 0) {
        const uint64_t ux = next();
        *units = used + 1;
        if (work != nullptr && work->kind == ZigguratHostWork::kNone) {
          *work = ZigguratHostWork{ZigguratHostWork::kTail, false, ux};
        }
        return t.r - Log1p(-Uniform(T{}, ux));
      }
      // exp of the draw's own type here (expf for float32, as NumPy's).
      const T w = Uniform(T{}, next());
      ++used;
      const T lhs = (t.f[f.idx - 1] - t.f[f.idx]) * w + t.f[f.idx];
      const T e = Exp(-x);
      if (work != nullptr && Close<T>(lhs, e)) work->kind = ZigguratHostWork::kWhole;
      if (lhs < e) {
        *units = used;
        return x;
      }
    }
    u = next();
    ++used;
  }
}

// The tail value from its uniform's unit (ZigguratHostWork::kTail), on the
// host with the host's log1p (log1pf for float, as NumPy's).
template <Ziggurat Z, typename T, typename K>
T ZigguratTail(uint64_t unit, bool negative, const ZigguratView<T, K>& t) {
  const T u = ziggurat_internal::Uniform(T{}, unit);
  const T l = std::log1p(-u);
  if constexpr (Z == Ziggurat::kNormal) {
    const T xx = -t.inv_r * l;
    return negative ? -(t.r + xx) : t.r + xx;
  } else {
    return t.r - l;
  }
}

}  // namespace resident

#endif  // RESIDENT_KERNELS_ZIGGURAT_H_

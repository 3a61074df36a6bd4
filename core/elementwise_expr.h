// The scalar expression of every elementwise kind, one inline function each,
// written once for g++ (kernels/cpu), nvcc (kernels/cuda) and NVRTC (the
// fused loop generator embeds this file's text). So the header includes
// nothing and uses no std:: names: NVRTC has no standard library.
//
// Bool-valued kinds (comparisons, logical ops, isnan, isfinite) return
// bool; callers store it as 0/1 of the compute dtype. Transcendentals call
// the C math library (RESIDENT_LIBM below).
//
// Functions take the register type: bool for bool arrays (the caller loads
// the stored byte as `x != 0` and stores the result as 0/1), the integer
// types of every width, signed or unsigned, for integers (wrapping
// arithmetic through an unsigned type, never UB), float/double for floats (plain IEEE operations;
// callers build without FMA contraction so results are bit-identical to NumPy's).
//
//   uint8_t r = resident_ew_add(a != 0, b != 0);   // bool add: logical or
//   double d = resident_ew_divide(1.0, 3.0);
#ifndef RESIDENT_CORE_ELEMENTWISE_EXPR_H_
#define RESIDENT_CORE_ELEMENTWISE_EXPR_H_

// The 16-bit float storage types; NVRTC gets this header's text after
// core/half.h's (server/device/cuda/CMakeLists.txt), so no include there.
#ifndef __CUDACC_RTC__
#include "core/half.h"
#endif

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define RESIDENT_HD __host__ __device__ __forceinline__
#else
#define RESIDENT_HD inline
#endif

// The unsigned type integer arithmetic wraps through: the type's own
// unsigned twin, or unsigned int for types narrower than int (so that their
// promotion to int never overflows; the result is truncated back to T).
template <typename T>
struct ResidentUnsigned;
#define RESIDENT_UNSIGNED(T, U) \
  template <>                   \
  struct ResidentUnsigned<T> {  \
    typedef U type;             \
  };
RESIDENT_UNSIGNED(signed char, unsigned int)
RESIDENT_UNSIGNED(unsigned char, unsigned int)
RESIDENT_UNSIGNED(short, unsigned int)
RESIDENT_UNSIGNED(unsigned short, unsigned int)
RESIDENT_UNSIGNED(int, unsigned int)
RESIDENT_UNSIGNED(unsigned int, unsigned int)
RESIDENT_UNSIGNED(long, unsigned long)
RESIDENT_UNSIGNED(unsigned long, unsigned long)
RESIDENT_UNSIGNED(long long, unsigned long long)
RESIDENT_UNSIGNED(unsigned long long, unsigned long long)
#undef RESIDENT_UNSIGNED

// Whether integer type T is signed (no <type_traits> under NVRTC).
template <typename T>
struct ResidentIsSigned {
  static constexpr bool value = static_cast<T>(-1) < static_cast<T>(0);
};

template <typename T>
struct ResidentIsFloat {
  static constexpr bool value = false;
};
template <>
struct ResidentIsFloat<float> {
  static constexpr bool value = true;
};
template <>
struct ResidentIsFloat<double> {
  static constexpr bool value = true;
};

// The C math library: CUDA's libdevice functions on the device (nvcc's
// device pass, NVRTC), GCC's builtins (which call libm) on the host, so this
// header still includes nothing.
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
#define RESIDENT_LIBM(f) f
#else
#define RESIDENT_LIBM(f) __builtin_##f
#endif
#define RESIDENT_MATH1(name)                                                         \
  RESIDENT_HD float resident_m_##name(float x) { return RESIDENT_LIBM(name##f)(x); } \
  RESIDENT_HD double resident_m_##name(double x) { return RESIDENT_LIBM(name)(x); }
#define RESIDENT_MATH2(name)                                                                     \
  RESIDENT_HD float resident_m_##name(float x, float y) { return RESIDENT_LIBM(name##f)(x, y); } \
  RESIDENT_HD double resident_m_##name(double x, double y) { return RESIDENT_LIBM(name)(x, y); }
RESIDENT_MATH1(sqrt)
RESIDENT_MATH1(exp)
RESIDENT_MATH1(log)
RESIDENT_MATH1(log1p)
RESIDENT_MATH1(expm1)
RESIDENT_MATH1(sin)
RESIDENT_MATH1(cos)
RESIDENT_MATH1(tanh)
RESIDENT_MATH1(floor)
RESIDENT_MATH1(ceil)
RESIDENT_MATH1(fabs)
RESIDENT_MATH1(tan)
RESIDENT_MATH1(asin)
RESIDENT_MATH1(acos)
RESIDENT_MATH1(atan)
RESIDENT_MATH1(sinh)
RESIDENT_MATH1(cosh)
RESIDENT_MATH1(asinh)
RESIDENT_MATH1(acosh)
RESIDENT_MATH1(atanh)
RESIDENT_MATH1(log2)
RESIDENT_MATH1(log10)
RESIDENT_MATH1(rint)
RESIDENT_MATH1(trunc)
RESIDENT_MATH2(pow)
RESIDENT_MATH2(fmod)
RESIDENT_MATH2(copysign)
RESIDENT_MATH2(atan2)
RESIDENT_MATH2(hypot)
RESIDENT_MATH2(nextafter)
#undef RESIDENT_MATH1
#undef RESIDENT_MATH2

// NumPy's float -> integer conversion as x86 NumPy computes it (C leaves
// NaN and out-of-range values undefined; these reproduce NumPy's answers,
// checked by tests/backend/cast_literals_test.cc). 32- and 64-bit signed
// targets truncate toward zero, NaN and out of range giving the minimum
// (cvttsd2si); 8- and 16-bit targets go through int32 and wrap; unsigned
// 32/64-bit targets subtract 2^31 / 2^63 from values at or above it and set
// the top bit again (GCC's sequence), so -1.0 gives the maximum.
RESIDENT_HD int resident_f2i32(double d) {
  if (!(d > -2147483649.0 && d < 2147483648.0)) return -2147483647 - 1;
  return static_cast<int>(d);
}
RESIDENT_HD long long resident_f2i64(double d) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
    return -9223372036854775807LL - 1;
  }
  return static_cast<long long>(d);
}
template <typename T>
RESIDENT_HD T resident_float_to_int(double d) {
  if constexpr (sizeof(T) < 4) {
    return static_cast<T>(resident_f2i32(d));
  } else if constexpr (sizeof(T) == 4 && ResidentIsSigned<T>::value) {
    return static_cast<T>(resident_f2i32(d));
  } else if constexpr (sizeof(T) == 4) {
    if (d >= 2147483648.0) {
      return static_cast<T>(static_cast<unsigned int>(resident_f2i32(d - 2147483648.0)) ^
                            0x80000000u);
    }
    return static_cast<T>(static_cast<unsigned int>(resident_f2i32(d)));
  } else if constexpr (ResidentIsSigned<T>::value) {
    return static_cast<T>(resident_f2i64(d));
  } else {
    if (d >= 9223372036854775808.0) {
      return static_cast<T>(
          static_cast<unsigned long long>(resident_f2i64(d - 9223372036854775808.0)) ^
          0x8000000000000000ULL);
    }
    return static_cast<T>(static_cast<unsigned long long>(resident_f2i64(d)));
  }
}

// float16 -> integer as NumPy casts it: the float32 value through the
// rules above, except uint32, which NumPy's float16 loop reaches through
// int64 (so NaN and -inf give 0, not 2^31).
template <typename T>
RESIDENT_HD T resident_half_to_int(float f) {
  if constexpr (sizeof(T) == 4 && !ResidentIsSigned<T>::value) {
    return static_cast<T>(static_cast<unsigned long long>(resident_f2i64(f)));
  } else {
    return resident_float_to_int<T>(f);
  }
}

// bfloat16 -> integer as ml_dtypes casts it: truncation toward zero; NaN,
// inf and values whose truncation T cannot hold give 0.
template <typename T>
RESIDENT_HD T resident_bf16_to_int(float f) {
  const double d = f;
  constexpr int kBits = static_cast<int>(sizeof(T)) * 8;
  if constexpr (ResidentIsSigned<T>::value) {
    const double top = static_cast<double>(1ULL << (kBits - 1));  // 2^(bits-1)
    // Above -2^(bits-1) - 1 (for 64 bits that double is -2^63 itself).
    const bool in = kBits == 64 ? (d >= -top && d < top) : (d > -top - 1.0 && d < top);
    return in ? static_cast<T>(static_cast<long long>(d)) : static_cast<T>(0);
  } else {
    const double top = kBits == 64 ? 18446744073709551616.0 : static_cast<double>(1ULL << kBits);
    const bool in = d > -1.0 && d < top;
    return in ? static_cast<T>(static_cast<unsigned long long>(d)) : static_cast<T>(0);
  }
}

// add: bool is logical or.
RESIDENT_HD bool resident_ew_add(bool a, bool b) { return a || b; }
template <typename T>
RESIDENT_HD T resident_ew_add(T a, T b) {
  if constexpr (ResidentIsFloat<T>::value) {
    return a + b;
  } else {
    typedef typename ResidentUnsigned<T>::type U;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  }
}

// subtract: no bool (the table's rule refuses it).
template <typename T>
RESIDENT_HD T resident_ew_subtract(T a, T b) {
  if constexpr (ResidentIsFloat<T>::value) {
    return a - b;
  } else {
    typedef typename ResidentUnsigned<T>::type U;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  }
}

// multiply: bool is logical and.
RESIDENT_HD bool resident_ew_multiply(bool a, bool b) { return a && b; }
template <typename T>
RESIDENT_HD T resident_ew_multiply(T a, T b) {
  if constexpr (ResidentIsFloat<T>::value) {
    return a * b;
  } else {
    typedef typename ResidentUnsigned<T>::type U;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  }
}

// divide: floats only (the program layer promotes integers to float64).
template <typename T>
RESIDENT_HD T resident_ew_divide(T a, T b) {
  static_assert(ResidentIsFloat<T>::value, "true divide computes in a float dtype");
  return a / b;
}

// negative: no bool.
template <typename T>
RESIDENT_HD T resident_ew_negative(T a) {
  if constexpr (ResidentIsFloat<T>::value) {
    return -a;
  } else {
    typedef typename ResidentUnsigned<T>::type U;
    return static_cast<T>(static_cast<U>(0) - static_cast<U>(a));
  }
}

// maximum, minimum: NaN-propagating as NumPy's; on a tie of zeros the
// second operand, as NumPy's SIMD loops (x86 max/min) give. bool: or / and.
RESIDENT_HD bool resident_ew_maximum(bool a, bool b) { return a || b; }
template <typename T>
RESIDENT_HD T resident_ew_maximum(T a, T b) {
  if constexpr (ResidentIsFloat<T>::value) {
    if (a != a) return a;
  }
  return a > b ? a : b;
}
RESIDENT_HD bool resident_ew_minimum(bool a, bool b) { return a && b; }
template <typename T>
RESIDENT_HD T resident_ew_minimum(T a, T b) {
  if constexpr (ResidentIsFloat<T>::value) {
    if (a != a) return a;
  }
  return a < b ? a : b;
}
// fmax, fmin: NaN-ignoring (the other operand; NaN only when both are), the
// tie of zeros as maximum and minimum (NumPy's array loops give b).
RESIDENT_HD bool resident_ew_fmax(bool a, bool b) { return a || b; }
template <typename T>
RESIDENT_HD T resident_ew_fmax(T a, T b) {
  if constexpr (ResidentIsFloat<T>::value) {
    if (a != a) return b;
    if (b != b) return a;
  }
  return a > b ? a : b;
}
RESIDENT_HD bool resident_ew_fmin(bool a, bool b) { return a && b; }
template <typename T>
RESIDENT_HD T resident_ew_fmin(T a, T b) {
  if constexpr (ResidentIsFloat<T>::value) {
    if (a != a) return b;
    if (b != b) return a;
  }
  return a < b ? a : b;
}

// power: floats through pow; integers by squaring (wrapping). NumPy raises
// for a negative integer exponent; the program layer refuses a negative
// scalar exponent, and an array's negative element gives 0 here.
template <typename T>
RESIDENT_HD T resident_ew_power(T a, T b) {
  if constexpr (ResidentIsFloat<T>::value) {
    // x ** 2 is x * x: NumPy's fast path for a scalar 2, and what a
    // correctly rounded pow (glibc's) gives for any exponent 2, specials
    // included; CUDA's pow is not correctly rounded (1 ULP off seen on an
    // H200), so every backend squares.
    if (b == static_cast<T>(2)) return a * a;
    return resident_m_pow(a, b);
  } else {
    typedef typename ResidentUnsigned<T>::type U;
    if constexpr (ResidentIsSigned<T>::value) {
      if (b < 0) return 0;
    }
    U base = static_cast<U>(a), out = 1;
    while (b > 0) {
      if (b & 1) out = out * base;
      base = base * base;
      b = static_cast<T>(b >> 1);
    }
    return static_cast<T>(out);
  }
}

// NumPy's npy_divmod for floats: the floored quotient and the remainder with
// the divisor's sign, from fmod.
template <typename T>
RESIDENT_HD T resident_float_divmod(T a, T b, T* modulus) {
  T mod = resident_m_fmod(a, b);
  if (!b) {
    *modulus = mod;
    return a / b;
  }
  T div = (a - mod) / b;
  if (mod) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= static_cast<T>(1);
    }
  } else {
    mod = resident_m_copysign(static_cast<T>(0), b);
  }
  T floordiv;
  if (div) {
    floordiv = resident_m_floor(div);
    if (div - floordiv > static_cast<T>(0.5)) floordiv += static_cast<T>(1);
  } else {
    floordiv = resident_m_copysign(static_cast<T>(0), a / b);
  }
  *modulus = mod;
  return floordiv;
}

// remainder (mod): Python's sign rule (the divisor's). Integer x % 0 is 0,
// as NumPy gives (with a warning); float x % 0 is NaN.
template <typename T>
RESIDENT_HD T resident_ew_remainder(T a, T b) {
  if constexpr (ResidentIsFloat<T>::value) {
    if (!b) return resident_m_fmod(a, b);
    T mod;
    resident_float_divmod(a, b, &mod);
    return mod;
  } else if constexpr (!ResidentIsSigned<T>::value) {
    if (b == 0) return 0;
    return static_cast<T>(a % b);
  } else {
    if (b == 0 || b == -1) return 0;  // -1: INT_MIN % -1 would trap
    T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  }
}

// floor_divide: the floored quotient. Integer x // 0 is 0 and
// INT_MIN // -1 wraps to INT_MIN, as NumPy gives.
template <typename T>
RESIDENT_HD T resident_ew_floor_divide(T a, T b) {
  if constexpr (ResidentIsFloat<T>::value) {
    if (!b) return a / b;
    T mod;
    return resident_float_divmod(a, b, &mod);
  } else if constexpr (!ResidentIsSigned<T>::value) {
    if (b == 0) return 0;
    return static_cast<T>(a / b);
  } else {
    typedef typename ResidentUnsigned<T>::type U;
    if (b == 0) return 0;
    if (b == -1) return static_cast<T>(static_cast<U>(0) - static_cast<U>(a));
    T q = static_cast<T>(a / b);
    if ((a % b != 0) && ((a < 0) != (b < 0))) q = static_cast<T>(q - 1);
    return q;
  }
}

// absolute: integers wrap (abs(INT_MIN) is INT_MIN); floats clear the sign.
RESIDENT_HD bool resident_ew_absolute(bool a) { return a; }
template <typename T>
RESIDENT_HD T resident_ew_absolute(T a) {
  if constexpr (ResidentIsFloat<T>::value) {
    return resident_m_fabs(a);
  } else if constexpr (!ResidentIsSigned<T>::value) {
    return a;
  } else {
    typedef typename ResidentUnsigned<T>::type U;
    return a < 0 ? static_cast<T>(static_cast<U>(0) - static_cast<U>(a)) : a;
  }
}

// sign: -1, 0 (+0 for -0 too) or 1; NaN stays NaN. No bool.
template <typename T>
RESIDENT_HD T resident_ew_sign(T a) {
  if (a > 0) return static_cast<T>(1);
  if constexpr (ResidentIsFloat<T>::value || ResidentIsSigned<T>::value) {
    if (a < 0) return static_cast<T>(-1);
  }
  if (a == 0) return static_cast<T>(0);
  return a;  // NaN
}

// sign as ml_dtypes computes it for bfloat16 (in float): -0 stays -0, where
// NumPy's float16 and float32 sign give +0. The kernels and the fused loop
// call it for bfloat16 in place of resident_ew_sign.
RESIDENT_HD float resident_ew_sign_bf16(float a) {
  if (a > 0) return 1.0f;
  if (a < 0) return -1.0f;
  return a;  // +-0 and NaN as they are
}

// The transcendentals and sqrt: floats only (the program layer computes
// integers in float64, as NumPy does).
#define RESIDENT_EW_LIBM(name)                                                    \
  template <typename T>                                                           \
  RESIDENT_HD T resident_ew_##name(T a) {                                         \
    static_assert(ResidentIsFloat<T>::value, #name " computes in a float dtype"); \
    return resident_m_##name(a);                                                  \
  }
RESIDENT_EW_LIBM(sqrt)
RESIDENT_EW_LIBM(exp)
RESIDENT_EW_LIBM(log)
RESIDENT_EW_LIBM(log1p)
RESIDENT_EW_LIBM(expm1)
RESIDENT_EW_LIBM(sin)
RESIDENT_EW_LIBM(cos)
RESIDENT_EW_LIBM(tanh)
#undef RESIDENT_EW_LIBM

// floor, ceil: integers and bool are unchanged (NumPy 2 keeps their dtype).
RESIDENT_HD bool resident_ew_floor(bool a) { return a; }
template <typename T>
RESIDENT_HD T resident_ew_floor(T a) {
  if constexpr (ResidentIsFloat<T>::value) {
    return resident_m_floor(a);
  } else {
    return a;
  }
}
RESIDENT_HD bool resident_ew_ceil(bool a) { return a; }
template <typename T>
RESIDENT_HD T resident_ew_ceil(T a) {
  if constexpr (ResidentIsFloat<T>::value) {
    return resident_m_ceil(a);
  } else {
    return a;
  }
}

// The bool-valued ops: computed in the operands' dtype; callers store the
// bool (as 0/1 of the compute dtype, then cast to bool).
template <typename T>
RESIDENT_HD bool resident_ew_equal(T a, T b) {
  return a == b;
}
template <typename T>
RESIDENT_HD bool resident_ew_not_equal(T a, T b) {
  return a != b;
}
template <typename T>
RESIDENT_HD bool resident_ew_less(T a, T b) {
  return a < b;
}
template <typename T>
RESIDENT_HD bool resident_ew_less_equal(T a, T b) {
  return a <= b;
}
template <typename T>
RESIDENT_HD bool resident_ew_greater(T a, T b) {
  return a > b;
}
template <typename T>
RESIDENT_HD bool resident_ew_greater_equal(T a, T b) {
  return a >= b;
}
// Logical ops read each operand as `x != 0` (NaN is true, as in NumPy).
template <typename T>
RESIDENT_HD bool resident_ew_logical_and(T a, T b) {
  return a != static_cast<T>(0) && b != static_cast<T>(0);
}
template <typename T>
RESIDENT_HD bool resident_ew_logical_or(T a, T b) {
  return a != static_cast<T>(0) || b != static_cast<T>(0);
}
template <typename T>
RESIDENT_HD bool resident_ew_logical_xor(T a, T b) {
  return (a != static_cast<T>(0)) != (b != static_cast<T>(0));
}
template <typename T>
RESIDENT_HD bool resident_ew_logical_not(T a) {
  return a == static_cast<T>(0);
}
template <typename T>
RESIDENT_HD bool resident_ew_isnan(T a) {
  if constexpr (ResidentIsFloat<T>::value) {
    return a != a;
  } else {
    return false;
  }
}
// Finite: x - x is 0 exactly for finite x, NaN for inf and NaN.
template <typename T>
RESIDENT_HD bool resident_ew_isfinite(T a) {
  if constexpr (ResidentIsFloat<T>::value) {
    return a - a == static_cast<T>(0);
  } else {
    return true;
  }
}

// ---- The Array API's further functions (NumPy's ufuncs of those names). ----

// Float math of one and two operands: floats only, as the transcendentals.
#define RESIDENT_EW_LIBM(name, fn)                                                \
  template <typename T>                                                           \
  RESIDENT_HD T resident_ew_##name(T a) {                                         \
    static_assert(ResidentIsFloat<T>::value, #name " computes in a float dtype"); \
    return resident_m_##fn(a);                                                    \
  }
RESIDENT_EW_LIBM(tan, tan)
RESIDENT_EW_LIBM(arcsin, asin)
RESIDENT_EW_LIBM(arccos, acos)
RESIDENT_EW_LIBM(arctan, atan)
RESIDENT_EW_LIBM(sinh, sinh)
RESIDENT_EW_LIBM(cosh, cosh)
RESIDENT_EW_LIBM(arcsinh, asinh)
RESIDENT_EW_LIBM(arccosh, acosh)
RESIDENT_EW_LIBM(arctanh, atanh)
RESIDENT_EW_LIBM(log2, log2)
RESIDENT_EW_LIBM(log10, log10)
RESIDENT_EW_LIBM(rint, rint)  // round half to even, as NumPy's rint
#undef RESIDENT_EW_LIBM
#define RESIDENT_EW_LIBM2(name, fn)                                               \
  template <typename T>                                                           \
  RESIDENT_HD T resident_ew_##name(T a, T b) {                                    \
    static_assert(ResidentIsFloat<T>::value, #name " computes in a float dtype"); \
    return resident_m_##fn(a, b);                                                 \
  }
RESIDENT_EW_LIBM2(arctan2, atan2)
#undef RESIDENT_EW_LIBM2

// hypot: glibc's on the host (NumPy's). On the GPU, CUDA's double hypot
// overflows to inf next to DBL_MAX (hypot(DBL_MAX, 1) on an H100), so
// doubles scale by the larger operand there: within 2 ULP of glibc's.
template <typename T>
RESIDENT_HD T resident_ew_hypot(T a, T b) {
  static_assert(ResidentIsFloat<T>::value, "hypot computes in a float dtype");
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
  if constexpr (sizeof(T) == 8) {
    const T x = resident_m_fabs(a), y = resident_m_fabs(b);
    const T inf = static_cast<T>(1) / static_cast<T>(0);
    if (x == inf || y == inf) return inf;  // even with a NaN, as C's hypot
    if (x != x || y != y) return x + y;    // NaN
    const T big = x > y ? x : y, small = x > y ? y : x;
    if (big == static_cast<T>(0)) return big;
    const T r = small / big;
    return big * resident_m_sqrt(static_cast<T>(1) + r * r);
  }
#endif
  return resident_m_hypot(a, b);
}
#define RESIDENT_EW_LIBM2(name, fn)                                               \
  template <typename T>                                                           \
  RESIDENT_HD T resident_ew_##name(T a, T b) {                                    \
    static_assert(ResidentIsFloat<T>::value, #name " computes in a float dtype"); \
    return resident_m_##fn(a, b);                                                 \
  }
RESIDENT_EW_LIBM2(copysign, copysign)
RESIDENT_EW_LIBM2(nextafter, nextafter)  // float32/64 only: the halves' is their own
#undef RESIDENT_EW_LIBM2

// logaddexp as NumPy's npy_logaddexp: equal operands (infinities of one
// sign included) give x + log(2); otherwise the larger plus log1p(exp(-d)).
template <typename T>
RESIDENT_HD T resident_ew_logaddexp(T a, T b) {
  static_assert(ResidentIsFloat<T>::value, "logaddexp computes in a float dtype");
  if (a == b) return a + static_cast<T>(0.693147180559945309417232121458176568);
  const T d = a - b;
  if (d > 0) return a + resident_m_log1p(resident_m_exp(-d));
  if (d <= 0) return b + resident_m_log1p(resident_m_exp(d));
  return d;  // NaN
}

// trunc: toward zero; integers and bool unchanged (NumPy 2 keeps their dtype).
RESIDENT_HD bool resident_ew_trunc(bool a) { return a; }
template <typename T>
RESIDENT_HD T resident_ew_trunc(T a) {
  if constexpr (ResidentIsFloat<T>::value) {
    return resident_m_trunc(a);
  } else {
    return a;
  }
}

// square: x * x, wrapping for integers (bool computes in int8).
template <typename T>
RESIDENT_HD T resident_ew_square(T a) {
  return resident_ew_multiply(a, a);
}

// reciprocal: 1 / x; integers as NumPy's loop computes it, 1.0 / x in
// double converted back as x86 does (1 / 0 gives the minimum for 32- and
// 64-bit types, 0 for narrower ones).
template <typename T>
RESIDENT_HD T resident_ew_reciprocal(T a) {
  if constexpr (ResidentIsFloat<T>::value) {
    return static_cast<T>(1) / a;
  } else {
    return resident_float_to_int<T>(1.0 / static_cast<double>(a));
  }
}

// positive, conjugate, real: the value itself for real dtypes (no bool
// positive, and bool conjugate computes in int8, as NumPy's loops).
template <typename T>
RESIDENT_HD T resident_ew_positive(T a) {
  return a;
}
template <typename T>
RESIDENT_HD T resident_ew_conjugate(T a) {
  return a;
}
template <typename T>
RESIDENT_HD T resident_ew_real(T a) {
  return a;
}
// imag of a real dtype: zero, as numpy.imag gives.
template <typename T>
RESIDENT_HD T resident_ew_imag(T a) {
  (void)a;
  return static_cast<T>(0);
}

// isinf: an infinity of either sign; never for integers and bool.
template <typename T>
RESIDENT_HD bool resident_ew_isinf(T a) {
  if constexpr (ResidentIsFloat<T>::value) {
    return a == a && a - a != a - a;  // inf - inf is NaN; NaN is not inf
  } else {
    return false;
  }
}
// signbit: the sign bit itself (-0.0 and negative NaNs have it).
template <typename T>
RESIDENT_HD bool resident_ew_signbit(T a) {
  if constexpr (ResidentIsFloat<T>::value) {
    return resident_m_copysign(static_cast<T>(1), a) < static_cast<T>(0);
  } else if constexpr (ResidentIsSigned<T>::value) {
    return a < 0;
  } else {
    return false;
  }
}

// The bitwise ops: bool and integers (bool's are the logical ones).
RESIDENT_HD bool resident_ew_bitwise_and(bool a, bool b) { return a && b; }
template <typename T>
RESIDENT_HD T resident_ew_bitwise_and(T a, T b) {
  return static_cast<T>(a & b);
}
RESIDENT_HD bool resident_ew_bitwise_or(bool a, bool b) { return a || b; }
template <typename T>
RESIDENT_HD T resident_ew_bitwise_or(T a, T b) {
  return static_cast<T>(a | b);
}
RESIDENT_HD bool resident_ew_bitwise_xor(bool a, bool b) { return a != b; }
template <typename T>
RESIDENT_HD T resident_ew_bitwise_xor(T a, T b) {
  return static_cast<T>(a ^ b);
}
RESIDENT_HD bool resident_ew_invert(bool a) { return !a; }
template <typename T>
RESIDENT_HD T resident_ew_invert(T a) {
  return static_cast<T>(~a);
}
// Shifts as NumPy's npy_lshift / npy_rshift: a count at or past the width,
// or negative, shifts everything out (0; -1 for a negative value shifted
// right); the rest is the shift of the bits. Integers only (bool computes
// in int8).
template <typename T>
RESIDENT_HD T resident_ew_left_shift(T a, T b) {
  typedef typename ResidentUnsigned<T>::type U;
  if (static_cast<unsigned long long>(b) >= sizeof(T) * 8) return static_cast<T>(0);
  return static_cast<T>(static_cast<U>(a) << static_cast<U>(b));
}
template <typename T>
RESIDENT_HD T resident_ew_right_shift(T a, T b) {
  if (static_cast<unsigned long long>(b) >= sizeof(T) * 8) {
    if constexpr (ResidentIsSigned<T>::value) {
      return a < 0 ? static_cast<T>(-1) : static_cast<T>(0);
    } else {
      return static_cast<T>(0);
    }
  }
  return static_cast<T>(a >> b);
}

#endif  // RESIDENT_CORE_ELEMENTWISE_EXPR_H_

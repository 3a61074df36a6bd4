// The two 16-bit float dtypes' storage types and their conversions to and
// from float, for g++ (kernels/cpu), nvcc (kernels/cuda) and NVRTC (the fused
// loop generator embeds this file's text before core/elementwise_expr.h's),
// so it includes nothing and uses no std:: names.
//
// float16 is IEEE binary16 (NumPy's float16); bfloat16 is the top half of a
// binary32 (ml_dtypes' bfloat16). Neither is C++ arithmetic: each is a
// one-field struct, trivially copyable, zero-initialised to +0.0, and a
// type of its own so kernels dispatch on it. Kernels compute in float
// (ResidentCompute), as NumPy and ml_dtypes do: load, compute, round back
// to nearest even on store.
//
//   float x = resident_load(h);                              // exact
//   ResidentFloat16 y = resident_store<ResidentFloat16>(x);  // rounds
#ifndef RESIDENT_CORE_HALF_H_
#define RESIDENT_CORE_HALF_H_

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define RESIDENT_HALF_HD __host__ __device__ __forceinline__
#else
#define RESIDENT_HALF_HD inline
#endif

struct ResidentFloat16 {
  unsigned short bits;
};
struct ResidentBFloat16 {
  unsigned short bits;
};

// Whether T is one of the two 16-bit float storage types.
template <typename T>
struct ResidentIsHalf {
  static constexpr bool value = false;
};
template <>
struct ResidentIsHalf<ResidentFloat16> {
  static constexpr bool value = true;
};
template <>
struct ResidentIsHalf<ResidentBFloat16> {
  static constexpr bool value = true;
};

// The type a kernel computes in for storage type T: float for the halves,
// T itself otherwise.
template <typename T>
struct ResidentCompute {
  typedef T type;
};
template <>
struct ResidentCompute<ResidentFloat16> {
  typedef float type;
};
template <>
struct ResidentCompute<ResidentBFloat16> {
  typedef float type;
};

RESIDENT_HALF_HD unsigned int resident_float_bits(float f) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
  return __float_as_uint(f);
#else
  unsigned int u;
  __builtin_memcpy(&u, &f, sizeof(u));
  return u;
#endif
}
RESIDENT_HALF_HD float resident_bits_float(unsigned int u) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
  return __uint_as_float(u);
#else
  float f;
  __builtin_memcpy(&f, &u, sizeof(f));
  return f;
#endif
}
RESIDENT_HALF_HD unsigned long long resident_double_bits(double d) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
  return static_cast<unsigned long long>(__double_as_longlong(d));
#else
  unsigned long long u;
  __builtin_memcpy(&u, &d, sizeof(u));
  return u;
#endif
}

// d rounded to nearest even into a float of kExp exponent bits and kMan
// mantissa bits (binary16: 5, 10; bfloat16: 8, 7), as bits. One rounding
// from the double (so float and integer sources round once too). NaN keeps
// its sign and top payload bits and is made quiet (NumPy's 0x7e00 for
// float16, ml_dtypes' 0x7fc0 for bfloat16); overflow gives inf.
template <int kExp, int kMan>
RESIDENT_HALF_HD unsigned short resident_round_double(double d) {
  const unsigned long long u = resident_double_bits(d);
  const unsigned int sign = static_cast<unsigned int>(u >> 63) << (kExp + kMan);
  const int e = static_cast<int>((u >> 52) & 0x7ff);
  const unsigned long long mant = u & 0xfffffffffffffULL;
  const unsigned int exp_mask = ((1u << kExp) - 1u) << kMan;
  if (e == 0x7ff) {
    if (mant == 0) return static_cast<unsigned short>(sign | exp_mask);
    return static_cast<unsigned short>(sign | exp_mask | (1u << (kMan - 1)) |
                                       static_cast<unsigned int>(mant >> (52 - kMan)));
  }
  if (e == 0) return static_cast<unsigned short>(sign);  // double subnormals round to 0
  const int bias = (1 << (kExp - 1)) - 1;
  const int x = e - 1023;  // the unbiased exponent
  const unsigned long long sig = (1ULL << 52) | mant;
  // Bits of sig below the target's last mantissa bit; more for subnormals.
  int shift = 52 - kMan;
  if (x < 1 - bias) shift += 1 - bias - x;
  if (shift > 54) return static_cast<unsigned short>(sign);  // below half the least subnormal
  unsigned long long q = sig >> shift;
  const unsigned long long rem = sig & ((1ULL << shift) - 1);
  const unsigned long long half = 1ULL << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  // A normal result: q carries the implicit bit, which adds one to the
  // biased exponent below it (and a carry out of the mantissa one more).
  const long long biased = x < 1 - bias ? 0 : static_cast<long long>(x + bias - 1);
  const long long r = (biased << kMan) + static_cast<long long>(q);
  if (r >= static_cast<long long>(exp_mask)) return static_cast<unsigned short>(sign | exp_mask);
  return static_cast<unsigned short>(sign | static_cast<unsigned int>(r));
}

// float16 bits -> float, exactly (NaN payloads kept).
RESIDENT_HALF_HD float resident_half_to_float(ResidentFloat16 h) {
  const unsigned int sign = static_cast<unsigned int>(h.bits & 0x8000u) << 16;
  int e = (h.bits >> 10) & 0x1f;
  unsigned int m = h.bits & 0x3ffu;
  if (e == 0x1f) return resident_bits_float(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    if (m == 0) return resident_bits_float(sign);
    // Subnormal: normalise the mantissa into a float's normal range.
    e = 1;
    while ((m & 0x400u) == 0) {
      m <<= 1;
      --e;
    }
    m &= 0x3ffu;
  }
  return resident_bits_float(sign | (static_cast<unsigned int>(e + 112) << 23) | (m << 13));
}

// bfloat16 bits -> float, exactly.
RESIDENT_HALF_HD float resident_bf16_to_float(ResidentBFloat16 h) {
  return resident_bits_float(static_cast<unsigned int>(h.bits) << 16);
}

// double -> float16 / bfloat16, one rounding to nearest even.
RESIDENT_HALF_HD ResidentFloat16 resident_double_to_half(double d) {
  ResidentFloat16 h;
  h.bits = resident_round_double<5, 10>(d);
  return h;
}
RESIDENT_HALF_HD ResidentBFloat16 resident_double_to_bf16(double d) {
  ResidentBFloat16 h;
  h.bits = resident_round_double<8, 7>(d);
  return h;
}

// float -> float16 / bfloat16, rounding to nearest even. The device uses
// the hardware conversion for numbers (NaN goes the software way, so its
// bits are NumPy's); the host the exact software one (a float widens to
// double exactly, so rounding from it is rounding once).
RESIDENT_HALF_HD ResidentFloat16 resident_float_to_half(float f) {
#if defined(__CUDA_ARCH__)
  if (f == f) {
    ResidentFloat16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
    return h;
  }
#endif
  return resident_double_to_half(static_cast<double>(f));
}
RESIDENT_HALF_HD ResidentBFloat16 resident_float_to_bf16(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if (f == f) {
    ResidentBFloat16 h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
    return h;
  }
#endif
  const unsigned int u = resident_float_bits(f);
  ResidentBFloat16 h;
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    h.bits = static_cast<unsigned short>((u >> 16) | 0x40u);  // quiet NaN, sign kept
  } else {
    h.bits = static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  return h;
}

// A storage element as the register type kernels compute in.
RESIDENT_HALF_HD float resident_load(ResidentFloat16 x) { return resident_half_to_float(x); }
RESIDENT_HALF_HD float resident_load(ResidentBFloat16 x) { return resident_bf16_to_float(x); }
template <typename T>
RESIDENT_HALF_HD T resident_load(T x) {
  return x;
}

// A computed float back into half storage T, rounding to nearest even.
template <typename T>
RESIDENT_HALF_HD T resident_store(float c);
template <>
RESIDENT_HALF_HD ResidentFloat16 resident_store<ResidentFloat16>(float c) {
  return resident_float_to_half(c);
}
template <>
RESIDENT_HALF_HD ResidentBFloat16 resident_store<ResidentBFloat16>(float c) {
  return resident_float_to_bf16(c);
}

// A double into half storage T, one rounding.
template <typename T>
RESIDENT_HALF_HD T resident_store_double(double c);
template <>
RESIDENT_HALF_HD ResidentFloat16 resident_store_double<ResidentFloat16>(double c) {
  return resident_double_to_half(c);
}
template <>
RESIDENT_HALF_HD ResidentBFloat16 resident_store_double<ResidentBFloat16>(double c) {
  return resident_double_to_bf16(c);
}

#endif  // RESIDENT_CORE_HALF_H_

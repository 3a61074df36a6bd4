// The scalar expression of every elementwise kind, one inline function each,
// written once for g++ (kernels/cpu), nvcc (kernels/cuda) and NVRTC (the
// fused loop generator embeds this file's text). So the header includes
// nothing and uses no std:: names: NVRTC has no standard library.
//
// Functions take the register type: bool for bool arrays (the caller loads
// the stored byte as `x != 0` and stores the result as 0/1), int/long/long
// long for integers (wrapping arithmetic through the unsigned type, never
// UB), float/double for floats (plain IEEE operations; callers build without
// FMA contraction so results are bit-identical to NumPy's).
//
//   uint8_t r = resident_ew_add(a != 0, b != 0);   // bool add: logical or
//   double d = resident_ew_divide(1.0, 3.0);
#ifndef RESIDENT_CORE_ELEMENTWISE_EXPR_H_
#define RESIDENT_CORE_ELEMENTWISE_EXPR_H_

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define RESIDENT_HD __host__ __device__ __forceinline__
#else
#define RESIDENT_HD inline
#endif

// The unsigned type integer arithmetic wraps through.
template <typename T>
struct ResidentUnsigned;
template <>
struct ResidentUnsigned<int> {
  typedef unsigned int type;
};
template <>
struct ResidentUnsigned<long> {
  typedef unsigned long type;
};
template <>
struct ResidentUnsigned<long long> {
  typedef unsigned long long type;
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

#endif  // RESIDENT_CORE_ELEMENTWISE_EXPR_H_

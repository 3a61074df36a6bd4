// A typed scalar literal (fill values, arange bounds).
#ifndef RESIDENT_CORE_SCALAR_H_
#define RESIDENT_CORE_SCALAR_H_

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>

#include "core/dtype.h"
#include "core/elementwise_expr.h"

namespace resident {

class Scalar {
 public:
  Scalar() : v_(false) {}
  static Scalar Bool(bool b) { return Scalar(b); }
  static Scalar Int(int64_t i) { return Scalar(i); }
  static Scalar Float(double f) { return Scalar(f); }
  static Scalar Complex(double re, double im) { return Scalar(ComplexValue{re, im}); }

  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_int() const { return std::holds_alternative<int64_t>(v_); }
  bool is_float() const { return std::holds_alternative<double>(v_); }
  bool is_complex() const { return std::holds_alternative<ComplexValue>(v_); }

  // The dtype NumPy gives a Python scalar of this kind.
  DType natural_dtype() const {
    return is_bool()    ? DType::kBool
           : is_int()   ? DType::kInt64
           : is_float() ? DType::kFloat64
                        : DType::kComplex128;
  }
  // A complex's real part, as NumPy's unsafe cast of a complex to a real
  // dtype takes it (NumPy warns ComplexWarning; Resident does it silently).
  double as_double() const;
  double imag() const;       // 0 for every kind but complex
  int64_t as_int64() const;  // floats truncate; NaN and out of range -> INT64_MIN
  bool as_bool() const;      // non-zero (NaN is true)

  std::string ToString() const;

 private:
  struct ComplexValue {
    double re;
    double im;
  };
  template <typename T>
  explicit Scalar(T v) : v_(v) {}
  std::variant<bool, int64_t, double, ComplexValue> v_;
};

// The element of storage type T that numpy.full(shape, value, dtype) stores:
// bool is `!= 0` (a complex: either part); a complex takes both parts
// (a real its real part); a float converts as NumPy's float -> integer cast does
// (NaN and out of range as x86 NumPy gives them); an int wraps (the program
// layer has refused one out of the dtype's range already).
template <typename T>
T ScalarAs(const Scalar& value) {
  if constexpr (kIsBoolStorage<T>) {
    return static_cast<T>(value.as_bool());
  } else if constexpr (kIsComplexStorage<T>) {
    using F = typename ResidentIsComplex<T>::component;
    return T{static_cast<F>(value.as_double()), static_cast<F>(value.imag())};
  } else if constexpr (kIsHalfStorage<T>) {
    return resident_store_double<T>(value.as_double());  // one rounding, to nearest even
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(value.as_double());
  } else if (value.is_float() || value.is_complex()) {
    return resident_float_to_int<T>(value.as_double());
  } else {
    return static_cast<T>(value.as_int64());
  }
}

// Whether the Python integer v is a value of integer dtype d (NumPy 2
// raises OverflowError for one that is not).
constexpr bool IntFitsIn(int64_t v, DType d) {
  return VisitDType(
      d,
      [v](auto zero) {
        using T = decltype(zero);
        if constexpr (std::is_integral_v<T> && !kIsBoolStorage<T>) {
          if constexpr (std::is_unsigned_v<T>) {
            return v >= 0 && static_cast<uint64_t>(v) <= std::numeric_limits<T>::max();
          } else {
            return v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
          }
        } else {
          return true;  // bool and the floats take any Python integer
        }
      },
      [] { return true; });
}

// v clamped into integer dtype d's range (clip's bounds, as NumPy 2).
constexpr int64_t ClampToDType(int64_t v, DType d) {
  return VisitDType(
      d,
      [v](auto zero) -> int64_t {
        using T = decltype(zero);
        if constexpr (std::is_integral_v<T> && !kIsBoolStorage<T>) {
          if (v < 0 && std::is_unsigned_v<T>) return 0;
          if constexpr (sizeof(T) < 8) {
            const int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
            return v < lo ? lo : v > hi ? hi : v;
          }
          return v;  // int64, and uint64 from 0 up
        } else {
          return v;
        }
      },
      [v] { return v; });
}

}  // namespace resident

#endif  // RESIDENT_CORE_SCALAR_H_

// A typed scalar literal (fill values, arange bounds).
#ifndef RESIDENT_CORE_SCALAR_H_
#define RESIDENT_CORE_SCALAR_H_

#include <cstdint>
#include <string>
#include <variant>

#include "core/dtype.h"

namespace resident {

class Scalar {
 public:
  Scalar() : v_(false) {}
  static Scalar Bool(bool b) { return Scalar(b); }
  static Scalar Int(int64_t i) { return Scalar(i); }
  static Scalar Float(double f) { return Scalar(f); }

  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_int() const { return std::holds_alternative<int64_t>(v_); }
  bool is_float() const { return std::holds_alternative<double>(v_); }

  // The dtype NumPy gives a Python scalar of this kind.
  DType natural_dtype() const {
    return is_bool() ? DType::kBool : is_int() ? DType::kInt64 : DType::kFloat64;
  }
  double as_double() const;
  int64_t as_int64() const;  // floats truncate; NaN and out of range -> INT64_MIN
  bool as_bool() const;      // non-zero (NaN is true)

  std::string ToString() const;

 private:
  template <typename T>
  explicit Scalar(T v) : v_(v) {}
  std::variant<bool, int64_t, double> v_;
};

}  // namespace resident

#endif  // RESIDENT_CORE_SCALAR_H_

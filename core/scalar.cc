#include "core/scalar.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace resident {

double Scalar::as_double() const {
  if (is_bool()) return std::get<bool>(v_) ? 1.0 : 0.0;
  if (is_int()) return static_cast<double>(std::get<int64_t>(v_));
  if (is_complex()) return std::get<ComplexValue>(v_).re;
  return std::get<double>(v_);
}

double Scalar::imag() const { return is_complex() ? std::get<ComplexValue>(v_).im : 0.0; }

int64_t Scalar::as_int64() const {
  if (is_bool()) return std::get<bool>(v_) ? 1 : 0;
  if (is_int()) return std::get<int64_t>(v_);
  const double f = as_double();
  // x86's cvttsd2si answer, which NumPy gives for NaN and out-of-range values.
  if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0)) {
    return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(f);
}

bool Scalar::as_bool() const {
  if (is_bool()) return std::get<bool>(v_);
  if (is_int()) return std::get<int64_t>(v_) != 0;
  if (is_complex()) return as_double() != 0.0 || imag() != 0.0;
  return std::get<double>(v_) != 0.0;  // NaN != 0 is true, as in NumPy
}

std::string Scalar::ToString() const {
  if (is_bool()) return std::get<bool>(v_) ? "True" : "False";
  if (is_int()) return absl::StrCat(std::get<int64_t>(v_));
  if (is_complex()) {
    return absl::StrCat("(", as_double(), imag() < 0 || std::signbit(imag()) ? "" : "+", imag(),
                        "j)");
  }
  return absl::StrCat(std::get<double>(v_));
}

}  // namespace resident

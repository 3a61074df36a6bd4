#include "core/scalar.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace resident {

double Scalar::as_double() const {
  if (is_bool()) return std::get<bool>(v_) ? 1.0 : 0.0;
  if (is_int()) return static_cast<double>(std::get<int64_t>(v_));
  return std::get<double>(v_);
}

int64_t Scalar::as_int64() const {
  if (is_bool()) return std::get<bool>(v_) ? 1 : 0;
  if (is_int()) return std::get<int64_t>(v_);
  const double f = std::get<double>(v_);
  // x86's cvttsd2si answer, which NumPy gives for NaN and out-of-range values.
  if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0)) {
    return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(f);
}

bool Scalar::as_bool() const {
  if (is_bool()) return std::get<bool>(v_);
  if (is_int()) return std::get<int64_t>(v_) != 0;
  return std::get<double>(v_) != 0.0;  // NaN != 0 is true, as in NumPy
}

std::string Scalar::ToString() const {
  if (is_bool()) return std::get<bool>(v_) ? "True" : "False";
  if (is_int()) return absl::StrCat(std::get<int64_t>(v_));
  return absl::StrCat(std::get<double>(v_));
}

}  // namespace resident

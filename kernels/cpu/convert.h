// Dtype conversion and array creation: Cast, Fill, Arange, with NumPy's
// conversion rules as x86 NumPy applies them.
#ifndef RESIDENT_KERNELS_CPU_CONVERT_H_
#define RESIDENT_KERNELS_CPU_CONVERT_H_

#include <cstdint>
#include <limits>
#include <type_traits>

#include "absl/status/status.h"
#include "core/scalar.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

// One element from From to To (both element types of DispatchDType):
// anything -> bool is `!= 0` (NaN is true); bool -> number is 0 or 1;
// float -> integer truncates toward zero, and NaN or out of range gives the
// integer's minimum (cvttsd2si's answer); integer narrowing wraps; the rest
// is C++'s round-to-nearest conversion.
template <typename To, typename From>
To ConvertElement(From x) {
  if constexpr (kIsBoolStorage<To>) {
    return static_cast<To>(x != 0);
  } else if constexpr (kIsBoolStorage<From>) {
    return static_cast<To>(x != 0 ? 1 : 0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // The range check is done in double, which holds both bounds (-2^31,
    // 2^31 or -2^63, 2^63) exactly; comparing in float32 would not.
    const double d = static_cast<double>(x);
    constexpr double kLo = static_cast<double>(std::numeric_limits<To>::min());
    if (!(d >= kLo && d < -kLo)) return std::numeric_limits<To>::min();
    return static_cast<To>(d);
  } else {
    return static_cast<To>(x);
  }
}

// out = a converted to out.dtype, a broadcast to out.shape. out must not
// overlap a unless both have one item size and the same start.
absl::Status Cast(ThreadPool* pool, const ConstView& a, const MutView& out);

// Every element of out = value converted to out.dtype as numpy.full does.
absl::Status Fill(ThreadPool* pool, const Scalar& value, const MutView& out);

// out (1-D) [i] = start + T(i) * delta computed in T = out.dtype's own
// arithmetic (float32 math for float32, wrapping for integers) after start
// and delta are converted to T: NumPy's arange fill loop. Bool is refused.
absl::Status Arange(ThreadPool* pool, const Scalar& start, const Scalar& delta, const MutView& out);

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_CONVERT_H_

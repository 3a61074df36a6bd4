// Dtype conversion and array creation: Cast, Fill, Arange, with NumPy's
// conversion rules as x86 NumPy applies them.
#ifndef RESIDENT_KERNELS_CPU_CONVERT_H_
#define RESIDENT_KERNELS_CPU_CONVERT_H_

#include <cstdint>
#include <limits>
#include <type_traits>

#include "absl/status/status.h"
#include "core/elementwise_expr.h"
#include "core/scalar.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

// One element from From to To (both element types of DispatchDType):
// anything -> bool is `!= 0` (NaN is true); bool -> number is 0 or 1;
// float -> integer is NumPy's x86 conversion (resident_float_to_int in
// core/elementwise_expr.h: truncation toward zero, NaN and out of range as
// NumPy gives them); integer narrowing wraps; the rest is C++'s
// round-to-nearest conversion. float16 and bfloat16 convert through float
// and round to nearest even (core/half.h).
template <typename To, typename From>
To ConvertElement(From x);

// Casts with a complex side, as NumPy's: a real value becomes the real part
// (imaginary +0); complex -> complex converts each part; complex -> bool is
// `re != 0 || im != 0`; complex -> any other real dtype takes the real part
// and converts it as that float would (NumPy warns ComplexWarning here;
// Resident casts silently, as astype(..., casting='unsafe') does).
template <typename To, typename From>
To ConvertComplexElement(From x) {
  if constexpr (kIsComplexStorage<From> && kIsComplexStorage<To>) {
    using F = typename ResidentIsComplex<To>::component;
    return To{static_cast<F>(x.re), static_cast<F>(x.im)};
  } else if constexpr (kIsComplexStorage<From>) {
    if constexpr (kIsBoolStorage<To>) {
      return static_cast<To>(resident_cx_nonzero(x));
    } else {
      return ConvertElement<To>(x.re);
    }
  } else {
    using F = typename ResidentIsComplex<To>::component;
    return To{ConvertElement<F>(x), F(0)};
  }
}

template <typename To, typename From>
To ConvertElement(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (kIsComplexStorage<From> || kIsComplexStorage<To>) {
    return ConvertComplexElement<To>(x);
  } else if constexpr (kIsHalfStorage<From>) {
    // float16 and bfloat16 go through their exact float value; to an
    // integer by NumPy's (float16) or ml_dtypes' (bfloat16) own rules.
    const float f = resident_load(x);
    if constexpr (kIsBoolStorage<To>) {
      return static_cast<To>(f != 0.0f);
    } else if constexpr (std::is_integral_v<To> && std::is_same_v<From, Float16>) {
      return resident_half_to_int<To>(f);
    } else if constexpr (std::is_integral_v<To>) {
      return resident_bf16_to_int<To>(f);
    } else if constexpr (kIsHalfStorage<To>) {
      return resident_store<To>(f);  // float16 <-> bfloat16: one rounding
    } else {
      return static_cast<To>(f);
    }
  } else if constexpr (kIsHalfStorage<To>) {
    // Everything else rounds once, from its double value (exact for all but
    // 64-bit integers beyond 2^53, which NumPy rounds through double too).
    if constexpr (kIsBoolStorage<From>) {
      return resident_store<To>(x != 0 ? 1.0f : 0.0f);
    } else {
      return resident_store_double<To>(static_cast<double>(x));
    }
  } else if constexpr (kIsBoolStorage<To>) {
    return static_cast<To>(x != 0);
  } else if constexpr (kIsBoolStorage<From>) {
    return static_cast<To>(x != 0 ? 1 : 0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    return resident_float_to_int<To>(static_cast<double>(x));
  } else {
    return static_cast<To>(x);
  }
}

// out = a converted to out.dtype (either may be complex), a broadcast to
// out.shape. out must not
// overlap a unless both have one item size and the same start.
absl::Status Cast(ThreadPool* pool, const ConstView& a, const MutView& out);

// count contiguous elements of `from` (one element, repeated, if `one`)
// converted to `to` as Cast does, with none of Cast's layout work: the
// fused CPU runner casts a block of a region this way (real dtypes only).
absl::Status CastTile(DType from, const void* a, bool one, DType to, void* out, int64_t count);

// Every element of out = value converted to out.dtype as numpy.full does.
absl::Status Fill(ThreadPool* pool, const Scalar& value, const MutView& out);

// out (1-D) [i] = start + T(i) * delta computed in T = out.dtype's own
// arithmetic (float32 math for float32, wrapping for integers) after start
// and delta are converted to T: NumPy's arange fill loop. Bool is refused.
// out[0] = start, out[1] = second, out[i] = start + i * delta (device_op.h's
// ArangeOp).
absl::Status Arange(ThreadPool* pool, const Scalar& start, const Scalar& delta,
                    const Scalar& second, const MutView& out);

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_CONVERT_H_

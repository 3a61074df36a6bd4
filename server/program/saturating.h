// Saturating int64 arithmetic for memory bounds and op counts: a sum or
// product of sizes that each fit int64 need not, and a bound that saturates
// at INT64_MAX is simply refused by the budget.
#ifndef RESIDENT_SERVER_PROGRAM_SATURATING_H_
#define RESIDENT_SERVER_PROGRAM_SATURATING_H_

#include <cstdint>
#include <limits>

namespace resident {

inline constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

// a + b and a * b for non-negative a, b, or kSaturated past INT64_MAX.
constexpr int64_t SaturatingAdd(int64_t a, int64_t b) {
  return a > kSaturated - b ? kSaturated : a + b;
}
constexpr int64_t SaturatingMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSaturated / b ? kSaturated : a * b;
}

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_SATURATING_H_

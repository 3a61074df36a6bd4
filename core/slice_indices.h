// Python's slice.indices(dim) for one axis, reduced to (first index, step,
// length): the one definition the planner's shape inference and the CPU
// slice kernel both use.
#ifndef RESIDENT_CORE_SLICE_INDICES_H_
#define RESIDENT_CORE_SLICE_INDICES_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"

namespace resident {

struct SliceBounds {
  int64_t first = 0;  // 0 when length is 0
  int64_t step = 1;
  int64_t length = 0;
};

// CPython's PySlice_AdjustIndices: a missing bound is the default for the
// step's sign, bounds of any int64 value are clamped (never overflow), a step
// of INT64_MIN is taken as -INT64_MAX (as CPython clamps it), and a step of 0
// is INVALID_ARGUMENT (NumPy's ValueError).
absl::StatusOr<SliceBounds> SliceIndices(std::optional<int64_t> start, std::optional<int64_t> stop,
                                         int64_t step, int64_t dim);

}  // namespace resident

#endif  // RESIDENT_CORE_SLICE_INDICES_H_

#include "core/slice_indices.h"

#include <limits>

#include "absl/status/status.h"

namespace resident {

absl::StatusOr<SliceBounds> SliceIndices(std::optional<int64_t> start, std::optional<int64_t> stop,
                                         int64_t step, int64_t dim) {
  if (step == 0) return absl::InvalidArgumentError("slice step cannot be zero");
  if (step == std::numeric_limits<int64_t>::min()) step = -std::numeric_limits<int64_t>::max();
  const bool neg = step < 0;
  auto adjust = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) {
      x = x < -dim ? (neg ? -1 : 0) : x + dim;
    } else if (x >= dim) {
      x = neg ? dim - 1 : dim;
    }
    return x;
  };
  const int64_t first = adjust(start, neg ? dim - 1 : 0);
  const int64_t last = adjust(stop, neg ? -1 : dim);
  int64_t length = 0;
  if (!neg && first < last) length = (last - first - 1) / step + 1;
  if (neg && last < first) length = (first - last - 1) / (-step) + 1;
  return SliceBounds{length > 0 ? first : 0, step, length};
}

}  // namespace resident

#include "core/shape.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace resident {

absl::StatusOr<int64_t> CheckedNumElements(absl::Span<const int64_t> shape) {
  if (shape.size() > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape has ", shape.size(), " dimensions; at most ", kMaxRank, " are supported"));
  }
  int64_t n = 1;
  bool zero = false;
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("negative dimension ", d, " in shape ", ShapeString(shape)));
    }
    if (d == 0) zero = true;
  }
  for (int64_t d : shape) {
    if (d == 0) continue;
    if (n > std::numeric_limits<int64_t>::max() / d) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", ShapeString(shape), " has more elements than fit in 64 bits"));
    }
    n *= d;
  }
  return zero ? 0 : n;
}

int64_t NumElements(absl::Span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

absl::StatusOr<int64_t> CheckedNumBytes(int64_t num_elements, int64_t item_size) {
  if (num_elements < 0 || item_size <= 0 ||
      num_elements > std::numeric_limits<int64_t>::max() / item_size) {
    return absl::InvalidArgumentError(
        absl::StrCat(num_elements, " elements of ", item_size, " bytes overflow 64 bits"));
  }
  return num_elements * item_size;
}

absl::StatusOr<Shape> BroadcastShapes(absl::Span<const int64_t> a, absl::Span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("operands could not be broadcast together with shapes ", ShapeString(a), " ",
                       ShapeString(b)));
    }
  }
  return out;
}

std::string ShapeString(absl::Span<const int64_t> shape) {
  if (shape.size() == 1) return absl::StrCat("(", shape[0], ",)");
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

std::vector<int64_t> ContiguousStrides(absl::Span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

}  // namespace resident

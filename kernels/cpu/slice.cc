#include "kernels/cpu/slice.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace resident::cpu {

absl::StatusOr<SliceAxis> NormalizeSlice(const SliceSpec& s, int64_t dim) {
  return SliceIndices(s.start, s.stop, s.step, dim);
}

absl::Status Slice(ThreadPool* pool, const ConstView& a, const std::vector<SliceSpec>& specs,
                   const MutView& out) {
  const int rank = static_cast<int>(a.shape.size());
  if (static_cast<int>(specs.size()) > rank) {
    return absl::InvalidArgumentError(absl::StrCat("too many indices for array: array is ", rank,
                                                   "-dimensional, but ", specs.size(),
                                                   " were indexed"));
  }
  if (out.dtype != a.dtype) return absl::InvalidArgumentError("slice keeps the dtype");
  std::vector<SliceAxis> ax(rank);
  Shape expected;
  for (int d = 0; d < rank; ++d) {
    if (d < static_cast<int>(specs.size())) {
      auto n = NormalizeSlice(specs[d], a.shape[d]);
      if (!n.ok()) return n.status();
      ax[d] = *n;
    } else {
      ax[d] = {0, 1, a.shape[d]};
    }
    expected.push_back(ax[d].length);
  }
  if (!std::equal(expected.begin(), expected.end(), out.shape.begin(), out.shape.end())) {
    return absl::InvalidArgumentError(absl::StrCat("slice of ", ShapeString(a.shape), " gives ",
                                                   ShapeString(expected), ", not ",
                                                   ShapeString(out.shape)));
  }
  const int64_t n = NumElements(expected);
  if (n == 0) return absl::OkStatus();
  const int64_t item = ItemSize(a.dtype);
  std::vector<int64_t> stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * a.shape[d + 1];
  const auto* src = static_cast<const unsigned char*>(a.data);
  auto* dst = static_cast<unsigned char*>(out.data);
  ParallelFor(pool, n, kParallelGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t rem = i, off = 0;
      for (int d = rank - 1; d >= 0; --d) {
        const int64_t k = rem % ax[d].length;
        rem /= ax[d].length;
        off += (ax[d].first + k * ax[d].step) * stride[d];
      }
      std::memcpy(dst + i * item, src + off * item, item);
    }
  });
  return absl::OkStatus();
}

}  // namespace resident::cpu

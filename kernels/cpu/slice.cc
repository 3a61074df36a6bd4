#include "kernels/cpu/slice.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace resident::cpu {

absl::StatusOr<SliceAxis> NormalizeSlice(const SliceSpec& s, int64_t dim) {
  return SliceIndices(s.start, s.stop, s.step, dim);
}

namespace {

// count items of `item` bytes from `from` (every `step` bytes) to `to`, packed.
void CopyStrided(const unsigned char* from, int64_t step, unsigned char* to, int64_t count,
                 int64_t item) {
  auto typed = [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < count; ++i) {
      T v;
      std::memcpy(&v, from + i * step, sizeof(T));
      std::memcpy(to + i * sizeof(T), &v, sizeof(T));
    }
  };
  switch (item) {
    case 1:
      typed(uint8_t{});
      break;
    case 2:
      typed(uint16_t{});
      break;
    case 4:
      typed(uint32_t{});
      break;
    case 8:
      typed(uint64_t{});
      break;
    default:
      for (int64_t i = 0; i < count; ++i) std::memcpy(to + i * item, from + i * step, item);
  }
}

}  // namespace

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
  if (rank == 0) {
    std::memcpy(dst, src, item);
    return absl::OkStatus();
  }
  // Row by row along the last axis: a step-1 row is one memcpy, another a
  // strided loop; each row's source offset comes from its outer index.
  const SliceAxis last = ax[rank - 1];
  const int64_t rows = n / last.length;
  const int64_t row_bytes = last.length * item;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(last.length, 1));
  ParallelFor(pool, rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t rem = r, off = last.first * stride[rank - 1];
      for (int d = rank - 2; d >= 0; --d) {
        const int64_t k = rem % ax[d].length;
        rem /= ax[d].length;
        off += (ax[d].first + k * ax[d].step) * stride[d];
      }
      const unsigned char* from = src + off * item;
      unsigned char* to = dst + r * row_bytes;
      if (last.step == 1) {
        std::memcpy(to, from, static_cast<size_t>(row_bytes));
      } else {
        CopyStrided(from, last.step * item, to, last.length, item);
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace resident::cpu

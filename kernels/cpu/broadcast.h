// Broadcast layouts: how inputs of lower rank or size-1 dimensions map onto
// an output, with adjacent dimensions merged so loops run as few, long rows
// as possible.
#ifndef RESIDENT_KERNELS_CPU_BROADCAST_H_
#define RESIDENT_KERNELS_CPU_BROADCAST_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace resident::cpu {

// The output's dimensions and, per input, the element stride along each of
// them (0 where the input is broadcast), after merging.
struct BroadcastLayout {
  std::vector<int64_t> dims;                  // output dims, none of size 1
  std::vector<std::vector<int64_t>> strides;  // [input][dim]
};

// INVALID_ARGUMENT when an input does not broadcast to `out`.
absl::StatusOr<BroadcastLayout> MakeBroadcastLayout(
    absl::Span<const int64_t> out, absl::Span<const absl::Span<const int64_t>> inputs);

// Calls row(offsets, count) for each maximal run of output elements in
// [begin, end) (flat C-order indices) that lies along the innermost dimension;
// offsets[i] is input i's element offset at the run's start, and the run
// continues with stride layout.strides[i].back() in input i.
template <typename RowFn>
void ForEachRow(const BroadcastLayout& layout, int64_t begin, int64_t end, RowFn&& row) {
  const int rank = static_cast<int>(layout.dims.size());
  const int inputs = static_cast<int>(layout.strides.size());
  std::vector<int64_t> offsets(inputs, 0);
  if (rank == 0) {
    if (begin < end) row(offsets.data(), int64_t{1});
    return;
  }
  // Multi-index of `begin`.
  std::vector<int64_t> index(rank, 0);
  int64_t rest = begin;
  for (int d = rank - 1; d >= 0; --d) {
    index[d] = rest % layout.dims[d];
    rest /= layout.dims[d];
  }
  for (int i = 0; i < inputs; ++i) {
    for (int d = 0; d < rank; ++d) offsets[i] += index[d] * layout.strides[i][d];
  }
  const int64_t inner = layout.dims[rank - 1];
  int64_t pos = begin;
  while (pos < end) {
    const int64_t count = std::min(inner - index[rank - 1], end - pos);
    row(offsets.data(), count);
    pos += count;
    if (pos >= end) break;
    // Advance the multi-index by `count` (to the start of the next row).
    index[rank - 1] += count;
    for (int i = 0; i < inputs; ++i) {
      offsets[i] += count * layout.strides[i][rank - 1];
    }
    for (int d = rank - 1; d > 0 && index[d] == layout.dims[d]; --d) {
      index[d] = 0;
      ++index[d - 1];
      for (int i = 0; i < inputs; ++i) {
        offsets[i] += layout.strides[i][d - 1] - layout.dims[d] * layout.strides[i][d];
      }
    }
  }
}

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_BROADCAST_H_

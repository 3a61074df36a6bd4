// Basic slicing with steps, as NumPy's a[start:stop:step, ...]: a copy.
#ifndef RESIDENT_KERNELS_CPU_SLICE_H_
#define RESIDENT_KERNELS_CPU_SLICE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/slice_indices.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

// One axis's start:stop:step; a missing bound is NumPy's default for the
// step's sign.
struct SliceSpec {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};

// core/slice_indices.h's SliceIndices for one spec.
using SliceAxis = SliceBounds;
absl::StatusOr<SliceAxis> NormalizeSlice(const SliceSpec& s, int64_t dim);

// out = a[specs...]; axes past specs.size() are taken whole. out.shape must
// be the sliced shape and out.dtype a's.
absl::Status Slice(ThreadPool* pool, const ConstView& a, const std::vector<SliceSpec>& specs,
                   const MutView& out);

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_SLICE_H_

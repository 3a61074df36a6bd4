#include "server/device/cuda/strided_layout.h"

#include <cstddef>

namespace resident::cuda_internal {

bool BroadcastsTo(absl::Span<const int64_t> in, absl::Span<const int64_t> out) {
  if (in.size() > out.size()) return false;
  const size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] != 1 && in[d] != out[lead + d]) return false;
  }
  return true;
}

std::vector<int64_t> BroadcastStrides(absl::Span<const int64_t> in, absl::Span<const int64_t> out) {
  std::vector<int64_t> strides(out.size(), 0);
  const size_t lead = out.size() - in.size();
  int64_t stride = 1;
  for (size_t d = in.size(); d-- > 0;) {
    strides[lead + d] = in[d] == 1 ? 0 : stride;
    stride *= in[d];
  }
  return strides;
}

cuda_kernels::StridedLayout CollapseLayout(absl::Span<const int64_t> shape,
                                           absl::Span<const std::vector<int64_t>> strides) {
  cuda_kernels::StridedLayout layout;
  const size_t inputs = strides.size();
  int rank = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;  // contributes nothing to any offset
    if (rank > 0) {
      // Merge into the previous kept dimension when, for every input,
      // stepping that dimension equals stepping this one shape[d] times.
      bool mergeable = true;
      for (size_t k = 0; k < inputs; ++k) {
        if (layout.stride[k][rank - 1] != strides[k][d] * shape[d]) {
          mergeable = false;
        }
      }
      if (mergeable) {
        layout.shape[rank - 1] *= shape[d];
        for (size_t k = 0; k < inputs; ++k) {
          layout.stride[k][rank - 1] = strides[k][d];
        }
        continue;
      }
    }
    layout.shape[rank] = shape[d];
    for (size_t k = 0; k < inputs; ++k) layout.stride[k][rank] = strides[k][d];
    for (size_t k = inputs; k < 2; ++k) layout.stride[k][rank] = 0;
    ++rank;
  }
  layout.rank = rank;
  return layout;
}

}  // namespace resident::cuda_internal

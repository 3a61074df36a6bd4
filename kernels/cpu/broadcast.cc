#include "kernels/cpu/broadcast.h"

#include "absl/strings/str_cat.h"
#include "core/shape.h"

namespace resident::cpu {

absl::StatusOr<BroadcastLayout> MakeBroadcastLayout(
    absl::Span<const int64_t> out, absl::Span<const absl::Span<const int64_t>> inputs) {
  const int rank = static_cast<int>(out.size());
  const int n_in = static_cast<int>(inputs.size());
  // Unmerged strides, aligned to the output's trailing dimensions.
  std::vector<std::vector<int64_t>> full(n_in, std::vector<int64_t>(rank, 0));
  for (int i = 0; i < n_in; ++i) {
    const absl::Span<const int64_t> in = inputs[i];
    const int in_rank = static_cast<int>(in.size());
    if (in_rank > rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input shape ", ShapeString(in), " has more dimensions than output ", ShapeString(out)));
    }
    int64_t stride = 1;
    for (int d = in_rank - 1; d >= 0; --d) {
      const int od = d + rank - in_rank;
      if (in[d] == out[od]) {
        full[i][od] = in[d] == 1 ? 0 : stride;
      } else if (in[d] == 1) {
        full[i][od] = 0;
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "input shape ", ShapeString(in), " does not broadcast to ", ShapeString(out)));
      }
      stride *= in[d];
    }
  }
  BroadcastLayout layout;
  layout.strides.resize(n_in);
  for (int d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;  // contributes nothing to any offset
    const bool can_merge = !layout.dims.empty() && [&] {
      for (int i = 0; i < n_in; ++i) {
        // The previous kept dim steps exactly one whole run of this one.
        if (layout.strides[i].back() != full[i][d] * out[d]) return false;
      }
      return true;
    }();
    if (can_merge) {
      layout.dims.back() *= out[d];
      for (int i = 0; i < n_in; ++i) layout.strides[i].back() = full[i][d];
    } else {
      layout.dims.push_back(out[d]);
      for (int i = 0; i < n_in; ++i) layout.strides[i].push_back(full[i][d]);
    }
  }
  return layout;
}

}  // namespace resident::cpu

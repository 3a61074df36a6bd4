#include "server/program/axis_last.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/program/saturating.h"

namespace resident {

absl::StatusOr<int> AxisOf(const Instruction& ins, const Shape& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t a = ins.axis.value_or(-1);
  if (a < -rank || a >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        OpName(ins.op), ": axis ", a, " is out of bounds for array of dimension ", rank));
  }
  return static_cast<int>(a < 0 ? a + rank : a);
}

// The permutation that moves `axis` last, and its inverse.
std::vector<int> ToLast(int rank, int axis) { return ToLast(rank, absl::MakeConstSpan(&axis, 1)); }
std::vector<int> ToLast(int rank, absl::Span<const int> axes) {
  std::vector<int> perm;
  for (int d = 0; d < rank; ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) perm.push_back(d);
  }
  perm.insert(perm.end(), axes.begin(), axes.end());
  return perm;
}
std::vector<int> Inverse(const std::vector<int>& perm) {
  std::vector<int> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int>(i);
  return inv;
}

// `a` with its axes permuted (itself when the permutation is the identity).
absl::StatusOr<DeviceArray> Permuted(OpContext& ctx, DeviceArray a, const std::vector<int>& perm) {
  Shape s;
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) {
    s.push_back(a.shape[perm[i]]);
    identity &= perm[i] == static_cast<int>(i);
  }
  if (identity || a.num_elements() == 0) return DeviceArray{a.buffer, a.dtype, std::move(s)};
  ASSIGN_OR_RETURN(DeviceArray out, Allocate(ctx, a.dtype, std::move(s)));
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, TransposeOp{perm, &a, &out}));
  return out;
}

// What a transpose to the axis-last layout and back may copy: the operand
// and the result once more each.
int64_t AxisMoves(const ValueType& operand, const ValueType& result) {
  return SaturatingAdd(operand.nbytes(), result.nbytes());
}

}  // namespace resident

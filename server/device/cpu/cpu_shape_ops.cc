#include "server/device/cpu/cpu_shape_ops.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "kernels/cpu/concat.h"
#include "kernels/cpu/reduce_axes.h"
#include "kernels/cpu/slice.h"
#include "server/device/cpu/views.h"

namespace resident {
namespace {

absl::Status RefuseOverlap(const char* what, const DeviceArray& in, const DeviceArray& out) {
  if (!Overlaps(in, out)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, ": output shares an input's buffer"));
}

}  // namespace

absl::Status RunReduceAxes(cpu::ThreadPool* pool, const ReduceAxesOp& op) {
  const char* name = ReduceKindName(op.kind);
  RETURN_IF_ERROR(RefuseOverlap(name, *op.in, *op.out));
  const int rank = static_cast<int>(op.in->shape.size());
  for (size_t i = 0; i < op.axes.size(); ++i) {
    if (op.axes[i] < 0 || op.axes[i] >= rank || (i > 0 && op.axes[i] <= op.axes[i - 1])) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": axes must be sorted, distinct and in [0, ", rank, ")"));
    }
  }
  // Every axis is the kernel's axis=None (argmax/argmin take no axis list).
  std::optional<std::vector<int>> axes;
  if (static_cast<int>(op.axes.size()) != rank) axes.emplace(op.axes.begin(), op.axes.end());
  return cpu::ReduceAxes(pool, op.kind, View(*op.in), axes, /*keepdims=*/false,
                         MutableView(*op.out));
}

absl::Status RunSlice(cpu::ThreadPool* pool, const SliceOp& op) {
  const DeviceArray &in = *op.in, &out = *op.out;
  RETURN_IF_ERROR(RefuseOverlap("slice", in, out));
  const size_t rank = in.shape.size();
  if (op.axes.size() != rank || out.shape.size() != rank) {
    return absl::InvalidArgumentError(absl::StrCat("slice: ", op.axes.size(), " axes for ",
                                                   ShapeString(in.shape), " -> ",
                                                   ShapeString(out.shape)));
  }
  // Each axis as the explicit start:stop:step the kernel normalises back to
  // (first, step, length), after checking that it stays inside the input.
  std::vector<cpu::SliceSpec> specs(rank);
  for (size_t d = 0; d < rank; ++d) {
    const SliceAxisSpec& a = op.axes[d];
    const int64_t len = out.shape[d];
    if (a.step == 0) return absl::InvalidArgumentError("slice step cannot be zero");
    if (len > 0) {
      const __int128 last =
          static_cast<__int128>(a.first) + static_cast<__int128>(len - 1) * a.step;
      if (a.first < 0 || a.first >= in.shape[d] || last < 0 || last >= in.shape[d]) {
        return absl::InvalidArgumentError(
            absl::StrCat("slice: axis ", d, " leaves the input ", ShapeString(in.shape)));
      }
      // A stop one step past the last element; -1 would wrap, so a
      // descending slice that ends at 0 leaves stop unset (NumPy's default).
      // (clamped to the extent, which the kernel's clamping gives anyway).
      __int128 stop = last + a.step;
      if (stop > in.shape[d]) stop = in.shape[d];
      specs[d].start = a.first;
      if (stop >= 0) specs[d].stop = static_cast<int64_t>(stop);
    } else {
      specs[d].start = 0;
      specs[d].stop = 0;
    }
    specs[d].step = len > 0 ? a.step : 1;
  }
  return cpu::Slice(pool, View(in), specs, MutableView(out));
}

absl::Status RunConcat(cpu::ThreadPool* pool, const ConcatOp& op) {
  std::vector<cpu::ConstView> ins;
  ins.reserve(op.ins.size());
  for (const DeviceArray& a : op.ins) {
    RETURN_IF_ERROR(RefuseOverlap("concatenate", a, *op.out));
    ins.push_back(View(a));
  }
  if (ins.empty()) return absl::InvalidArgumentError("need at least one array to concatenate");
  return cpu::Concatenate(pool, ins, op.axis, MutableView(*op.out));
}

}  // namespace resident

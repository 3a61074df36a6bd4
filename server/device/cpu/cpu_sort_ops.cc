#include "server/device/cpu/cpu_sort_ops.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "kernels/cpu/sort.h"
#include "server/device/cpu/views.h"

namespace resident {
namespace {

absl::Status Check(bool ok, const char* what, const std::string& why) {
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", why));
}

absl::Status NoOverlap(const char* what, const DeviceArray& in, const DeviceArray& out) {
  return Check(!Overlaps(in, out), what, "output shares an input's buffer");
}

// The leading dimensions of two arrays of one rank agree.
bool SameRows(const Shape& a, const Shape& b) {
  return a.size() == b.size() && !a.empty() && std::equal(a.begin(), a.end() - 1, b.begin());
}

}  // namespace

absl::Status RunArgsort(cpu::ThreadPool* pool, const ArgsortOp& op) {
  const DeviceArray &in = *op.in, &out = *op.out;
  RETURN_IF_ERROR(NoOverlap("argsort", in, out));
  const DType want = op.values ? in.dtype : DType::kInt64;
  RETURN_IF_ERROR(Check(!in.shape.empty() && out.shape == in.shape && out.dtype == want, "argsort",
                        "needs an array of rank >= 1 and an output of its shape (int64 "
                        "indices, or its dtype for the values)"));
  if (!op.values) return cpu::ArgsortRows(pool, View(in), op.descending, MutableView(out));
  return cpu::SortRows(pool, View(in), op.descending, MutableView(out));
}

absl::Status RunTakeAlongAxis(cpu::ThreadPool* pool, const TakeAlongAxisOp& op) {
  const DeviceArray &in = *op.in, &idx = *op.idx, &out = *op.out;
  RETURN_IF_ERROR(NoOverlap("take_along_axis", in, out));
  RETURN_IF_ERROR(NoOverlap("take_along_axis", idx, out));
  RETURN_IF_ERROR(Check(idx.dtype == DType::kInt64 && out.dtype == in.dtype &&
                            out.shape == idx.shape && SameRows(in.shape, idx.shape),
                        "take_along_axis",
                        "needs int64 indices of the output's shape and the input's rows"));
  return cpu::TakeAlongRows(pool, View(in), View(idx), MutableView(out));
}

absl::Status RunExtract(cpu::ThreadPool* pool, const ExtractOp& op) {
  RETURN_IF_ERROR(NoOverlap("extract", *op.cond, *op.out));
  if (op.values == nullptr)
    return cpu::Extract(pool, View(*op.cond), nullptr, MutableView(*op.out));
  RETURN_IF_ERROR(NoOverlap("extract", *op.values, *op.out));
  const cpu::ConstView values = View(*op.values);
  return cpu::Extract(pool, View(*op.cond), &values, MutableView(*op.out));
}

absl::Status RunScan(cpu::ThreadPool* pool, const ScanOp& op) {
  const DeviceArray &in = *op.in, &out = *op.out;
  RETURN_IF_ERROR(NoOverlap("scan", in, out));
  RETURN_IF_ERROR(Check(!in.shape.empty() && out.shape == in.shape && out.dtype == in.dtype &&
                            DefinedFor(DeviceOpKind::kScan, in.dtype),
                        "scan", "needs a non-bool array of rank >= 1 and an output like it"));
  return cpu::ScanRows(pool, op.kind, View(in), MutableView(out));
}

}  // namespace resident

// The mask-selection family's registry functions: flatnonzero(a) and
// extract(condition, arr), NumPy's. Their result's length depends on the
// data, so the client learns it first (it evaluates the condition's count)
// and declares it as the instruction's shape, (count,); the backend checks
// the declaration against the data before writing anything.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/program/op_registry.h"
#include "server/program/saturating.h"

namespace resident {

absl::StatusOr<ValueType> InferExtract(const Instruction& ins, absl::Span<const ValueType> ops) {
  const char* name = OpName(ins.op);
  const ValueType& cond = ops[0];
  const ValueType& values = ops.back();
  if (ins.op == OpKind::kExtract && cond.num_elements() != values.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat("extract: the condition has ",
                                                   cond.num_elements(), " elements and the array ",
                                                   values.num_elements(), "; they must match"));
  }
  if (ins.shape.size() != 1 || ins.shape[0] < 0 || ins.shape[0] > cond.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": shape must be (count,), the condition's number of true elements (0 to ",
        cond.num_elements(), ")"));
  }
  const DType dtype = ins.op == OpKind::kExtract ? values.dtype : DType::kInt64;
  RETURN_IF_ERROR(CheckedNumBytes(ins.shape[0], ItemSize(dtype)).status());
  return ValueType{dtype, ins.shape};
}

// The condition as bool, the result, and the backends' scratch (CUB's
// select keeps a little state per tile: well under 1 MiB plus a byte an
// element).
int64_t ExtractBound(const Instruction&, absl::Span<const ValueType> ops, const ValueType& result) {
  const int64_t n = ops[0].num_elements();
  return SaturatingAdd(SaturatingAdd(result.nbytes(), SaturatingMul(n, 2)), int64_t{1} << 20);
}

absl::StatusOr<DeviceArray> RunExtract(OpContext& ctx, const Instruction& ins,
                                       std::vector<DeviceArray> args, const ValueType& out) {
  ASSIGN_OR_RETURN(DeviceArray cond, Convert(ctx, std::move(args[0]), DType::kBool));
  ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
  const DeviceArray* values = ins.op == OpKind::kExtract ? &args[1] : nullptr;
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, ExtractOp{&cond, values, &r}));
  return r;
}

}  // namespace resident

// Inference of reductions over axis sets (sum, prod, mean, max, min, argmax,
// argmin, any, all) and of the shaping ops (slice, concatenate, stack,
// broadcast_to, squeeze, expand_dims), with NumPy's result dtypes and its
// errors as INVALID_ARGUMENT. infer.cc's InferType and ops.cc's RunOp hand
// these ops here.
#ifndef RESIDENT_SERVER_PROGRAM_INFER_SHAPE_H_
#define RESIDENT_SERVER_PROGRAM_INFER_SHAPE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/device/device_op.h"
#include "server/program/infer.h"
#include "server/program/program.h"

namespace resident {

// The device reduction of a reduction op; nullopt for every other op.
std::optional<ReduceKind> ReduceKindOf(OpKind op);
// slice, concatenate, stack, broadcast_to, squeeze, expand_dims.
bool IsShapingOp(OpKind op);
// squeeze and expand_dims: the result shares its operand's buffer.
inline bool SharesOperandBuffer(OpKind op) {
  return op == OpKind::kSqueeze || op == OpKind::kExpandDims;
}

// The reduced axes of `ins` over a rank-`rank` operand: sorted, distinct,
// non-negative (every axis when none is given).
absl::StatusOr<std::vector<int>> ReductionAxes(const Instruction& ins, int rank);

// A slice of `shape`: one spec per axis (axes past ins.slices whole) and the
// resulting shape.
struct NormalizedSlice {
  std::vector<SliceAxisSpec> axes;
  Shape shape;
};
absl::StatusOr<NormalizedSlice> NormalizeSlices(const Instruction& ins,
                                                absl::Span<const int64_t> shape);

absl::StatusOr<ValueType> InferReduction(const Instruction& ins, absl::Span<const ValueType> ops);
absl::StatusOr<ValueType> InferShaping(const Instruction& ins, absl::Span<const ValueType> ops);
// AllocationBound for the shaping ops (promoted copies of concatenate's and
// stack's operands; nothing for squeeze/expand_dims).
int64_t ShapingAllocationBound(const Instruction& ins, absl::Span<const ValueType> ops,
                               const ValueType& result);

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_INFER_SHAPE_H_

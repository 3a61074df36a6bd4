// Inference of reductions over axis sets (sum, prod, mean, max, min, argmax,
// argmin, any, all) and of the shaping ops (slice, concatenate, stack,
// broadcast_to, squeeze, expand_dims), with NumPy's result dtypes and its
// errors as INVALID_ARGUMENT: the helpers the registry rows' functions
// share (op_registry.h declares the rows' functions).
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

// The device reduction of a reduction op (its registry row's); nullopt for
// every other op.
std::optional<ReduceKind> ReduceKindOf(OpKind op);

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

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_INFER_SHAPE_H_

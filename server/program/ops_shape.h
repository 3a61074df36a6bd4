// Lowering of reductions and shaping ops onto the Backend (see
// infer_shape.h for the ops). keepdims, squeeze and expand_dims are
// reshapes of metadata; slices, concatenations and broadcasts are copies.
#ifndef RESIDENT_SERVER_PROGRAM_OPS_SHAPE_H_
#define RESIDENT_SERVER_PROGRAM_OPS_SHAPE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "server/program/ops.h"

namespace resident {

absl::StatusOr<DeviceArray> RunReduction(OpContext& ctx, const Instruction& ins,
                                         std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunShaping(OpContext& ctx, const Instruction& ins,
                                       std::vector<DeviceArray> args, const ValueType& out);

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_OPS_SHAPE_H_

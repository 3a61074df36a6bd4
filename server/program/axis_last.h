// Ops that work along one axis (sorting, scans, FFTs) lower the same way:
// the operand's axis moved last (a transpose copy, unless it already is),
// the device op run over rows of the last dimension, the axis moved back.
#ifndef RESIDENT_SERVER_PROGRAM_AXIS_LAST_H_
#define RESIDENT_SERVER_PROGRAM_AXIS_LAST_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/program/ops.h"
#include "server/program/program.h"

namespace resident {

// The instruction's axis, normalised: ins.axis (default -1, the last).
// INVALID_ARGUMENT naming the op when out of range (a 0-d shape has none).
absl::StatusOr<int> AxisOf(const Instruction& ins, const Shape& shape);

// The permutation that moves `axis` last (or `axes`, in their order, after
// the others in theirs), and a permutation's inverse.
std::vector<int> ToLast(int rank, int axis);
std::vector<int> ToLast(int rank, absl::Span<const int> axes);
std::vector<int> Inverse(const std::vector<int>& perm);

// `a` with its axes permuted (itself, reshaped, when the permutation is the
// identity or a is empty).
absl::StatusOr<DeviceArray> Permuted(OpContext& ctx, DeviceArray a, const std::vector<int>& perm);

// What a transpose to the axis-last layout and back may copy: the operand
// and the result once more each.
int64_t AxisMoves(const ValueType& operand, const ValueType& result);

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_AXIS_LAST_H_

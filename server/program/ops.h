// Lowering of single instructions onto the Backend: NumPy promotion by
// inserted casts, dot/matmul onto batched matrix products, in-place reuse of
// buffers no one else holds.
#ifndef RESIDENT_SERVER_PROGRAM_OPS_H_
#define RESIDENT_SERVER_PROGRAM_OPS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "server/device/device.h"
#include "server/program/infer.h"
#include "server/program/program.h"

namespace resident {

// What the planner decides once for an instruction's lowering (its
// OpDef::lower), so that running it, in every trip of a loop too, decides
// nothing again.
struct Lowering {
  DType compute = DType::kFloat64;  // elementwise: the dtype it computes in
  // Elementwise, where, clip: each scalar operand as a fill of the dtype
  // it is computed in; ones, zeros, full: the fill.
  std::vector<Scalar> fills;
  ArangeParams arange;  // arange (of int64 when the result is bool)
};

struct OpContext {
  Device& device;
  Stream& stream;
  MemoryBudget::Reservation* reservation;
  // The running instruction's lowering, for an op that has one; set by the
  // executor before each instruction.
  const Lowering* lowering = nullptr;
};

// A new array of `dtype` and `shape`, its bytes counted against the
// context's reservation.
absl::StatusOr<DeviceArray> Allocate(OpContext& ctx, DType dtype, Shape shape);
// `a` converted to `dtype` (the same array when it already is).
absl::StatusOr<DeviceArray> Convert(OpContext& ctx, DeviceArray a, DType dtype);
// One table op over `args` (Arity(kind) arrays), each first cast to the
// compute dtype `ct`, the result converted to `out`'s dtype: for lowerings
// that compose table ops of dtypes they know.
absl::StatusOr<DeviceArray> RunElementwiseArrays(OpContext& ctx, ElementwiseKind kind, DType ct,
                                                 std::vector<DeviceArray> args,
                                                 const ValueType& out);

// Runs `ins` (not a loop) on `args`, which the caller hands over: a buffer
// referenced only by `args` may be overwritten with the result. `out` is the
// type the planner inferred.
absl::StatusOr<DeviceArray> RunOp(OpContext& ctx, const Instruction& ins,
                                  std::vector<DeviceArray> args, const ValueType& out);
// RunOp for an op of several results (OpDef::run_many): `outs` are their
// types, the results come back in that order.
absl::StatusOr<std::vector<DeviceArray>> RunOpResults(OpContext& ctx, const Instruction& ins,
                                                      std::vector<DeviceArray> args,
                                                      absl::Span<const ValueType> outs);

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_OPS_H_

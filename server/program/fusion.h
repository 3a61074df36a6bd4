// Loop fusion: a loop whose body is elementwise over one shape becomes one
// FusedLoopOp (server/device/device_op.h), so each element's values stay in registers for
// every iteration instead of crossing memory once per op.
#ifndef RESIDENT_SERVER_PROGRAM_FUSION_H_
#define RESIDENT_SERVER_PROGRAM_FUSION_H_

#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "core/handle_id.h"
#include "server/device/device_op.h"
#include "server/program/planner.h"

namespace resident {

struct FusedLoopPlan {
  FusedLoopSpec spec;
  // Handles the body names directly; they follow the loop's operands as
  // extra invariant params.
  std::vector<HandleId> handle_params;
  // Scalar operands of the body's ops, as one-element params after the
  // handle params: the executor fills each with `value` in `dtype` (the op's
  // compute dtype, as the op-by-op lowering does).
  struct ScalarParam {
    Scalar value;
    DType dtype;
  };
  std::vector<ScalarParam> scalar_params;
};

// The fused form of loop instruction `loop` (its body planned as `body`,
// its operands of `operand_types`), or nullopt when the body has an op that
// is not elementwise, a value of another shape than the carried values
// (other than one-element invariants), or no carried value.
std::optional<FusedLoopPlan> PlanFusedLoop(
    const Instruction& loop, const PlannedScope& body, absl::Span<const ValueType> operand_types,
    const absl::flat_hash_map<HandleId, DeviceArray>& inputs);

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_FUSION_H_

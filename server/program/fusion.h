// Loop fusion: a loop whose body is elementwise over one shape becomes one
// FusedLoopOp (server/device/device_op.h), so each element's values stay in registers for
// every iteration instead of crossing memory once per op. Region fusion: a
// straight-line run of elementwise ops over one shape (b = x * y; c = b + 1;
// d = sqrt(c)) becomes one FusedLoopOp of one trip that writes only the
// values read after the run, so the intermediates never reach memory.
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

// Instructions [begin, end) of a scope as one fused op: a spec with no
// carried values and one trip, whose yields are the slots written out.
struct FusedRegion {
  int begin = 0, end = 0;
  Shape shape;         // every result's, and the outs'
  FusedLoopPlan plan;  // handle_params unused: `params` names every array param
  // The arrays read from outside the region, in param order (values defined
  // before it, or handles); the scalar params follow them.
  std::vector<Operand> params;
  std::vector<int> outputs;  // the values written, one per spec.yields
};

// The fused form of instructions [begin, end) of `scope` (at least two,
// each elementwise or astype, every result of one shape, every array read
// from outside of that shape, one element, or broadcast to it as
// FusedBroadcast allows) writing the values
// `live_outs` (defined in the region, read after it or kept); nullopt when
// it does not fuse.
std::optional<FusedRegion> PlanFusedRegion(
    const PlannedScope& scope, int begin, int end, absl::Span<const int> live_outs,
    const absl::flat_hash_map<HandleId, DeviceArray>& inputs);

// Regions longer than this are split: one NVRTC compile (on CUDA) per
// distinct region, so a long recorded chain of mixed ops stays cheap to
// compile and each piece is still one pass over memory.
inline constexpr int kMaxRegionOps = 64;

// The regions of `scope` (planned but for liveness: types and first_output
// set) to fuse: maximal runs of at least two elementwise or astype
// instructions whose results share one shape, split at kMaxRegionOps.
// `last_use[v]` is the last instruction that reads value v (past the end
// for values that outlive the scope); the values a region defines that are
// read after it are its outputs.
std::vector<FusedRegion> FindFusedRegions(const PlannedScope& scope,
                                          absl::Span<const int64_t> last_use,
                                          const absl::flat_hash_map<HandleId, DeviceArray>& inputs);

// The fused form of loop instruction `loop` (its body planned as `body`,
// its operands of `operand_types`), or nullopt when the body has an op that
// is not elementwise, a value of another shape than the carried values
// (other than invariants of one element or broadcast), or no carried value.
std::optional<FusedLoopPlan> PlanFusedLoop(
    const Instruction& loop, const PlannedScope& body, absl::Span<const ValueType> operand_types,
    const absl::flat_hash_map<HandleId, DeviceArray>& inputs);

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_FUSION_H_

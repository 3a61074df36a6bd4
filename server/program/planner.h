// Validation and planning of a whole program before anything runs.
//
// PlanProgram checks every operand, handle, dtype, shape, loop and output,
// infers each value's type, finds where each value dies, and bounds the
// device memory the program can need, so that a program that cannot run is
// refused before any allocation.
#ifndef RESIDENT_SERVER_PROGRAM_PLANNER_H_
#define RESIDENT_SERVER_PROGRAM_PLANNER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/handle_id.h"
#include "server/device/backend.h"
#include "server/program/infer.h"
#include "server/program/ops.h"
#include "server/program/program.h"

namespace resident {

struct ProgramLimits {
  int max_loop_depth = 8;  // loops nested deeper are refused
  int64_t max_trip_count = int64_t{1} << 30;
  int64_t max_instructions = 1 << 20;  // in the program text, all scopes
  // Trip counts multiplied out; an iteration of an empty body counts as one.
  int64_t max_executed_ops = int64_t{1} << 34;
  int64_t max_inline_bytes = 4 << 20;  // per program, returned inline
  // Whether loops whose bodies a device graph can record are planned to run
  // as one (graph_loop_at, with the arena in the memory bound): set for a
  // device that records them (Backend::CapturesLoops) unless the server's
  // --loop-graphs=false.
  bool loop_graphs = false;
};

struct FusedRegion;    // server/program/fusion.h
struct FusedLoopPlan;  // server/program/fusion.h

// A scope (the program or a loop body) with its inferred types.
struct PlannedScope {
  const Program* program = nullptr;
  int num_params = 0;
  std::vector<ValueType> types;                       // params, then instruction outputs
  std::vector<int> first_output;                      // per instruction: its first value id
  std::vector<std::vector<int>> dies_after;           // per instruction: values to free
  std::vector<int> unused_params;                     // freed before the first instruction
  std::vector<std::unique_ptr<PlannedScope>> bodies;  // per instruction; loops, whiles
  std::vector<std::unique_ptr<PlannedScope>> conds;   // per instruction; whiles' conditions
  // Per instruction: a while's ops per trip (body and condition), which
  // Plan::executed_ops counts max_trips times.
  std::vector<int64_t> trip_ops;
  // Per instruction: the fused region (fusion.h) that begins there, or null.
  // The executor runs a region as one op where the backend takes it, else
  // its instructions one by one.
  std::vector<std::shared_ptr<const FusedRegion>> region_at;
  // Per instruction: a loop's fused form (fusion.h's PlanFusedLoop), or null
  // when its body does not fuse. The executor runs it as one op where the
  // backend takes it, else trip by trip.
  std::vector<std::shared_ptr<const FusedLoopPlan>> fused_loop_at;
  // Per instruction: 1 for a loop or while to run as a device graph after
  // its first trip (ProgramLimits::loop_graphs, and every op of its body and
  // condition one a graph can record: OpDef::graph). The executor runs those
  // trips as one graph launch per round, and trip by trip where the capture
  // fails.
  std::vector<uint8_t> graph_loop_at;
  // Per instruction: the bytes of such a loop's arena (LoopGraphArenaBytes),
  // which the scope's peak includes; 0 for others.
  std::vector<int64_t> graph_arena_bytes;
  // Per instruction: its OpDef::lower's answer, or null for an op without
  // one. The executor hands it to the run function.
  std::vector<std::unique_ptr<const Lowering>> lowering_at;
  int64_t peak_bytes = 0;  // bound on bytes allocated in the scope
};

struct Plan {
  std::shared_ptr<const Program> program;
  PlannedScope top;
  // Every handle the program names, resolved; holding them keeps their
  // buffers alive while the program runs even if released meanwhile.
  absl::flat_hash_map<HandleId, DeviceArray> inputs;
  std::vector<OutputSpec> outputs;
  std::vector<ValueType> output_types;  // per output
  int64_t peak_bytes = 0;               // device bytes the run may allocate at once
  int64_t executed_ops = 0;
  // Runs of dependent elementwise ops folded into loops (chain_folding.h);
  // `program` is then the folded form.
  int folded_runs = 0;
};

// The arena a loop graph's trip is recorded into (Backend::CaptureLoop):
// the body's and the condition's planned peaks, room to set `carried_bytes`
// of results aside, and a margin for what the bounds do not count (CUB's
// scratch, a fused reduction's partials, 256-byte alignment).
int64_t LoopGraphArenaBytes(const PlannedScope& body, const PlannedScope* cond,
                            int64_t carried_bytes);

// Resolves a handle to its array: NOT_FOUND for unknown, released and other
// tenants' handles alike.
using HandleResolver = std::function<absl::StatusOr<DeviceArray>(const HandleId&)>;

// INVALID_ARGUMENT for a malformed program (messages name the instruction
// path, e.g. "instruction 2 (loop), body instruction 0 (add): ..."),
// NOT_FOUND for a handle, RESOURCE_EXHAUSTED for inline results over
// the limit.
absl::StatusOr<Plan> PlanProgram(const std::shared_ptr<const Program>& program,
                                 const std::vector<OutputSpec>& outputs,
                                 const HandleResolver& resolve, const ProgramLimits& limits);

// PlanProgram without chain folding: `program` exactly as given.
absl::StatusOr<Plan> PlanUnfolded(const std::shared_ptr<const Program>& program,
                                  std::vector<OutputSpec> outputs, const HandleResolver& resolve,
                                  const ProgramLimits& limits);

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_PLANNER_H_

// Runs a planned program on a device stream.
//
//   ASSIGN_OR_RETURN(Plan plan, PlanProgram(program, outputs, resolve, limits));
//   ASSIGN_OR_RETURN(auto reservation, device.budget().Reserve(plan.peak_bytes));
//   ASSIGN_OR_RETURN(std::vector<DeviceArray> results,
//                    Execute(plan, device, stream, &reservation, {}));
#ifndef RESIDENT_SERVER_PROGRAM_EXECUTOR_H_
#define RESIDENT_SERVER_PROGRAM_EXECUTOR_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "server/device/device.h"
#include "server/program/planner.h"

namespace resident {

// Where one program's time went, in seconds, each filled by the layer that
// runs that phase (the session layer: plan, results; Execute: launch, sync).
// Exported as resident_run_phase_seconds so a deployment (and bench/) can
// see which part of a round trip costs what without a profiler.
struct RunPhases {
  double plan = 0;     // validation, inference, liveness, folding
  double launch = 0;   // allocations and enqueueing every op
  double sync = 0;     // waiting for the device to finish
  double results = 0;  // describing outputs, inline data, registering handles
};

// The fused ops a run made: loops whose body ran as one op, and
// straight-line regions of elementwise ops (fusion.h) run as one, of which
// `reductions` ended in a reduction computed in the same op.
struct FusionCounts {
  int64_t loops = 0;
  int64_t regions = 0;
  int64_t reductions = 0;
};

// The while loops a run made, their trips, and those that stopped at
// max_trips; of them, and of the fixed-trip loops that did not fuse, those
// whose trips after the first ran as a device graph (Backend::CaptureLoop),
// and the captures that failed (those loops went on trip by trip, the
// condition read back each trip).
struct LoopCounts {
  int64_t whiles = 0;
  int64_t while_trips = 0;
  int64_t capped = 0;
  int64_t graph_whiles = 0;
  int64_t graph_loops = 0;  // fixed-trip
  int64_t graph_fallbacks = 0;
  // Of the graphs, those the backend made ready by updating one kept from
  // an earlier loop of the same shape (Backend::SetLoopGraphCache), and the
  // seconds recording and readying all of them took.
  int64_t graph_cache_hits = 0;
  double graph_setup_seconds = 0;
  // The graphs' arenas: the bytes reserved for them (the planner's
  // LoopGraphArenaBytes, or four times that after a retry) and the most
  // each recorded trip held at once, where the backend knows it.
  int64_t graph_arena_bytes = 0;
  int64_t graph_arena_peak_bytes = 0;
  // Ops of the trips whiles did not take: Plan::executed_ops less this is
  // what ran.
  int64_t ops_not_run = 0;
};

struct ExecOptions {
  // Called before every op; a non-OK status (deadline passed, cancelled,
  // server draining) stops the program there and is returned.
  std::function<absl::Status()> check_continue;
  // Filled when set.
  RunPhases* phases = nullptr;
  FusionCounts* fused = nullptr;  // added to when set
  LoopCounts* loops = nullptr;    // added to when set
};

// The arrays of plan.outputs, in order, once the device has finished them.
// Intermediates are freed as soon as they die and their buffers reused in
// place where no one else holds them. On error every intermediate is freed
// and nothing else changes.
absl::StatusOr<std::vector<DeviceArray>> Execute(const Plan& plan, Device& device, Stream& stream,
                                                 MemoryBudget::Reservation* reservation,
                                                 const ExecOptions& options);

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_EXECUTOR_H_

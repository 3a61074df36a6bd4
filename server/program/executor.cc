#include "server/program/executor.h"

#include "absl/time/clock.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/log.h"
#include "core/status_macros.h"
#include "server/device/interrupt.h"
#include "server/program/fusion.h"
#include "server/program/ops.h"
#include "server/program/saturating.h"

namespace resident {
namespace {

// A fused loop's first round does the device's fused_round_work()
// element-steps (about a millisecond on a GPU, tens of milliseconds on two
// CPU cores). Each later round is sized from the last one's time to take
// about kFusedRoundTime (growing at most kMaxRoundGrowth-fold), so a GPU
// runs a long loop in one to three passes over memory, each round costing a
// launch and a synchronisation, while a deadline or a close still stops the
// loop within about that time.
constexpr std::chrono::microseconds kFusedRoundTime{10000};
constexpr double kMaxRoundGrowth = 64;

// The trips of the next round, after a round of `trips` took `took`.
int64_t NextRoundTrips(int64_t trips, std::chrono::steady_clock::duration took, int64_t left) {
  const double us = std::max(1.0, std::chrono::duration<double, std::micro>(took).count());
  const double growth =
      std::clamp(static_cast<double>(kFusedRoundTime.count()) / us, 1.0, kMaxRoundGrowth);
  const double next = static_cast<double>(trips) * growth;
  return next >= static_cast<double>(left) ? left
                                           : std::max<int64_t>(1, static_cast<int64_t>(next));
}

// A loop graph's first round takes this many trips; later rounds are sized
// by time as fused loops' are (NextRoundTrips).
constexpr int64_t kFirstGraphRound = 4;
// A fixed-trip loop with fewer trips left than this after its first runs
// on trip by trip: recording costs about as much as a few trips' launches.
constexpr int64_t kMinGraphTrips = 4;

// A carried value as a loop graph's body sees it: a view of the slot the
// executor owns. Dropping it frees nothing, and when the body holds the only
// view the trip may overwrite the value in place, as it may any value no
// one else holds (the planner's liveness says the trip no longer reads it).
class BorrowedBuffer final : public Buffer {
 public:
  explicit BorrowedBuffer(const Buffer* inner) : inner_(inner) {}
  void* data() const override { return inner_->data(); }
  int64_t size() const override { return inner_->size(); }
  const Buffer* backing() const override { return inner_->backing(); }

 private:
  const Buffer* inner_;
};

// A loop scope's values: its carried values, then the invariants, then
// room for its own.
std::vector<DeviceArray> LoopScopeValues(const PlannedScope& scope,
                                         std::vector<DeviceArray> carried,
                                         const std::vector<DeviceArray>& invariants) {
  std::vector<DeviceArray> values = std::move(carried);
  values.insert(values.end(), invariants.begin(), invariants.end());
  values.resize(scope.types.size());
  return values;
}

// Whether `backend` should run `spec` as one fused pass: it supports fused
// loops in every dtype the loop holds.
bool ShouldFuse(const Backend& backend, const FusedLoopSpec& spec) {
  const auto supports = [&](DType d) { return backend.Supports(DeviceOpKind::kFusedLoop, d); };
  return std::all_of(spec.param_dtypes.begin(), spec.param_dtypes.end(), supports) &&
         std::all_of(spec.steps.begin(), spec.steps.end(),
                     [&](const FusedLoopSpec::Step& st) { return supports(st.dtype); }) &&
         backend.FusesSpec(spec);
}

class Executor {
 public:
  Executor(const Plan& plan, OpContext ctx, const ExecOptions& options)
      : plan_(plan), ctx_(ctx), options_(options) {}

  absl::Status RunScope(const PlannedScope& scope, std::vector<DeviceArray>& values);

 private:
  DeviceArray Lookup(const Operand& o, const std::vector<DeviceArray>& values) {
    if (o.is_handle) return plan_.inputs.at(o.handle);
    return values[o.value];
  }
  // A loop body's results, its next carried values.
  std::vector<DeviceArray> Yields(const Program& body, const std::vector<DeviceArray>& values) {
    std::vector<DeviceArray> out;
    out.reserve(body.yields.size());
    for (const Operand& y : body.yields) out.push_back(Lookup(y, values));
    return out;
  }
  // `arena_bytes`: the plan's arena for running it as a graph (0: not so).
  absl::Status RunLoop(const Instruction& ins, const PlannedScope& body, const FusedLoopPlan* fused,
                       int64_t arena_bytes, std::vector<DeviceArray> args,
                       std::vector<DeviceArray>& values, int first_output);
  // A while: the condition runs on the device and its one byte is read
  // back before each trip, until, where the plan gave it an arena and the
  // backend records graphs, the trips after the first run as a device graph
  // (RunGraphTrips).
  absl::Status RunWhile(const Instruction& ins, const PlannedScope& body, const PlannedScope& cond,
                        int64_t trip_ops, int64_t arena_bytes, std::vector<DeviceArray> args,
                        std::vector<DeviceArray>& values, int first_output);
  // Whether a loop the plan gave an arena is recorded here (a plan made
  // without knowing the device may give one to a backend that cannot).
  bool Graphs(int64_t arena_bytes) const {
    return arena_bytes > 0 && ctx_.device.backend().CapturesLoops();
  }
  // The rest of a loop (cond null: until ins.trip_count) or while (while
  // its condition holds, at most ins.trip_count trips in all), after
  // `trips` trips, recorded as one device graph and run in rounds. On
  // return `current` holds the carried values, `trips` the trips taken and
  // `holds` whether the condition held after the last. False when the
  // backend recorded nothing: the caller goes on trip by trip from
  // `current` (the same values, maybe in new buffers).
  absl::StatusOr<bool> RunGraphTrips(const Instruction& ins, const PlannedScope& body,
                                     const PlannedScope* cond, std::vector<DeviceArray>& current,
                                     const std::vector<DeviceArray>& invariants,
                                     int64_t arena_bytes, int64_t& trips, bool& holds);
  // A 0-d array of `dtype` holding `value`.
  absl::StatusOr<DeviceArray> ScalarArray(DType dtype, const Scalar& value);
  // Runs `region` as one fused op and frees what died in it; false (nothing
  // done) when the backend does not take it.
  absl::StatusOr<bool> RunRegion(const FusedRegion& region, const PlannedScope& scope,
                                 std::vector<DeviceArray>& values);
  // One-element params holding the scalar operands of a fused spec.
  absl::Status FillScalars(absl::Span<const FusedLoopPlan::ScalarParam> scalars,
                           std::vector<DeviceArray>& args);

  const Plan& plan_;
  OpContext ctx_;
  const ExecOptions& options_;
};

absl::Status Executor::RunScope(const PlannedScope& scope, std::vector<DeviceArray>& values) {
  const Program& program = *scope.program;
  for (int v : scope.unused_params) values[v] = DeviceArray();
  for (size_t i = 0; i < program.instructions.size(); ++i) {
    const Instruction& ins = program.instructions[i];
    if (options_.check_continue) RETURN_IF_ERROR(options_.check_continue());
    if (i < scope.region_at.size() && scope.region_at[i] != nullptr) {
      ASSIGN_OR_RETURN(bool fused, RunRegion(*scope.region_at[i], scope, values));
      if (fused) {
        i = static_cast<size_t>(scope.region_at[i]->end) - 1;
        continue;
      }
    }
    std::vector<DeviceArray> args;
    args.reserve(ins.operands.size());
    for (const Operand& o : ins.operands) args.push_back(Lookup(o, values));
    // Drop dead values first so their buffers can be reused in place.
    for (int v : scope.dies_after[i]) {
      if (v < scope.first_output[i]) values[v] = DeviceArray();
    }
    const int first = scope.first_output[i];
    if (ins.op == OpKind::kLoop) {
      RETURN_IF_ERROR(RunLoop(ins, *scope.bodies[i], scope.fused_loop_at[i].get(),
                              scope.graph_arena_bytes[i], std::move(args), values, first));
    } else if (ins.op == OpKind::kWhile) {
      RETURN_IF_ERROR(RunWhile(ins, *scope.bodies[i], *scope.conds[i], scope.trip_ops[i],
                               scope.graph_arena_bytes[i], std::move(args), values, first));
    } else {
      const int end = i + 1 < scope.first_output.size() ? scope.first_output[i + 1]
                                                        : static_cast<int>(scope.types.size());
      absl::Status status;
      ctx_.lowering = scope.lowering_at[i].get();
      if (end - first == 1) {
        absl::StatusOr<DeviceArray> r = RunOp(ctx_, ins, std::move(args), scope.types[first]);
        if (r.ok()) values[first] = *std::move(r);
        status = r.status();
      } else {
        absl::StatusOr<std::vector<DeviceArray>> r =
            RunOpResults(ctx_, ins, std::move(args),
                         absl::MakeConstSpan(scope.types).subspan(first, end - first));
        if (r.ok()) std::move(r->begin(), r->end(), values.begin() + first);
        status = r.status();
      }
      if (!status.ok() && IsInterrupted(status) && options_.check_continue) {
        RETURN_IF_ERROR(options_.check_continue());  // why it stopped
      }
      if (!status.ok()) {
        return Annotate(status, absl::StrCat("instruction ", i, " (", InstructionName(ins), ")"));
      }
    }
    for (int v : scope.dies_after[i]) {
      if (v >= first) values[v] = DeviceArray();
    }
  }
  return absl::OkStatus();
}

absl::Status Executor::RunLoop(const Instruction& ins, const PlannedScope& body,
                               const FusedLoopPlan* fused, int64_t arena_bytes,
                               std::vector<DeviceArray> args, std::vector<DeviceArray>& values,
                               int first_output) {
  const Program& prog = *ins.body;
  const size_t carried = prog.yields.size();
  Backend& backend = ctx_.device.backend();
  if (fused != nullptr && backend.Supports(DeviceOpKind::kFusedLoop, args[0].dtype)) {
    if (ShouldFuse(backend, fused->spec)) {
      if (options_.check_continue) RETURN_IF_ERROR(options_.check_continue());
      for (const HandleId& h : fused->handle_params) args.push_back(plan_.inputs.at(h));
      RETURN_IF_ERROR(FillScalars(fused->scalar_params, args));
      std::vector<DeviceArray> outs(carried);
      // How often each buffer appears among the args, and which buffers an
      // earlier out took: counted once, so that carrying N values is O(N).
      absl::flat_hash_map<const Buffer*, long> refs;
      for (const DeviceArray& a : args) ++refs[a.buffer.get()];
      absl::flat_hash_set<const Buffer*> taken;
      for (size_t c = 0; c < carried; ++c) {
        // In place when only this loop holds the carried value: the fused
        // kernel reads each element before it writes it.
        const Buffer* b = args[c].buffer.get();
        if (b != nullptr && args[c].buffer.use_count() == refs[b] && taken.insert(b).second) {
          outs[c] = args[c];
        } else {
          ASSIGN_OR_RETURN(outs[c].buffer,
                           ctx_.device.Allocate(args[c].nbytes(), ctx_.stream, ctx_.reservation));
          outs[c].dtype = args[c].dtype;
          outs[c].shape = args[c].shape;
        }
      }
      // Run the iterations in rounds of bounded work, so a deadline or a
      // cancelled call still stops the loop promptly: after the first round
      // the carried values are read back from the outs, in place.
      // Each trip computes its steps and carries every value; a carried value
      // costs at least kCarryCost element-steps however small it is (the
      // runner's own work per value), so a loop of 60,000 carried scalars
      // starts with a round of milliseconds, not of seconds.
      constexpr int64_t kCarryCost = 64;
      const int64_t elements = args[0].num_elements();
      const int64_t per_trip =
          std::max<int64_t>(1, elements * static_cast<int64_t>(fused->spec.steps.size()) +
                                   static_cast<int64_t>(carried) * std::max(elements, kCarryCost));
      const int64_t round = std::max<int64_t>(1, backend.fused_round_work() / per_trip);
      FusedLoopSpec spec = fused->spec;
      int64_t round_trips = round;
      for (int64_t done = 0; done < ins.trip_count; done += spec.trip_count) {
        if (done > 0) {
          if (options_.check_continue) RETURN_IF_ERROR(options_.check_continue());
          for (size_t c = 0; c < carried; ++c) args[c] = outs[c];
        }
        spec.trip_count = std::min(round_trips, ins.trip_count - done);
        const auto start = std::chrono::steady_clock::now();
        RETURN_IF_ERROR(backend.Run(ctx_.stream, FusedLoopOp{&spec, args, outs}));
        if (done + spec.trip_count < ins.trip_count) {
          // Time the round on the device (the stream was idle at its start:
          // the previous round was waited for too) and size the next one.
          RETURN_IF_ERROR(ctx_.stream.Synchronize());
          round_trips = NextRoundTrips(spec.trip_count, std::chrono::steady_clock::now() - start,
                                       ins.trip_count - done - spec.trip_count);
        }
      }
      for (size_t c = 0; c < carried; ++c) values[first_output + c] = std::move(outs[c]);
      if (options_.fused != nullptr) ++options_.fused->loops;
      return absl::OkStatus();
    }
  }
  std::vector<DeviceArray> current(std::make_move_iterator(args.begin()),
                                   std::make_move_iterator(args.begin() + carried));
  const std::vector<DeviceArray> invariants(args.begin() + carried, args.end());
  args.clear();
  const bool try_graph = Graphs(arena_bytes);
  for (int64_t t = 0; t < ins.trip_count; ++t) {
    // Also per iteration: a body without instructions checks nothing itself.
    if (options_.check_continue) RETURN_IF_ERROR(options_.check_continue());
    // After the first trip (which compiled and loaded every kernel the
    // body needs), the rest as a graph.
    if (try_graph && t == 1 && ins.trip_count - t >= kMinGraphTrips) {
      int64_t trips = t;
      bool holds = true;
      ASSIGN_OR_RETURN(bool ran, RunGraphTrips(ins, body, nullptr, current, invariants, arena_bytes,
                                               trips, holds));
      if (ran) {
        if (options_.loops != nullptr) ++options_.loops->graph_loops;
        break;
      }
    }
    std::vector<DeviceArray> body_values = LoopScopeValues(body, std::move(current), invariants);
    RETURN_IF_ERROR(RunScope(body, body_values));
    current = Yields(prog, body_values);
  }
  for (size_t c = 0; c < carried; ++c) values[first_output + c] = std::move(current[c]);
  return absl::OkStatus();
}

absl::Status Executor::RunWhile(const Instruction& ins, const PlannedScope& body,
                                const PlannedScope& cond, int64_t trip_ops, int64_t arena_bytes,
                                std::vector<DeviceArray> args, std::vector<DeviceArray>& values,
                                int first_output) {
  const Program& prog = *ins.body;
  const size_t carried = prog.yields.size();
  std::vector<DeviceArray> current(std::make_move_iterator(args.begin()),
                                   std::make_move_iterator(args.begin() + carried));
  const std::vector<DeviceArray> invariants(args.begin() + carried, args.end());
  args.clear();
  int64_t trips = 0;
  bool capped = false;
  bool try_graph = Graphs(arena_bytes);
  bool graphed = false;
  for (;;) {
    if (options_.check_continue) RETURN_IF_ERROR(options_.check_continue());
    std::vector<DeviceArray> cond_values = LoopScopeValues(cond, current, invariants);
    RETURN_IF_ERROR(Annotate(RunScope(cond, cond_values), "while cond"));
    const DeviceArray test = Lookup(ins.cond->yields[0], cond_values);
    cond_values.clear();
    uint8_t holds = 0;
    // Waits for the trip's work: the stream runs in order.
    RETURN_IF_ERROR(ctx_.stream.CopyToHost(*test.buffer, 0, &holds, 1));
    if (holds == 0) break;
    if (trips == ins.trip_count) {
      capped = true;  // max_trips reached with the condition still true
      break;
    }
    // After the first trip (which compiled and loaded every kernel), the
    // rest as a graph: the device tests the condition itself.
    if (try_graph && trips >= 1) {
      try_graph = false;
      bool still = true;
      ASSIGN_OR_RETURN(
          graphed, RunGraphTrips(ins, body, &cond, current, invariants, arena_bytes, trips, still));
      if (graphed) {
        capped = still;  // then trips == max_trips
        break;
      }
    }
    std::vector<DeviceArray> body_values = LoopScopeValues(body, std::move(current), invariants);
    RETURN_IF_ERROR(Annotate(RunScope(body, body_values), "while body"));
    current = Yields(prog, body_values);
    ++trips;
  }
  ASSIGN_OR_RETURN(values[first_output + carried], ScalarArray(DType::kInt64, Scalar::Int(trips)));
  ASSIGN_OR_RETURN(values[first_output + carried + 1],
                   ScalarArray(DType::kBool, Scalar::Bool(capped)));
  for (size_t c = 0; c < carried; ++c) values[first_output + c] = std::move(current[c]);
  if (options_.loops != nullptr) {
    ++options_.loops->whiles;
    if (graphed) ++options_.loops->graph_whiles;
    options_.loops->while_trips += trips;
    if (capped) ++options_.loops->capped;
    options_.loops->ops_not_run += (ins.trip_count - trips) * trip_ops;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> Executor::RunGraphTrips(const Instruction& ins, const PlannedScope& body,
                                             const PlannedScope* cond,
                                             std::vector<DeviceArray>& current,
                                             const std::vector<DeviceArray>& invariants,
                                             int64_t arena_bytes, int64_t& trips, bool& holds) {
  Backend& backend = ctx_.device.backend();
  const Program& prog = *ins.body;
  const size_t carried = current.size();
  // The slots: one buffer per carried value that only this loop holds, so
  // each trip may overwrite it; a value someone else also holds (a handle,
  // an outer value, another carried value) is copied into a new one.
  std::vector<DeviceArray> slots(carried);
  absl::flat_hash_set<const Buffer*> taken;
  for (const DeviceArray& inv : invariants) {
    if (inv.buffer != nullptr) taken.insert(inv.buffer.get());
  }
  for (size_t c = 0; c < carried; ++c) {
    DeviceArray& a = current[c];
    if (a.nbytes() == 0) {
      slots[c] = a;
      continue;
    }
    if (a.buffer.use_count() == 1 && taken.insert(a.buffer.get()).second) {
      slots[c] = std::move(a);
      continue;
    }
    ASSIGN_OR_RETURN(slots[c], Allocate(ctx_, a.dtype, a.shape));
    RETURN_IF_ERROR(backend.Run(ctx_.stream, CastOp{&a, &slots[c]}));
    taken.insert(slots[c].buffer.get());
  }
  for (size_t c = 0; c < carried; ++c) current[c] = slots[c];

  auto views = [&] {
    std::vector<DeviceArray> v = slots;
    for (DeviceArray& a : v) {
      if (a.buffer != nullptr) a.buffer = std::make_shared<BorrowedBuffer>(a.buffer.get());
    }
    return v;
  };
  auto in_a_slot = [&](const DeviceArray& y) {
    for (const DeviceArray& s : slots) {
      if (s.nbytes() > 0 && y.data() == s.data()) return true;
    }
    return false;
  };
  // One trip, its results written into the slots. Its allocations are
  // blocks of the arena, charged once as the arena.
  auto record_body = [&]() -> absl::Status {
    Device::ArenaScope in_arena(ctx_.device);
    std::vector<DeviceArray> values = LoopScopeValues(body, views(), invariants);
    RETURN_IF_ERROR(RunScope(body, values));
    std::vector<DeviceArray> results = Yields(prog, values);
    values.clear();
    // A result left in another value's slot is copied aside first: the
    // writes below may overwrite that slot.
    for (size_t c = 0; c < carried; ++c) {
      DeviceArray& r = results[c];
      if (r.nbytes() == 0 || r.data() == slots[c].data() || !in_a_slot(r)) continue;
      ASSIGN_OR_RETURN(DeviceArray aside, Allocate(ctx_, r.dtype, r.shape));
      RETURN_IF_ERROR(backend.Run(ctx_.stream, CastOp{&r, &aside}));
      r = std::move(aside);
    }
    for (size_t c = 0; c < carried; ++c) {
      const DeviceArray& r = results[c];
      if (r.nbytes() == 0 || r.data() == slots[c].data()) continue;
      RETURN_IF_ERROR(backend.Run(ctx_.stream, CastOp{&r, &slots[c]}));
    }
    return absl::OkStatus();
  };
  // The condition on the slots; the held views keep it from writing them.
  auto record_cond = [&]() -> absl::StatusOr<DeviceArray> {
    Device::ArenaScope in_arena(ctx_.device);
    const std::vector<DeviceArray> held = views();
    std::vector<DeviceArray> values = LoopScopeValues(*cond, held, invariants);
    RETURN_IF_ERROR(RunScope(*cond, values));
    return Lookup(ins.cond->yields[0], values);
  };

  // The plan's arena (LoopGraphArenaBytes), within the reservation; four
  // times that, from the free budget, once if it proves too small.
  std::unique_ptr<LoopGraph> graph;
  absl::Status why;
  for (int attempt = 0; attempt < 2 && graph == nullptr; ++attempt) {
    absl::StatusOr<std::shared_ptr<Buffer>> arena =
        ctx_.device.Allocate(arena_bytes, ctx_.stream, ctx_.reservation);
    if (!arena.ok()) {
      why = arena.status();
      break;
    }
    LoopCaptureSpec spec;
    spec.body = record_body;
    if (cond != nullptr) spec.cond = record_cond;
    spec.arena = *std::move(arena);
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::unique_ptr<LoopGraph>> captured = backend.CaptureLoop(ctx_.stream, spec);
    if (options_.loops != nullptr) {
      options_.loops->graph_setup_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    if (captured.ok()) {
      graph = *std::move(captured);
    } else {
      why = captured.status();
      if (!absl::IsResourceExhausted(why)) break;
      arena_bytes = SaturatingMul(arena_bytes, 4);
    }
  }
  if (graph == nullptr) {
    // Stopped while recording: say why, rather than going on.
    if (options_.check_continue) RETURN_IF_ERROR(options_.check_continue());
    RESIDENT_LOG(kInfo, InstructionName(ins), " runs trip by trip: ", why.message());
    if (options_.loops != nullptr) ++options_.loops->graph_fallbacks;
    return false;
  }
  if (options_.loops != nullptr && graph->from_cache()) ++options_.loops->graph_cache_hits;
  // Rounds, each one launch and one read-back, sized as fused loops' are so
  // that a deadline or a cancel still stops the loop promptly.
  const int64_t before = trips;
  int64_t done = 0;  // the graph's trips
  int64_t round_trips = kFirstGraphRound;
  for (;;) {
    if (options_.check_continue) RETURN_IF_ERROR(options_.check_continue());
    const int64_t left = ins.trip_count - before - done;
    const auto start = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(const LoopGraph::Round round, graph->Run(done + std::min(round_trips, left)));
    const int64_t took = round.trips - done;
    done = round.trips;
    holds = round.holds;
    if (!holds || before + done >= ins.trip_count) break;
    round_trips =
        NextRoundTrips(std::max<int64_t>(took, 1), std::chrono::steady_clock::now() - start,
                       ins.trip_count - before - done);
  }
  trips = before + done;
  if (options_.loops != nullptr) {
    options_.loops->graph_arena_bytes += arena_bytes;
    options_.loops->graph_arena_peak_bytes += std::max<int64_t>(graph->arena_peak_bytes(), 0);
  }
  return true;
}

absl::StatusOr<DeviceArray> Executor::ScalarArray(DType dtype, const Scalar& value) {
  DeviceArray s{nullptr, dtype, {}};
  ASSIGN_OR_RETURN(s.buffer, ctx_.device.Allocate(ItemSize(dtype), ctx_.stream, ctx_.reservation));
  RETURN_IF_ERROR(ctx_.device.backend().Run(ctx_.stream, FillOp{value, &s}));
  return s;
}

absl::Status Executor::FillScalars(absl::Span<const FusedLoopPlan::ScalarParam> scalars,
                                   std::vector<DeviceArray>& args) {
  for (const FusedLoopPlan::ScalarParam& sp : scalars) {
    ASSIGN_OR_RETURN(DeviceArray s, ScalarArray(sp.dtype, sp.value));
    args.push_back(std::move(s));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> Executor::RunRegion(const FusedRegion& region, const PlannedScope& scope,
                                         std::vector<DeviceArray>& values) {
  Backend& backend = ctx_.device.backend();
  if (NumElements(region.shape) < backend.fused_region_min_elements() ||
      !ShouldFuse(backend, region.plan.spec)) {
    return false;
  }
  auto failed = [&](const absl::Status& s) {
    return Annotate(s, absl::StrCat("instructions ", region.begin, " to ", region.end - 1,
                                    " (fused elementwise)"));
  };
  std::vector<DeviceArray> args;
  args.reserve(region.plan.spec.param_dtypes.size());
  for (const Operand& o : region.params) args.push_back(Lookup(o, values));
  if (absl::Status s = FillScalars(region.plan.scalar_params, args); !s.ok()) return failed(s);
  std::vector<DeviceArray> outs(region.outputs.size());
  const bool reduces = region.plan.spec.reduction.has_value();
  for (size_t k = 0; k < outs.size(); ++k) {
    const ValueType& type = scope.types[region.outputs[k]];
    outs[k].dtype = type.dtype;
    // A trailing reduction's out (the last) has its own one-element shape.
    outs[k].shape = reduces && k + 1 == outs.size() ? type.shape : region.shape;
    absl::StatusOr<std::shared_ptr<Buffer>> b =
        ctx_.device.Allocate(outs[k].nbytes(), ctx_.stream, ctx_.reservation);
    if (!b.ok()) return failed(b.status());
    outs[k].buffer = *std::move(b);
  }
  if (absl::Status s =
          backend.Run(ctx_.stream, FusedLoopOp{&region.plan.spec, args, outs, &region.shape});
      !s.ok()) {
    return failed(s);
  }
  args.clear();
  for (size_t k = 0; k < outs.size(); ++k) values[region.outputs[k]] = std::move(outs[k]);
  for (int i = region.begin; i < region.end; ++i) {
    for (int v : scope.dies_after[i]) values[v] = DeviceArray();
  }
  if (options_.fused != nullptr) {
    ++options_.fused->regions;
    if (reduces) ++options_.fused->reductions;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<DeviceArray>> Execute(const Plan& plan, Device& device, Stream& stream,
                                                 MemoryBudget::Reservation* reservation,
                                                 const ExecOptions& options) {
  Executor executor(plan, OpContext{device, stream, reservation}, options);
  std::vector<DeviceArray> values(plan.top.types.size());
  const absl::Time start = absl::Now();
  // A long op the backend runs on this thread (a large CPU matmul) stops
  // between blocks once the program must stop; the reason is reported.
  ScopedInterruptCheck interrupt(
      [&options] { return options.check_continue && !options.check_continue().ok(); });
  absl::Status status = executor.RunScope(plan.top, values);
  if (IsInterrupted(status) && options.check_continue) {
    if (absl::Status why = options.check_continue(); !why.ok()) status = why;
  }
  const absl::Time launched = absl::Now();
  // Wait for the device even on failure: queued work may still read buffers.
  const absl::Status synced = stream.Synchronize();
  if (options.phases != nullptr) {
    options.phases->launch += absl::ToDoubleSeconds(launched - start);
    options.phases->sync += absl::ToDoubleSeconds(absl::Now() - launched);
  }
  RETURN_IF_ERROR(status);
  RETURN_IF_ERROR(synced);
  std::vector<DeviceArray> results;
  results.reserve(plan.outputs.size());
  for (const OutputSpec& o : plan.outputs) results.push_back(values[o.value]);
  return results;
}

}  // namespace resident

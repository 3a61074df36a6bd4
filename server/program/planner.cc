#include "server/program/planner.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/program/chain_folding.h"
#include "server/program/fusion.h"
#include "server/program/infer_shape.h"
#include "server/program/op_registry.h"
#include "server/program/saturating.h"

namespace resident {
namespace {

constexpr int64_t kForever = kSaturated;

// Whether every instruction of `body` is one a device graph can record.
bool Recordable(const Program& body) {
  for (const Instruction& ins : body.instructions) {
    if (!OpDefOf(ins.op).graph) return false;
  }
  return true;
}

class Planner {
 public:
  // `find_regions`: plan fused regions (fusion.h) in every scope.
  Planner(const HandleResolver& resolve, const ProgramLimits& limits, Plan& plan, bool find_regions)
      : resolve_(resolve), limits_(limits), plan_(plan), find_regions_(find_regions) {}

  // Plans `program` with parameters of `params` types. `keep` lists values
  // that must outlive the scope (yields, outputs). `ops` receives the number
  // of op executions one run of the scope costs.
  absl::Status PlanScope(const Program& program, std::vector<ValueType> params,
                         const std::vector<int>& keep_extra, int depth, const std::string& where,
                         PlannedScope& scope, int64_t& ops);

 private:
  absl::StatusOr<ValueType> OperandType(const Operand& o, const PlannedScope& scope, size_t defined,
                                        absl::FunctionRef<std::string()> ctx);

  const HandleResolver& resolve_;
  const ProgramLimits& limits_;
  Plan& plan_;
  const bool find_regions_;
  int64_t instructions_seen_ = 0;
};

absl::StatusOr<ValueType> Planner::OperandType(const Operand& o, const PlannedScope& scope,
                                               size_t defined,
                                               absl::FunctionRef<std::string()> ctx) {
  if (o.is_handle) {
    auto it = plan_.inputs.find(o.handle);
    if (it == plan_.inputs.end()) {
      absl::StatusOr<DeviceArray> arr = resolve_(o.handle);
      if (!arr.ok()) return Annotate(arr.status(), ctx());
      it = plan_.inputs.emplace(o.handle, *std::move(arr)).first;
    }
    return ValueType{it->second.dtype, it->second.shape};
  }
  if (o.value >= defined) {
    return absl::InvalidArgumentError(
        absl::StrCat(ctx(), ": refers to value ", o.value, ", but only ", defined,
                     " values are defined before it (operands may name only earlier "
                     "results)"));
  }
  return scope.types[o.value];
}

absl::Status Planner::PlanScope(const Program& program, std::vector<ValueType> params,
                                const std::vector<int>& keep_extra, int depth,
                                const std::string& where, PlannedScope& scope, int64_t& ops) {
  scope.program = &program;
  scope.num_params = static_cast<int>(params.size());
  scope.types = std::move(params);
  const size_t n = program.instructions.size();
  instructions_seen_ += static_cast<int64_t>(n);
  if (instructions_seen_ > limits_.max_instructions) {
    return absl::InvalidArgumentError(
        absl::StrCat("program has more than ", limits_.max_instructions, " instructions"));
  }
  scope.first_output.resize(n);
  scope.bodies.resize(n);
  scope.conds.resize(n);
  scope.trip_ops.resize(n);
  scope.fused_loop_at.resize(n);
  scope.graph_loop_at.assign(n, 0);
  scope.graph_arena_bytes.assign(n, 0);
  scope.lowering_at.resize(n);
  scope.dies_after.resize(n);
  std::vector<int64_t> last_use;  // per value: last instruction that reads it
  std::vector<int64_t> owned;     // per value: bytes it allocates itself
  std::vector<bool> aliased;      // shares its buffer with another value
  std::vector<int> defined_by;
  last_use.assign(scope.types.size(), -1);
  owned.assign(scope.types.size(), 0);
  aliased.assign(scope.types.size(), false);
  defined_by.assign(scope.types.size(), -1);
  ops = 0;
  int64_t live = 0;

  // First pass: types, operand checks, loops.
  std::vector<int64_t> alloc(n, 0);
  std::vector<ValueType> operand_types;
  for (size_t i = 0; i < n; ++i) {
    const Instruction& ins = program.instructions[i];
    // Error context, formatted only when there is an error: most programs
    // have none, and formatting cost more than planning an instruction.
    auto ctx_of = [&] {
      return absl::StrCat(where, "instruction ", i, " (", InstructionName(ins), ")");
    };
    operand_types.clear();
    for (size_t j = 0; j < ins.operands.size(); ++j) {
      ASSIGN_OR_RETURN(ValueType t, OperandType(ins.operands[j], scope, scope.types.size(), [&] {
                         return absl::StrCat(ctx_of(), ": operand ", j);
                       }));
      operand_types.push_back(std::move(t));
      if (!ins.operands[j].is_handle) {
        last_use[ins.operands[j].value] = static_cast<int64_t>(i);
      }
    }
    scope.first_output[i] = static_cast<int>(scope.types.size());
    const bool is_while = ins.op == OpKind::kWhile;
    if (ins.op != OpKind::kLoop && !is_while) {
      absl::StatusOr<std::vector<ValueType>> types = InferTypes(ins, operand_types);
      if (!types.ok()) return Annotate(types.status(), ctx_of());
      // Every result's size fits int64 bytes, whatever op made it (a sum
      // over the empty axis of a (0, 2^63 - 2) array is 2^63 - 2 elements).
      for (const ValueType& t : *types) {
        const absl::StatusOr<int64_t> elements = CheckedNumElements(t.shape);
        if (!elements.ok() || *elements > std::numeric_limits<int64_t>::max() / ItemSize(t.dtype)) {
          return absl::InvalidArgumentError(absl::StrCat(ctx_of(), ": its result ", TypeString(t),
                                                         " has more bytes than fit in 64 bits"));
        }
      }
      // Only an op of one result may share its operand's buffer.
      const bool shares =
          types->size() == 1 && ResultAliasesOperand(ins, operand_types, types->front());
      if (shares) {
        for (const Operand& o : ins.operands) {
          if (!o.is_handle) aliased[o.value] = true;
        }
      }
      if (const LowerFn lower = OpDefOf(ins.op).lower; lower != nullptr) {
        absl::StatusOr<Lowering> l = lower(ins, operand_types, types->front());
        if (!l.ok()) return Annotate(l.status(), ctx_of());
        scope.lowering_at[i] = std::make_unique<const Lowering>(*std::move(l));
      }
      alloc[i] = AllocationBound(ins, operand_types, types->front());
      for (size_t r = 1; r < types->size(); ++r) {
        alloc[i] = SaturatingAdd(alloc[i], (*types)[r].nbytes());
      }
      for (ValueType& t : *types) {
        owned.push_back(shares ? 0 : t.nbytes());
        scope.types.push_back(std::move(t));
        last_use.push_back(-1);
        aliased.push_back(shares);
        defined_by.push_back(static_cast<int>(i));
      }
      ops = SaturatingAdd(ops, 1);
      continue;
    }
    // A loop or while: operands are carried values then invariants; the
    // body's yields give the next carried values and must keep their types.
    // A while's trip_count is its max_trips.
    const std::string ctx = ctx_of();
    if (depth + 1 > limits_.max_loop_depth) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx, ": loops nest deeper than the limit of ", limits_.max_loop_depth));
    }
    if (ins.trip_count < 0 || ins.trip_count > limits_.max_trip_count) {
      return absl::InvalidArgumentError(absl::StrCat(
          ctx, is_while ? ": max_trips " : ": trip count ", ins.trip_count, " is outside [0, ",
          limits_.max_trip_count, "] (the server's --max-trip-count)"));
    }
    if (ins.body == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(ctx, ": loop has no body"));
    }
    const size_t carried = ins.body->yields.size();
    if (carried > operand_types.size()) {
      return absl::InvalidArgumentError(absl::StrCat(ctx, ": body yields ", carried,
                                                     " values but the loop has only ",
                                                     operand_types.size(), " operands"));
    }
    auto body = std::make_unique<PlannedScope>();
    int64_t body_ops = 0;
    std::vector<int> body_keep;
    RETURN_IF_ERROR(PlanScope(*ins.body, operand_types, body_keep, depth + 1,
                              absl::StrCat(ctx, ", body "), *body, body_ops));
    int64_t carried_bytes = 0;
    for (size_t y = 0; y < carried; ++y) {
      std::string yctx = absl::StrCat(ctx, ": body yield ", y);
      ASSIGN_OR_RETURN(ValueType yt, OperandType(ins.body->yields[y], *body, body->types.size(),
                                                 [&] { return yctx; }));
      if (!(yt == operand_types[y])) {
        return absl::InvalidArgumentError(absl::StrCat(yctx, " is ", TypeString(yt),
                                                       " but carried value ", y, " is ",
                                                       TypeString(operand_types[y]),
                                                       "; a loop must keep each carried "
                                                       "value's dtype and shape"));
      }
      carried_bytes = SaturatingAdd(carried_bytes, yt.nbytes());
      scope.types.push_back(yt);
      last_use.push_back(-1);
      owned.push_back(yt.nbytes());
      aliased.push_back(true);  // may be an invariant or an operand itself
      defined_by.push_back(static_cast<int>(i));
    }
    alloc[i] = SaturatingAdd(body->peak_bytes, carried_bytes);
    int64_t cond_ops = 0;
    if (is_while) {
      // The condition sees the body's parameters and yields one bool scalar;
      // it is planned as a body of its own (its values die with each test).
      auto cond = std::make_unique<PlannedScope>();
      std::vector<int> cond_keep;
      RETURN_IF_ERROR(PlanScope(*ins.cond, operand_types, cond_keep, depth + 1,
                                absl::StrCat(ctx, ", cond "), *cond, cond_ops));
      if (ins.cond->yields.size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            ctx, ": cond yields ", ins.cond->yields.size(), " values; it must yield one"));
      }
      const std::string cctx = absl::StrCat(ctx, ": cond yield");
      ASSIGN_OR_RETURN(ValueType ct, OperandType(ins.cond->yields[0], *cond, cond->types.size(),
                                                 [&] { return cctx; }));
      if (ct.dtype != DType::kBool || !ct.shape.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(cctx, " is ", TypeString(ct),
                         "; a while condition must be a bool scalar (shape ()), e.g. "
                         "(r @ r > tol).all() or a comparison of 0-d values"));
      }
      alloc[i] = SaturatingAdd(alloc[i], SaturatingAdd(cond->peak_bytes, 16));
      for (DType d : {DType::kInt64, DType::kBool}) {  // trips, capped
        scope.types.push_back(ValueType{d, {}});
        last_use.push_back(-1);
        owned.push_back(ItemSize(d));
        aliased.push_back(false);
        defined_by.push_back(static_cast<int>(i));
      }
      scope.conds[i] = std::move(cond);
    }
    // An iteration costs at least one op, so that loops of empty bodies
    // (nested, they would spin ~2^60 times) stay under max_executed_ops; a
    // while counts its condition too, at max_trips.
    const int64_t per_trip = SaturatingAdd(std::max<int64_t>(body_ops, 1), cond_ops);
    ops = SaturatingAdd(ops, SaturatingAdd(1, SaturatingMul(ins.trip_count, per_trip)));
    if (is_while) scope.trip_ops[i] = per_trip;
    // Decided here, once, so the executor only executes (loops inside
    // loops too).
    if (std::optional<FusedLoopPlan> fused =
            is_while ? std::nullopt : PlanFusedLoop(ins, *body, operand_types, plan_.inputs)) {
      scope.fused_loop_at[i] = std::make_shared<const FusedLoopPlan>(*std::move(fused));
    }
    if (limits_.loop_graphs && Recordable(*ins.body) && (!is_while || Recordable(*ins.cond))) {
      scope.graph_loop_at[i] = 1;
      scope.graph_arena_bytes[i] =
          LoopGraphArenaBytes(*body, is_while ? scope.conds[i].get() : nullptr, carried_bytes);
      // The graph holds the slots (at most a copy of each carried value) and
      // the arena at once, then the trips and capped scalars.
      alloc[i] = std::max(
          alloc[i], SaturatingAdd(SaturatingAdd(carried_bytes, scope.graph_arena_bytes[i]), 16));
    }
    scope.bodies[i] = std::move(body);
  }

  // Values that must outlive the scope.
  for (const Operand& y : program.yields) {
    if (!y.is_handle && y.value < last_use.size()) last_use[y.value] = kForever;
  }
  for (size_t k = 0; k < keep_extra.size(); ++k) {
    const int v = keep_extra[k];
    if (v < 0 || static_cast<size_t>(v) >= scope.types.size()) {
      return absl::InvalidArgumentError(absl::StrCat("output ", k, " names value ", v,
                                                     " but the program defines ",
                                                     scope.types.size(), " values"));
    }
    last_use[v] = kForever;
  }

  // Straight-line elementwise runs, each to run as one fused op: its
  // outputs are allocated at once while everything live before it still
  // is, which the peak below accounts for.
  scope.region_at.assign(n, nullptr);
  std::vector<int64_t> region_bytes(n, 0);
  std::vector<FusedRegion> regions;
  if (find_regions_) regions = FindFusedRegions(scope, last_use, plan_.inputs);
  for (FusedRegion& r : regions) {
    int64_t bytes = 0;
    for (int v : r.outputs) bytes = SaturatingAdd(bytes, scope.types[v].nbytes());
    for (const FusedLoopPlan::ScalarParam& sp : r.plan.scalar_params) {
      bytes = SaturatingAdd(bytes, ItemSize(sp.dtype));
    }
    region_bytes[r.begin] = bytes;
    scope.region_at[r.begin] = std::make_shared<const FusedRegion>(std::move(r));
  }

  // Second pass: when each value dies, and the peak bytes.
  for (size_t v = 0; v < scope.types.size(); ++v) {
    if (last_use[v] == kForever) continue;
    if (last_use[v] >= 0) {
      scope.dies_after[last_use[v]].push_back(static_cast<int>(v));
    } else if (defined_by[v] >= 0) {
      scope.dies_after[defined_by[v]].push_back(static_cast<int>(v));
    } else {
      scope.unused_params.push_back(static_cast<int>(v));
    }
  }
  int64_t peak = 0;
  for (size_t i = 0; i < n; ++i) {
    peak = std::max(peak, SaturatingAdd(live, std::max(alloc[i], region_bytes[i])));
    const int first = scope.first_output[i];
    const int end = i + 1 < n ? scope.first_output[i + 1] : static_cast<int>(scope.types.size());
    for (int v = first; v < end; ++v) live = SaturatingAdd(live, owned[v]);
    for (int v : scope.dies_after[i]) {
      if (!aliased[v]) live -= owned[v];
    }
  }
  scope.peak_bytes = peak;
  return absl::OkStatus();
}

// The plan of `program` as given (no folding), with fused regions if
// `find_regions`.
absl::StatusOr<Plan> PlanAs(const std::shared_ptr<const Program>& program,
                            std::vector<OutputSpec> outputs, const HandleResolver& resolve,
                            const ProgramLimits& limits, bool find_regions);

}  // namespace

int64_t LoopGraphArenaBytes(const PlannedScope& body, const PlannedScope* cond,
                            int64_t carried_bytes) {
  const int64_t values = static_cast<int64_t>(body.types.size()) +
                         (cond != nullptr ? static_cast<int64_t>(cond->types.size()) : 0);
  const int64_t bytes = SaturatingAdd(
      SaturatingAdd(body.peak_bytes, cond != nullptr ? cond->peak_bytes : 0), carried_bytes);
  return SaturatingAdd(SaturatingAdd(bytes, bytes / 4),
                       SaturatingAdd(int64_t{64} << 10, SaturatingMul(values, 1024)));
}

absl::StatusOr<Plan> PlanProgram(const std::shared_ptr<const Program>& program,
                                 const std::vector<OutputSpec>& outputs,
                                 const HandleResolver& resolve, const ProgramLimits& limits) {
  // Folding is syntactic; a program with nothing to fold plans once.
  if (program == nullptr) return absl::InvalidArgumentError("no program");
  FoldedProgram folded = FoldChains(program, outputs);
  if (folded.folded_runs == 0) return PlanAs(program, outputs, resolve, limits, true);
  // Chains fold only in a program that is valid as sent, so every error
  // names the client's own instructions; a folded form that does not plan
  // (a run that changes dtype or shape, say) runs unfolded. Regions are
  // planned only in the form that runs.
  RETURN_IF_ERROR(PlanAs(program, outputs, resolve, limits, false).status());
  absl::StatusOr<Plan> folded_plan =
      PlanAs(folded.program, std::move(folded.outputs), resolve, limits, true);
  if (!folded_plan.ok()) return PlanAs(program, outputs, resolve, limits, true);
  folded_plan->folded_runs = folded.folded_runs;
  return folded_plan;
}

absl::StatusOr<Plan> PlanUnfolded(const std::shared_ptr<const Program>& program,
                                  std::vector<OutputSpec> outputs, const HandleResolver& resolve,
                                  const ProgramLimits& limits) {
  return PlanAs(program, std::move(outputs), resolve, limits, true);
}

namespace {

absl::StatusOr<Plan> PlanAs(const std::shared_ptr<const Program>& program,
                            std::vector<OutputSpec> outputs, const HandleResolver& resolve,
                            const ProgramLimits& limits, bool find_regions) {
  if (program == nullptr) return absl::InvalidArgumentError("no program");
  if (!program->yields.empty()) {
    return absl::InvalidArgumentError("a top-level program cannot yield values");
  }
  Plan plan;
  plan.program = program;
  Planner planner(resolve, limits, plan, find_regions);
  std::vector<int> keep;
  keep.reserve(outputs.size());
  for (const OutputSpec& o : outputs) keep.push_back(static_cast<int>(o.value));
  int64_t ops = 0;
  RETURN_IF_ERROR(planner.PlanScope(*program, {}, keep, 0, "", plan.top, ops));
  int64_t inline_bytes = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputSpec& o = outputs[i];
    if (!o.keep && !o.return_data) {
      return absl::InvalidArgumentError(
          absl::StrCat("output ", i, " asks for neither a handle nor data"));
    }
    const ValueType& t = plan.top.types[o.value];
    if (o.return_data) inline_bytes = SaturatingAdd(inline_bytes, t.nbytes());
    if (inline_bytes > limits.max_inline_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("output ", i, " (", TypeString(t), ") brings inline results to ",
                       inline_bytes, " bytes, over the server's limit of ", limits.max_inline_bytes,
                       "; keep it as a handle and download it"));
    }
    plan.output_types.push_back(t);
  }
  if (ops > limits.max_executed_ops) {
    return absl::InvalidArgumentError(
        absl::StrCat("program would run ", ops,
                     " ops (loop trip counts and while max_trips multiplied out), over "
                     "the limit of ",
                     limits.max_executed_ops));
  }
  plan.executed_ops = ops;
  plan.peak_bytes = plan.top.peak_bytes;
  plan.outputs = std::move(outputs);
  return plan;
}

}  // namespace
}  // namespace resident

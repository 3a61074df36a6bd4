#include "server/program/fusion.h"

#include "server/program/infer.h"
#include "server/program/infer_elementwise.h"
#include "server/program/infer_shape.h"
#include "server/program/op_registry.h"

namespace resident {
namespace {

using Step = FusedLoopSpec::Step;

// Elementwise ops and astype: the instructions a spec's steps express, each
// defining exactly one value.
bool Fusible(const Instruction& ins) { return OpDefOf(ins.op).fuses; }

// Complex values never fuse (no generated kernel computes them): an
// instruction with a complex operand, scalar or result runs op by op.
bool TouchesComplex(const Instruction& ins, absl::Span<const DType> operands, DType result) {
  if (IsComplex(result)) return true;
  for (DType d : operands) {
    if (IsComplex(d)) return true;
  }
  for (const ScalarOperand& s : ins.scalars) {
    if (s.value.is_complex()) return true;
  }
  return false;
}

// The kind of instruction `ins` as a region's trailing reduction: a
// reduction over every axis of its operand (of `in`, non-empty) of a kind
// and dtype FusedReductionFits; nullopt otherwise.
std::optional<ReduceKind> TrailingReduction(const Instruction& ins, const ValueType& in) {
  const std::optional<ReduceKind> kind = ReduceKindOf(ins.op);
  if (!kind || ins.operands.size() != 1 || NumElements(in.shape) == 0 ||
      !FusedReductionFits(*kind, in.dtype)) {
    return std::nullopt;
  }
  const int rank = static_cast<int>(in.shape.size());
  absl::StatusOr<std::vector<int>> axes = ReductionAxes(ins, rank);
  if (!axes.ok() || static_cast<int>(axes->size()) != rank) return std::nullopt;
  return kind;
}

// Builds a FusedLoopSpec over arrays of one shape: every param first (full
// shape, one element, or smaller and broadcast to the shape), then the
// steps of each instruction, so that every param slot precedes every step
// slot. Shared by loop bodies and straight-line regions.
class SpecBuilder {
 public:
  SpecBuilder(FusedLoopPlan& plan, const Shape& shape) : plan_(plan), shape_(shape) {}

  // How an array of `s` can be a param: the shape itself, one element
  // (`scalar`), or broadcast to the shape (`broadcast`, its layout's rank);
  // false when it cannot.
  struct Fit {
    bool scalar = false;
    int broadcast = 0;
  };
  bool Fits(const Shape& s, Fit* fit) const {
    *fit = {};
    if (s == shape_) return true;
    if (NumElements(s) == 1 && s.size() <= shape_.size()) {
      fit->scalar = true;
      return true;
    }
    const std::optional<FusedBroadcastLayout> l = FusedBroadcast(s, shape_);
    if (!l) return false;
    fit->broadcast = l->rank;
    return true;
  }

  // A param of `t`; its slot, or -1 when it does not fit (or is smaller than
  // the shape where `allow_smaller` is false: a loop's carried values).
  int AddParam(const ValueType& t, bool allow_smaller = true) {
    Fit fit;
    if (!Fits(t.shape, &fit) || ((fit.scalar || fit.broadcast > 0) && !allow_smaller)) return -1;
    plan_.spec.param_dtypes.push_back(t.dtype);
    plan_.spec.param_scalar.push_back(fit.scalar);
    plan_.spec.param_broadcast.push_back(fit.broadcast);
    return static_cast<int>(plan_.spec.param_dtypes.size()) - 1;
  }

  // The scalar operands of instruction `i` (its array operands of `dtypes`)
  // as one-element params of its compute dtype; false if it cannot fuse.
  bool AddScalars(size_t i, const Instruction& ins, absl::Span<const DType> dtypes) {
    if (ins.scalars.empty()) return true;
    ElementwiseTypes t;
    if (ins.op == OpKind::kClip || ins.op == OpKind::kWhere) {
      // In the result's dtype, as SelectOperands makes them.
      absl::StatusOr<DType> p = SelectType(ins, dtypes);
      if (!p.ok()) return false;
      t = {true, *p, *p, nullptr};
    } else if (ins.op == OpKind::kElementwise) {
      absl::StatusOr<ElementwiseTypes> r = ResolveElementwiseTypes(ins, dtypes);
      if (!r.ok()) return false;
      t = *r;
    } else {
      return false;
    }
    Scalars& s = scalars_[i];
    s.types = t;
    for (const ScalarOperand& so : ins.scalars) {
      Scalar v = so.value;
      // An integer bound outside an integer dtype clamps, as NumPy 2's clip.
      if (ins.op == OpKind::kClip && v.is_int() && IsInteger(t.compute)) {
        v = Scalar::Int(ClampToDType(v.as_int64(), t.compute));
      }
      s.slots.push_back(static_cast<int>(plan_.spec.param_dtypes.size()));
      plan_.spec.param_dtypes.push_back(t.compute);
      plan_.spec.param_scalar.push_back(true);
      plan_.spec.param_broadcast.push_back(0);
      plan_.scalar_params.push_back({v, t.compute});
    }
    return true;
  }

  // Emits instruction `i` (elementwise or astype; `slots` are its array
  // operands' slots) with its result of `type`; the result's slot, or -1
  // when it does not fuse. Call only after every param is added.
  int Emit(size_t i, const Instruction& ins, absl::Span<const int> slots, const ValueType& type) {
    if (slot_dtype_.empty()) slot_dtype_ = plan_.spec.param_dtypes;
    const std::optional<ElementwiseKind> kind = ElementwiseKindOf(ins);
    // Only elementwise ops and astype fuse: not creation, dot, sum,
    // reshape, transpose or loops.
    if (!Fusible(ins)) return -1;
    std::vector<DType> operands;
    for (int slot : slots) operands.push_back(slot_dtype_[slot]);
    if (TouchesComplex(ins, operands, type.dtype)) return -1;
    // Steps run at every index: a result of the shape, or of one element.
    Fit fit;
    if (!Fits(type.shape, &fit) || fit.broadcast > 0) return -1;
    if (ins.op == OpKind::kClip || ins.op == OpKind::kWhere) {
      return EmitSelectOp(i, ins, slots, type.dtype);
    }
    if (kind && !ins.scalars.empty()) {
      auto it = scalars_.find(i);
      if (it == scalars_.end()) return -1;
      // Operands by position: scalars' params, arrays cast to the compute dtype.
      const Scalars& s = it->second;
      const DType ct = s.types.compute;
      int args[2] = {-1, -1};
      size_t next_array = 0, next_scalar = 0;
      for (int pos = 0; pos < Arity(*kind); ++pos) {
        if (next_scalar < ins.scalars.size() && ins.scalars[next_scalar].position == pos) {
          args[pos] = s.slots[next_scalar++];
        } else {
          if (next_array >= slots.size()) return -1;
          args[pos] = CastTo(slots[next_array++], ct);
        }
      }
      return CastTo(Push(Step::Of(*kind, args[0], args[1], ct)), type.dtype);
    }
    if (kind && Arity(*kind) == 2) {
      if (slots.size() != 2) return -1;
      const DType ct = ArithmeticType(*kind, slot_dtype_[slots[0]], slot_dtype_[slots[1]]);
      // A bool-valued op computes 0/1 in ct and is cast, as op by op.
      const int r = Push(Step::Of(*kind, CastTo(slots[0], ct), CastTo(slots[1], ct), ct));
      return CastTo(r, type.dtype);
    }
    if (slots.size() != 1) return -1;
    if (kind) {
      const ElementwiseTypes t = ResolveElementwise(*kind, slot_dtype_[slots[0]]);
      if (!t.ok || t.result != type.dtype) return -1;
      return CastTo(Push(Step::Of(*kind, CastTo(slots[0], t.compute), -1, t.compute)), type.dtype);
    }
    return CastTo(slots[0], type.dtype);  // astype
  }

 private:
  struct Scalars {
    ElementwiseTypes types;
    std::vector<int> slots;
  };

  // clip(a, lo, hi) as RunClip runs it: minimum(hi, maximum(lo, a)), every
  // operand in the result's dtype `p`; where(cond, a, b) as a select of a
  // and b in `p` on cond as bool (RunWhere's operands; the select keeps
  // their bits, as RunWhere's integer arithmetic on them does).
  int EmitSelectOp(size_t i, const Instruction& ins, absl::Span<const int> slots, DType p) {
    const auto it = scalars_.find(i);
    const bool where = ins.op == OpKind::kWhere;
    int args[3] = {-1, -1, -1};
    size_t next_array = 0, next_scalar = 0;
    for (int pos = 0; pos < 3; ++pos) {
      if (next_scalar < ins.scalars.size() && ins.scalars[next_scalar].position == pos) {
        if (it == scalars_.end() || next_scalar >= it->second.slots.size()) return -1;
        args[pos] = it->second.slots[next_scalar++];
      } else {
        if (next_array >= slots.size()) return -1;
        args[pos] = CastTo(slots[next_array++], where && pos == 0 ? DType::kBool : p);
      }
    }
    if (where) {
      if (slot_dtype_[args[0]] != DType::kBool) return -1;  // cond is always an array
      return Push(Step::Select(args[0], args[1], args[2], p));
    }
    const int low = Push(Step::Of(ElementwiseKind::kMaximum, args[1], args[0], p));
    return Push(Step::Of(ElementwiseKind::kMinimum, args[2], low, p));
  }

  int Push(const Step& step) {
    plan_.spec.steps.push_back(step);
    slot_dtype_.push_back(step.dtype);
    return static_cast<int>(slot_dtype_.size()) - 1;
  }
  int CastTo(int slot, DType dtype) {
    return slot_dtype_[slot] == dtype ? slot : Push(Step::Cast(slot, dtype));
  }

  FusedLoopPlan& plan_;
  const Shape& shape_;
  std::vector<DType> slot_dtype_;  // per slot: params, then steps
  absl::flat_hash_map<size_t, Scalars> scalars_;
};

}  // namespace

std::optional<FusedLoopPlan> PlanFusedLoop(
    const Instruction& loop, const PlannedScope& body, absl::Span<const ValueType> operand_types,
    const absl::flat_hash_map<HandleId, DeviceArray>& inputs) {
  const Program& prog = *loop.body;
  const size_t carried = prog.yields.size();
  if (carried == 0 || loop.trip_count == 0) return std::nullopt;
  FusedLoopPlan plan;
  SpecBuilder b(plan, operand_types[0].shape);
  plan.spec.trip_count = loop.trip_count;
  plan.spec.num_carried = static_cast<int>(carried);
  for (size_t p = 0; p < operand_types.size(); ++p) {
    if (b.AddParam(operand_types[p], /*allow_smaller=*/p >= carried) < 0) return std::nullopt;
  }
  // Handles named inside the body become extra params.
  absl::flat_hash_map<HandleId, int> handle_slot;
  auto note_handle = [&](const Operand& o) {
    if (!o.is_handle || handle_slot.contains(o.handle)) return true;
    const DeviceArray& a = inputs.at(o.handle);
    const int slot = b.AddParam({a.dtype, a.shape});
    if (slot < 0) return false;
    handle_slot[o.handle] = slot;
    plan.handle_params.push_back(o.handle);
    return true;
  };
  for (const Instruction& ins : prog.instructions) {
    for (const Operand& o : ins.operands) {
      if (!note_handle(o)) return std::nullopt;
    }
  }
  for (const Operand& y : prog.yields) {
    if (!note_handle(y)) return std::nullopt;
  }
  std::vector<DType> dtypes;
  for (size_t i = 0; i < prog.instructions.size(); ++i) {
    const Instruction& ins = prog.instructions[i];
    dtypes.clear();
    for (const Operand& o : ins.operands) {
      dtypes.push_back(o.is_handle ? inputs.at(o.handle).dtype : body.types[o.value].dtype);
    }
    if (!b.AddScalars(i, ins, dtypes)) return std::nullopt;
  }

  std::vector<int> value_slot(body.types.size(), -1);
  for (int p = 0; p < body.num_params; ++p) value_slot[p] = p;
  auto slot_of = [&](const Operand& o) {
    return o.is_handle ? handle_slot.at(o.handle) : value_slot[o.value];
  };
  std::vector<int> slots;
  for (size_t i = 0; i < prog.instructions.size(); ++i) {
    const Instruction& ins = prog.instructions[i];
    slots.clear();
    for (const Operand& o : ins.operands) slots.push_back(slot_of(o));
    // Only elementwise ops and astype define a value to look at here (a
    // loop of no carried values defines none).
    if (!Fusible(ins)) return std::nullopt;
    const int out = body.first_output[i];
    const int r = b.Emit(i, ins, slots, body.types[out]);
    if (r < 0) return std::nullopt;
    value_slot[out] = r;
  }
  for (const Operand& y : prog.yields) plan.spec.yields.push_back(slot_of(y));
  return plan;
}

std::optional<FusedRegion> PlanFusedRegion(
    const PlannedScope& scope, int begin, int end, absl::Span<const int> live_outs,
    const absl::flat_hash_map<HandleId, DeviceArray>& inputs) {
  const Program& prog = *scope.program;
  if (begin < 0 || end > static_cast<int>(prog.instructions.size()) || end - begin < 2) {
    return std::nullopt;
  }
  // A trailing reduction (FindFusedRegions checked its operand is a value
  // of the region) is planned after the steps, not as one.
  std::optional<ReduceKind> reduction;
  if (const Instruction& last = prog.instructions[end - 1]; ReduceKindOf(last.op)) {
    if (last.operands.size() != 1 || last.operands[0].is_handle) return std::nullopt;
    reduction = TrailingReduction(last, scope.types[last.operands[0].value]);
    if (!reduction) return std::nullopt;
  }
  const int steps_end = reduction ? end - 1 : end;
  FusedRegion region;
  region.begin = begin;
  region.end = end;
  const int first_value = scope.first_output[begin];
  const Shape& shape = scope.types[first_value].shape;
  region.shape = shape;
  FusedLoopPlan& plan = region.plan;
  SpecBuilder b(plan, shape);
  plan.spec.trip_count = 1;
  plan.spec.num_carried = 0;
  // Params: every array the region reads from outside it (values defined
  // before it, handles), in order of first use; then the scalar operands.
  absl::flat_hash_map<HandleId, int> handle_slot;
  absl::flat_hash_map<uint32_t, int> outer_slot;
  for (int i = begin; i < steps_end; ++i) {
    for (const Operand& o : prog.instructions[i].operands) {
      if (o.is_handle) {
        if (handle_slot.contains(o.handle)) continue;
        const DeviceArray& a = inputs.at(o.handle);
        const int slot = b.AddParam({a.dtype, a.shape});
        if (slot < 0) return std::nullopt;
        handle_slot[o.handle] = slot;
        region.params.push_back(o);
      } else if (static_cast<int>(o.value) < first_value && !outer_slot.contains(o.value)) {
        const int slot = b.AddParam(scope.types[o.value]);
        if (slot < 0) return std::nullopt;
        outer_slot[o.value] = slot;
        region.params.push_back(o);
      }
    }
  }
  std::vector<DType> dtypes;
  for (int i = begin; i < steps_end; ++i) {
    const Instruction& ins = prog.instructions[i];
    dtypes.clear();
    for (const Operand& o : ins.operands) {
      dtypes.push_back(o.is_handle ? inputs.at(o.handle).dtype : scope.types[o.value].dtype);
    }
    if (!b.AddScalars(i, ins, dtypes)) return std::nullopt;
  }
  absl::flat_hash_map<uint32_t, int> inner_slot;
  std::vector<int> slots;
  for (int i = begin; i < steps_end; ++i) {
    const Instruction& ins = prog.instructions[i];
    slots.clear();
    for (const Operand& o : ins.operands) {
      if (o.is_handle) {
        slots.push_back(handle_slot.at(o.handle));
      } else if (static_cast<int>(o.value) < first_value) {
        slots.push_back(outer_slot.at(o.value));
      } else {
        auto it = inner_slot.find(o.value);
        if (it == inner_slot.end()) return std::nullopt;
        slots.push_back(it->second);
      }
    }
    if (!Fusible(ins)) return std::nullopt;
    const int out = scope.first_output[i];
    const ValueType& type = scope.types[out];
    // Every result is of the region's shape: no one-element intermediates.
    if (type.shape != shape) return std::nullopt;
    const int r = b.Emit(i, ins, slots, type);
    if (r < 0) return std::nullopt;
    inner_slot[out] = r;
  }
  const int num_params = static_cast<int>(plan.spec.param_dtypes.size());
  const int reduced_value = reduction ? scope.first_output[end - 1] : -1;
  for (int v : live_outs) {
    if (v == reduced_value) continue;  // written by the reduction, last
    auto it = inner_slot.find(static_cast<uint32_t>(v));
    // An output that is a param unchanged (astype to its own dtype) would be
    // a copy the op by op run does not make.
    if (it == inner_slot.end() || it->second < num_params) return std::nullopt;
    plan.spec.yields.push_back(it->second);
    region.outputs.push_back(v);
  }
  if (reduction) {
    const Operand& o = prog.instructions[end - 1].operands[0];
    auto it = inner_slot.find(o.value);
    if (it == inner_slot.end() || it->second < num_params) return std::nullopt;
    plan.spec.reduction = FusedLoopSpec::Reduction{*reduction, it->second};
    region.outputs.push_back(reduced_value);
  } else if (region.outputs.empty()) {
    return std::nullopt;
  }
  return region;
}

}  // namespace resident

namespace resident {

std::vector<FusedRegion> FindFusedRegions(
    const PlannedScope& scope, absl::Span<const int64_t> last_use,
    const absl::flat_hash_map<HandleId, DeviceArray>& inputs) {
  std::vector<FusedRegion> regions;
  const Program& prog = *scope.program;
  const int n = static_cast<int>(prog.instructions.size());
  auto type_of = [&](const Operand& o) -> ValueType {
    if (o.is_handle) {
      const DeviceArray& a = inputs.at(o.handle);
      return {a.dtype, a.shape};
    }
    return scope.types[o.value];
  };
  // Whether instruction i can join a region of `shape` that began at `begin`.
  auto joins = [&](int i, int begin, const Shape& shape) {
    const Instruction& ins = prog.instructions[i];
    if (!Fusible(ins)) return false;
    const ValueType& out = scope.types[scope.first_output[i]];
    if (out.shape != shape) return false;
    std::vector<DType> operands;
    for (const Operand& o : ins.operands) operands.push_back(type_of(o).dtype);
    if (TouchesComplex(ins, operands, out.dtype)) return false;
    if (ins.op == OpKind::kAstype &&
        (ins.operands.size() != 1 || type_of(ins.operands[0]).dtype == out.dtype)) {
      return false;
    }
    for (const Operand& o : ins.operands) {
      if (!o.is_handle && static_cast<int>(o.value) >= scope.first_output[begin]) continue;
      const ValueType t = type_of(o);
      if (t.shape != shape && !(NumElements(t.shape) == 1 && t.shape.size() <= shape.size()) &&
          !FusedBroadcast(t.shape, shape).has_value()) {
        return false;
      }
    }
    return true;
  };
  int i = 0;
  while (i < n) {
    if (!Fusible(prog.instructions[i])) {
      ++i;
      continue;
    }
    const Shape& shape = scope.types[scope.first_output[i]].shape;
    if (!joins(i, i, shape)) {
      ++i;
      continue;
    }
    int end = i + 1;
    while (end < n && end - i < kMaxRegionOps && joins(end, i, shape)) ++end;
    // A reduction of every element of a value of the run may end it.
    bool reduces = false;
    if (end < n) {
      const Instruction& next = prog.instructions[end];
      if (ReduceKindOf(next.op) && next.operands.size() == 1 && !next.operands[0].is_handle) {
        const int v = static_cast<int>(next.operands[0].value);
        reduces = v >= scope.first_output[i] && v < scope.first_output[end] &&
                  TrailingReduction(next, scope.types[v]).has_value();
      }
    }
    if (end - i < (reduces ? 1 : 2)) {
      i = end;
      continue;
    }
    // Each try: the run with its reduction, then without.
    std::optional<FusedRegion> r;
    for (int stop : {reduces ? end + 1 : -1, end}) {
      if (stop < 0 || stop - i < 2) continue;
      std::vector<int> live_outs;
      for (int v = scope.first_output[i]; v < scope.first_output[stop - 1] + 1; ++v) {
        if (last_use[v] >= stop) live_outs.push_back(v);
      }
      r = PlanFusedRegion(scope, i, stop, live_outs, inputs);
      if (r) break;
    }
    if (r) {
      i = r->end;
      regions.push_back(*std::move(r));
    } else {
      ++i;  // the run may fuse from a later start
    }
  }
  return regions;
}

}  // namespace resident

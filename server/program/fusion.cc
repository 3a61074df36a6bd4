#include "server/program/fusion.h"

#include "server/program/infer.h"
#include "server/program/infer_elementwise.h"

namespace resident {
namespace {

using Step = FusedLoopSpec::Step;

}  // namespace

std::optional<FusedLoopPlan> PlanFusedLoop(
    const Instruction& loop, const PlannedScope& body, absl::Span<const ValueType> operand_types,
    const absl::flat_hash_map<HandleId, DeviceArray>& inputs) {
  const Program& prog = *loop.body;
  const size_t carried = prog.yields.size();
  if (carried == 0 || loop.trip_count == 0) return std::nullopt;
  const Shape& shape = operand_types[0].shape;
  auto same_or_scalar = [&](const Shape& s, bool* scalar) {
    if (s == shape) {
      *scalar = false;
      return true;
    }
    *scalar = true;  // one element, broadcast without changing the shape
    return NumElements(s) == 1 && s.size() <= shape.size();
  };

  FusedLoopPlan plan;
  FusedLoopSpec& spec = plan.spec;
  spec.trip_count = loop.trip_count;
  spec.num_carried = static_cast<int>(carried);
  for (size_t p = 0; p < operand_types.size(); ++p) {
    bool scalar = false;
    if (!same_or_scalar(operand_types[p].shape, &scalar)) return std::nullopt;
    if (p < carried && scalar) return std::nullopt;
    spec.param_dtypes.push_back(operand_types[p].dtype);
    spec.param_scalar.push_back(scalar);
  }
  // Handles named inside the body become extra params.
  absl::flat_hash_map<HandleId, int> handle_slot;
  auto note_handle = [&](const Operand& o) {
    if (!o.is_handle || handle_slot.contains(o.handle)) return true;
    const DeviceArray& a = inputs.at(o.handle);
    bool scalar = false;
    if (!same_or_scalar(a.shape, &scalar)) return false;
    handle_slot[o.handle] = static_cast<int>(spec.param_dtypes.size());
    spec.param_dtypes.push_back(a.dtype);
    spec.param_scalar.push_back(scalar);
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
  // Scalar operands become one-element params of their op's compute dtype.
  std::vector<std::vector<int>> scalar_slots(prog.instructions.size());
  std::vector<ElementwiseTypes> scalar_types(prog.instructions.size());
  for (size_t i = 0; i < prog.instructions.size(); ++i) {
    const Instruction& ins = prog.instructions[i];
    if (ins.scalars.empty()) continue;
    if (ins.op != OpKind::kElementwise) return std::nullopt;
    std::vector<DType> dtypes;
    for (const Operand& o : ins.operands) {
      dtypes.push_back(o.is_handle ? inputs.at(o.handle).dtype : body.types[o.value].dtype);
    }
    absl::StatusOr<ElementwiseTypes> t = ResolveElementwiseTypes(ins, dtypes);
    if (!t.ok()) return std::nullopt;
    scalar_types[i] = *t;
    for (const ScalarOperand& s : ins.scalars) {
      scalar_slots[i].push_back(static_cast<int>(spec.param_dtypes.size()));
      spec.param_dtypes.push_back(t->compute);
      spec.param_scalar.push_back(true);
      plan.scalar_params.push_back({s.value, t->compute});
    }
  }

  std::vector<int> value_slot(body.types.size(), -1);
  for (int p = 0; p < body.num_params; ++p) value_slot[p] = p;
  std::vector<DType> slot_dtype = spec.param_dtypes;
  auto slot_of = [&](const Operand& o) {
    return o.is_handle ? handle_slot.at(o.handle) : value_slot[o.value];
  };
  auto emit = [&](const Step& step) {
    spec.steps.push_back(step);
    slot_dtype.push_back(step.dtype);
    return static_cast<int>(slot_dtype.size()) - 1;
  };
  auto cast_to = [&](int slot, DType dtype) {
    return slot_dtype[slot] == dtype ? slot : emit(Step::Cast(slot, dtype));
  };

  for (size_t i = 0; i < prog.instructions.size(); ++i) {
    const Instruction& ins = prog.instructions[i];
    const std::optional<ElementwiseKind> kind = ElementwiseKindOf(ins);
    // Only elementwise ops of arrays and astype fuse: not creation, dot,
    // sum, reshape, transpose or loops (which need not define any value to
    // look at here), nor scalar operands (the spec has no constants yet).
    if (!kind && ins.op != OpKind::kAstype) return std::nullopt;
    const int out = body.first_output[i];
    const ValueType& type = body.types[out];
    bool scalar = false;
    if (!same_or_scalar(type.shape, &scalar)) return std::nullopt;
    if (kind && !ins.scalars.empty()) {
      // Operands by position: scalars' params, arrays cast to the compute dtype.
      const DType ct = scalar_types[i].compute;
      int slots[2] = {-1, -1};
      size_t next_array = 0, next_scalar = 0;
      for (int pos = 0; pos < Arity(*kind); ++pos) {
        if (next_scalar < ins.scalars.size() && ins.scalars[next_scalar].position == pos) {
          slots[pos] = scalar_slots[i][next_scalar++];
        } else {
          slots[pos] = cast_to(slot_of(ins.operands[next_array++]), ct);
        }
      }
      const int r = emit(Step::Of(*kind, slots[0], slots[1], ct));
      value_slot[out] = cast_to(r, type.dtype);
    } else if (kind && Arity(*kind) == 2) {
      const int a = slot_of(ins.operands[0]), b = slot_of(ins.operands[1]);
      const DType ct = ArithmeticType(*kind, slot_dtype[a], slot_dtype[b]);
      // A bool-valued op computes 0/1 in ct and is cast, as op by op.
      const int r = emit(Step::Of(*kind, cast_to(a, ct), cast_to(b, ct), ct));
      value_slot[out] = cast_to(r, type.dtype);
    } else if (kind) {
      const int a = slot_of(ins.operands[0]);
      const ElementwiseTypes t = ResolveElementwise(*kind, slot_dtype[a]);
      if (!t.ok || t.result != type.dtype) return std::nullopt;
      const int r = emit(Step::Of(*kind, cast_to(a, t.compute), -1, t.compute));
      value_slot[out] = cast_to(r, type.dtype);
    } else {  // astype
      value_slot[out] = cast_to(slot_of(ins.operands[0]), type.dtype);
    }
  }
  for (const Operand& y : prog.yields) spec.yields.push_back(slot_of(y));
  return plan;
}

}  // namespace resident

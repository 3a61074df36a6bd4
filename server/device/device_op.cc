#include "server/device/device_op.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace resident {
namespace {

// The arrays of each kind of op, in a fixed order: inputs, then outputs.
void Collect(const FillOp& op, absl::InlinedVector<OpOperand, 4>& v) {
  v.push_back({op.out, "output"});
}
void Collect(const ArangeOp& op, absl::InlinedVector<OpOperand, 4>& v) {
  v.push_back({op.out, "output"});
}
void Collect(const ElementwiseOp& op, absl::InlinedVector<OpOperand, 4>& v) {
  v.push_back({op.in[0], "operand a"});
  if (Arity(op.kind) == 2) v.push_back({op.in[1], "operand b"});
  v.push_back({op.out, "output"});
}
void Collect(const CastOp& op, absl::InlinedVector<OpOperand, 4>& v) {
  v.push_back({op.in, "input"});
  v.push_back({op.out, "output"});
}
void Collect(const MatmulOp& op, absl::InlinedVector<OpOperand, 4>& v) {
  v.push_back({op.a, "operand a"});
  v.push_back({op.b, "operand b"});
  v.push_back({op.out, "output"});
}
void Collect(const ReduceOp& op, absl::InlinedVector<OpOperand, 4>& v) {
  v.push_back({op.in, "input"});
  v.push_back({op.out, "output"});
}
void Collect(const TransposeOp& op, absl::InlinedVector<OpOperand, 4>& v) {
  v.push_back({op.in, "input"});
  v.push_back({op.out, "output"});
}
void Collect(const FusedLoopOp& op, absl::InlinedVector<OpOperand, 4>& v) {
  for (const DeviceArray& p : op.params) v.push_back({&p, "param"});
  for (const DeviceArray& o : op.outs) v.push_back({&o, "out"});
}

}  // namespace

const char* DeviceOpName(DeviceOpKind kind) {
  switch (kind) {
    case DeviceOpKind::kFill: return "fill";
    case DeviceOpKind::kArange: return "arange";
    case DeviceOpKind::kElementwise: return "elementwise";
    case DeviceOpKind::kCast: return "cast";
    case DeviceOpKind::kMatmul: return "matmul";
    case DeviceOpKind::kReduce: return "reduce";
    case DeviceOpKind::kTranspose: return "transpose";
    case DeviceOpKind::kFusedLoop: return "fused loop";
  }
  return "?";
}

const char* OpLabel(const DeviceOp& op) {
  if (const auto* e = std::get_if<ElementwiseOp>(&op)) return ElementwiseName(e->kind);
  if (std::holds_alternative<ReduceOp>(op)) return "sum";
  return DeviceOpName(KindOf(op));
}

absl::InlinedVector<OpOperand, 4> Operands(const DeviceOp& op) {
  absl::InlinedVector<OpOperand, 4> v;
  std::visit([&v](const auto& o) { Collect(o, v); }, op);
  return v;
}

absl::Status CheckOperands(const DeviceOp& op) {
  if (const auto* e = std::get_if<ElementwiseOp>(&op)) {
    const int arity = Arity(e->kind);
    if (arity == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown elementwise kind ", static_cast<int>(e->kind)));
    }
    if (arity == 1 && e->in[1] != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(ElementwiseName(e->kind), " takes one operand, got two"));
    }
  }
  if (const auto* f = std::get_if<FusedLoopOp>(&op); f != nullptr && f->spec == nullptr) {
    return absl::InvalidArgumentError("fused loop without a spec");
  }
  for (const OpOperand& o : Operands(op)) {
    if (o.array == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(OpLabel(op), " ", o.role, ": missing"));
    }
    // The op's name joins the message only on failure: no string per operand.
    const absl::Status held = CheckHeld(*o.array, o.role);
    if (!held.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(OpLabel(op), " ", held.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace resident

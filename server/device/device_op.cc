#include "server/device/device_op.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace resident {
namespace {

// The arrays of each kind of op, in a fixed order: inputs, then outputs.
using List = absl::InlinedVector<OpOperand, 4>;
void Collect(const FillOp& op, List& v) { v.push_back({op.out, "output"}); }
void Collect(const ArangeOp& op, List& v) { v.push_back({op.out, "output"}); }
void Collect(const ElementwiseOp& op, List& v) {
  v.push_back({op.in[0], "operand a"});
  if (Arity(op.kind) == 2) v.push_back({op.in[1], "operand b"});
  v.push_back({op.out, "output"});
}
void Collect(const CastOp& op, List& v) {
  v.insert(v.end(), {{op.in, "input"}, {op.out, "output"}});
}
void Collect(const MatmulOp& op, List& v) {
  v.insert(v.end(), {{op.a, "operand a"}, {op.b, "operand b"}, {op.out, "output"}});
}
void Collect(const ReduceOp& op, List& v) {
  v.insert(v.end(), {{op.in, "input"}, {op.out, "output"}});
}
void Collect(const TransposeOp& op, List& v) {
  v.insert(v.end(), {{op.in, "input"}, {op.out, "output"}});
}
void Collect(const FusedLoopOp& op, List& v) {
  for (const DeviceArray& p : op.params) v.push_back({&p, "param"});
  for (const DeviceArray& o : op.outs) v.push_back({&o, "out"});
}

}  // namespace

bool DefinedFor(DeviceOpKind kind, DType dtype) {
  switch (kind) {
    case DeviceOpKind::kArange:
      return dtype != DType::kBool;  // NumPy fills bool through its integers
    case DeviceOpKind::kFill:
    case DeviceOpKind::kElementwise:
    case DeviceOpKind::kCast:
    case DeviceOpKind::kMatmul:
    case DeviceOpKind::kReduce:
    case DeviceOpKind::kTranspose:
    case DeviceOpKind::kFusedLoop:
      return true;
  }
  return false;
}

const char* DeviceOpName(DeviceOpKind kind) {
  switch (kind) {
    case DeviceOpKind::kFill:
      return "fill";
    case DeviceOpKind::kArange:
      return "arange";
    case DeviceOpKind::kElementwise:
      return "elementwise";
    case DeviceOpKind::kCast:
      return "cast";
    case DeviceOpKind::kMatmul:
      return "matmul";
    case DeviceOpKind::kReduce:
      return "reduce";
    case DeviceOpKind::kTranspose:
      return "transpose";
    case DeviceOpKind::kFusedLoop:
      return "fused loop";
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

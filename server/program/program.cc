#include "server/program/program.h"

#include <utility>

namespace resident {
const char* InstructionName(const Instruction& ins) {
  return ins.op == OpKind::kElementwise ? ElementwiseName(ins.elementwise) : OpName(ins.op);
}

std::optional<ElementwiseKind> ElementwiseKindOf(const Instruction& ins) {
  if (ins.op != OpKind::kElementwise) return std::nullopt;
  return ins.elementwise;
}

void CanonicaliseScalars(Instruction& ins) {
  const std::optional<ElementwiseKind> kind = ElementwiseKindOf(ins);
  if (!kind || (*kind != ElementwiseKind::kLogicalAnd && *kind != ElementwiseKind::kLogicalOr &&
                *kind != ElementwiseKind::kLogicalXor)) {
    return;
  }
  for (ScalarOperand& s : ins.scalars) s.value = Scalar::Bool(s.value.as_bool());
}

Instruction MakeElementwise(ElementwiseKind kind, std::vector<Operand> operands) {
  Instruction ins;
  ins.op = OpKind::kElementwise;
  ins.elementwise = kind;
  ins.operands = std::move(operands);
  return ins;
}

}  // namespace resident

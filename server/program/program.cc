#include "server/program/program.h"

#include <utility>

namespace resident {
namespace {
constexpr std::pair<OpKind, const char*> kOpNames[] = {
    {OpKind::kOnes, "ones"},
    {OpKind::kZeros, "zeros"},
    {OpKind::kFull, "full"},
    {OpKind::kArange, "arange"},
    {OpKind::kElementwise, "elementwise"},
    {OpKind::kWhere, "where"},
    {OpKind::kClip, "clip"},
    {OpKind::kDot, "dot"},
    {OpKind::kMatmul, "matmul"},
    {OpKind::kSum, "sum"},
    {OpKind::kReshape, "reshape"},
    {OpKind::kTranspose, "transpose"},
    {OpKind::kAstype, "astype"},
    {OpKind::kLoop, "loop"},
    {OpKind::kProd, "prod"},
    {OpKind::kMean, "mean"},
    {OpKind::kMax, "max"},
    {OpKind::kMin, "min"},
    {OpKind::kArgmax, "argmax"},
    {OpKind::kArgmin, "argmin"},
    {OpKind::kAny, "any"},
    {OpKind::kAll, "all"},
    {OpKind::kSlice, "slice"},
    {OpKind::kConcatenate, "concatenate"},
    {OpKind::kStack, "stack"},
    {OpKind::kBroadcastTo, "broadcast_to"},
    {OpKind::kSqueeze, "squeeze"},
    {OpKind::kExpandDims, "expand_dims"},
};
}  // namespace

// Elementwise ops by the op table's names; "elementwise" itself is no wire op.
std::optional<ParsedOp> ParseOp(std::string_view name) {
  if (const ElementwiseInfo* e = FindElementwise(name)) {
    return ParsedOp{OpKind::kElementwise, e->kind};
  }
  for (const auto& [op, n] : kOpNames) {
    if (op != OpKind::kElementwise && std::string_view(n) == name) return ParsedOp{op, {}};
  }
  return std::nullopt;
}

const char* OpName(OpKind op) {
  for (const auto& [o, n] : kOpNames) {
    if (o == op) return n;
  }
  return "?";
}

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

#include "server/program/program.h"

#include <utility>

namespace resident {
namespace {
constexpr std::pair<OpKind, const char*> kOpNames[] = {
    {OpKind::kOnes, "ones"},         {OpKind::kZeros, "zeros"},
    {OpKind::kFull, "full"},         {OpKind::kArange, "arange"},
    {OpKind::kAdd, "add"},           {OpKind::kSubtract, "subtract"},
    {OpKind::kMultiply, "multiply"}, {OpKind::kDivide, "divide"},
    {OpKind::kNegative, "negative"}, {OpKind::kDot, "dot"},
    {OpKind::kMatmul, "matmul"},     {OpKind::kSum, "sum"},
    {OpKind::kReshape, "reshape"},   {OpKind::kTranspose, "transpose"},
    {OpKind::kAstype, "astype"},     {OpKind::kLoop, "loop"},
};
}  // namespace

std::optional<OpKind> ParseOpKind(std::string_view name) {
  for (const auto& [op, n] : kOpNames) {
    if (std::string_view(n) == name) return op;
  }
  return std::nullopt;
}

const char* OpName(OpKind op) {
  for (const auto& [o, n] : kOpNames) {
    if (o == op) return n;
  }
  return "?";
}

std::optional<ElementwiseKind> ElementwiseKindOf(OpKind op) {
  switch (op) {
    case OpKind::kAdd:
      return ElementwiseKind::kAdd;
    case OpKind::kSubtract:
      return ElementwiseKind::kSubtract;
    case OpKind::kMultiply:
      return ElementwiseKind::kMultiply;
    case OpKind::kDivide:
      return ElementwiseKind::kDivide;
    case OpKind::kNegative:
      return ElementwiseKind::kNegative;
    case OpKind::kOnes:
    case OpKind::kZeros:
    case OpKind::kFull:
    case OpKind::kArange:
    case OpKind::kDot:
    case OpKind::kMatmul:
    case OpKind::kSum:
    case OpKind::kReshape:
    case OpKind::kTranspose:
    case OpKind::kAstype:
    case OpKind::kLoop:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace resident

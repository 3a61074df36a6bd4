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

}  // namespace resident

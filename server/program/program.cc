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
    {OpKind::kProd, "prod"},         {OpKind::kMean, "mean"},
    {OpKind::kMax, "max"},           {OpKind::kMin, "min"},
    {OpKind::kArgmax, "argmax"},     {OpKind::kArgmin, "argmin"},
    {OpKind::kAny, "any"},           {OpKind::kAll, "all"},
    {OpKind::kSlice, "slice"},       {OpKind::kConcatenate, "concatenate"},
    {OpKind::kStack, "stack"},       {OpKind::kBroadcastTo, "broadcast_to"},
    {OpKind::kSqueeze, "squeeze"},   {OpKind::kExpandDims, "expand_dims"},
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

// By name through the op table: an op is elementwise when its wire name is a
// row of kElementwiseTable.
std::optional<ElementwiseKind> ElementwiseKindOf(OpKind op) {
  const ElementwiseInfo* e = FindElementwise(OpName(op));
  if (e == nullptr) return std::nullopt;
  return e->kind;
}

}  // namespace resident

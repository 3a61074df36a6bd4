// Reductions: axis handling and result types as NumPy's (see infer_shape.h).
#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/program/infer_shape.h"
#include "server/program/op_registry.h"
#include "server/program/saturating.h"

namespace resident {
namespace {

absl::Status Invalid(const std::string& msg) { return absl::InvalidArgumentError(msg); }

}  // namespace

std::optional<ReduceKind> ReduceKindOf(OpKind op) { return OpDefOf(op).reduce; }

absl::StatusOr<std::vector<int>> ReductionAxes(const Instruction& ins, int rank) {
  std::vector<int64_t> given;
  if (ins.has_axes) {
    if (IsArgReduce(*ReduceKindOf(ins.op))) {
      return Invalid(absl::StrCat(OpName(ins.op),
                                  ": axis must be None or an integer, not a tuple ('tuple' "
                                  "object cannot be interpreted as an integer)"));
    }
    given = ins.axes;
  } else if (ins.axis) {
    given = {*ins.axis};
  } else {
    std::vector<int> all(rank);
    for (int i = 0; i < rank; ++i) all[i] = i;
    return all;
  }
  std::vector<int> axes;
  for (int64_t a : given) {
    // NumPy lets a 0-d array take a single axis 0 (or -1), not in a tuple,
    // and reduces nothing; but not mean (its count of items checks the
    // axis: AxisError).
    if (rank == 0 && !ins.has_axes && (a == 0 || a == -1) && ins.op != OpKind::kMean) continue;
    if (a < -rank || a >= rank) {
      return Invalid(absl::StrCat("axis ", a, " is out of bounds for array of dimension ", rank));
    }
    const int ax = static_cast<int>(a < 0 ? a + rank : a);
    if (std::find(axes.begin(), axes.end(), ax) != axes.end()) {
      return Invalid("duplicate value in 'axis'");
    }
    axes.push_back(ax);
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

absl::StatusOr<ValueType> InferReduction(const Instruction& ins, absl::Span<const ValueType> ops) {
  const std::optional<ReduceKind> kind = ReduceKindOf(ins.op);
  if (!kind) return absl::InternalError("InferReduction of a non-reduction");
  if (ins.has_axes && ins.axis) {
    return Invalid(absl::StrCat(OpName(ins.op), ": give axis or axes, not both"));
  }
  const ValueType& a = ops[0];
  const int rank = static_cast<int>(a.shape.size());
  ASSIGN_OR_RETURN(std::vector<int> axes, ReductionAxes(ins, rank));
  int64_t m = 1;
  for (int ax : axes) m *= a.shape[ax];
  if (m == 0) {
    switch (*kind) {
      case ReduceKind::kMax:
        return Invalid("zero-size array to reduction operation maximum which has no identity");
      case ReduceKind::kMin:
        return Invalid("zero-size array to reduction operation minimum which has no identity");
      case ReduceKind::kArgmax:
      case ReduceKind::kArgmin:
        return Invalid(absl::StrCat("attempt to get ", OpName(ins.op), " of an empty sequence"));
      default:
        break;
    }
  }
  Shape shape;
  for (int d = 0; d < rank; ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced) {
      shape.push_back(a.shape[d]);
    } else if (ins.keepdims) {
      shape.push_back(1);
    }
  }
  return ValueType{ReduceResultType(*kind, a.dtype), std::move(shape)};
}

int64_t ReductionBound(const Instruction& ins, absl::Span<const ValueType> ops,
                       const ValueType& result) {
  const int64_t out = result.nbytes();
  if (!IsComplex(ops[0].dtype)) return out;
  switch (*ReduceKindOf(ins.op)) {
    case ReduceKind::kAny:
    case ReduceKind::kAll:
      // A complex operand is cast to bool first (ops_shape.cc).
      return SaturatingAdd(out, ops[0].num_elements());
    case ReduceKind::kArgmax:
    case ReduceKind::kArgmin:
      // The max's tree, then three bool arrays of the operand's shape.
      return SaturatingAdd(SaturatingAdd(out, SaturatingMul(ops[0].nbytes(), 3)),
                           SaturatingMul(ops[0].num_elements(), 3));
    case ReduceKind::kProd:
    case ReduceKind::kMax:
    case ReduceKind::kMin:
      // A complex tree's transposed copy and halving rows (ops_shape.cc).
      return SaturatingAdd(out, SaturatingMul(ops[0].nbytes(), 3));
    default:
      return out;
  }
}

}  // namespace resident

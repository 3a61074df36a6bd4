// Reductions: axis handling and result types as NumPy's (see infer_shape.h).
#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/program/infer_shape.h"

namespace resident {
namespace {

absl::Status Invalid(const std::string& msg) { return absl::InvalidArgumentError(msg); }

bool IsArg(OpKind op) { return op == OpKind::kArgmax || op == OpKind::kArgmin; }

}  // namespace

std::optional<ReduceKind> ReduceKindOf(OpKind op) {
  switch (op) {
    case OpKind::kSum:
      return ReduceKind::kSum;
    case OpKind::kProd:
      return ReduceKind::kProd;
    case OpKind::kMean:
      return ReduceKind::kMean;
    case OpKind::kMax:
      return ReduceKind::kMax;
    case OpKind::kMin:
      return ReduceKind::kMin;
    case OpKind::kArgmax:
      return ReduceKind::kArgmax;
    case OpKind::kArgmin:
      return ReduceKind::kArgmin;
    case OpKind::kAny:
      return ReduceKind::kAny;
    case OpKind::kAll:
      return ReduceKind::kAll;
    default:
      return std::nullopt;
  }
}

absl::StatusOr<std::vector<int>> ReductionAxes(const Instruction& ins, int rank) {
  std::vector<int64_t> given;
  if (ins.has_axes) {
    if (IsArg(ins.op)) {
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
  if (ops.size() != 1) {
    return Invalid(absl::StrCat(OpName(ins.op), " takes 1 operand, got ", ops.size()));
  }
  if (ins.has_axes && ins.axis) {
    return Invalid(absl::StrCat(OpName(ins.op), ": give axis or axes, not both"));
  }
  const ValueType& a = ops[0];
  if (IsComplex(a.dtype) && *kind != ReduceKind::kSum && *kind != ReduceKind::kProd &&
      *kind != ReduceKind::kMean && *kind != ReduceKind::kAny && *kind != ReduceKind::kAll) {
    return Invalid(absl::StrCat(OpName(ins.op), " of ", DTypeName(a.dtype),
                                " is not supported by Resident yet (NumPy computes it; complex "
                                "supports sum, prod, mean, any and all)"));
  }
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

}  // namespace resident

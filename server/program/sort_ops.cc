// The sorting family's registry functions: argsort and sort (stable, NumPy's
// order, the standard's descending), take_along_axis, cumulative_sum and
// cumulative_prod. Each works along one axis; the lowering moves that axis
// last (a transpose copy, unless it already is), runs the device op over
// rows, and moves it back.
#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/program/axis_last.h"
#include "server/program/op_registry.h"
#include "server/program/saturating.h"

namespace resident {
namespace {

absl::Status Invalid(const std::string& msg) { return absl::InvalidArgumentError(msg); }

// The argsort of `a` along `axis` (int64, a's shape), or with `values` the
// sorted elements themselves (a's dtype).
absl::StatusOr<DeviceArray> Argsort(OpContext& ctx, DeviceArray a, int axis, bool descending,
                                    bool values) {
  const int rank = static_cast<int>(a.shape.size());
  const std::vector<int> perm = ToLast(rank, axis);
  const DType dtype = values ? a.dtype : DType::kInt64;
  ASSIGN_OR_RETURN(DeviceArray rows, Permuted(ctx, std::move(a), perm));
  ASSIGN_OR_RETURN(DeviceArray out, Allocate(ctx, dtype, rows.shape));
  if (out.num_elements() > 0) {
    RETURN_IF_ERROR(
        ctx.device.backend().Run(ctx.stream, ArgsortOp{&rows, &out, descending, values}));
  }
  return Permuted(ctx, std::move(out), Inverse(perm));
}

// take_along_axis of arrays already broadcast to one shape but for `axis`.
absl::StatusOr<DeviceArray> TakeAlong(OpContext& ctx, DeviceArray a, DeviceArray idx, int axis) {
  const int rank = static_cast<int>(a.shape.size());
  const std::vector<int> perm = ToLast(rank, axis);
  ASSIGN_OR_RETURN(DeviceArray rows, Permuted(ctx, std::move(a), perm));
  ASSIGN_OR_RETURN(DeviceArray at, Permuted(ctx, std::move(idx), perm));
  ASSIGN_OR_RETURN(DeviceArray out, Allocate(ctx, rows.dtype, at.shape));
  if (out.num_elements() > 0) {
    RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, TakeAlongAxisOp{&rows, &at, &out}));
  }
  return Permuted(ctx, std::move(out), Inverse(perm));
}

}  // namespace

absl::StatusOr<ValueType> InferArgsort(const Instruction& ins, absl::Span<const ValueType> ops) {
  const ValueType& a = ops[0];
  if (a.shape.empty()) {
    return Invalid(absl::StrCat(OpName(ins.op), " of a 0-d array: it has no axis to sort"));
  }
  RETURN_IF_ERROR(AxisOf(ins, a.shape).status());
  return ValueType{ins.op == OpKind::kArgsort ? DType::kInt64 : a.dtype, a.shape};
}

// The indices (int64), the axis-last copies of the operand and of the
// result, the backends' scratch (CUDA: double-buffered 8-byte keys and
// indices, 32 bytes an element, and CUB's own, under 1 MiB plus 8 bytes an
// element), and sort's gathered result.
int64_t ArgsortBound(const Instruction& ins, absl::Span<const ValueType> ops,
                     const ValueType& result) {
  const int64_t n = ops[0].num_elements();
  int64_t bound = SaturatingMul(n, 8);
  bound = SaturatingAdd(bound, AxisMoves(ops[0], ValueType{DType::kInt64, ops[0].shape}));
  bound = SaturatingAdd(bound, SaturatingAdd(SaturatingMul(n, 40), int64_t{1} << 20));
  if (ins.op == OpKind::kSort) {
    bound = SaturatingAdd(bound, SaturatingMul(result.nbytes(), 3));
  }
  if (IsComplex(ops[0].dtype)) {
    // CUDA's three passes: four key arrays of the component type and three
    // index arrays (cuda_sort_ops.cc's ComplexArgsort).
    bound = SaturatingAdd(bound, SaturatingMul(n, 4 * 8 + 3 * 8));
  }
  return bound;
}

absl::StatusOr<DeviceArray> RunArgsort(OpContext& ctx, const Instruction& ins,
                                       std::vector<DeviceArray> args, const ValueType& out) {
  ASSIGN_OR_RETURN(const int axis, AxisOf(ins, args[0].shape));
  DeviceArray a = std::move(args[0]);
  args.clear();
  // sort: the backend sorts the elements themselves (bit for bit the
  // argsort's gather, without the index array).
  return Argsort(ctx, std::move(a), axis, ins.descending, ins.op == OpKind::kSort);
}

absl::StatusOr<ValueType> InferTakeAlongAxis(const Instruction& ins,
                                             absl::Span<const ValueType> ops) {
  const ValueType &a = ops[0], &idx = ops[1];
  if (!IsInteger(idx.dtype)) {
    return Invalid(
        absl::StrCat("take_along_axis: indices must be integers, not ", DTypeName(idx.dtype)));
  }
  if (a.shape.size() != idx.shape.size()) {
    return Invalid(
        absl::StrCat("take_along_axis: indices and array must have the same number of "
                     "dimensions, got ",
                     idx.shape.size(), " and ", a.shape.size()));
  }
  if (a.shape.empty()) return Invalid("take_along_axis: a 0-d array has no axis");
  ASSIGN_OR_RETURN(const int axis, AxisOf(ins, a.shape));
  Shape sa = a.shape, si = idx.shape;
  sa[axis] = 1;
  si[axis] = 1;
  ASSIGN_OR_RETURN(Shape out, BroadcastShapes(sa, si));
  out[axis] = idx.shape[axis];
  if (a.shape[axis] == 0 && NumElements(out) > 0) {
    return Invalid("take_along_axis: cannot take from an empty axis");
  }
  ASSIGN_OR_RETURN(const int64_t n, CheckedNumElements(out));
  RETURN_IF_ERROR(CheckedNumBytes(n, std::max<int64_t>(ItemSize(a.dtype), 8)).status());
  return ValueType{a.dtype, std::move(out)};
}

// Broadcast copies of both operands (the indices as int64), their
// axis-last copies, and the result's.
int64_t TakeAlongAxisBound(const Instruction&, absl::Span<const ValueType> ops,
                           const ValueType& result) {
  const int64_t big =
      std::max({ops[0].num_elements(), ops[1].num_elements(), result.num_elements()});
  return SaturatingAdd(SaturatingMul(result.nbytes(), 3),
                       SaturatingMul(big, 2 * (ItemSize(ops[0].dtype) + 8)));
}

absl::StatusOr<DeviceArray> RunTakeAlongAxis(OpContext& ctx, const Instruction& ins,
                                             std::vector<DeviceArray> args, const ValueType& out) {
  ASSIGN_OR_RETURN(const int axis, AxisOf(ins, args[0].shape));
  ASSIGN_OR_RETURN(DeviceArray idx, Convert(ctx, std::move(args[1]), DType::kInt64));
  DeviceArray a = std::move(args[0]);
  args.clear();
  // Broadcast every axis but `axis` to the result's (a copy where it differs).
  auto widen = [&](DeviceArray x, int64_t along) -> absl::StatusOr<DeviceArray> {
    Shape want = out.shape;
    want[axis] = along;
    if (x.shape == want) return x;
    ASSIGN_OR_RETURN(DeviceArray w, Allocate(ctx, x.dtype, std::move(want)));
    if (w.num_elements() > 0) {
      RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, CastOp{&x, &w}));
    }
    return w;
  };
  const int64_t n = a.shape[axis];
  ASSIGN_OR_RETURN(a, widen(std::move(a), n));
  ASSIGN_OR_RETURN(idx, widen(std::move(idx), out.shape[axis]));
  return TakeAlong(ctx, std::move(a), std::move(idx), axis);
}

absl::StatusOr<ValueType> InferCumulative(const Instruction& ins, absl::Span<const ValueType> ops) {
  const ValueType& a = ops[0];
  const DType dt = SumResultType(a.dtype);
  if (!ins.axis) return ValueType{dt, {a.num_elements()}};  // NumPy's axis=None: flattened
  if (a.shape.empty()) return Invalid(absl::StrCat(OpName(ins.op), ": a 0-d array has no axis"));
  RETURN_IF_ERROR(AxisOf(ins, a.shape).status());
  return ValueType{dt, a.shape};
}

// The operand converted to the result's dtype, and both moved axis-last.
int64_t CumulativeBound(const Instruction&, absl::Span<const ValueType> ops,
                        const ValueType& result) {
  return SaturatingAdd(SaturatingMul(result.nbytes(), 3), AxisMoves(ops[0], result));
}

absl::StatusOr<DeviceArray> RunCumulative(OpContext& ctx, const Instruction& ins,
                                          std::vector<DeviceArray> args, const ValueType& out) {
  ASSIGN_OR_RETURN(DeviceArray a, Convert(ctx, std::move(args[0]), out.dtype));
  args.clear();
  if (!ins.axis) a.shape = {a.num_elements()};
  const int axis = ins.axis ? *AxisOf(ins, a.shape) : 0;
  const std::vector<int> perm = ToLast(static_cast<int>(a.shape.size()), axis);
  ASSIGN_OR_RETURN(DeviceArray rows, Permuted(ctx, std::move(a), perm));
  ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, rows.shape));
  if (r.num_elements() > 0) {
    const ReduceKind kind =
        ins.op == OpKind::kCumulativeProd ? ReduceKind::kProd : ReduceKind::kSum;
    RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, ScanOp{kind, &rows, &r}));
  }
  return Permuted(ctx, std::move(r), Inverse(perm));
}

}  // namespace resident

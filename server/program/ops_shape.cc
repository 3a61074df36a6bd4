#include "server/program/op_registry.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "core/status_macros.h"
#include "server/program/axis_last.h"
#include "server/program/infer_shape.h"

namespace resident {
namespace {

// Operands cast to the result's dtype, then joined along `axis`.
absl::StatusOr<DeviceArray> Join(OpContext& ctx, const std::vector<DeviceArray>& args, int axis,
                                 const ValueType& out) {
  ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
  if (r.num_elements() == 0) return r;
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, ConcatOp{args, axis, &r}));
  return r;
}

// prod, max and min of a complex array: its reduced axes moved last and
// merged (one transpose copy), then the two halves of the row combined by
// `op` (NumPy's complex multiply, maximum or minimum) until one column is
// left. The tree's order is not NumPy's left to right: a product agrees
// within the reduction bounds, not bit for bit, and where several elements
// hold a NaN (or tie but for a zero's sign) max and min may return another
// of them than NumPy's first. At most three times a's bytes live at once
// (infer_reduce.cc's ReductionBound).
absl::StatusOr<DeviceArray> ComplexTree(OpContext& ctx, const DeviceArray& a,
                                        absl::Span<const int> axes, const ValueType& out,
                                        ElementwiseKind op) {
  Backend& be = ctx.device.backend();
  const int rank = static_cast<int>(a.shape.size());
  const std::vector<int> perm = ToLast(rank, axes);
  int64_t outer = 1, m = 1;
  for (int i = 0; i < rank; ++i) {
    (i < rank - static_cast<int>(axes.size()) ? outer : m) *= a.shape[perm[i]];
  }
  if (m == 0 || outer == 0) {  // the empty product is 1 (max and min refuse it)
    ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
    RETURN_IF_ERROR(be.Run(ctx.stream, FillOp{Scalar::Int(1), &r}));
    return r;
  }
  bool identity = true;
  for (int i = 0; i < rank; ++i) identity &= perm[i] == i;
  DeviceArray cur{a.buffer, a.dtype, {outer, m}};
  if (!identity) {
    Shape moved;
    for (int p : perm) moved.push_back(a.shape[p]);
    ASSIGN_OR_RETURN(DeviceArray t, Allocate(ctx, a.dtype, moved));
    RETURN_IF_ERROR(be.Run(ctx.stream, TransposeOp{perm, &a, &t}));
    cur = DeviceArray{t.buffer, a.dtype, {outer, m}};
  }
  while (m > 1) {
    const int64_t h = m / 2;
    const SliceAxisSpec low[2] = {{0, 1}, {0, 1}}, high[2] = {{0, 1}, {h, 1}};
    ASSIGN_OR_RETURN(DeviceArray x, Allocate(ctx, a.dtype, {outer, h}));
    RETURN_IF_ERROR(be.Run(ctx.stream, SliceOp{low, &cur, &x}));
    ASSIGN_OR_RETURN(DeviceArray y, Allocate(ctx, a.dtype, {outer, h}));
    RETURN_IF_ERROR(be.Run(ctx.stream, SliceOp{high, &cur, &y}));
    RETURN_IF_ERROR(be.Run(ctx.stream, ElementwiseOp{op, {&x, &y}, &x}));
    if (m % 2 == 0) {
      cur = std::move(x);
      m = h;
      continue;
    }
    const SliceAxisSpec last[2] = {{0, 1}, {2 * h, 1}};
    ASSIGN_OR_RETURN(DeviceArray tail, Allocate(ctx, a.dtype, {outer, 1}));
    RETURN_IF_ERROR(be.Run(ctx.stream, SliceOp{last, &cur, &tail}));
    ASSIGN_OR_RETURN(DeviceArray next, Allocate(ctx, a.dtype, {outer, h + 1}));
    const std::vector<DeviceArray> parts = {std::move(x), std::move(tail)};
    RETURN_IF_ERROR(be.Run(ctx.stream, ConcatOp{parts, 1, &next}));
    cur = std::move(next);
    m = h + 1;
  }
  return DeviceArray{cur.buffer, out.dtype, out.shape};
}

}  // namespace

absl::StatusOr<DeviceArray> RunReduction(OpContext& ctx, const Instruction& ins,
                                         std::vector<DeviceArray> args, const ValueType& out) {
  const ReduceKind kind = *ReduceKindOf(ins.op);
  const int rank = static_cast<int>(args[0].shape.size());
  ASSIGN_OR_RETURN(std::vector<int> axes, ReductionAxes(ins, rank));
  if (IsComplex(args[0].dtype) && (kind == ReduceKind::kAny || kind == ReduceKind::kAll)) {
    // Complex truth is either part nonzero: the bool cast's.
    ASSIGN_OR_RETURN(args[0], Convert(ctx, std::move(args[0]), DType::kBool));
  }
  const DeviceArray& a = args[0];
  if (IsComplex(a.dtype) && IsArgReduce(kind)) {
    // NumPy's complex argmax (argmin): the first NaN if there is one, else
    // the first element equal to the max (min); so the first true element
    // of (a == max) | isnan(a), where a NaN max equals nothing.
    Shape kept = a.shape;
    for (int ax : axes) kept[ax] = 1;
    ASSIGN_OR_RETURN(DeviceArray m,
                     ComplexTree(ctx, a, axes, ValueType{a.dtype, kept},
                                 kind == ReduceKind::kArgmax ? ElementwiseKind::kMaximum
                                                             : ElementwiseKind::kMinimum));
    auto elementwise = [&](ElementwiseKind k, DType ct, std::vector<DeviceArray> in) {
      return RunElementwiseArrays(ctx, k, ct, std::move(in), ValueType{DType::kBool, a.shape});
    };
    ASSIGN_OR_RETURN(DeviceArray eq,
                     elementwise(ElementwiseKind::kEqual, a.dtype, {a, std::move(m)}));
    ASSIGN_OR_RETURN(DeviceArray nan, elementwise(ElementwiseKind::kIsnan, a.dtype, {a}));
    ASSIGN_OR_RETURN(DeviceArray hit, elementwise(ElementwiseKind::kLogicalOr, DType::kBool,
                                                  {std::move(eq), std::move(nan)}));
    Instruction first = ins;
    first.op = OpKind::kArgmax;
    args.clear();
    return RunReduction(ctx, first, {std::move(hit)}, out);
  }
  if (IsComplex(a.dtype)) {
    switch (kind) {
      case ReduceKind::kProd:
        return ComplexTree(ctx, a, axes, out, ElementwiseKind::kMultiply);
      case ReduceKind::kMax:
        return ComplexTree(ctx, a, axes, out, ElementwiseKind::kMaximum);
      case ReduceKind::kMin:
        return ComplexTree(ctx, a, axes, out, ElementwiseKind::kMinimum);
      default:
        break;
    }
  }
  Shape reduced;  // the result without keepdims' 1s
  for (int d = 0, j = 0; d < rank; ++d) {
    if (j < static_cast<int>(axes.size()) && axes[j] == d) {
      ++j;
    } else {
      reduced.push_back(a.shape[d]);
    }
  }
  ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, std::move(reduced)));
  Backend& be = ctx.device.backend();
  if (IsComplex(a.dtype)) {
    // sum and mean (prod, max, min and the arg reductions are above) reduce
    // each part: the same buffers read as their parts'
    // float with a trailing axis of 2, which is not reduced.
    const DType part = ComplexComponent(a.dtype);
    Shape in_shape = a.shape, out_shape = r.shape;
    in_shape.push_back(2);
    out_shape.push_back(2);
    const DeviceArray parts{a.buffer, part, in_shape};
    const DeviceArray r_parts{r.buffer, part, out_shape};
    RETURN_IF_ERROR(be.Run(ctx.stream, ReduceAxesOp{kind, axes, &parts, &r_parts}));
    return DeviceArray{r.buffer, out.dtype, out.shape};
  }
  if (kind == ReduceKind::kSum && (static_cast<int>(axes.size()) == rank || axes.size() == 1)) {
    // Sums over everything or one axis keep the tuned single-axis kernels.
    const std::optional<int> axis =
        static_cast<int>(axes.size()) == rank ? std::nullopt : std::optional<int>(axes[0]);
    RETURN_IF_ERROR(be.Run(ctx.stream, ReduceOp{ReduceKind::kSum, axis, &a, &r}));
  } else {
    RETURN_IF_ERROR(be.Run(ctx.stream, ReduceAxesOp{kind, axes, &a, &r}));
  }
  return DeviceArray{r.buffer, out.dtype, out.shape};  // keepdims: the same elements
}

absl::StatusOr<DeviceArray> RunBroadcastTo(OpContext& ctx, const Instruction&,
                                           std::vector<DeviceArray> args, const ValueType& out) {
  ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
  if (r.num_elements() > 0) {
    RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, CastOp{&args.front(), &r}));
  }
  return r;
}

absl::StatusOr<DeviceArray> RunSlice(OpContext& ctx, const Instruction& ins,
                                     std::vector<DeviceArray> args, const ValueType& out) {
  ASSIGN_OR_RETURN(NormalizedSlice n, NormalizeSlices(ins, args[0].shape));
  ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
  if (r.num_elements() > 0) {
    RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, SliceOp{n.axes, &args.front(), &r}));
  }
  return r;
}

// concatenate and stack: operands cast to the result's dtype, then joined
// (stack's along a new axis of 1).
absl::StatusOr<DeviceArray> RunJoin(OpContext& ctx, const Instruction& ins,
                                    std::vector<DeviceArray> args, const ValueType& out) {
  for (DeviceArray& a : args) {
    ASSIGN_OR_RETURN(a, Convert(ctx, std::move(a), out.dtype));
  }
  int axis = 0;
  if (ins.op == OpKind::kStack) {
    const int64_t rank = static_cast<int64_t>(out.shape.size());
    const int64_t given = ins.axis.value_or(0);
    axis = static_cast<int>(given < 0 ? given + rank : given);
    for (DeviceArray& a : args) a.shape.insert(a.shape.begin() + axis, 1);
  } else if (!ins.axis) {
    for (DeviceArray& a : args) a.shape = {a.num_elements()};
  } else {
    const int64_t rank = static_cast<int64_t>(out.shape.size());
    axis = static_cast<int>(*ins.axis < 0 ? *ins.axis + rank : *ins.axis);
  }
  return Join(ctx, args, axis, out);
}

}  // namespace resident

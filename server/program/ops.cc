#include "server/program/ops.h"

#include <cmath>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "core/status_macros.h"
#include "server/program/ops_shape.h"

namespace resident {
namespace {

absl::StatusOr<DeviceArray> Allocate(OpContext& ctx, DType dtype, Shape shape) {
  DeviceArray a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  ASSIGN_OR_RETURN(a.buffer, ctx.device.Allocate(a.nbytes(), ctx.stream, ctx.reservation));
  return a;
}

// True when args[i]'s buffer is referenced only by entries of `args`, so
// writing into it cannot change any array anyone else can see.
bool Exclusive(const std::vector<DeviceArray>& args, size_t i) {
  const auto& buf = args[i].buffer;
  if (buf == nullptr) return false;
  long refs = 0;
  for (const DeviceArray& a : args) refs += a.buffer == buf ? 1 : 0;
  return buf.use_count() == refs;
}

// A buffer for the result: an exclusive argument of the same type when one
// exists (in-place), else a new one.
absl::StatusOr<DeviceArray> Output(OpContext& ctx, const std::vector<DeviceArray>& args,
                                   const ValueType& out) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].dtype == out.dtype && args[i].shape == out.shape && Exclusive(args, i)) {
      return DeviceArray{args[i].buffer, out.dtype, out.shape};
    }
  }
  return Allocate(ctx, out.dtype, out.shape);
}

// `a` converted to `dtype` (the same array when it already is).
absl::StatusOr<DeviceArray> Convert(OpContext& ctx, DeviceArray a, DType dtype) {
  if (a.dtype == dtype) return a;
  ASSIGN_OR_RETURN(DeviceArray out, Allocate(ctx, dtype, a.shape));
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, CastOp{&a, &out}));
  return out;
}

// A fill value as the exact scalar kind of `dtype`, converted as NumPy's
// unsafe cast does (float to integer: NaN/out of range give the minimum).
Scalar FillFor(const Scalar& v, DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return Scalar::Bool(v.as_bool());
    case DType::kInt32: {
      if (v.is_float()) {
        const double f = v.as_double();
        if (!(f > -2147483649.0 && f < 2147483648.0)) {
          return Scalar::Int(std::numeric_limits<int32_t>::min());
        }
        return Scalar::Int(static_cast<int32_t>(f));
      }
      return Scalar::Int(static_cast<int32_t>(v.as_int64()));
    }
    case DType::kInt64:
      return Scalar::Int(v.as_int64());
    case DType::kFloat32:
    case DType::kFloat64:
      return Scalar::Float(v.as_double());
  }
  return v;
}

// Any elementwise op: operands cast to the result's dtype (NumPy's
// promotion; a no-op for negative), then one ElementwiseOp.
absl::StatusOr<DeviceArray> RunElementwise(OpContext& ctx, ElementwiseKind kind,
                                           std::vector<DeviceArray> args, const ValueType& out) {
  for (DeviceArray& a : args) {
    ASSIGN_OR_RETURN(a, Convert(ctx, std::move(a), out.dtype));
  }
  ASSIGN_OR_RETURN(DeviceArray result, Output(ctx, args, out));
  ElementwiseOp op{kind, {args.data(), nullptr}, &result};
  if (Arity(kind) == 2) op.in[1] = &args[1];
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, op));
  return result;
}

// Broadcasts `a` (already in the compute dtype) to `shape` by a copy.
absl::StatusOr<DeviceArray> Materialise(OpContext& ctx, const DeviceArray& a, Shape shape) {
  ASSIGN_OR_RETURN(DeviceArray out, Allocate(ctx, a.dtype, std::move(shape)));
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, CastOp{&a, &out}));
  return out;
}

absl::StatusOr<DeviceArray> RunMatmul(OpContext& ctx, std::vector<DeviceArray> args,
                                      const ValueType& out, bool is_dot) {
  const DType ct = out.dtype;
  for (DeviceArray& a : args) {
    ASSIGN_OR_RETURN(a, Convert(ctx, std::move(a), ct));
  }
  DeviceArray a = args[0], b = args[1];
  args.clear();
  Shape sa = a.shape, sb = b.shape;
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  MatmulShape ms;
  ms.m = sa[sa.size() - 2];
  ms.k = sa.back();
  ms.n = sb.back();
  // Batch dims: the result's, without its trailing matrix dims.
  Shape batch;
  if (!is_dot) {
    const size_t rank = std::max(sa.size(), sb.size());
    batch.assign(out.shape.begin(), out.shape.begin() + static_cast<long>(rank - 2));
  }
  ms.batch = NumElements(batch);
  auto prepare = [&](DeviceArray& x, const Shape& s, int64_t mat, int64_t& stride) -> absl::Status {
    const Shape xb(s.begin(), s.end() - 2);
    const int64_t xbatch = NumElements(xb);
    if (xbatch == 1 || ms.batch == 1) {
      stride = 0;
      return absl::OkStatus();
    }
    Shape padded(batch.size() - xb.size(), 1);
    padded.insert(padded.end(), xb.begin(), xb.end());
    stride = mat;
    if (padded == batch) return absl::OkStatus();
    Shape full = batch;
    full.push_back(s[s.size() - 2]);
    full.push_back(s.back());
    DeviceArray view{x.buffer, x.dtype, s};
    ASSIGN_OR_RETURN(x, Materialise(ctx, view, full));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(prepare(a, sa, ms.m * ms.k, ms.a_batch_stride));
  RETURN_IF_ERROR(prepare(b, sb, ms.k * ms.n, ms.b_batch_stride));
  ASSIGN_OR_RETURN(DeviceArray result, Allocate(ctx, out.dtype, out.shape));
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, MatmulOp{ms, &a, &b, &result}));
  return result;
}

}  // namespace

absl::StatusOr<DeviceArray> RunOp(OpContext& ctx, const Instruction& ins,
                                  std::vector<DeviceArray> args, const ValueType& out) {
  Backend& be = ctx.device.backend();
  switch (ins.op) {
    case OpKind::kOnes:
    case OpKind::kZeros:
    case OpKind::kFull: {
      ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
      const Scalar v = ins.op == OpKind::kOnes    ? Scalar::Int(1)
                       : ins.op == OpKind::kZeros ? Scalar::Int(0)
                                                  : *ins.fill;
      RETURN_IF_ERROR(be.Run(ctx.stream, FillOp{FillFor(v, out.dtype), &r}));
      return r;
    }
    case OpKind::kArange: {
      const Scalar start = ins.start.value_or(Scalar::Int(0));
      const Scalar step = ins.step.value_or(Scalar::Int(1));
      if (out.dtype == DType::kBool) {  // NumPy fills bool via its integers
        ASSIGN_OR_RETURN(ArangeParams p, ComputeArange(start, *ins.stop, step, DType::kInt64));
        ASSIGN_OR_RETURN(DeviceArray i64, Allocate(ctx, DType::kInt64, out.shape));
        RETURN_IF_ERROR(be.Run(ctx.stream, ArangeOp{p.start, p.delta, &i64}));
        return Convert(ctx, std::move(i64), DType::kBool);
      }
      ASSIGN_OR_RETURN(ArangeParams p, ComputeArange(start, *ins.stop, step, out.dtype));
      ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
      RETURN_IF_ERROR(be.Run(ctx.stream, ArangeOp{p.start, p.delta, &r}));
      return r;
    }
    case OpKind::kAdd:
    case OpKind::kSubtract:
    case OpKind::kMultiply:
    case OpKind::kDivide:
    case OpKind::kNegative:
      return RunElementwise(ctx, *ElementwiseKindOf(ins.op), std::move(args), out);
    case OpKind::kDot:
      if (args[0].shape.empty() || args[1].shape.empty()) {
        return RunElementwise(ctx, ElementwiseKind::kMultiply, std::move(args), out);
      }
      return RunMatmul(ctx, std::move(args), out, /*is_dot=*/true);
    case OpKind::kMatmul:
      return RunMatmul(ctx, std::move(args), out, /*is_dot=*/false);
    case OpKind::kSum:
    case OpKind::kProd:
    case OpKind::kMean:
    case OpKind::kMax:
    case OpKind::kMin:
    case OpKind::kArgmax:
    case OpKind::kArgmin:
    case OpKind::kAny:
    case OpKind::kAll:
      return RunReduction(ctx, ins, std::move(args), out);  // ops_shape.cc
    case OpKind::kSlice:
    case OpKind::kConcatenate:
    case OpKind::kStack:
    case OpKind::kBroadcastTo:
    case OpKind::kSqueeze:
    case OpKind::kExpandDims:
      return RunShaping(ctx, ins, std::move(args), out);  // ops_shape.cc
    case OpKind::kReshape:
      return DeviceArray{args[0].buffer, out.dtype, out.shape};
    case OpKind::kTranspose: {
      ASSIGN_OR_RETURN(std::vector<int> perm,
                       ResolvePermutation(static_cast<int>(args[0].shape.size()), ins.axes));
      bool identity = true;
      for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int>(i);
      if (identity) return DeviceArray{args[0].buffer, out.dtype, out.shape};
      ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
      RETURN_IF_ERROR(be.Run(ctx.stream, TransposeOp{perm, args.data(), &r}));
      return r;
    }
    case OpKind::kAstype: {
      if (args[0].dtype == out.dtype) return args[0];
      ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
      RETURN_IF_ERROR(be.Run(ctx.stream, CastOp{args.data(), &r}));
      return r;
    }
    case OpKind::kLoop:
      break;
  }
  return absl::InternalError("RunOp called on a loop");
}

}  // namespace resident

#include "server/program/ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/program/infer_elementwise.h"
#include "server/program/op_registry.h"

namespace resident {

absl::StatusOr<DeviceArray> Allocate(OpContext& ctx, DType dtype, Shape shape) {
  DeviceArray a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  ASSIGN_OR_RETURN(a.buffer, ctx.device.Allocate(a.nbytes(), ctx.stream, ctx.reservation));
  return a;
}

absl::StatusOr<DeviceArray> Convert(OpContext& ctx, DeviceArray a, DType dtype) {
  if (a.dtype == dtype) return a;
  ASSIGN_OR_RETURN(DeviceArray out, Allocate(ctx, dtype, a.shape));
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, CastOp{&a, &out}));
  return out;
}

namespace {

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

// A fill value as the exact scalar kind of `dtype`, converted as NumPy's
// unsafe cast does (core/scalar.h's ScalarAs: float to integer as x86 NumPy
// gives it, integers wrapped to the dtype).
Scalar FillFor(const Scalar& v, DType dtype) {
  if (dtype == DType::kBool) return Scalar::Bool(v.as_bool());
  if (IsFloating(dtype)) return Scalar::Float(v.as_double());
  return VisitDType(
      dtype,
      [&](auto zero) {
        using T = decltype(zero);
        if constexpr (kIsHalfStorage<T>) {
          return v;  // floating, handled above
        } else {
          // uint64 values past int64 travel as their bit pattern.
          return Scalar::Int(static_cast<int64_t>(ScalarAs<T>(v)));
        }
      },
      [&] { return v; });
}

// One ElementwiseOp over `args` (Arity(kind) arrays), each first cast to the
// compute dtype `ct` (NumPy's promotion; a no-op when it already is). A
// bool-valued kind computed in another dtype writes 0/1 of ct into a
// temporary, cast to bool.
absl::StatusOr<DeviceArray> RunElementwiseArrays(OpContext& ctx, ElementwiseKind kind, DType ct,
                                                 std::vector<DeviceArray> args,
                                                 const ValueType& out) {
  for (DeviceArray& a : args) {
    ASSIGN_OR_RETURN(a, Convert(ctx, std::move(a), ct));
  }
  const ValueType computed{ct, out.shape};
  ASSIGN_OR_RETURN(DeviceArray result, Output(ctx, args, computed));
  ElementwiseOp op{kind, {args.data(), nullptr}, &result};
  if (Arity(kind) == 2) op.in[1] = &args[1];
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, op));
  if (ct == out.dtype) return result;
  args.clear();
  return Convert(ctx, std::move(result), out.dtype);
}

}  // namespace

// An elementwise instruction: its scalar operands become one-element arrays
// of the compute dtype (broadcast by the kernels), as NEP 50 converts them.
absl::StatusOr<DeviceArray> RunElementwise(OpContext& ctx, const Instruction& ins,
                                           std::vector<DeviceArray> args, const ValueType& out) {
  std::vector<DType> dtypes;
  for (const DeviceArray& a : args) dtypes.push_back(a.dtype);
  ASSIGN_OR_RETURN(ElementwiseTypes t, ResolveElementwiseTypes(ins, dtypes));
  if (ins.scalars.empty()) {
    return RunElementwiseArrays(ctx, ins.elementwise, t.compute, std::move(args), out);
  }
  std::vector<DeviceArray> all;
  size_t next_array = 0, next_scalar = 0;
  for (int pos = 0; pos < Arity(ins.elementwise); ++pos) {
    if (next_scalar < ins.scalars.size() && ins.scalars[next_scalar].position == pos) {
      ASSIGN_OR_RETURN(DeviceArray s, Allocate(ctx, t.compute, {}));
      const Scalar v = FillFor(ins.scalars[next_scalar++].value, t.compute);
      RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, FillOp{v, &s}));
      all.push_back(std::move(s));
    } else {
      all.push_back(std::move(args[next_array++]));
    }
  }
  args.clear();
  return RunElementwiseArrays(ctx, ins.elementwise, t.compute, std::move(all), out);
}

namespace {

// The operands of a where/clip by position: arrays as given, scalars as
// one-element arrays of `dtype` (clip's integer bounds clamped to its range,
// as NumPy 2 does; where's wrap, as NumPy's do).
absl::StatusOr<std::vector<DeviceArray>> SelectOperands(OpContext& ctx, const Instruction& ins,
                                                        std::vector<DeviceArray> args,
                                                        DType dtype) {
  std::vector<DeviceArray> all;
  size_t next_array = 0, next_scalar = 0;
  for (int pos = 0; pos < 3; ++pos) {
    if (next_scalar < ins.scalars.size() && ins.scalars[next_scalar].position == pos) {
      Scalar v = ins.scalars[next_scalar++].value;
      if (ins.op == OpKind::kClip && v.is_int() && IsInteger(dtype)) {
        v = Scalar::Int(ClampToDType(v.as_int64(), dtype));
      }
      ASSIGN_OR_RETURN(DeviceArray s, Allocate(ctx, dtype, {}));
      RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, FillOp{FillFor(v, dtype), &s}));
      all.push_back(std::move(s));
    } else {
      all.push_back(std::move(args[next_array++]));
    }
  }
  return all;
}

// The broadcast shape of two arrays (already checked by inference).
Shape Broadcast(const DeviceArray& a, const DeviceArray& b) {
  absl::StatusOr<Shape> s = BroadcastShapes(a.shape, b.shape);
  return s.ok() ? *s : a.shape;
}

}  // namespace

// clip(a, lo, hi) = minimum(hi, maximum(lo, a)) in the result's dtype, as
// NumPy's (NaN bounds propagate; lo > hi gives hi; a tie of zeros keeps a's
// sign: the table's maximum/minimum return their second operand on ties).
absl::StatusOr<DeviceArray> RunClip(OpContext& ctx, const Instruction& ins,
                                    std::vector<DeviceArray> args, const ValueType& out) {
  ASSIGN_OR_RETURN(std::vector<DeviceArray> v,
                   SelectOperands(ctx, ins, std::move(args), out.dtype));
  const ValueType low{out.dtype, Broadcast(v[0], v[1])};
  ASSIGN_OR_RETURN(DeviceArray t, RunElementwiseArrays(ctx, ElementwiseKind::kMaximum, out.dtype,
                                                       {std::move(v[1]), std::move(v[0])}, low));
  return RunElementwiseArrays(ctx, ElementwiseKind::kMinimum, out.dtype,
                              {std::move(v[2]), std::move(t)}, out);
}

// where(cond, a, b) from the table's ops, exact for every dtype: bool as
// cond*a + !cond*b (and/or), others on their bit patterns as integers of
// the same width (complex as its 8-byte words), b + cond * (a - b) with
// wrapping arithmetic (cond 0 or 1), so NaN payloads and signed zeros pass
// unchanged. A fused select kernel is
// left for later: this makes three passes.
absl::StatusOr<DeviceArray> RunWhere(OpContext& ctx, const Instruction& ins,
                                     std::vector<DeviceArray> args, const ValueType& out) {
  const DType p = out.dtype;
  ASSIGN_OR_RETURN(std::vector<DeviceArray> v, SelectOperands(ctx, ins, std::move(args), p));
  ASSIGN_OR_RETURN(DeviceArray cond, Convert(ctx, std::move(v[0]), DType::kBool));
  ASSIGN_OR_RETURN(DeviceArray a, Convert(ctx, std::move(v[1]), p));
  ASSIGN_OR_RETURN(DeviceArray b, Convert(ctx, std::move(v[2]), p));
  v.clear();
  using K = ElementwiseKind;
  if (p == DType::kBool) {
    const ValueType ca{p, Broadcast(cond, a)};
    ASSIGN_OR_RETURN(DeviceArray not_c, RunElementwiseArrays(ctx, K::kLogicalNot, p, {cond},
                                                             ValueType{p, cond.shape}));
    ASSIGN_OR_RETURN(DeviceArray x, RunElementwiseArrays(ctx, K::kMultiply, p,
                                                         {std::move(cond), std::move(a)}, ca));
    const ValueType nb{p, Broadcast(not_c, b)};
    ASSIGN_OR_RETURN(DeviceArray y, RunElementwiseArrays(ctx, K::kMultiply, p,
                                                         {std::move(not_c), std::move(b)}, nb));
    return RunElementwiseArrays(ctx, K::kAdd, p, {std::move(x), std::move(y)}, out);
  }
  // Complex values as their 8-byte words: complex64 one, complex128 two
  // (a trailing axis of 2, cond broadcast along it).
  const int64_t words = IsComplex(p) ? ItemSize(p) / 8 : 1;
  const DType bits = IsComplex(p) ? DType::kInt64 : SignedIntegerOfSize(ItemSize(p));
  Shape out_shape = out.shape;
  if (words > 1) {
    a.shape.push_back(words);
    b.shape.push_back(words);
    cond.shape.push_back(1);
    out_shape.push_back(words);
  }
  a.dtype = bits;  // the same buffer, read as integers
  b.dtype = bits;
  ASSIGN_OR_RETURN(DeviceArray c, Convert(ctx, std::move(cond), bits));
  const ValueType ab{bits, Broadcast(a, b)};
  ASSIGN_OR_RETURN(DeviceArray d,
                   RunElementwiseArrays(ctx, K::kSubtract, bits, {std::move(a), b}, ab));
  const ValueType cd{bits, Broadcast(c, d)};
  ASSIGN_OR_RETURN(DeviceArray e,
                   RunElementwiseArrays(ctx, K::kMultiply, bits, {std::move(c), std::move(d)}, cd));
  ASSIGN_OR_RETURN(DeviceArray r,
                   RunElementwiseArrays(ctx, K::kAdd, bits, {std::move(b), std::move(e)},
                                        ValueType{bits, std::move(out_shape)}));
  r.dtype = p;
  if (words > 1) r.shape.pop_back();
  return r;
}

namespace {

// Broadcasts `a` (already in the compute dtype) to `shape` by a copy.
absl::StatusOr<DeviceArray> Materialise(OpContext& ctx, const DeviceArray& a, Shape shape) {
  ASSIGN_OR_RETURN(DeviceArray out, Allocate(ctx, a.dtype, std::move(shape)));
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, CastOp{&a, &out}));
  return out;
}

absl::StatusOr<DeviceArray> RunMatmulOf(OpContext& ctx, std::vector<DeviceArray> args,
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
  const OpDef& def = OpDefOf(ins.op);
  if (def.run == nullptr) return absl::InternalError(absl::StrCat("RunOp called on ", def.name));
  return def.run(ctx, ins, std::move(args), out);
}

absl::StatusOr<std::vector<DeviceArray>> RunOpResults(OpContext& ctx, const Instruction& ins,
                                                      std::vector<DeviceArray> args,
                                                      absl::Span<const ValueType> outs) {
  const OpDef& def = OpDefOf(ins.op);
  if (def.run_many == nullptr) {
    return absl::InternalError(absl::StrCat("RunOpResults called on ", def.name));
  }
  return def.run_many(ctx, ins, std::move(args), outs);
}

absl::StatusOr<DeviceArray> RunFill(OpContext& ctx, const Instruction& ins,
                                    std::vector<DeviceArray>, const ValueType& out) {
  ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
  const Scalar v = ins.op == OpKind::kOnes    ? Scalar::Int(1)
                   : ins.op == OpKind::kZeros ? Scalar::Int(0)
                                              : *ins.fill;
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, FillOp{FillFor(v, out.dtype), &r}));
  return r;
}

absl::StatusOr<DeviceArray> RunArange(OpContext& ctx, const Instruction& ins,
                                      std::vector<DeviceArray>, const ValueType& out) {
  Backend& be = ctx.device.backend();
  const Scalar start = ins.start.value_or(Scalar::Int(0));
  const Scalar step = ins.step.value_or(Scalar::Int(1));
  if (out.dtype == DType::kBool) {  // NumPy fills bool via its integers
    ASSIGN_OR_RETURN(ArangeParams p, ComputeArange(start, *ins.stop, step, DType::kInt64));
    ASSIGN_OR_RETURN(DeviceArray i64, Allocate(ctx, DType::kInt64, out.shape));
    RETURN_IF_ERROR(be.Run(ctx.stream, ArangeOp{p.start, p.delta, p.second, &i64}));
    return Convert(ctx, std::move(i64), DType::kBool);
  }
  ASSIGN_OR_RETURN(ArangeParams p, ComputeArange(start, *ins.stop, step, out.dtype));
  ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
  RETURN_IF_ERROR(be.Run(ctx.stream, ArangeOp{p.start, p.delta, p.second, &r}));
  return r;
}

absl::StatusOr<DeviceArray> RunDot(OpContext& ctx, const Instruction&,
                                   std::vector<DeviceArray> args, const ValueType& out) {
  if (args[0].shape.empty() || args[1].shape.empty()) {
    return RunElementwiseArrays(ctx, ElementwiseKind::kMultiply, out.dtype, std::move(args), out);
  }
  return RunMatmulOf(ctx, std::move(args), out, /*is_dot=*/true);
}

absl::StatusOr<DeviceArray> RunMatmul(OpContext& ctx, const Instruction&,
                                      std::vector<DeviceArray> args, const ValueType& out) {
  return RunMatmulOf(ctx, std::move(args), out, /*is_dot=*/false);
}

// reshape, squeeze, expand_dims: operand 0's buffer, renamed.
absl::StatusOr<DeviceArray> RunAlias(OpContext&, const Instruction&, std::vector<DeviceArray> args,
                                     const ValueType& out) {
  return DeviceArray{args[0].buffer, out.dtype, out.shape};
}

absl::StatusOr<DeviceArray> RunTranspose(OpContext& ctx, const Instruction& ins,
                                         std::vector<DeviceArray> args, const ValueType& out) {
  ASSIGN_OR_RETURN(std::vector<int> perm,
                   ResolvePermutation(static_cast<int>(args[0].shape.size()), ins.axes));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int>(i);
  if (identity) return DeviceArray{args[0].buffer, out.dtype, out.shape};
  ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, TransposeOp{perm, args.data(), &r}));
  return r;
}

absl::StatusOr<DeviceArray> RunAstype(OpContext& ctx, const Instruction&,
                                      std::vector<DeviceArray> args, const ValueType& out) {
  if (args[0].dtype == out.dtype) return args[0];
  ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, CastOp{args.data(), &r}));
  return r;
}

}  // namespace resident

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

}  // namespace

// A bool-valued kind computed in another dtype writes 0/1 of ct into a
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

namespace {

// The lowering the planner decided for the running instruction.
absl::StatusOr<const Lowering*> Planned(const OpContext& ctx, const Instruction& ins) {
  if (ctx.lowering == nullptr) {
    return absl::InternalError(absl::StrCat(InstructionName(ins), " run without its lowering"));
  }
  return ctx.lowering;
}

// `args` with each scalar operand of `ins` placed at its position as a
// one-element array of `dtype` holding its planned fill (broadcast by the
// kernels).
absl::StatusOr<std::vector<DeviceArray>> WithScalars(OpContext& ctx, const Instruction& ins,
                                                     const Lowering& l, int arity,
                                                     std::vector<DeviceArray> args, DType dtype) {
  if (ins.scalars.empty()) return args;
  std::vector<DeviceArray> all;
  size_t next_array = 0, next_scalar = 0;
  for (int pos = 0; pos < arity; ++pos) {
    if (next_scalar < ins.scalars.size() && ins.scalars[next_scalar].position == pos) {
      ASSIGN_OR_RETURN(DeviceArray s, Allocate(ctx, dtype, {}));
      RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, FillOp{l.fills[next_scalar++], &s}));
      all.push_back(std::move(s));
    } else {
      all.push_back(std::move(args[next_array++]));
    }
  }
  return all;
}

}  // namespace

absl::StatusOr<Lowering> LowerElementwise(const Instruction& ins,
                                          absl::Span<const ValueType> arrays, const ValueType&) {
  std::vector<DType> dtypes;
  for (const ValueType& a : arrays) dtypes.push_back(a.dtype);
  ASSIGN_OR_RETURN(ElementwiseTypes t, ResolveElementwiseTypes(ins, dtypes));
  Lowering l;
  l.compute = t.compute;
  for (const ScalarOperand& s : ins.scalars) l.fills.push_back(FillFor(s.value, t.compute));
  return l;
}

// An elementwise instruction: its scalar operands become one-element arrays
// of the compute dtype, as NEP 50 converts them.
absl::StatusOr<DeviceArray> RunElementwise(OpContext& ctx, const Instruction& ins,
                                           std::vector<DeviceArray> args, const ValueType& out) {
  ASSIGN_OR_RETURN(const Lowering* l, Planned(ctx, ins));
  ASSIGN_OR_RETURN(std::vector<DeviceArray> all,
                   WithScalars(ctx, ins, *l, Arity(ins.elementwise), std::move(args), l->compute));
  return RunElementwiseArrays(ctx, ins.elementwise, l->compute, std::move(all), out);
}

// where's and clip's scalars as fills of the result's dtype (clip's
// integer bounds clamped to its range, as NumPy 2 does; where's wrap, as
// NumPy's do).
absl::StatusOr<Lowering> LowerSelect(const Instruction& ins, absl::Span<const ValueType>,
                                     const ValueType& out) {
  Lowering l;
  l.compute = out.dtype;
  for (const ScalarOperand& s : ins.scalars) {
    Scalar v = s.value;
    if (ins.op == OpKind::kClip && v.is_int() && IsInteger(out.dtype)) {
      v = Scalar::Int(ClampToDType(v.as_int64(), out.dtype));
    }
    l.fills.push_back(FillFor(v, out.dtype));
  }
  return l;
}

namespace {

// The operands of a where/clip by position: arrays as given, scalars as
// one-element arrays of `dtype` holding their planned fills.
absl::StatusOr<std::vector<DeviceArray>> SelectOperands(OpContext& ctx, const Instruction& ins,
                                                        std::vector<DeviceArray> args,
                                                        DType dtype) {
  if (ins.scalars.empty()) return args;
  ASSIGN_OR_RETURN(const Lowering* l, Planned(ctx, ins));
  return WithScalars(ctx, ins, *l, 3, std::move(args), dtype);
}

// The broadcast shape of two arrays (already checked by inference).
Shape Broadcast(const DeviceArray& a, const DeviceArray& b) {
  absl::StatusOr<Shape> s = BroadcastShapes(a.shape, b.shape);
  return s.ok() ? *s : a.shape;
}

// One side of NumPy's complex clip (its clip loop's _NPY_MAX/_NPY_MIN, not
// the maximum/minimum ufuncs): x where x has a NaN part or orders after
// (lower) or before (upper) the bound, comparing the parts plainly, else
// the bound. The ufuncs' comparison would treat a bound with a NaN
// imaginary part differently, so the parts are compared here.
absl::StatusOr<DeviceArray> ComplexClipStep(OpContext& ctx, DeviceArray x, DeviceArray bound,
                                            bool lower) {
  using K = ElementwiseKind;
  const DType part = ComplexComponent(x.dtype);
  const Shape shape = Broadcast(x, bound);
  auto unary = [&](K kind, const DeviceArray& a, DType ct, DType result) {
    return RunElementwiseArrays(ctx, kind, ct, {a}, ValueType{result, a.shape});
  };
  auto binary = [&](K kind, DeviceArray a, DeviceArray b, DType ct) {
    const ValueType t{DType::kBool, Broadcast(a, b)};
    return RunElementwiseArrays(ctx, kind, ct, {std::move(a), std::move(b)}, t);
  };
  const K order = lower ? K::kGreater : K::kLess;
  DeviceArray take;
  {
    ASSIGN_OR_RETURN(DeviceArray xr, unary(K::kReal, x, x.dtype, part));
    ASSIGN_OR_RETURN(DeviceArray xi, unary(K::kImag, x, x.dtype, part));
    ASSIGN_OR_RETURN(DeviceArray br, unary(K::kReal, bound, bound.dtype, part));
    ASSIGN_OR_RETURN(DeviceArray bi, unary(K::kImag, bound, bound.dtype, part));
    ASSIGN_OR_RETURN(DeviceArray nan_r, unary(K::kIsnan, xr, part, DType::kBool));
    ASSIGN_OR_RETURN(DeviceArray nan_i, unary(K::kIsnan, xi, part, DType::kBool));
    ASSIGN_OR_RETURN(DeviceArray nan,
                     binary(K::kLogicalOr, std::move(nan_r), std::move(nan_i), DType::kBool));
    ASSIGN_OR_RETURN(DeviceArray by_re, binary(order, xr, br, part));
    ASSIGN_OR_RETURN(DeviceArray same_re, binary(K::kEqual, std::move(xr), std::move(br), part));
    ASSIGN_OR_RETURN(DeviceArray by_im, binary(order, std::move(xi), std::move(bi), part));
    ASSIGN_OR_RETURN(DeviceArray tie,
                     binary(K::kLogicalAnd, std::move(same_re), std::move(by_im), DType::kBool));
    ASSIGN_OR_RETURN(DeviceArray ordered,
                     binary(K::kLogicalOr, std::move(by_re), std::move(tie), DType::kBool));
    ASSIGN_OR_RETURN(take, binary(K::kLogicalOr, std::move(nan), std::move(ordered), DType::kBool));
  }
  Instruction where;
  where.op = OpKind::kWhere;
  const ValueType result{x.dtype, shape};
  return RunWhere(ctx, where, {std::move(take), std::move(x), std::move(bound)}, result);
}

}  // namespace

// clip(a, lo, hi) = minimum(hi, maximum(lo, a)) in the result's dtype, as
// NumPy's (NaN bounds propagate; lo > hi gives hi; a tie of zeros keeps a's
// sign: the table's maximum/minimum return their second operand on ties).
absl::StatusOr<DeviceArray> RunClip(OpContext& ctx, const Instruction& ins,
                                    std::vector<DeviceArray> args, const ValueType& out) {
  ASSIGN_OR_RETURN(std::vector<DeviceArray> v,
                   SelectOperands(ctx, ins, std::move(args), out.dtype));
  if (IsComplex(out.dtype)) {
    for (DeviceArray& a : v) {
      ASSIGN_OR_RETURN(a, Convert(ctx, std::move(a), out.dtype));
    }
    ASSIGN_OR_RETURN(DeviceArray low, ComplexClipStep(ctx, std::move(v[0]), std::move(v[1]), true));
    return ComplexClipStep(ctx, std::move(low), std::move(v[2]), false);
  }
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

absl::StatusOr<Lowering> LowerFill(const Instruction& ins, absl::Span<const ValueType>,
                                   const ValueType& out) {
  const Scalar v = ins.op == OpKind::kOnes    ? Scalar::Int(1)
                   : ins.op == OpKind::kZeros ? Scalar::Int(0)
                                              : *ins.fill;
  Lowering l;
  l.fills.push_back(FillFor(v, out.dtype));
  return l;
}

absl::StatusOr<DeviceArray> RunFill(OpContext& ctx, const Instruction& ins,
                                    std::vector<DeviceArray>, const ValueType& out) {
  ASSIGN_OR_RETURN(const Lowering* l, Planned(ctx, ins));
  ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, FillOp{l->fills[0], &r}));
  return r;
}

// NumPy fills a bool arange through its integers.
absl::StatusOr<Lowering> LowerArange(const Instruction& ins, absl::Span<const ValueType>,
                                     const ValueType& out) {
  const DType filled = out.dtype == DType::kBool ? DType::kInt64 : out.dtype;
  Lowering l;
  l.compute = filled;
  ASSIGN_OR_RETURN(l.arange, ComputeArange(ins.start.value_or(Scalar::Int(0)), *ins.stop,
                                           ins.step.value_or(Scalar::Int(1)), filled));
  return l;
}

absl::StatusOr<DeviceArray> RunArange(OpContext& ctx, const Instruction& ins,
                                      std::vector<DeviceArray>, const ValueType& out) {
  ASSIGN_OR_RETURN(const Lowering* l, Planned(ctx, ins));
  const ArangeParams& p = l->arange;
  ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, l->compute, out.shape));
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, ArangeOp{p.start, p.delta, p.second, &r}));
  return Convert(ctx, std::move(r), out.dtype);
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

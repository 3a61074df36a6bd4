// The FFT family's registry functions: fft, ifft (complex to complex), rfft
// (real to complex) and irfft (complex to real), along one axis or (with
// `axes`; irfft excepted) one transform over up to three, with NumPy's
// default "backward" scaling (the inverses divide by the points); the
// client composes the rest (n, norm, hfft, more axes) from these. The
// operand converts to the transform's dtype (NumPy 2's: single precision
// for float16, float32 and complex64, double otherwise), its axes move
// last, one FftOp transforms them, and they move back.
#include <algorithm>
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

FftKind KindOf(OpKind op) {
  switch (op) {
    case OpKind::kIfft:
      return FftKind::kInverse;
    case OpKind::kRfft:
      return FftKind::kRealForward;
    case OpKind::kIrfft:
      return FftKind::kRealInverse;
    default:
      return FftKind::kForward;
  }
}

bool SinglePrecision(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 ||
         d == DType::kComplex64;
}

// The dtypes the transform reads and gives for an operand of dtype d.
struct FftTypes {
  DType in, out;
};
FftTypes TypesOf(FftKind kind, DType d) {
  const bool f32 = SinglePrecision(d);
  const DType complex = f32 ? DType::kComplex64 : DType::kComplex128;
  const DType real = f32 ? DType::kFloat32 : DType::kFloat64;
  switch (kind) {
    case FftKind::kForward:
    case FftKind::kInverse:
      return {complex, complex};
    case FftKind::kRealForward:
      return {real, complex};
    case FftKind::kRealInverse:
      return {complex, real};
  }
  return {complex, complex};
}

// The transformed axes, normalised: `axes` when given (1 to 3 distinct
// ones, in order; the last is rfft's halved one; irfft takes one), else
// the one axis (default -1).
absl::StatusOr<std::vector<int>> FftAxes(const Instruction& ins, const Shape& shape) {
  if (!ins.has_axes) {
    ASSIGN_OR_RETURN(const int axis, AxisOf(ins, shape));
    return std::vector<int>{axis};
  }
  const char* name = OpName(ins.op);
  const int rank = static_cast<int>(shape.size());
  const int most = KindOf(ins.op) == FftKind::kRealInverse ? 1 : kMaxFftAxes;
  if (ins.axes.empty() || static_cast<int>(ins.axes.size()) > most) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": axes must name 1 to ", most, " axes, not ", ins.axes.size()));
  }
  std::vector<int> axes;
  for (int64_t a : ins.axes) {
    if (a < -rank || a >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": axis ", a, " is out of bounds for array of dimension ", rank));
    }
    const int ax = static_cast<int>(a < 0 ? a + rank : a);
    if (std::find(axes.begin(), axes.end(), ax) != axes.end()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": repeated axis ", ax));
    }
    axes.push_back(ax);
  }
  return axes;
}

}  // namespace

absl::StatusOr<ValueType> InferFft(const Instruction& ins, absl::Span<const ValueType> ops) {
  const char* name = OpName(ins.op);
  const ValueType& a = ops[0];
  if (a.shape.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": a 0-d array"));
  ASSIGN_OR_RETURN(const std::vector<int> axes, FftAxes(ins, a.shape));
  for (int ax : axes) {
    if (a.shape[ax] < 1 && KindOf(ins.op) != FftKind::kRealInverse) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": invalid number of data points (",
                                                     a.shape[ax], ") along axis ", ax));
    }
  }
  const int axis = axes.back();
  const FftKind kind = KindOf(ins.op);
  if (kind == FftKind::kRealForward && IsComplex(a.dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("rfft of ", DTypeName(a.dtype), ": its input must be real"));
  }
  Shape out = a.shape;
  const int64_t len = a.shape[axis];
  if (kind == FftKind::kRealInverse) {
    if (ins.shape.size() != 1 || ins.shape[0] < 1 || len != ins.shape[0] / 2 + 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("irfft: shape must be (n,), the output's length along the axis, with "
                       "n // 2 + 1 = the input's length ",
                       len, " there"));
    }
    out[axis] = ins.shape[0];
  } else {
    if (len < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": invalid number of data points (", len, ") along axis ", axis));
    }
    if (kind == FftKind::kRealForward) out[axis] = len / 2 + 1;
  }
  const DType dt = TypesOf(kind, a.dtype).out;
  RETURN_IF_ERROR(CheckedNumBytes(NumElements(out), ItemSize(dt)).status());
  return ValueType{dt, std::move(out)};
}

// The operand converted, both sides moved axis-last, the transform's
// output and cuFFT's work area (at most about the larger side again).
int64_t FftBound(const Instruction& ins, absl::Span<const ValueType> ops, const ValueType& result) {
  const ValueType converted{TypesOf(KindOf(ins.op), ops[0].dtype).in, ops[0].shape};
  const int64_t big = std::max(converted.nbytes(), result.nbytes());
  int64_t bound = SaturatingMul(converted.nbytes(), 2);
  bound = SaturatingAdd(bound, SaturatingMul(result.nbytes(), 2));
  return SaturatingAdd(bound, SaturatingAdd(SaturatingMul(big, 2), int64_t{1} << 20));
}

absl::StatusOr<DeviceArray> RunFft(OpContext& ctx, const Instruction& ins,
                                   std::vector<DeviceArray> args, const ValueType& out) {
  const FftKind kind = KindOf(ins.op);
  ASSIGN_OR_RETURN(const std::vector<int> axes, FftAxes(ins, args[0].shape));
  ASSIGN_OR_RETURN(DeviceArray a,
                   Convert(ctx, std::move(args[0]), TypesOf(kind, args[0].dtype).in));
  args.clear();
  // One transform of the trailing axes (no copy when they already are).
  const std::vector<int> perm = ToLast(static_cast<int>(a.shape.size()), axes);
  ASSIGN_OR_RETURN(DeviceArray rows, Permuted(ctx, std::move(a), perm));
  Shape shape;
  for (int p : perm) shape.push_back(out.shape[p]);
  ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, std::move(shape)));
  if (r.num_elements() == 0) return Permuted(ctx, std::move(r), Inverse(perm));
  Backend& be = ctx.device.backend();
  const int k = static_cast<int>(axes.size());
  RETURN_IF_ERROR(be.Run(ctx.stream, FftOp{kind, &rows, &r, k}));
  if (kind == FftKind::kInverse || kind == FftKind::kRealInverse) {
    // NumPy's "backward" normalisation: the inverse divides by the points
    // transformed, the output's lengths along the axes (either kind).
    double points = 1;
    for (int ax : axes) points *= static_cast<double>(out.shape[ax]);
    const double f = 1.0 / points;
    ASSIGN_OR_RETURN(DeviceArray scale, Allocate(ctx, out.dtype, {}));
    RETURN_IF_ERROR(
        be.Run(ctx.stream,
               FillOp{IsComplex(out.dtype) ? Scalar::Complex(f, 0.0) : Scalar::Float(f), &scale}));
    RETURN_IF_ERROR(
        be.Run(ctx.stream, ElementwiseOp{ElementwiseKind::kMultiply, {&r, &scale}, &r}));
  }
  return Permuted(ctx, std::move(r), Inverse(perm));
}

}  // namespace resident

// The linear-algebra family's registry functions: cholesky, solve, inv,
// det, eigvalsh and svdvals of stacks of matrices (the last two axes), and
// the routines of several results qr, svd, eigh and slogdet, as
// numpy.linalg's. Integers and bool compute in float64 (NumPy's), float32
// and the complex dtypes as they are; float16 and bfloat16 are refused, as
// NumPy's linalg refuses float16. solve's operands share one batch shape
// and dtype after promotion (the client broadcasts and reshapes a vector
// right-hand side first). One LinalgOp does the work.
#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/program/op_registry.h"
#include "server/program/saturating.h"

namespace resident {
namespace {

// The linalg OpKinds run kCholesky..kSlogdet in LinalgKind's order.
constexpr bool SameOrder(OpKind op, LinalgKind kind) {
  return static_cast<int>(op) - static_cast<int>(OpKind::kCholesky) == static_cast<int>(kind);
}
static_assert(SameOrder(OpKind::kSolve, LinalgKind::kSolve) &&
              SameOrder(OpKind::kInv, LinalgKind::kInv) &&
              SameOrder(OpKind::kDet, LinalgKind::kDet) &&
              SameOrder(OpKind::kEigvalsh, LinalgKind::kEigvalsh) &&
              SameOrder(OpKind::kSvdvals, LinalgKind::kSvdvals) &&
              SameOrder(OpKind::kQr, LinalgKind::kQr) &&
              SameOrder(OpKind::kSvd, LinalgKind::kSvd) &&
              SameOrder(OpKind::kEigh, LinalgKind::kEigh) &&
              SameOrder(OpKind::kSlogdet, LinalgKind::kSlogdet));

LinalgKind KindOf(OpKind op) {
  return static_cast<LinalgKind>(static_cast<int>(op) - static_cast<int>(OpKind::kCholesky));
}

// The dtype a routine computes in for operands of dtype d.
absl::StatusOr<DType> LinalgType(const Instruction& ins, DType d) {
  if (d == DType::kFloat16 || d == DType::kBFloat16) {
    return absl::InvalidArgumentError(absl::StrCat("linalg.", OpName(ins.op), ": array type ",
                                                   DTypeName(d), " is unsupported in linalg"));
  }
  if (d == DType::kFloat32 || d == DType::kFloat64 || IsComplex(d)) return d;
  return DType::kFloat64;
}

DType RealOf(DType d) { return IsComplex(d) ? ComplexComponent(d) : d; }

// NumPy's checks of a stack of matrices: at least two dimensions, and
// square ones but for svdvals, qr and svd; NumPy raises LinAlgError for
// both, so the messages name it (the client maps them to its LinAlgError).
absl::Status CheckMatrices(const Instruction& ins, const ValueType& a) {
  const char* name = OpName(ins.op);
  const size_t rank = a.shape.size();
  if (rank < 2) {
    return absl::InvalidArgumentError(absl::StrCat("linalg.", name, ": LinAlgError: ", rank,
                                                   "-dimensional array given. Array must be at "
                                                   "least two-dimensional"));
  }
  const LinalgKind kind = KindOf(ins.op);
  const bool any_shape =
      kind == LinalgKind::kSvdvals || kind == LinalgKind::kQr || kind == LinalgKind::kSvd;
  if (!any_shape && a.shape[rank - 2] != a.shape[rank - 1]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "linalg.", name, ": LinAlgError: Last 2 dimensions of the array must be square"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ValueType> InferLinalg(const Instruction& ins, absl::Span<const ValueType> ops) {
  if (LinalgResults(KindOf(ins.op)) > 1) {
    return absl::InternalError("linalg: a routine of several results");
  }
  const ValueType& a = ops[0];
  RETURN_IF_ERROR(CheckMatrices(ins, a));
  const size_t rank = a.shape.size();
  const int64_t m = a.shape[rank - 2], n = a.shape[rank - 1];
  const LinalgKind kind = KindOf(ins.op);
  DType dt = a.dtype;
  if (kind == LinalgKind::kSolve) dt = PromoteTypes(a.dtype, ops[1].dtype);
  ASSIGN_OR_RETURN(dt, LinalgType(ins, dt));
  Shape batch(a.shape.begin(), a.shape.end() - 2);
  switch (kind) {
    case LinalgKind::kCholesky:
    case LinalgKind::kInv:
      return ValueType{dt, a.shape};
    case LinalgKind::kSolve: {
      const ValueType& b = ops[1];
      if (b.shape.size() != rank || !std::equal(batch.begin(), batch.end(), b.shape.begin()) ||
          b.shape[rank - 2] != n) {
        return absl::InvalidArgumentError(absl::StrCat(
            "linalg.solve: b must have a's batch shape and ", n,
            " rows, (..., n, k); the client broadcasts the batch and makes a vector a column"));
      }
      return ValueType{dt, b.shape};
    }
    case LinalgKind::kDet:
      return ValueType{dt, std::move(batch)};
    case LinalgKind::kEigvalsh:
      batch.push_back(n);
      return ValueType{RealOf(dt), std::move(batch)};
    case LinalgKind::kSvdvals:
      batch.push_back(std::min(m, n));
      return ValueType{RealOf(dt), std::move(batch)};
    default:
      break;
  }
  return absl::InternalError("linalg: a routine of several results");
}

// qr (Q, R), svd (U, S, Vh), eigh (eigenvalues, eigenvectors), slogdet
// (sign, logabsdet), as numpy.linalg's; `full` is qr's mode='complete' and
// svd's full_matrices.
absl::StatusOr<std::vector<ValueType>> InferDecomposition(const Instruction& ins,
                                                          absl::Span<const ValueType> ops) {
  const ValueType& a = ops[0];
  RETURN_IF_ERROR(CheckMatrices(ins, a));
  const size_t rank = a.shape.size();
  const int64_t m = a.shape[rank - 2], n = a.shape[rank - 1], k = std::min(m, n);
  const LinalgKind kind = KindOf(ins.op);
  ASSIGN_OR_RETURN(const DType dt, LinalgType(ins, a.dtype));
  const Shape batch(a.shape.begin(), a.shape.end() - 2);
  auto of = [&](DType d, std::initializer_list<int64_t> tail) {
    Shape s = batch;
    s.insert(s.end(), tail.begin(), tail.end());
    return ValueType{d, std::move(s)};
  };
  switch (kind) {
    case LinalgKind::kQr:
      return std::vector<ValueType>{of(dt, {m, ins.full ? m : k}), of(dt, {ins.full ? m : k, n})};
    case LinalgKind::kSvd:
      return std::vector<ValueType>{of(dt, {m, ins.full ? m : k}), of(RealOf(dt), {k}),
                                    of(dt, {ins.full ? n : k, n})};
    case LinalgKind::kEigh:
      return std::vector<ValueType>{of(RealOf(dt), {n}), of(dt, {n, n})};
    case LinalgKind::kSlogdet:
      return std::vector<ValueType>{of(dt, {}), of(RealOf(dt), {})};
    default:
      return absl::InternalError("linalg: a routine of one result");
  }
}

absl::StatusOr<std::vector<DeviceArray>> RunDecomposition(OpContext& ctx, const Instruction& ins,
                                                          std::vector<DeviceArray> args,
                                                          absl::Span<const ValueType> outs) {
  const LinalgKind kind = KindOf(ins.op);
  ASSIGN_OR_RETURN(const DType dt, LinalgType(ins, args[0].dtype));
  ASSIGN_OR_RETURN(DeviceArray a, Convert(ctx, std::move(args[0]), dt));
  args.clear();
  std::vector<DeviceArray> results;
  for (const ValueType& t : outs) {
    ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, t.dtype, t.shape));
    results.push_back(std::move(r));
  }
  LinalgOp op{kind,        &a,          nullptr,
              &results[0], &results[1], results.size() > 2 ? &results[2] : nullptr,
              ins.full};
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, op));
  return results;
}

// The operands converted, the factorisation's copy of a, pivots, a
// transposed right-hand side, and the libraries' workspaces (bounded by
// a few copies of the largest matrix, plus a constant).
int64_t LinalgBound(const Instruction&, absl::Span<const ValueType> ops, const ValueType& result) {
  int64_t bound = SaturatingAdd(result.nbytes(), SaturatingMul(ops[0].nbytes(), 6));
  if (ops.size() > 1) bound = SaturatingAdd(bound, SaturatingMul(ops[1].nbytes(), 3));
  // Per matrix, whatever its size: an info, 64- and 32-bit pivots of n
  // each, and the batched routines' two pointers (cuda_linalg_batched.cc),
  // which outweigh a stack of tiny matrices themselves.
  const Shape& a = ops[0].shape;
  if (a.size() >= 2) {
    const int64_t n = a.back();
    const int64_t batch = NumElements(absl::MakeConstSpan(a).subspan(0, a.size() - 2));
    bound = SaturatingAdd(bound, SaturatingMul(batch, SaturatingAdd(20, SaturatingMul(n, 12))));
  }
  return SaturatingAdd(bound, int64_t{64} << 20);
}

absl::StatusOr<DeviceArray> RunLinalg(OpContext& ctx, const Instruction& ins,
                                      std::vector<DeviceArray> args, const ValueType& out) {
  const LinalgKind kind = KindOf(ins.op);
  DType dt = args[0].dtype;
  if (kind == LinalgKind::kSolve) dt = PromoteTypes(args[0].dtype, args[1].dtype);
  ASSIGN_OR_RETURN(dt, LinalgType(ins, dt));
  ASSIGN_OR_RETURN(DeviceArray a, Convert(ctx, std::move(args[0]), dt));
  DeviceArray b;
  if (kind == LinalgKind::kSolve) {
    ASSIGN_OR_RETURN(b, Convert(ctx, std::move(args[1]), dt));
  }
  args.clear();
  ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, out.dtype, out.shape));
  RETURN_IF_ERROR(ctx.device.backend().Run(
      ctx.stream, LinalgOp{kind, &a, kind == LinalgKind::kSolve ? &b : nullptr, &r}));
  return r;
}

}  // namespace resident

#include "kernels/cpu/elementwise.h"

#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/elementwise_shard.h"
#include "kernels/cpu/complex_ops.h"
#include "kernels/cpu/elementwise_shard.h"

namespace resident::cpu {
namespace elementwise_internal {

// Why `kind` cannot run in `dtype` (ElementwiseAccepts said no).
absl::Status Refused(ElementwiseKind kind, DType dtype) {
  if (kind == ElementwiseKind::kDivide) {
    return absl::InvalidArgumentError(
        absl::StrCat("divide needs a float dtype, got ", NameOf(dtype)));
  }
  return absl::InvalidArgumentError(absl::StrCat(ElementwiseName(kind), " is not supported for ",
                                                 NameOf(dtype), " (NumPy refuses it too)"));
}

}  // namespace elementwise_internal

using elementwise_internal::Refused;

absl::Status ElementwiseTile(ElementwiseKind kind, DType dtype, const void* a, bool a_one,
                             const void* b, bool b_one, void* out, int64_t n) {
  if (!ElementwiseAccepts(kind, dtype) || IsComplex(dtype)) return Refused(kind, dtype);
  // A unary kind reads a as both operands (Apply ignores the second).
  if (Arity(kind) == 1) {
    b = a;
    b_one = a_one;
  }
  return VisitElementwiseShard(kind, [&](auto s) {
    return elementwise_internal::TileShard<decltype(s)::value>(kind, dtype, a, a_one, b, b_one, out,
                                                               n);
  });
}

absl::Status Elementwise(ThreadPool* pool, ElementwiseKind kind, absl::Span<const ConstView> in,
                         const MutView& out) {
  if (static_cast<int>(in.size()) != Arity(kind)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ElementwiseName(kind), " takes ", Arity(kind), " operands, got ", in.size()));
  }
  for (const ConstView& v : in) {
    if (v.dtype != out.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat(ElementwiseName(kind), " needs one dtype, got ", NameOf(in[0].dtype),
                       in.size() > 1 ? ", " : "", in.size() > 1 ? NameOf(in[1].dtype) : "", " -> ",
                       NameOf(out.dtype)));
    }
  }
  if (!ElementwiseAccepts(kind, out.dtype)) return Refused(kind, out.dtype);
  if (IsComplex(out.dtype)) return ComplexElementwise(pool, kind, in, out);
  // Dispatch generated from the op table; ElementwiseAccepts above keeps
  // each op to the dtypes its expression is defined for.
  return VisitElementwiseShard(kind, [&](auto s) {
    return elementwise_internal::RunShard<decltype(s)::value>(pool, kind, in, out);
  });
}

absl::Status ElementwiseChain(ThreadPool* pool, ElementwiseKind kind, DType dtype, ChainSide side,
                              const void* x, const void* c, bool c_one, void* out, int64_t n,
                              int64_t trips) {
  if (!ElementwiseAccepts(kind, dtype) || IsComplex(dtype)) return Refused(kind, dtype);
  if (Arity(kind) != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("ElementwiseChain: ", ElementwiseName(kind), " is not a binary op"));
  }
  return VisitElementwiseShard(kind, [&](auto s) {
    return elementwise_internal::ChainShard<decltype(s)::value>(pool, kind, dtype, side, x, c,
                                                                c_one, out, n, trips);
  });
}

}  // namespace resident::cpu

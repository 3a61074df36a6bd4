// Dtype and shape inference for single instructions, following NumPy.
#ifndef RESIDENT_SERVER_PROGRAM_INFER_H_
#define RESIDENT_SERVER_PROGRAM_INFER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/scalar.h"
#include "core/shape.h"
#include "server/program/program.h"

namespace resident {

struct ValueType {
  DType dtype = DType::kFloat64;
  Shape shape;
  int64_t num_elements() const { return NumElements(shape); }
  int64_t nbytes() const { return num_elements() * ItemSize(dtype); }
  friend bool operator==(const ValueType&, const ValueType&) = default;
};

std::string TypeString(const ValueType& t);  // "float64 (3, 4)"

// The result type of `ins` (any op but loop) given its operand types, or
// INVALID_ARGUMENT with NumPy's reason (shape mismatch, unsupported dtype,
// bad axis, ...). Shapes and byte sizes are overflow-checked.
absl::StatusOr<ValueType> InferType(const Instruction& ins, absl::Span<const ValueType> ops);
// Every result type of `ins` (not a loop): InferType's one, or the several
// of qr, svd, eigh and slogdet.
absl::StatusOr<std::vector<ValueType>> InferTypes(const Instruction& ins,
                                                  absl::Span<const ValueType> ops);

// Device bytes `ins` allocates besides buffers it shares (reshape, identity
// astype/transpose share their operand's): its result plus temporaries such
// as promoted copies of operands. An upper bound used for --max-memory.
int64_t AllocationBound(const Instruction& ins, absl::Span<const ValueType> ops,
                        const ValueType& result);

// NumPy's arange: the length and the (start, delta) its fill uses, computed
// the way numpy.arange does for `dtype`.
struct ArangeParams {
  int64_t length = 0;
  // NumPy stores start and start + step (computed in double for float
  // bounds) as its first two elements, then fills the rest from their
  // difference: start + i * delta in the dtype.
  Scalar start, second, delta;
};
absl::StatusOr<ArangeParams> ComputeArange(const Scalar& start, const Scalar& stop,
                                           const Scalar& step, DType dtype);
// numpy.arange's default dtype for these bounds.
DType ArangeDefaultType(const Scalar& start, const Scalar& stop, const Scalar& step);

// reshape's target with -1 resolved; INVALID_ARGUMENT as NumPy words it.
absl::StatusOr<Shape> ResolveReshape(absl::Span<const int64_t> from, absl::Span<const int64_t> to);
// transpose's permutation (reversed when axes is empty), validated.
absl::StatusOr<std::vector<int>> ResolvePermutation(int rank, absl::Span<const int64_t> axes);

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_INFER_H_

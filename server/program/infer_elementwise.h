// NumPy's type resolution for elementwise instructions (the op table's rules,
// core/elementwise_kind.h) with NumPy 2's weak Python scalars (NEP 50): a
// scalar operand takes the array's dtype when its kind (bool < int < float)
// is no higher, else the default dtype of its kind (int64, float64).
//
//   float32 array + 1.0 -> float32     int32 array + 1.5 -> float64
//   int32 array + 1     -> int32       bool array + 1    -> int64
//   int32 array + 2**40 -> INVALID_ARGUMENT (NumPy: OverflowError)
#ifndef RESIDENT_SERVER_PROGRAM_INFER_ELEMENTWISE_H_
#define RESIDENT_SERVER_PROGRAM_INFER_ELEMENTWISE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/elementwise_kind.h"
#include "server/program/infer.h"
#include "server/program/program.h"

namespace resident {

// The dtypes an elementwise instruction computes in and returns, given its
// array operands' dtypes (its scalars are in ins.scalars). INVALID_ARGUMENT
// naming the op for a wrong operand count, a dtype NumPy refuses or that
// would need one we lack (sqrt of bool is float16), an int scalar out of the
// array's integer range, or a negative integer exponent given as a scalar.
absl::StatusOr<ElementwiseTypes> ResolveElementwiseTypes(const Instruction& ins,
                                                         absl::Span<const DType> arrays);

// The result type of an elementwise instruction: its dtype as above and
// the array operands' shapes broadcast (scalars are 0-d).
absl::StatusOr<ValueType> InferElementwise(const Instruction& ins,
                                           absl::Span<const ValueType> arrays);

// Device bytes the lowering allocates (ops.cc RunElementwise): the result,
// each operand converted to the compute dtype, a one-element array per
// scalar, and the 0/1 compute-dtype temporary of a bool-valued op.
int64_t ElementwiseAllocationBound(const Instruction& ins, absl::Span<const ValueType> arrays,
                                   const ValueType& result);

// where(cond, a, b) and clip(a, lo, hi): three operands, by position; a,
// b, lo and hi may be scalars (weak, NEP 50), cond and clip's a are arrays.
// The dtype: a and b (where) or a, lo and hi (clip) promoted, as NumPy's.
// INVALID_ARGUMENT for another operand count or a scalar cond / clip input.
absl::StatusOr<DType> SelectType(const Instruction& ins, absl::Span<const DType> arrays);
absl::StatusOr<ValueType> InferSelect(const Instruction& ins, absl::Span<const ValueType> arrays);
// Device bytes ops.cc's lowering of where/clip allocates (an upper bound).
int64_t SelectAllocationBound(const Instruction& ins, absl::Span<const ValueType> arrays,
                              const ValueType& result);

// The compute dtype of a binary kind over two array dtypes (no scalars).
DType ArithmeticType(ElementwiseKind kind, DType a, DType b);

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_INFER_ELEMENTWISE_H_

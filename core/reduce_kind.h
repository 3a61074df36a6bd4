// The reductions every layer names: the program layer's reduction ops, the
// device ops and both backends' kernels use this one enum (the kernels may
// include it: it is plain C++ that nvcc compiles).
#ifndef RESIDENT_CORE_REDUCE_KIND_H_
#define RESIDENT_CORE_REDUCE_KIND_H_

#include <cstdint>

#include "core/dtype.h"

namespace resident {

enum class ReduceKind : uint8_t { kSum, kProd, kMean, kMax, kMin, kArgmax, kArgmin, kAny, kAll };

// "sum", "prod", "mean", "max", "min", "argmax", "argmin", "any", "all".
constexpr const char* ReduceKindName(ReduceKind kind) {
  constexpr const char* kNames[] = {"sum",    "prod",   "mean", "max", "min",
                                    "argmax", "argmin", "any",  "all"};
  return kNames[static_cast<int>(kind)];
}

constexpr bool IsArgReduce(ReduceKind kind) {
  return kind == ReduceKind::kArgmax || kind == ReduceKind::kArgmin;
}

// NumPy's result dtype of a reduction: sum/prod of bool and int32 -> int64;
// mean of bool and ints -> float64; any/all -> bool; argmax/argmin -> int64;
// max/min keep it.
constexpr DType ReduceResultType(ReduceKind kind, DType in) {
  switch (kind) {
    case ReduceKind::kSum:
    case ReduceKind::kProd:
      return SumResultType(in);
    case ReduceKind::kMean:
      return IsFloating(in) || IsComplex(in) ? in : DType::kFloat64;
    case ReduceKind::kMax:
    case ReduceKind::kMin:
      return in;
    case ReduceKind::kArgmax:
    case ReduceKind::kArgmin:
      return DType::kInt64;
    case ReduceKind::kAny:
    case ReduceKind::kAll:
      return DType::kBool;
  }
  return in;
}

}  // namespace resident

#endif  // RESIDENT_CORE_REDUCE_KIND_H_

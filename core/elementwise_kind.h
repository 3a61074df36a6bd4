// The elementwise ops, one vocabulary for every layer: the program layer maps
// its instructions to these, the device layer carries them in ElementwiseOp,
// and the CPU and CUDA kernels switch on them. A new elementwise op is a new
// value here plus its kernels; every switch below has no default, so the
// compiler (-Werror=switch) lists each place that must learn it.
//
//   if (!ElementwiseAccepts(ElementwiseKind::kDivide, dtype)) ...  // ints
//   for (ElementwiseKind k : kAllElementwiseKinds) Log(ElementwiseName(k));
#ifndef RESIDENT_CORE_ELEMENTWISE_KIND_H_
#define RESIDENT_CORE_ELEMENTWISE_KIND_H_

#include <cstdint>

#include "core/dtype.h"

namespace resident {

enum class ElementwiseKind : uint8_t {
  kAdd,       // a + b; bool: logical or
  kSubtract,  // a - b; not bool
  kMultiply,  // a * b; bool: logical and
  kDivide,    // a / b; floats only (the program layer promotes integers)
  kNegative,  // -a; not bool
};

inline constexpr ElementwiseKind kAllElementwiseKinds[] = {
    ElementwiseKind::kAdd, ElementwiseKind::kSubtract, ElementwiseKind::kMultiply,
    ElementwiseKind::kDivide, ElementwiseKind::kNegative};

// How many inputs `kind` reads: 1 or 2 (0 for a value naming no kind).
constexpr int Arity(ElementwiseKind kind) {
  switch (kind) {
    case ElementwiseKind::kAdd:
    case ElementwiseKind::kSubtract:
    case ElementwiseKind::kMultiply:
    case ElementwiseKind::kDivide:
      return 2;
    case ElementwiseKind::kNegative:
      return 1;
  }
  return 0;
}

// NumPy's name: "add", "subtract", "multiply", "divide", "negative".
constexpr const char* ElementwiseName(ElementwiseKind kind) {
  switch (kind) {
    case ElementwiseKind::kAdd:
      return "add";
    case ElementwiseKind::kSubtract:
      return "subtract";
    case ElementwiseKind::kMultiply:
      return "multiply";
    case ElementwiseKind::kDivide:
      return "divide";
    case ElementwiseKind::kNegative:
      return "negative";
  }
  return "?";
}

// Whether a backend computes `kind` in `dtype` (all operands and the result
// have it): NumPy has no bool subtract or negative, and divide computes in a
// float dtype (the program layer promotes integers to float64 first).
constexpr bool ElementwiseAccepts(ElementwiseKind kind, DType dtype) {
  switch (kind) {
    case ElementwiseKind::kAdd:
    case ElementwiseKind::kMultiply:
      return true;
    case ElementwiseKind::kSubtract:
    case ElementwiseKind::kNegative:
      return dtype != DType::kBool;
    case ElementwiseKind::kDivide:
      return IsFloating(dtype);
  }
  return false;
}

}  // namespace resident

#endif  // RESIDENT_CORE_ELEMENTWISE_KIND_H_

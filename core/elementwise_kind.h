// The elementwise ops, one table for every layer. RESIDENT_ELEMENTWISE_OPS
// below is the single definition of each op: its kind, NumPy's name, its
// arity and its dtype rule. Its scalar expression is resident_ew_<name> in
// core/elementwise_expr.h, which the CPU kernels, the CUDA kernels and the
// NVRTC fused-loop generator all call. Everything else (the enum, the
// constexpr table, the program layer's op names, the kernels' dispatch) is
// generated from the list, so adding an op is one line here plus its
// function and its tests.
//
//   if (!ElementwiseAccepts(ElementwiseKind::kDivide, dtype)) ...  // ints
//   for (const ElementwiseInfo& e : kElementwiseTable) Log(e.name);
#ifndef RESIDENT_CORE_ELEMENTWISE_KIND_H_
#define RESIDENT_CORE_ELEMENTWISE_KIND_H_

#include <cstdint>
#include <string_view>

#include "core/dtype.h"

namespace resident {

// Which dtypes a backend computes an op in (all operands and the result
// share it; the program layer promotes first, as NumPy's type resolution).
enum class ElementwiseRule : uint8_t {
  kAll,        // every dtype (bool add is or, bool multiply is and)
  kNotBool,    // NumPy has no bool subtract or negative
  kFloatOnly,  // true divide: integers are promoted to float64 first
};

// X(Kind, numpy_name, arity, rule): the one definition of each op.
// numpy_name also names its expression, resident_ew_<numpy_name>.
#define RESIDENT_ELEMENTWISE_OPS(X)   \
  X(kAdd, add, 2, kAll)               \
  X(kSubtract, subtract, 2, kNotBool) \
  X(kMultiply, multiply, 2, kAll)     \
  X(kDivide, divide, 2, kFloatOnly)   \
  X(kNegative, negative, 1, kNotBool)

enum class ElementwiseKind : uint8_t {
#define RESIDENT_EW_ENUM(kind, name, arity, rule) kind,
  RESIDENT_ELEMENTWISE_OPS(RESIDENT_EW_ENUM)
#undef RESIDENT_EW_ENUM
};

struct ElementwiseInfo {
  ElementwiseKind kind;
  const char* name;      // NumPy's ufunc name, also the op's wire name
  int arity;             // inputs: 1 or 2
  ElementwiseRule rule;  // dtypes it computes in
  const char* function;  // its expression in core/elementwise_expr.h
};

inline constexpr ElementwiseInfo kElementwiseTable[] = {
#define RESIDENT_EW_INFO(kind, name, arity, rule) \
  {ElementwiseKind::kind, #name, arity, ElementwiseRule::rule, "resident_ew_" #name},
    RESIDENT_ELEMENTWISE_OPS(RESIDENT_EW_INFO)
#undef RESIDENT_EW_INFO
};

inline constexpr ElementwiseKind kAllElementwiseKinds[] = {
#define RESIDENT_EW_KIND(kind, name, arity, rule) ElementwiseKind::kind,
    RESIDENT_ELEMENTWISE_OPS(RESIDENT_EW_KIND)
#undef RESIDENT_EW_KIND
};

inline constexpr int kNumElementwiseKinds = sizeof(kElementwiseTable) / sizeof(ElementwiseInfo);

// The table's row for `kind`; nullptr for a value naming no kind.
constexpr const ElementwiseInfo* FindElementwise(ElementwiseKind kind) {
  const auto i = static_cast<int>(kind);
  return i < kNumElementwiseKinds ? &kElementwiseTable[i] : nullptr;
}

// The row whose NumPy name is `name`; nullptr for none.
constexpr const ElementwiseInfo* FindElementwise(std::string_view name) {
  for (const ElementwiseInfo& e : kElementwiseTable) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

// How many inputs `kind` reads: 1 or 2 (0 for a value naming no kind).
constexpr int Arity(ElementwiseKind kind) {
  const ElementwiseInfo* e = FindElementwise(kind);
  return e ? e->arity : 0;
}

// NumPy's name: "add", "subtract", ...; "?" for a value naming no kind.
constexpr const char* ElementwiseName(ElementwiseKind kind) {
  const ElementwiseInfo* e = FindElementwise(kind);
  return e ? e->name : "?";
}

// Whether a backend computes `kind` in `dtype` (all operands and the result
// have it), by the table's rule.
constexpr bool ElementwiseAccepts(ElementwiseKind kind, DType dtype) {
  const ElementwiseInfo* e = FindElementwise(kind);
  if (e == nullptr) return false;
  switch (e->rule) {
    case ElementwiseRule::kAll:
      return true;
    case ElementwiseRule::kNotBool:
      return dtype != DType::kBool;
    case ElementwiseRule::kFloatOnly:
      return IsFloating(dtype);
  }
  return false;
}

// The table is indexed by kind: each row sits at its enum value.
constexpr bool TableIndexedByKind() {
  for (int i = 0; i < kNumElementwiseKinds; ++i) {
    if (static_cast<int>(kElementwiseTable[i].kind) != i) return false;
  }
  return true;
}
static_assert(TableIndexedByKind());

}  // namespace resident

#endif  // RESIDENT_CORE_ELEMENTWISE_KIND_H_

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
#include <utility>

#include "core/dtype.h"

namespace resident {

// NumPy's type resolution of an op, for our dtypes. P is the operands'
// promoted dtype; the op computes in its compute dtype (operands are cast to
// it first), and its result has that dtype or, for kBoolResult, bool.
enum class ElementwiseRule : uint8_t {
  kAll,         // computes in P, any P (bool add is or, bool maximum is or)
  kNotBool,     // computes in P; NumPy refuses bool (subtract, negative, sign)
  kTrueDivide,  // bool and integers compute in float64
  kFloatMath,   // integers compute in the smallest float holding them (NumPy's)
  kNoBoolPair,  // bool computes in int8: power, remainder, floor_divide
  kBoolResult,  // computes in P, any P; the result is bool (comparisons, isnan)
  kIntegral,    // bool and integers compute in P; NumPy refuses floats (bitwise)
  kShift,       // integers compute in P, bool in int8; floats refused (shifts)
};

// X(Kind, numpy_name, arity, rule): the one definition of each op.
// numpy_name also names its expression, resident_ew_<numpy_name>, and is
// its wire name.
#define RESIDENT_ELEMENTWISE_OPS(X)               \
  X(kAdd, add, 2, kAll)                           \
  X(kSubtract, subtract, 2, kNotBool)             \
  X(kMultiply, multiply, 2, kAll)                 \
  X(kDivide, divide, 2, kTrueDivide)              \
  X(kNegative, negative, 1, kNotBool)             \
  X(kMaximum, maximum, 2, kAll)                   \
  X(kMinimum, minimum, 2, kAll)                   \
  X(kFmax, fmax, 2, kAll)                         \
  X(kFmin, fmin, 2, kAll)                         \
  X(kPower, power, 2, kNoBoolPair)                \
  X(kRemainder, remainder, 2, kNoBoolPair)        \
  X(kFloorDivide, floor_divide, 2, kNoBoolPair)   \
  X(kAbsolute, absolute, 1, kAll)                 \
  X(kSign, sign, 1, kNotBool)                     \
  X(kSqrt, sqrt, 1, kFloatMath)                   \
  X(kExp, exp, 1, kFloatMath)                     \
  X(kLog, log, 1, kFloatMath)                     \
  X(kLog1p, log1p, 1, kFloatMath)                 \
  X(kExpm1, expm1, 1, kFloatMath)                 \
  X(kSin, sin, 1, kFloatMath)                     \
  X(kCos, cos, 1, kFloatMath)                     \
  X(kTanh, tanh, 1, kFloatMath)                   \
  X(kFloor, floor, 1, kAll)                       \
  X(kCeil, ceil, 1, kAll)                         \
  X(kEqual, equal, 2, kBoolResult)                \
  X(kNotEqual, not_equal, 2, kBoolResult)         \
  X(kLess, less, 2, kBoolResult)                  \
  X(kLessEqual, less_equal, 2, kBoolResult)       \
  X(kGreater, greater, 2, kBoolResult)            \
  X(kGreaterEqual, greater_equal, 2, kBoolResult) \
  X(kLogicalAnd, logical_and, 2, kBoolResult)     \
  X(kLogicalOr, logical_or, 2, kBoolResult)       \
  X(kLogicalXor, logical_xor, 2, kBoolResult)     \
  X(kLogicalNot, logical_not, 1, kBoolResult)     \
  X(kIsnan, isnan, 1, kBoolResult)                \
  X(kIsfinite, isfinite, 1, kBoolResult)          \
  X(kTan, tan, 1, kFloatMath)                     \
  X(kArcsin, arcsin, 1, kFloatMath)               \
  X(kArccos, arccos, 1, kFloatMath)               \
  X(kArctan, arctan, 1, kFloatMath)               \
  X(kSinh, sinh, 1, kFloatMath)                   \
  X(kCosh, cosh, 1, kFloatMath)                   \
  X(kArcsinh, arcsinh, 1, kFloatMath)             \
  X(kArccosh, arccosh, 1, kFloatMath)             \
  X(kArctanh, arctanh, 1, kFloatMath)             \
  X(kLog2, log2, 1, kFloatMath)                   \
  X(kLog10, log10, 1, kFloatMath)                 \
  X(kRint, rint, 1, kFloatMath)                   \
  X(kArctan2, arctan2, 2, kFloatMath)             \
  X(kHypot, hypot, 2, kFloatMath)                 \
  X(kLogaddexp, logaddexp, 2, kFloatMath)         \
  X(kCopysign, copysign, 2, kFloatMath)           \
  X(kNextafter, nextafter, 2, kFloatMath)         \
  X(kTrunc, trunc, 1, kAll)                       \
  X(kSquare, square, 1, kNoBoolPair)              \
  X(kReciprocal, reciprocal, 1, kNoBoolPair)      \
  X(kPositive, positive, 1, kNotBool)             \
  X(kConjugate, conjugate, 1, kNoBoolPair)        \
  X(kReal, real, 1, kAll)                         \
  X(kImag, imag, 1, kAll)                         \
  X(kIsinf, isinf, 1, kBoolResult)                \
  X(kSignbit, signbit, 1, kBoolResult)            \
  X(kBitwiseAnd, bitwise_and, 2, kIntegral)       \
  X(kBitwiseOr, bitwise_or, 2, kIntegral)         \
  X(kBitwiseXor, bitwise_xor, 2, kIntegral)       \
  X(kInvert, invert, 1, kIntegral)                \
  X(kLeftShift, left_shift, 2, kShift)            \
  X(kRightShift, right_shift, 2, kShift)

enum class ElementwiseKind : uint8_t {
#define RESIDENT_EW_ENUM(kind, name, arity, rule) kind,
  RESIDENT_ELEMENTWISE_OPS(RESIDENT_EW_ENUM)
#undef RESIDENT_EW_ENUM
};

struct ElementwiseInfo {
  ElementwiseKind kind;
  const char* name;      // NumPy's ufunc name, also the op's wire name
  int arity;             // inputs: 1 or 2
  ElementwiseRule rule;  // NumPy's type resolution
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

// The kernels compile their per-kind loops in this many translation units,
// kind k in shard ElementwiseShard(k): one unit instantiating every (kind,
// dtype) pair was the build's longest compile, on each backend.
inline constexpr int kElementwiseShards = 4;
constexpr int ElementwiseShard(ElementwiseKind kind) {
  return static_cast<int>(kind) % kElementwiseShards;
}

// NumPy's other names for a row, and the Array API standard's: {alias, name}.
inline constexpr std::pair<const char*, const char*> kElementwiseAliases[] = {
    {"abs", "absolute"},
    {"mod", "remainder"},
    {"true_divide", "divide"},
    {"conj", "conjugate"},
    {"asin", "arcsin"},
    {"acos", "arccos"},
    {"atan", "arctan"},
    {"atan2", "arctan2"},
    {"asinh", "arcsinh"},
    {"acosh", "arccosh"},
    {"atanh", "arctanh"},
    {"bitwise_invert", "invert"},
    {"bitwise_not", "invert"},
    {"bitwise_left_shift", "left_shift"},
    {"bitwise_right_shift", "right_shift"}};

// The row whose NumPy name (or alias) is `name`; nullptr for none.
constexpr const ElementwiseInfo* FindElementwise(std::string_view name) {
  for (const auto& [alias, real] : kElementwiseAliases) {
    if (name == alias) name = real;
  }
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

// The kinds a backend computes in a complex dtype: core/complex.h's
// RESIDENT_COMPLEX_KINDS, the one list both backends dispatch from.
constexpr bool ComplexKernelKind(ElementwiseKind kind) {
  switch (kind) {
#define RESIDENT_CX_KIND(k, name) case ElementwiseKind::k:
    RESIDENT_COMPLEX_KINDS(RESIDENT_CX_KIND)
#undef RESIDENT_CX_KIND
    return true;
    default:
      return false;
  }
}

// The kinds NumPy refuses for complex operands (no complex loop): floor,
// ceil, trunc, remainder, floor_divide, the two-operand float math, signbit
// and the bitwise ops. The rest of the table NumPy computes; those not in
// ComplexKernelKind Resident refuses as not yet supported.
constexpr bool NumPyRefusesComplex(ElementwiseKind kind) {
  using K = ElementwiseKind;
  switch (kind) {
    case K::kFloor:
    case K::kCeil:
    case K::kTrunc:
    case K::kRemainder:
    case K::kFloorDivide:
    case K::kArctan2:
    case K::kHypot:
    case K::kLogaddexp:
    case K::kCopysign:
    case K::kNextafter:
    case K::kSignbit:
    case K::kBitwiseAnd:
    case K::kBitwiseOr:
    case K::kBitwiseXor:
    case K::kInvert:
    case K::kLeftShift:
    case K::kRightShift:
      return true;
    default:
      return false;
  }
}

// The kinds whose complex result is its parts' float: absolute (|z|), real
// and imag (the kernel leaves the part as the real part; the program layer
// casts to the float, which keeps it).
constexpr bool ComplexToReal(ElementwiseKind kind) {
  return kind == ElementwiseKind::kAbsolute || kind == ElementwiseKind::kReal ||
         kind == ElementwiseKind::kImag;
}

// Kinds Resident does not compute in a float dtype NumPy has a loop for:
// nextafter of float16 and bfloat16 steps in the half's own spacing, which
// computing in float32 and rounding back cannot give.
constexpr bool NotYetFor(ElementwiseKind kind, DType compute) {
  return kind == ElementwiseKind::kNextafter && IsHalf(compute);
}

// Whether a backend computes `kind` in `dtype`: all operands have it, and
// the result too (kBoolResult kinds write 0/1 in it), by the table's rule.
constexpr bool ElementwiseAccepts(ElementwiseKind kind, DType dtype) {
  const ElementwiseInfo* e = FindElementwise(kind);
  if (e == nullptr) return false;
  if (IsComplex(dtype)) return ComplexKernelKind(kind);
  if (NotYetFor(kind, dtype)) return false;
  switch (e->rule) {
    case ElementwiseRule::kAll:
    case ElementwiseRule::kBoolResult:
      return true;
    case ElementwiseRule::kNotBool:
    case ElementwiseRule::kNoBoolPair:
      return dtype != DType::kBool;
    case ElementwiseRule::kTrueDivide:
    case ElementwiseRule::kFloatMath:
      return IsFloating(dtype);
    case ElementwiseRule::kIntegral:
      return dtype == DType::kBool || IsInteger(dtype);
    case ElementwiseRule::kShift:
      return IsInteger(dtype);
  }
  return false;
}

// NumPy's type resolution of `kind` for operands promoted to `promoted`:
// the dtype it computes in and its result's. When NumPy's answer is not ours
// (ok false), missing_dtype names the dtype NumPy would give that we lack,
// or is null when NumPy refuses the op itself. Every rule's dtype exists
// since float16 did, so it is null today. not_yet is true when NumPy
// computes the op but Resident does not yet (complex sqrt, exp, ...).
struct ElementwiseTypes {
  bool ok = false;
  DType compute = DType::kFloat64;
  DType result = DType::kFloat64;
  const char* missing_dtype = nullptr;
  bool not_yet = false;
};
// The rule's answer for a real promoted dtype.
constexpr ElementwiseTypes ResolveRealElementwise(ElementwiseRule rule, DType promoted) {
  const bool is_bool = promoted == DType::kBool;
  const ElementwiseTypes same{true, promoted, promoted, nullptr};
  const ElementwiseTypes to_double{true, DType::kFloat64, DType::kFloat64, nullptr};
  switch (rule) {
    case ElementwiseRule::kAll:
      return same;
    case ElementwiseRule::kNotBool:
      return is_bool ? ElementwiseTypes{} : same;
    case ElementwiseRule::kTrueDivide:
      return IsFloating(promoted) ? same : to_double;
    case ElementwiseRule::kFloatMath: {
      if (IsFloating(promoted)) return same;
      // NumPy's loops: bool, int8 and uint8 in float16, int16 and uint16
      // in float32, wider integers in float64.
      const DType f = ItemSize(promoted) == 1   ? DType::kFloat16
                      : ItemSize(promoted) == 2 ? DType::kFloat32
                                                : DType::kFloat64;
      return {true, f, f, nullptr};
    }
    case ElementwiseRule::kNoBoolPair:
      if (is_bool) return {true, DType::kInt8, DType::kInt8, nullptr};
      return same;
    case ElementwiseRule::kBoolResult:
      return {true, promoted, DType::kBool, nullptr};
    case ElementwiseRule::kIntegral:
      return is_bool || IsInteger(promoted) ? same : ElementwiseTypes{};
    case ElementwiseRule::kShift:
      if (is_bool) return {true, DType::kInt8, DType::kInt8, nullptr};
      return IsInteger(promoted) ? same : ElementwiseTypes{};
  }
  return {};
}

constexpr ElementwiseTypes ResolveElementwise(ElementwiseKind kind, DType promoted) {
  const ElementwiseInfo* e = FindElementwise(kind);
  if (e == nullptr) return {};
  if (IsComplex(promoted)) {
    // Complex computes in itself; absolute gives its parts' float, the
    // bool-valued kinds bool.
    if (NumPyRefusesComplex(kind)) return {};
    if (!ComplexKernelKind(kind)) return {false, promoted, promoted, nullptr, true};
    if (ComplexToReal(kind)) return {true, promoted, ComplexComponent(promoted), nullptr};
    if (e->rule == ElementwiseRule::kBoolResult) return {true, promoted, DType::kBool, nullptr};
    return {true, promoted, promoted, nullptr};
  }
  ElementwiseTypes t = ResolveRealElementwise(e->rule, promoted);
  if (t.ok && NotYetFor(kind, t.compute)) t = {false, t.compute, t.result, nullptr, true};
  return t;
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

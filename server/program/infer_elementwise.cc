#include "server/program/infer_elementwise.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "server/program/saturating.h"

namespace resident {
namespace {

// The dtype a weak scalar meets the strong dtype `p` with (NEP 50): a
// Python complex keeps a complex p, makes a float p the complex of its
// width (float32 + 1j is complex64) and an integer or bool complex128.
DType WithWeak(DType p, const Scalar& s) {
  if (s.is_complex()) {
    if (IsComplex(p)) return p;
    return IsFloating(p) ? ComplexHolding(p) : DType::kComplex128;
  }
  if (s.is_float() && !IsFloating(p) && !IsComplex(p)) return PromoteTypes(p, DType::kFloat64);
  if (s.is_int() && p == DType::kBool) return DType::kInt64;
  return p;
}

// The kinds computed in complex, by NumPy name, for the not-yet message.
std::string ComplexKindNames() {
  std::vector<std::string> names;
#define RESIDENT_CX_NAME(k, name) names.push_back(ElementwiseName(ElementwiseKind::k));
  RESIDENT_COMPLEX_KINDS(RESIDENT_CX_NAME)
#undef RESIDENT_CX_NAME
  return absl::StrJoin(names, ", ");
}

// NumPy's words for a dtype it refuses outright.
absl::Status Refused(ElementwiseKind kind, DType p) {
  switch (kind) {
    case ElementwiseKind::kSubtract:
      return absl::InvalidArgumentError(
          "numpy boolean subtract, the `-` operator, is not supported, use "
          "the bitwise_xor, the `^` operator, or the logical_xor function "
          "instead");
    case ElementwiseKind::kNegative:
      return absl::InvalidArgumentError(
          "The numpy boolean negative, the `-` operator, is not supported, "
          "use the `~` operator or the logical_not function instead");
    default:
      if (IsComplex(p)) {
        return absl::InvalidArgumentError(absl::StrCat("ufunc '", ElementwiseName(kind),
                                                       "' not supported for the input types (",
                                                       DTypeName(p), "), as in NumPy"));
      }
      return absl::InvalidArgumentError(
          absl::StrCat("ufunc '", ElementwiseName(kind),
                       "' did not contain a loop with signature matching types ", DTypeName(p)));
  }
}

// The dtype `kind` resolves from for two arrays: their promotion, except
// the float math of two integer (or bool) arrays: NumPy takes the first
// loop both cast to safely, not their promotion's, so int8 with uint8
// computes in float16 (each fits it) where int16, their promotion, would
// take float32.
DType PromotedPair(ElementwiseKind kind, DType a, DType b) {
  const bool real_ints = !IsFloating(a) && !IsFloating(b) && !IsComplex(a) && !IsComplex(b);
  if (real_ints && FindElementwise(kind)->rule == ElementwiseRule::kFloatMath) {
    return PromoteTypes(ResolveRealElementwise(ElementwiseRule::kFloatMath, a).compute,
                        ResolveRealElementwise(ElementwiseRule::kFloatMath, b).compute);
  }
  return PromoteTypes(a, b);
}

}  // namespace

absl::StatusOr<ElementwiseTypes> ResolveElementwiseTypes(const Instruction& ins,
                                                         absl::Span<const DType> arrays) {
  const ElementwiseKind kind = ins.elementwise;
  const char* name = ElementwiseName(kind);
  const size_t n = arrays.size() + ins.scalars.size();
  if (static_cast<int>(n) != Arity(kind)) {
    return absl::InvalidArgumentError(absl::StrCat(name, " takes ", Arity(kind), " operand",
                                                   Arity(kind) == 1 ? "" : "s", ", got ", n));
  }
  for (size_t i = 0; i < ins.scalars.size(); ++i) {
    const int pos = ins.scalars[i].position;
    if (pos < 0 || pos >= static_cast<int>(n) || (i > 0 && pos <= ins.scalars[i - 1].position)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": scalar operand positions must be distinct and increasing"));
    }
  }
  DType p;
  if (!arrays.empty()) {
    p = arrays[0];
    for (DType d : arrays.subspan(1)) p = PromotedPair(kind, p, d);
    for (const ScalarOperand& s : ins.scalars) p = WithWeak(p, s.value);
  } else {  // only Python scalars: their default dtypes, as numpy.add(1, 2.0)
    p = ins.scalars[0].value.natural_dtype();
    for (const ScalarOperand& s : ins.scalars) p = PromoteTypes(p, s.value.natural_dtype());
  }
  ElementwiseTypes t = ResolveElementwise(kind, p);
  if (!t.ok) {
    if (t.not_yet && !IsComplex(p)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " of ", DTypeName(t.compute),
                       " is not supported by Resident yet (NumPy computes it); convert the "
                       "operands to float32 with astype first"));
    }
    if (t.not_yet) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " of ", DTypeName(p),
                       " is not supported by Resident yet (NumPy computes it); complex supports ",
                       ComplexKindNames()));
    }
    if (t.missing_dtype == nullptr) return Refused(kind, p);
    return absl::InvalidArgumentError(absl::StrCat(
        name, " of ", DTypeName(p), " gives ", t.missing_dtype,
        " in NumPy, a dtype Resident does not support; convert the operands with astype first"));
  }
  for (const ScalarOperand& s : ins.scalars) {
    if (!s.value.is_int() || !IsInteger(t.compute)) continue;
    const int64_t v = s.value.as_int64();
    if (!IntFitsIn(v, t.compute)) {
      // NumPy 2 compares out-of-range Python integers exactly: in int64,
      // which holds both sides; a uint64 array against a negative int in
      // float64, which keeps every element's sign and nonzeroness (all
      // these results depend on), as no integer dtype holds both.
      if (FindElementwise(kind)->rule == ElementwiseRule::kBoolResult) {
        if (t.compute == DType::kUint64) {
          t.compute = DType::kFloat64;
          continue;
        }
        t.compute = DType::kInt64;
        continue;
      }
      return absl::InvalidArgumentError(
          absl::StrCat("Python integer ", v, " out of bounds for ", DTypeName(t.compute)));
    }
    if (kind == ElementwiseKind::kPower && s.position == 1 && v < 0) {
      return absl::InvalidArgumentError("Integers to negative integer powers are not allowed.");
    }
  }
  return t;
}

absl::StatusOr<ValueType> InferElementwise(const Instruction& ins,
                                           absl::Span<const ValueType> arrays) {
  std::vector<DType> dtypes;
  for (const ValueType& a : arrays) dtypes.push_back(a.dtype);
  ASSIGN_OR_RETURN(ElementwiseTypes t, ResolveElementwiseTypes(ins, dtypes));
  Shape shape;
  for (const ValueType& a : arrays) {
    ASSIGN_OR_RETURN(shape, BroadcastShapes(shape, a.shape));
  }
  ASSIGN_OR_RETURN(int64_t elems, CheckedNumElements(shape));
  RETURN_IF_ERROR(CheckedNumBytes(elems, ItemSize(t.compute)).status());
  return ValueType{t.result, std::move(shape)};
}

int64_t ElementwiseAllocationBound(const Instruction& ins, absl::Span<const ValueType> arrays,
                                   const ValueType& result) {
  std::vector<DType> dtypes;
  for (const ValueType& a : arrays) dtypes.push_back(a.dtype);
  absl::StatusOr<ElementwiseTypes> t = ResolveElementwiseTypes(ins, dtypes);
  const DType ct = t.ok() ? t->compute : DType::kFloat64;
  const int64_t csize = ItemSize(ct);
  int64_t bound = result.nbytes();
  // Saturating: the sum of sizes that each fit in int64 need not.
  for (const ValueType& o : arrays) {
    if (o.dtype != ct) {
      bound = SaturatingAdd(
          bound, SaturatingMul(std::max(o.num_elements(), result.num_elements()), csize));
    }
  }
  bound = SaturatingAdd(bound, SaturatingMul(static_cast<int64_t>(ins.scalars.size()), csize));
  if (result.dtype != ct) bound = SaturatingAdd(bound, SaturatingMul(result.num_elements(), csize));
  return bound;
}

absl::StatusOr<DType> SelectType(const Instruction& ins, absl::Span<const DType> arrays) {
  const char* name = OpName(ins.op);
  const size_t n = arrays.size() + ins.scalars.size();
  if (n != 3) return absl::InvalidArgumentError(absl::StrCat(name, " takes 3 operands, got ", n));
  for (size_t i = 0; i < ins.scalars.size(); ++i) {
    const int pos = ins.scalars[i].position;
    if (pos == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": operand 0 (", ins.op == OpKind::kWhere ? "cond" : "a", ") must be an array"));
    }
    if (pos > 2 || (i > 0 && pos <= ins.scalars[i - 1].position)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": scalar operand positions must be distinct and increasing"));
    }
  }
  // where's cond takes no part in the dtype.
  const absl::Span<const DType> typed = ins.op == OpKind::kWhere ? arrays.subspan(1) : arrays;
  DType p;
  if (!typed.empty()) {
    p = typed[0];
    for (DType d : typed.subspan(1)) p = PromoteTypes(p, d);
    for (const ScalarOperand& s : ins.scalars) p = WithWeak(p, s.value);
  } else {  // where(cond, 1, 2.0): the scalars' default dtypes
    p = ins.scalars[0].value.natural_dtype();
    for (const ScalarOperand& s : ins.scalars) p = PromoteTypes(p, s.value.natural_dtype());
  }
  return p;
}

absl::StatusOr<ValueType> InferSelect(const Instruction& ins, absl::Span<const ValueType> arrays) {
  std::vector<DType> dtypes;
  for (const ValueType& a : arrays) dtypes.push_back(a.dtype);
  ASSIGN_OR_RETURN(DType p, SelectType(ins, dtypes));
  Shape shape;
  for (const ValueType& a : arrays) {
    ASSIGN_OR_RETURN(shape, BroadcastShapes(shape, a.shape));
  }
  ASSIGN_OR_RETURN(int64_t elems, CheckedNumElements(shape));
  RETURN_IF_ERROR(CheckedNumBytes(elems, std::max<int64_t>(8, ItemSize(p))).status());
  return ValueType{p, std::move(shape)};
}

// The lowering (ops.cc) holds at most: each operand converted (at most the
// result's size each), cond as bool and as an integer, and three
// result-sized temporaries, all of at most 8 bytes an element.
int64_t SelectAllocationBound(const Instruction& ins, absl::Span<const ValueType> arrays,
                              const ValueType& result) {
  // Its temporaries (converted operands, the intermediate of clip, where's
  // three passes) are each at most the size of the largest operand or the
  // result, whichever is larger: an operand may exceed an empty result it
  // broadcasts into (a (4,) with a (0, 4)), and is converted all the same.
  int64_t n = result.num_elements();
  for (const ValueType& a : arrays) n = std::max(n, a.num_elements());
  const int64_t width = std::max<int64_t>(8, ItemSize(result.dtype));  // complex128: 16
  // Complex clip compares the parts (ops.cc ComplexClipStep): its operands
  // converted, four parts, a few masks and where's words at once.
  const int64_t per = IsComplex(result.dtype) && ins.op == OpKind::kClip ? 16 : 7;
  return SaturatingAdd(result.nbytes(), SaturatingAdd(SaturatingMul(n, width * per), 3 * width));
}

DType ArithmeticType(ElementwiseKind kind, DType a, DType b) {
  return ResolveElementwise(kind, PromotedPair(kind, a, b)).compute;
}

}  // namespace resident

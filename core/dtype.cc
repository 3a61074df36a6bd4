#include "core/dtype.h"

namespace resident {

const char* DTypeName(DType dtype) {
  switch (dtype) {
#define RESIDENT_DTYPE_NAME(K, name, S, W, descr, ctype) \
  case DType::K:                                         \
    return name;
    RESIDENT_DTYPES(RESIDENT_DTYPE_NAME)
#undef RESIDENT_DTYPE_NAME
  }
  return "?";
}

std::optional<DType> ParseDType(std::string_view name) {
  for (DType d : kEveryDType) {
    if (DTypeName(d) == name) return d;
  }
  return std::nullopt;
}

namespace {

// The smallest float dtype that holds every value of integer dtype d, as
// NumPy's promotion picks it: float16 for 1-byte integers, float32 for
// 2-byte ones, float64 for wider.
DType FloatHolding(DType d) {
  return ItemSize(d) == 1 ? DType::kFloat16 : ItemSize(d) == 2 ? DType::kFloat32 : DType::kFloat64;
}

// Two float dtypes: the wider; float16 with bfloat16 is float32.
DType WiderFloat(DType a, DType b) {
  if (a == b) return a;
  if (IsHalf(a) && IsHalf(b)) return DType::kFloat32;
  return ItemSize(a) >= ItemSize(b) ? a : b;
}

// Float f with integer i: bfloat16 holds a 1-byte integer (ml_dtypes).
DType FloatWithInteger(DType f, DType i) {
  if (f == DType::kBFloat16 && ItemSize(i) == 1) return f;
  return WiderFloat(f, FloatHolding(i));
}

}  // namespace

DType PromoteTypes(DType a, DType b) {
  if (a == b) return a;
  if (IsComplex(a) || IsComplex(b)) {
    return ComplexHolding(PromoteTypes(ComplexComponent(a), ComplexComponent(b)));
  }
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  const bool fa = IsFloating(a), fb = IsFloating(b);
  if (fa && fb) return WiderFloat(a, b);
  if (fa) return FloatWithInteger(a, b);
  if (fb) return FloatWithInteger(b, a);
  // Two integers.
  if (IsSignedInteger(a) == IsSignedInteger(b)) return ItemSize(a) >= ItemSize(b) ? a : b;
  const DType s = IsSignedInteger(a) ? a : b;
  const DType u = IsSignedInteger(a) ? b : a;
  if (ItemSize(s) > ItemSize(u)) return s;
  if (ItemSize(u) < 8) return SignedIntegerOfSize(2 * ItemSize(u));
  return DType::kFloat64;  // uint64 with any signed integer
}

}  // namespace resident

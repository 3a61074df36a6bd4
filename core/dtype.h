// Element types and NumPy's promotion rules for them.
#ifndef RESIDENT_CORE_DTYPE_H_
#define RESIDENT_CORE_DTYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace resident {

enum class DType : uint8_t { kBool, kInt32, kInt64, kFloat32, kFloat64 };

inline constexpr DType kAllDTypes[] = {DType::kBool, DType::kInt32,
                                       DType::kInt64, DType::kFloat32,
                                       DType::kFloat64};

// Bytes per element.
int64_t ItemSize(DType dtype);
// NumPy's name: "bool", "int32", "int64", "float32", "float64".
const char* DTypeName(DType dtype);
// Inverse of DTypeName; nullopt for anything else.
std::optional<DType> ParseDType(std::string_view name);

inline bool IsFloating(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat64;
}
inline bool IsInteger(DType d) {
  return d == DType::kInt32 || d == DType::kInt64;
}

// numpy.result_type(a, b) for two arrays of these dtypes (NumPy 2 rules):
// bool < int32 < int64, float32 < float64, int32+float32 -> float64,
// int64+float32 -> float64.
DType PromoteTypes(DType a, DType b);

// The dtype numpy.sum gives: bool and int32 -> int64, others unchanged.
DType SumResultType(DType d);

}  // namespace resident

#endif  // RESIDENT_CORE_DTYPE_H_

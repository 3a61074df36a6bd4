// Element types, the C++ type each is stored as, and NumPy's promotion rules.
//
// One vocabulary for every layer: the CPU and the CUDA kernels both take
// DType and reach the C++ element type through StorageType / VisitDType, so
// no layer keeps a mirror enum or a table of its own that could drift.
//
//   absl::Status s = VisitDType(
//       array.dtype,
//       [&](auto zero) { using T = decltype(zero); ...; return absl::OkStatus(); },
//       [] { return absl::InvalidArgumentError("unknown dtype"); });
#ifndef RESIDENT_CORE_DTYPE_H_
#define RESIDENT_CORE_DTYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace resident {

enum class DType : uint8_t { kBool, kInt32, kInt64, kFloat32, kFloat64 };

inline constexpr DType kAllDTypes[] = {DType::kBool, DType::kInt32, DType::kInt64, DType::kFloat32,
                                       DType::kFloat64};

// The C++ type one element of a buffer of dtype D is stored as. Bool is
// NumPy's layout, one byte holding 0 or 1, stored as uint8_t: any byte a
// client uploads reads without undefined behaviour (every op takes nonzero
// as true), and arithmetic on it never promotes.
template <DType D>
struct DTypeTraits;
// clang-format off
template <> struct DTypeTraits<DType::kBool> { using Storage = uint8_t; };
template <> struct DTypeTraits<DType::kInt32> { using Storage = int32_t; };
template <> struct DTypeTraits<DType::kInt64> { using Storage = int64_t; };
template <> struct DTypeTraits<DType::kFloat32> { using Storage = float; };
template <> struct DTypeTraits<DType::kFloat64> { using Storage = double; };
// clang-format on
template <DType D>
using StorageType = typename DTypeTraits<D>::Storage;
// Whether T is bool's storage type: how kernels recognise a bool element.
template <typename T>
inline constexpr bool kIsBoolStorage = std::is_same_v<T, StorageType<DType::kBool>>;

// Calls fn(StorageType<D>{}) for the dtype D that `dtype` names and returns
// its result; returns unknown() for a value that names no dtype (only a
// corrupted value can). There is no default case: a dtype added to the enum
// without a case here fails to compile (-Werror=switch), and so does every
// other switch over DType.
template <typename Fn, typename Unknown>
constexpr decltype(auto) VisitDType(DType dtype, Fn&& fn, Unknown&& unknown) {
  switch (dtype) {
    case DType::kBool:
      return fn(StorageType<DType::kBool>{});
    case DType::kInt32:
      return fn(StorageType<DType::kInt32>{});
    case DType::kInt64:
      return fn(StorageType<DType::kInt64>{});
    case DType::kFloat32:
      return fn(StorageType<DType::kFloat32>{});
    case DType::kFloat64:
      return fn(StorageType<DType::kFloat64>{});
  }
  return unknown();
}

// Bytes per element: sizeof(StorageType); 0 for a value naming no dtype.
constexpr int64_t ItemSize(DType dtype) {
  return VisitDType(
      dtype, [](auto zero) { return static_cast<int64_t>(sizeof(zero)); },
      [] { return int64_t{0}; });
}

namespace dtype_internal {
template <typename... Ts>
struct AllDistinct : std::true_type {};
template <typename T, typename... Ts>
struct AllDistinct<T, Ts...>
    : std::bool_constant<(!std::is_same_v<T, Ts> && ...) && AllDistinct<Ts...>::value> {};
}  // namespace dtype_internal

// Kernels tell dtypes apart by their storage type (bool is the uint8_t one),
// so two dtypes must never share one: a uint8 dtype would need bool's
// kernels to dispatch on the dtype itself first.
static_assert(dtype_internal::AllDistinct<StorageType<DType::kBool>, StorageType<DType::kInt32>,
                                          StorageType<DType::kInt64>, StorageType<DType::kFloat32>,
                                          StorageType<DType::kFloat64>>::value,
              "each dtype needs a storage type of its own");
static_assert(ItemSize(DType::kBool) == 1, "NumPy's bool is one byte");
static_assert(ItemSize(DType::kInt32) == 4 && ItemSize(DType::kFloat32) == 4);
static_assert(ItemSize(DType::kInt64) == 8 && ItemSize(DType::kFloat64) == 8);

// NumPy's name: "bool", "int32", "int64", "float32", "float64".
const char* DTypeName(DType dtype);
// Inverse of DTypeName; nullopt for anything else.
std::optional<DType> ParseDType(std::string_view name);

constexpr bool IsFloating(DType d) { return d == DType::kFloat32 || d == DType::kFloat64; }
constexpr bool IsInteger(DType d) { return d == DType::kInt32 || d == DType::kInt64; }

// numpy.result_type(a, b) for two arrays of these dtypes (NumPy 2 rules):
// bool < int32 < int64, float32 < float64, int32+float32 -> float64,
// int64+float32 -> float64.
DType PromoteTypes(DType a, DType b);

// The dtype numpy.sum gives: bool and int32 -> int64, others unchanged.
constexpr DType SumResultType(DType d) {
  return (d == DType::kBool || d == DType::kInt32) ? DType::kInt64 : d;
}

}  // namespace resident

#endif  // RESIDENT_CORE_DTYPE_H_

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

#include "core/complex.h"
#include "core/half.h"

namespace resident {

enum class DType : uint8_t {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kFloat32,
  kFloat64,
  kFloat16,     // IEEE binary16, NumPy's float16
  kBFloat16,    // ml_dtypes' bfloat16: the top 16 bits of a float32
  kComplex64,   // NumPy's complex64: two float32 (real, imaginary)
  kComplex128,  // NumPy's complex128: two float64
};

inline constexpr DType kAllDTypes[] = {
    DType::kBool,    DType::kInt8,    DType::kInt16,   DType::kInt32,  DType::kInt64,
    DType::kUint8,   DType::kUint16,  DType::kUint32,  DType::kUint64, DType::kFloat32,
    DType::kFloat64, DType::kFloat16, DType::kBFloat16};

// The complex dtypes, apart: the kernels written over kAllDTypes (through
// VisitDType) are real-valued, and complex values take paths of their own
// (VisitAnyDType, kernels/cpu/complex_ops.cc, kernels/cuda/complex.cu).
inline constexpr DType kComplexDTypes[] = {DType::kComplex64, DType::kComplex128};

// Every dtype, real and complex.
inline constexpr DType kEveryDType[] = {
    DType::kBool,    DType::kInt8,    DType::kInt16,    DType::kInt32,     DType::kInt64,
    DType::kUint8,   DType::kUint16,  DType::kUint32,   DType::kUint64,    DType::kFloat32,
    DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kComplex64, DType::kComplex128};

// The 16-bit float storage types (core/half.h): structs, not C++
// arithmetic; kernels compute in ComputeType (float) and round on store.
using Float16 = ResidentFloat16;
using BFloat16 = ResidentBFloat16;

// The C++ type one element of a buffer of dtype D is stored as. Bool is
// NumPy's layout, one byte holding 0 or 1, stored as `char`: a one-byte type
// distinct from int8's `signed char` and uint8's `unsigned char` (C++ keeps
// the three apart), so kernels can tell bool from uint8 by storage type.
// Every op reads a bool byte as `x != 0`, so any byte a client uploads is
// read without undefined behaviour (nonzero is true), and arithmetic on it
// never promotes.
template <DType D>
struct DTypeTraits;
// clang-format off
template <> struct DTypeTraits<DType::kBool> { using Storage = char; };
template <> struct DTypeTraits<DType::kInt8> { using Storage = int8_t; };
template <> struct DTypeTraits<DType::kInt16> { using Storage = int16_t; };
template <> struct DTypeTraits<DType::kInt32> { using Storage = int32_t; };
template <> struct DTypeTraits<DType::kInt64> { using Storage = int64_t; };
template <> struct DTypeTraits<DType::kUint8> { using Storage = uint8_t; };
template <> struct DTypeTraits<DType::kUint16> { using Storage = uint16_t; };
template <> struct DTypeTraits<DType::kUint32> { using Storage = uint32_t; };
template <> struct DTypeTraits<DType::kUint64> { using Storage = uint64_t; };
template <> struct DTypeTraits<DType::kFloat32> { using Storage = float; };
template <> struct DTypeTraits<DType::kFloat64> { using Storage = double; };
template <> struct DTypeTraits<DType::kFloat16> { using Storage = Float16; };
template <> struct DTypeTraits<DType::kBFloat16> { using Storage = BFloat16; };
template <> struct DTypeTraits<DType::kComplex64> { using Storage = ResidentComplex64; };
template <> struct DTypeTraits<DType::kComplex128> { using Storage = ResidentComplex128; };
// clang-format on
using Complex64 = ResidentComplex64;
using Complex128 = ResidentComplex128;
template <DType D>
using StorageType = typename DTypeTraits<D>::Storage;
// Whether T is bool's storage type: how kernels recognise a bool element.
template <typename T>
inline constexpr bool kIsBoolStorage = std::is_same_v<T, StorageType<DType::kBool>>;
// Whether T is float16's or bfloat16's storage type.
template <typename T>
inline constexpr bool kIsHalfStorage = ResidentIsHalf<T>::value;
// Whether T is complex64's or complex128's storage type.
template <typename T>
inline constexpr bool kIsComplexStorage = ResidentIsComplex<T>::value;
// The type kernels compute in for storage type T: float for the halves
// (NumPy's float16 loops and ml_dtypes' compute in float32 and round back),
// T itself for every other dtype.
template <typename T>
using ComputeType = typename ResidentCompute<T>::type;

// Calls fn(StorageType<D>{}) for the real dtype D that `dtype` names and
// returns its result; returns unknown() for a complex dtype (the real-valued
// kernels written over it have no complex instance: VisitAnyDType visits
// those too) and for a value that names no dtype (only a corrupted value
// can). There is no default case: a dtype added to the enum without a case
// here fails to compile (-Werror=switch), and so does every other switch
// over DType.
template <typename Fn, typename Unknown>
constexpr decltype(auto) VisitDType(DType dtype, Fn&& fn, Unknown&& unknown) {
  switch (dtype) {
#define RESIDENT_DTYPE_CASE(D) \
  case DType::D:               \
    return fn(StorageType<DType::D>{});
    RESIDENT_DTYPE_CASE(kBool)
    RESIDENT_DTYPE_CASE(kInt8)
    RESIDENT_DTYPE_CASE(kInt16)
    RESIDENT_DTYPE_CASE(kInt32)
    RESIDENT_DTYPE_CASE(kInt64)
    RESIDENT_DTYPE_CASE(kUint8)
    RESIDENT_DTYPE_CASE(kUint16)
    RESIDENT_DTYPE_CASE(kUint32)
    RESIDENT_DTYPE_CASE(kUint64)
    RESIDENT_DTYPE_CASE(kFloat32)
    RESIDENT_DTYPE_CASE(kFloat64)
    RESIDENT_DTYPE_CASE(kFloat16)
    RESIDENT_DTYPE_CASE(kBFloat16)
#undef RESIDENT_DTYPE_CASE
    case DType::kComplex64:
    case DType::kComplex128:
      break;
  }
  return unknown();
}

// VisitDType over every dtype, complex ones included.
template <typename Fn, typename Unknown>
constexpr decltype(auto) VisitAnyDType(DType dtype, Fn&& fn, Unknown&& unknown) {
  if (dtype == DType::kComplex64) return fn(StorageType<DType::kComplex64>{});
  if (dtype == DType::kComplex128) return fn(StorageType<DType::kComplex128>{});
  return VisitDType(dtype, static_cast<Fn&&>(fn), static_cast<Unknown&&>(unknown));
}

// Bytes per element: sizeof(StorageType); 0 for a value naming no dtype.
constexpr int64_t ItemSize(DType dtype) {
  return VisitAnyDType(
      dtype, [](auto zero) { return static_cast<int64_t>(sizeof(zero)); },
      [] { return int64_t{0}; });
}

// The dtype whose storage type is T (bool for a type that is none's).
template <typename T>
constexpr DType DTypeOfStorage() {
  for (DType d : kEveryDType) {
    if (VisitAnyDType(
            d, [](auto zero) { return std::is_same_v<decltype(zero), T>; }, [] { return false; })) {
      return d;
    }
  }
  return DType::kBool;
}

namespace dtype_internal {
template <typename... Ts>
struct AllDistinct : std::true_type {};
template <typename T, typename... Ts>
struct AllDistinct<T, Ts...>
    : std::bool_constant<(!std::is_same_v<T, Ts> && ...) && AllDistinct<Ts...>::value> {};
constexpr bool StorageRoundTrips() {
  for (DType d : kEveryDType) {
    const DType back = VisitAnyDType(
        d, [](auto zero) { return DTypeOfStorage<decltype(zero)>(); }, [] { return DType::kBool; });
    if (back != d) return false;
  }
  return true;
}
}  // namespace dtype_internal

// Kernels tell dtypes apart by their storage type, so two dtypes must never
// share one.
static_assert(
    dtype_internal::AllDistinct<
        StorageType<DType::kBool>, StorageType<DType::kInt8>, StorageType<DType::kInt16>,
        StorageType<DType::kInt32>, StorageType<DType::kInt64>, StorageType<DType::kUint8>,
        StorageType<DType::kUint16>, StorageType<DType::kUint32>, StorageType<DType::kUint64>,
        StorageType<DType::kFloat32>, StorageType<DType::kFloat64>, StorageType<DType::kFloat16>,
        StorageType<DType::kBFloat16>, StorageType<DType::kComplex64>,
        StorageType<DType::kComplex128>>::value,
    "each dtype needs a storage type of its own");
static_assert(dtype_internal::StorageRoundTrips(), "kEveryDType lists every dtype once");
static_assert(ItemSize(DType::kBool) == 1, "NumPy's bool is one byte");
static_assert(ItemSize(DType::kInt8) == 1 && ItemSize(DType::kUint8) == 1);
static_assert(ItemSize(DType::kInt16) == 2 && ItemSize(DType::kUint16) == 2 &&
              ItemSize(DType::kFloat16) == 2 && ItemSize(DType::kBFloat16) == 2);
static_assert(std::is_trivially_copyable_v<Float16> && std::is_trivially_copyable_v<BFloat16>);
static_assert(ItemSize(DType::kInt32) == 4 && ItemSize(DType::kUint32) == 4 &&
              ItemSize(DType::kFloat32) == 4);
static_assert(ItemSize(DType::kInt64) == 8 && ItemSize(DType::kUint64) == 8 &&
              ItemSize(DType::kFloat64) == 8);
static_assert(ItemSize(DType::kComplex64) == 8 && ItemSize(DType::kComplex128) == 16,
              "NumPy's complex layout: (real, imaginary)");

// NumPy's name: "bool", "int8", ..., "uint64", "float32", "float64",
// "float16", "complex64", "complex128", and ml_dtypes' "bfloat16".
const char* DTypeName(DType dtype);
// Inverse of DTypeName; nullopt for anything else.
std::optional<DType> ParseDType(std::string_view name);

constexpr bool IsHalf(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }
constexpr bool IsComplex(DType d) { return d == DType::kComplex64 || d == DType::kComplex128; }
// The real dtype of a complex one's parts (float32, float64); d otherwise.
constexpr DType ComplexComponent(DType d) {
  return d == DType::kComplex64 ? DType::kFloat32 : d == DType::kComplex128 ? DType::kFloat64 : d;
}
// The complex dtype holding float dtype f: complex128 for float64,
// complex64 for the narrower floats (NumPy: float16 + complex64 is
// complex64).
constexpr DType ComplexHolding(DType f) {
  return f == DType::kFloat64 ? DType::kComplex128 : DType::kComplex64;
}
constexpr bool IsFloating(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat64 || IsHalf(d);
}
constexpr bool IsSignedInteger(DType d) {
  return d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32 || d == DType::kInt64;
}
constexpr bool IsUnsignedInteger(DType d) {
  return d == DType::kUint8 || d == DType::kUint16 || d == DType::kUint32 || d == DType::kUint64;
}
constexpr bool IsInteger(DType d) { return IsSignedInteger(d) || IsUnsignedInteger(d); }

// The signed integer dtype of `bytes` bytes (1, 2, 4; anything else int64).
constexpr DType SignedIntegerOfSize(int64_t bytes) {
  return bytes == 1   ? DType::kInt8
         : bytes == 2 ? DType::kInt16
         : bytes == 4 ? DType::kInt32
                      : DType::kInt64;
}

// numpy.result_type(a, b) for two arrays of these dtypes (NumPy 2 rules):
// bool < every number; two signed or two unsigned integers give the wider;
// a signed and an unsigned one the smallest signed type holding both
// (int8 + uint8 -> int16, int64 + uint64 -> float64); an integer and a
// float the smallest float at least as wide as both that holds the
// integer (int8 + float16 -> float16, int32 + float32 -> float64).
// bfloat16 as ml_dtypes registers it: with bool or a 1-byte integer it
// stays bfloat16, with a wider integer it is float16's answer (int16 ->
// float32), and float16 + bfloat16 is float32 (neither holds the other).
DType PromoteTypes(DType a, DType b);

// The dtype numpy.sum and numpy.prod give: bool and signed integers below
// 64 bits -> int64, unsigned ones -> uint64, others unchanged.
constexpr DType SumResultType(DType d) {
  if (d == DType::kBool || d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32) {
    return DType::kInt64;
  }
  if (d == DType::kUint8 || d == DType::kUint16 || d == DType::kUint32) return DType::kUint64;
  return d;
}

}  // namespace resident

#endif  // RESIDENT_CORE_DTYPE_H_

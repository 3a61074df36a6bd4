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

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "core/complex.h"
#include "core/half.h"

namespace resident {

// X(Kind, name, Storage, WIRE, descr, ctype): the one definition of each
// dtype, from which every layer's dtype switch is generated.
//   Kind     its enumerator, DType::Kind
//   name     NumPy's name (ml_dtypes' for bfloat16): DTypeName, ParseDType
//   Storage  the C++ type one element is stored as (DTypeTraits, below)
//   WIRE     its wire value, proto DTYPE_<WIRE> (core/proto/wire.cc); the
//            Python client maps the proto's names to NumPy's (_dtypes.py)
//   descr    its .npy descr as numpy.save writes it (core/npy.cc; bfloat16
//            has no type code: ml_dtypes' arrays save as '<V2')
//   ctype    Storage spelled for NVRTC's generated kernels
//            (server/device/cuda/fused_loop.cc); "" for the complex
//            dtypes, which never fuse
// Complex dtypes sit apart from the real ones: kernels written over
// kAllDTypes / VisitDType are real-valued; VisitAnyDType reaches them all.
#define RESIDENT_DTYPES(X)                                                        \
  X(kBool, "bool", char, BOOL, "|b1", "char")                                     \
  X(kInt8, "int8", int8_t, INT8, "|i1", "signed char")                            \
  X(kInt16, "int16", int16_t, INT16, "<i2", "short")                              \
  X(kInt32, "int32", int32_t, INT32, "<i4", "int")                                \
  X(kInt64, "int64", int64_t, INT64, "<i8", "long long")                          \
  X(kUint8, "uint8", uint8_t, UINT8, "|u1", "unsigned char")                      \
  X(kUint16, "uint16", uint16_t, UINT16, "<u2", "unsigned short")                 \
  X(kUint32, "uint32", uint32_t, UINT32, "<u4", "unsigned int")                   \
  X(kUint64, "uint64", uint64_t, UINT64, "<u8", "unsigned long long")             \
  X(kFloat32, "float32", float, FLOAT32, "<f4", "float")                          \
  X(kFloat64, "float64", double, FLOAT64, "<f8", "double")                        \
  X(kFloat16, "float16", ResidentFloat16, FLOAT16, "<f2", "ResidentFloat16")      \
  X(kBFloat16, "bfloat16", ResidentBFloat16, BFLOAT16, "<V2", "ResidentBFloat16") \
  X(kComplex64, "complex64", ResidentComplex64, COMPLEX64, "<c8", "")             \
  X(kComplex128, "complex128", ResidentComplex128, COMPLEX128, "<c16", "")

// float16 is IEEE binary16 (NumPy's); bfloat16 ml_dtypes' (the top 16 bits
// of a float32); complex64 / complex128 NumPy's (real, imaginary) pairs.
enum class DType : uint8_t {
#define RESIDENT_DTYPE_ENUM(K, name, S, W, descr, ctype) K,
  RESIDENT_DTYPES(RESIDENT_DTYPE_ENUM)
#undef RESIDENT_DTYPE_ENUM
};

// Every dtype, real and complex, in the table's order.
inline constexpr DType kEveryDType[] = {
#define RESIDENT_DTYPE_LIST(K, name, S, W, descr, ctype) DType::K,
    RESIDENT_DTYPES(RESIDENT_DTYPE_LIST)
#undef RESIDENT_DTYPE_LIST
};

constexpr bool IsComplex(DType d) { return d == DType::kComplex64 || d == DType::kComplex128; }

namespace dtype_internal {
template <bool kComplex>
constexpr auto DTypesWhere() {
  constexpr int n = [] {
    int k = 0;
    for (DType d : kEveryDType) k += IsComplex(d) == kComplex;
    return k;
  }();
  std::array<DType, n> out{};
  int i = 0;
  for (DType d : kEveryDType) {
    if (IsComplex(d) == kComplex) out[i++] = d;
  }
  return out;
}
}  // namespace dtype_internal

// The real dtypes (what VisitDType visits) and the complex ones, apart: the
// kernels written over kAllDTypes are real-valued, and complex values take
// paths of their own (VisitAnyDType, kernels/cpu/complex_ops.cc,
// kernels/cuda/complex.cu).
inline constexpr auto kAllDTypes = dtype_internal::DTypesWhere<false>();
inline constexpr auto kComplexDTypes = dtype_internal::DTypesWhere<true>();

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
#define RESIDENT_DTYPE_TRAITS(K, name, S, W, descr, ctype) \
  template <>                                              \
  struct DTypeTraits<DType::K> {                           \
    using Storage = S;                                     \
  };
RESIDENT_DTYPES(RESIDENT_DTYPE_TRAITS)
#undef RESIDENT_DTYPE_TRAITS
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
#define RESIDENT_DTYPE_CASE(K, name, S, W, descr, ctype) \
  case DType::K:                                         \
    if constexpr (!ResidentIsComplex<S>::value) {        \
      return fn(S{});                                    \
    }                                                    \
    break;
    RESIDENT_DTYPES(RESIDENT_DTYPE_CASE)
#undef RESIDENT_DTYPE_CASE
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
#define RESIDENT_DTYPE_STORAGE(K, name, S, W, descr, ctype) , S
static_assert(dtype_internal::AllDistinct<void RESIDENT_DTYPES(RESIDENT_DTYPE_STORAGE)>::value,
              "each dtype needs a storage type of its own");
#undef RESIDENT_DTYPE_STORAGE
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

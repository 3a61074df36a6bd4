// Borrowed views of C-contiguous host arrays, the kernels' only input type.
// Kernels know nothing of buffers or backends; the backend adapts to these.
#ifndef RESIDENT_KERNELS_CPU_ARRAY_VIEW_H_
#define RESIDENT_KERNELS_CPU_ARRAY_VIEW_H_

#include <cstdint>
#include <type_traits>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace resident::cpu {

struct ConstView {
  const void* data = nullptr;
  DType dtype = DType::kFloat64;
  absl::Span<const int64_t> shape;

  int64_t size() const { return NumElements(shape); }
};

struct MutView {
  void* data = nullptr;
  DType dtype = DType::kFloat64;
  absl::Span<const int64_t> shape;

  int64_t size() const { return NumElements(shape); }
  ConstView as_const() const { return {data, dtype, shape}; }
};

// DTypeName for absl::StrCat (a C string, which Debian's Abseil takes).
inline const char* NameOf(DType dtype) { return DTypeName(dtype); }

// Element counts at which work is split across threads: below this the cost
// of waking a worker exceeds the gain.
inline constexpr int64_t kParallelGrain = int64_t{1} << 16;

// Calls fn(T{}) with the C++ element type of `dtype` (bool is stored as one
// byte holding 0 or 1, handled as uint8_t so arithmetic never promotes).
template <typename Fn>
decltype(auto) DispatchDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kBool:
      return fn(uint8_t{});
    case DType::kInt32:
      return fn(int32_t{});
    case DType::kInt64:
      return fn(int64_t{});
    case DType::kFloat32:
      return fn(float{});
    case DType::kFloat64:
      break;
  }
  return fn(double{});
}

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_ARRAY_VIEW_H_

// Borrowed views of C-contiguous host arrays, the kernels' only input type.
// Kernels know nothing of buffers or backends; the backend adapts to these.
#ifndef RESIDENT_KERNELS_CPU_ARRAY_VIEW_H_
#define RESIDENT_KERNELS_CPU_ARRAY_VIEW_H_

#include <cstdint>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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

// Calls fn(T{}) with T = StorageType of `dtype` (bool is a char holding 0
// or 1, so arithmetic never promotes) and returns its status; fn returns
// absl::Status. A value naming no dtype is INVALID_ARGUMENT, never another
// type's kernel; a dtype without a case fails to compile (VisitDType).
template <typename Fn>
absl::Status DispatchDType(DType dtype, Fn&& fn) {
  return VisitDType(dtype, std::forward<Fn>(fn), [dtype] {
    return absl::InvalidArgumentError(absl::StrCat("unknown dtype ", static_cast<int>(dtype)));
  });
}

// DispatchDType over every dtype, complex ones included (the cast, fill and
// complex kernels).
template <typename Fn>
absl::Status DispatchAnyDType(DType dtype, Fn&& fn) {
  return VisitAnyDType(dtype, std::forward<Fn>(fn), [dtype] {
    return absl::InvalidArgumentError(absl::StrCat("unknown dtype ", static_cast<int>(dtype)));
  });
}

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_ARRAY_VIEW_H_

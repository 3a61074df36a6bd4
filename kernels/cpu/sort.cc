#include "kernels/cpu/sort.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/elementwise_expr.h"

namespace resident::cpu {
namespace {

// An element as the value it sorts by: a bool byte as 0 or 1, a half as
// its float, everything else as stored.
template <typename T>
auto SortValue(T x) {
  if constexpr (kIsBoolStorage<T>) {
    return static_cast<int>(x != 0);
  } else if constexpr (kIsHalfStorage<T>) {
    return resident_load(x);
  } else {
    return x;
  }
}

// NumPy's sort order: a < b, NaN after every number (and equal to NaN);
// -0.0 and +0.0 compare equal, as `<` has them.
template <typename V>
bool SortsBefore(V a, V b) {
  if constexpr (std::is_floating_point_v<V>) {
    return a < b || (b != b && a == a);
  } else {
    return a < b;
  }
}

int64_t RowsOf(absl::Span<const int64_t> shape, int64_t n) {
  return n == 0 ? 0 : NumElements(shape) / n;
}

int64_t LastDim(absl::Span<const int64_t> shape) { return shape.empty() ? 1 : shape.back(); }

absl::Status Mismatch(const char* what) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": operand shapes or dtypes do not match"));
}

}  // namespace

absl::Status ArgsortRows(ThreadPool* pool, const ConstView& a, bool descending,
                         const MutView& out) {
  if (out.dtype != DType::kInt64 || out.shape != a.shape) return Mismatch("argsort");
  const int64_t n = LastDim(a.shape), rows = RowsOf(a.shape, n);
  auto* idx = static_cast<int64_t*>(out.data);
  return DispatchDType(a.dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* data = static_cast<const T*>(a.data);
    ParallelFor(pool, rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    const T* row = data + r * n;
                    int64_t* o = idx + r * n;
                    std::iota(o, o + n, int64_t{0});
                    if (descending) {
                      // The standard's stable descending order: b before a
                      // when a sorts before b; ties keep their order.
                      std::stable_sort(o, o + n, [row](int64_t i, int64_t j) {
                        return SortsBefore(SortValue(row[j]), SortValue(row[i]));
                      });
                    } else {
                      std::stable_sort(o, o + n, [row](int64_t i, int64_t j) {
                        return SortsBefore(SortValue(row[i]), SortValue(row[j]));
                      });
                    }
                  }
                });
    return absl::OkStatus();
  });
}

absl::Status TakeAlongRows(ThreadPool* pool, const ConstView& a, const ConstView& idx,
                           const MutView& out) {
  if (idx.dtype != DType::kInt64 || out.dtype != a.dtype || out.shape != idx.shape ||
      a.shape.size() != idx.shape.size()) {
    return Mismatch("take_along_axis");
  }
  const int64_t n = LastDim(a.shape), m = LastDim(idx.shape), rows = RowsOf(idx.shape, m);
  if (rows > 0 && RowsOf(a.shape, n) != rows) return Mismatch("take_along_axis");
  const auto* ix = static_cast<const int64_t*>(idx.data);
  std::atomic<int64_t> bad{-1};
  absl::Status s = DispatchAnyDType(a.dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* src = static_cast<const T*>(a.data);
    T* dst = static_cast<T*>(out.data);
    ParallelFor(pool, rows * m, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        int64_t j = ix[k];
        if (j < 0) j += n;
        if (j < 0 || j >= n) {
          bad.store(k, std::memory_order_relaxed);
          continue;
        }
        dst[k] = src[(k / m) * n + j];
      }
    });
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  if (const int64_t k = bad.load(); k >= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("index ", ix[k], " is out of bounds for axis ", "of size ", n));
  }
  return absl::OkStatus();
}

absl::Status ScanRows(ThreadPool* pool, ReduceKind kind, const ConstView& a, const MutView& out) {
  // Bool is scanned as int64 (the program layer converts it first).
  if (out.dtype != a.dtype || out.shape != a.shape || a.dtype == DType::kBool ||
      (kind != ReduceKind::kSum && kind != ReduceKind::kProd)) {
    return Mismatch(kind == ReduceKind::kProd ? "cumulative_prod" : "cumulative_sum");
  }
  const int64_t n = LastDim(a.shape), rows = RowsOf(a.shape, n);
  const bool prod = kind == ReduceKind::kProd;
  return DispatchDType(a.dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* src = static_cast<const T*>(a.data);
    T* dst = static_cast<T*>(out.data);
    ParallelFor(pool, rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    const T* x = src + r * n;
                    T* y = dst + r * n;
                    if constexpr (kIsHalfStorage<T>) {
                      // The running value is stored as the half each step,
                      // as NumPy's accumulate keeps it in the output.
                      float acc = resident_load(x[0]);
                      y[0] = x[0];
                      for (int64_t j = 1; j < n; ++j) {
                        const float v = resident_load(x[j]);
                        y[j] = resident_store<T>(prod ? acc * v : acc + v);
                        acc = resident_load(y[j]);
                      }
                    } else if constexpr (!kIsBoolStorage<T>) {  // bool refused above
                      T acc = x[0];
                      y[0] = acc;
                      for (int64_t j = 1; j < n; ++j) {
                        acc = prod ? resident_ew_multiply(acc, x[j]) : resident_ew_add(acc, x[j]);
                        y[j] = acc;
                      }
                    }
                  }
                });
    return absl::OkStatus();
  });
}

}  // namespace resident::cpu

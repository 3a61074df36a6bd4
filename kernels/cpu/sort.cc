#include "kernels/cpu/sort.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/complex.h"
#include "core/elementwise_expr.h"
#include "hwy/contrib/sort/vqsort.h"
#include "kernels/cpu/radix_sort.h"

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

// The unsigned key of x whose order is NumPy's sort order (as
// kernels/cuda/sort.cu's): signed integers with the sign bit flipped;
// floats by their bits, negative ones inverted, every NaN the largest key
// and -0.0 as +0.0; a bool byte as 0 or 1.
template <typename U>
U FloatKey(U bits, bool is_nan, bool is_zero) {
  constexpr U kSign = U{1} << (sizeof(U) * 8 - 1);
  if (is_nan) return static_cast<U>(~U{0});
  if (is_zero) return kSign;
  return (bits & kSign) ? static_cast<U>(~bits) : static_cast<U>(bits | kSign);
}

template <size_t kBytes>
using UnsignedOf = std::conditional_t<
    kBytes == 1, uint8_t,
    std::conditional_t<kBytes == 2, uint16_t, std::conditional_t<kBytes == 4, uint32_t, uint64_t>>>;

template <typename T>
UnsignedOf<sizeof(T)> OrderedKey(T x) {
  using U = UnsignedOf<sizeof(T)>;
  U bits;
  std::memcpy(&bits, &x, sizeof(T));
  if constexpr (kIsBoolStorage<T>) {
    return x != 0 ? 1 : 0;
  } else if constexpr (kIsHalfStorage<T>) {
    const float f = resident_load(x);
    return FloatKey<U>(bits, f != f, f == 0.0f);
  } else if constexpr (std::is_floating_point_v<T>) {
    return FloatKey<U>(bits, x != x, x == 0);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<U>(bits ^ (U{1} << (sizeof(T) * 8 - 1)));
  } else {
    return bits;
  }
}

// Rows shorter than this sort by comparisons (std::stable_sort), longer
// ones by radix_sort.h's passes.
constexpr int64_t kRadixMinRow = 256;
// Parts each radix pass of one long row splits into.
constexpr int kRadixChunks = 16;

// Sorts one row of n elements by radix: keys in NumPy's order (inverted
// for descending, ties still in their order), carrying value(i) (V), and
// hands the sorted values to emit(const V*).
template <typename T, typename V, typename ValueFn, typename EmitFn>
void RadixRow(ThreadPool* pool, int chunks, const T* row, int64_t n, bool descending, ValueFn value,
              EmitFn emit) {
  using K = UnsignedOf<sizeof(T)>;
  std::vector<K> keys(static_cast<size_t>(n)), keys2(static_cast<size_t>(n));
  std::vector<V> vals(static_cast<size_t>(n)), vals2(static_cast<size_t>(n));
  ParallelFor(chunks > 1 ? pool : nullptr, n, kParallelGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const K k = OrderedKey(row[i]);
      keys[i] = descending ? static_cast<K>(~k) : k;
      vals[i] = value(i);
    }
  });
  const bool in2 = RadixSortPairs<K, V>(chunks > 1 ? pool : nullptr, chunks, keys.data(),
                                        vals.data(), keys2.data(), vals2.data(), n);
  emit(in2 ? vals2.data() : vals.data());
}

// Runs sort_row(r, chunks) for every row: rows in parallel (each serial)
// when there are several, else each long row split over the threads.
template <typename Fn>
void ForEachRow(ThreadPool* pool, int64_t rows, int64_t n, Fn sort_row) {
  if (rows >= 4 || n < kRadixMinRow) {
    ParallelFor(pool, rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) sort_row(r, 1);
                });
  } else {
    for (int64_t r = 0; r < rows; ++r) sort_row(r, kRadixChunks);
  }
}

// Highway's vectorised quicksort (VQSort, what NumPy's AVX sorts are
// like) sorts these dtypes' elements themselves. It is not stable, so it
// serves only where equal elements are equal bits: integers, and floats
// without NaN or -0.0 (checked first).
template <typename T>
constexpr bool kVqsortValues = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                               (std::is_integral_v<T> && !kIsBoolStorage<T> && sizeof(T) >= 2);

// Copies row to out and says whether its equal elements are all equal bits
// (one pass for both): for floats, no NaN (NumPy keeps their order and
// payloads) and no -0.0 (equal to +0.0).
template <typename T>
bool CopyEqualMeansSameBits(const T* row, int64_t n, T* out) {
  if constexpr (std::is_floating_point_v<T>) {
    bool special = false;
    for (int64_t i = 0; i < n; ++i) {
      const T x = row[i];
      out[i] = x;
      special |= (x != x) | (x == 0 && std::signbit(x));
    }
    return !special;
  } else {
    std::memcpy(out, row, static_cast<size_t>(n) * sizeof(T));
    return true;
  }
}

// Sorts out[0:n) (a copy of the row) with VQSort.
template <typename T>
void VqsortRow(T* out, int64_t n, bool descending) {
  const hwy::Sorter sorter;
  if (descending) {
    sorter(out, static_cast<size_t>(n), hwy::SortDescending());
  } else {
    sorter(out, static_cast<size_t>(n), hwy::SortAscending());
  }
}

// A stable argsort of a row of keys of at most 32 bits by VQSort: each
// element's ordered key (inverted for descending) above its index in one
// 64-bit word, so equal keys order by index; the sorted words' low halves
// are the argsort.
template <typename T>
void PackedArgsortRow(const T* row, int64_t n, bool descending, int64_t* o) {
  static_assert(sizeof(T) <= 4);
  std::vector<uint64_t> words(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t k = OrderedKey(row[i]);
    const uint64_t key = descending ? (~k & ((uint64_t{1} << (sizeof(T) * 8)) - 1)) : k;
    words[i] = key << 32 | static_cast<uint64_t>(i);
  }
  const hwy::Sorter sorter;
  sorter(words.data(), words.size(), hwy::SortAscending());
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<int64_t>(words[i] & 0xffffffffu);
}

// One row's argsort by comparisons (short rows).
template <typename T>
void CompareArgsortRow(const T* row, int64_t n, bool descending, int64_t* o) {
  std::iota(o, o + n, int64_t{0});
  if (descending) {
    // The standard's stable descending order: b before a when a sorts
    // before b; ties keep their order.
    std::stable_sort(o, o + n, [row](int64_t i, int64_t j) {
      return SortsBefore(SortValue(row[j]), SortValue(row[i]));
    });
  } else {
    std::stable_sort(o, o + n, [row](int64_t i, int64_t j) {
      return SortsBefore(SortValue(row[i]), SortValue(row[j]));
    });
  }
}

// NumPy's complex order (core/complex.h's resident_cx_sort_keys) by
// comparisons of the keys; -0.0 equals 0.0, so ties stay.
template <typename C>
void ComplexArgsortRow(const C* row, int64_t n, bool descending, int64_t* o) {
  std::vector<ResidentCxSortKeys<C>> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) keys[i] = resident_cx_sort_keys(row[i]);
  auto less = [&keys](int64_t i, int64_t j) {
    const ResidentCxSortKeys<C>&a = keys[i], &b = keys[j];
    return a.cls != b.cls ? a.cls < b.cls : a.k1 != b.k1 ? a.k1 < b.k1 : a.k2 < b.k2;
  };
  std::iota(o, o + n, int64_t{0});
  if (descending) {
    std::stable_sort(o, o + n, [&less](int64_t i, int64_t j) { return less(j, i); });
  } else {
    std::stable_sort(o, o + n, less);
  }
}

// ComplexArgsortRow over every row; with `values`, out gets the elements
// themselves in that order.
absl::Status ComplexSortRows(ThreadPool* pool, const ConstView& a, bool descending, bool values,
                             const MutView& out) {
  const int64_t n = LastDim(a.shape), rows = RowsOf(a.shape, n);
  return DispatchAnyDType(a.dtype, [&](auto zero) {
    using C = decltype(zero);
    if constexpr (kIsComplexStorage<C>) {
      const C* data = static_cast<const C*>(a.data);
      ParallelFor(pool, rows, 1, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> order(values ? static_cast<size_t>(n) : 0);
        for (int64_t r = begin; r < end; ++r) {
          const C* row = data + r * n;
          if (!values) {
            ComplexArgsortRow(row, n, descending, static_cast<int64_t*>(out.data) + r * n);
            continue;
          }
          ComplexArgsortRow(row, n, descending, order.data());
          C* o = static_cast<C*>(out.data) + r * n;
          for (int64_t i = 0; i < n; ++i) o[i] = row[order[i]];
        }
      });
      return absl::OkStatus();
    } else {
      return absl::InternalError("ComplexSortRows of a real dtype");
    }
  });
}

}  // namespace

absl::Status ArgsortRows(ThreadPool* pool, const ConstView& a, bool descending,
                         const MutView& out) {
  if (out.dtype != DType::kInt64 || out.shape != a.shape) return Mismatch("argsort");
  if (IsComplex(a.dtype)) return ComplexSortRows(pool, a, descending, false, out);
  const int64_t n = LastDim(a.shape), rows = RowsOf(a.shape, n);
  auto* idx = static_cast<int64_t*>(out.data);
  return DispatchDType(a.dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* data = static_cast<const T*>(a.data);
    ForEachRow(pool, rows, n, [&](int64_t r, int chunks) {
      const T* row = data + r * n;
      int64_t* o = idx + r * n;
      if (n < kRadixMinRow) return CompareArgsortRow(row, n, descending, o);
      if constexpr (sizeof(T) <= 4) {
        if (n <= int64_t{UINT32_MAX}) return PackedArgsortRow(row, n, descending, o);
      }
      auto emit = [o, n](const auto* v) {
        for (int64_t i = 0; i < n; ++i) o[i] = static_cast<int64_t>(v[i]);
      };
      if (n <= int64_t{UINT32_MAX}) {
        RadixRow<T, uint32_t>(
            pool, chunks, row, n, descending, [](int64_t i) { return static_cast<uint32_t>(i); },
            emit);
      } else {
        RadixRow<T, int64_t>(
            pool, chunks, row, n, descending, [](int64_t i) { return i; }, emit);
      }
    });
    return absl::OkStatus();
  });
}

absl::Status SortRows(ThreadPool* pool, const ConstView& a, bool descending, const MutView& out) {
  if (out.dtype != a.dtype || out.shape != a.shape) return Mismatch("sort");
  if (IsComplex(a.dtype)) return ComplexSortRows(pool, a, descending, true, out);
  const int64_t n = LastDim(a.shape), rows = RowsOf(a.shape, n);
  return DispatchDType(a.dtype, [&](auto zero) {
    using T = decltype(zero);
    using Bits = UnsignedOf<sizeof(T)>;
    const T* data = static_cast<const T*>(a.data);
    T* dst = static_cast<T*>(out.data);
    ForEachRow(pool, rows, n, [&](int64_t r, int chunks) {
      const T* row = data + r * n;
      T* o = dst + r * n;
      if (n < kRadixMinRow) {
        std::vector<int64_t> order(static_cast<size_t>(n));
        CompareArgsortRow(row, n, descending, order.data());
        for (int64_t i = 0; i < n; ++i) o[i] = row[order[i]];
        return;
      }
      if constexpr (kVqsortValues<T>) {
        if (CopyEqualMeansSameBits(row, n, o)) return VqsortRow(o, n, descending);
      }
      // The elements' own bits ride with their keys.
      RadixRow<T, Bits>(
          pool, chunks, row, n, descending,
          [row](int64_t i) {
            Bits b;
            std::memcpy(&b, &row[i], sizeof(T));
            return b;
          },
          [o, n](const Bits* v) { std::memcpy(o, v, static_cast<size_t>(n) * sizeof(T)); });
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
  return DispatchAnyDType(a.dtype, [&](auto zero) {
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
                    } else if constexpr (kIsComplexStorage<T>) {
                      // NumPy's complex add and multiply, left to right.
                      T acc = x[0];
                      y[0] = acc;
                      for (int64_t j = 1; j < n; ++j) {
                        acc = prod ? resident_cx_mul(acc, x[j]) : resident_cx_add(acc, x[j]);
                        y[j] = acc;
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

absl::Status Extract(ThreadPool* pool, const ConstView& cond, const ConstView* values,
                     const MutView& out) {
  const int64_t n = cond.size();
  const DType want = values != nullptr ? values->dtype : DType::kInt64;
  if (cond.dtype != DType::kBool || out.shape.size() != 1 || out.dtype != want ||
      (values != nullptr && values->size() != n)) {
    return Mismatch("extract");
  }
  // Fixed chunks, counted in parallel, then written from their offsets.
  const int64_t chunk = std::max<int64_t>(kParallelGrain, (n + 63) / 64);
  const int64_t chunks = (n + chunk - 1) / chunk;
  std::vector<int64_t> offset(static_cast<size_t>(chunks) + 1, 0);
  const auto* c = static_cast<const uint8_t*>(cond.data);
  ParallelFor(pool, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      int64_t k = 0;
      for (int64_t i = b * chunk, e = std::min(n, i + chunk); i < e; ++i) k += c[i] != 0;
      offset[b + 1] = k;
    }
  });
  std::partial_sum(offset.begin(), offset.end(), offset.begin());
  if (offset.back() != out.size()) {
    return absl::InvalidArgumentError(absl::StrCat("extract: the condition has ", offset.back(),
                                                   " true elements, not the ", out.size(),
                                                   " the program declared"));
  }
  auto write = [&](auto item) {
    using W = decltype(item);  // moved by item size
    const W* src = values != nullptr ? static_cast<const W*>(values->data) : nullptr;
    W* dst = static_cast<W*>(out.data);
    ParallelFor(pool, chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        int64_t o = offset[b];
        for (int64_t i = b * chunk, e = std::min(n, i + chunk); i < e; ++i) {
          if (c[i] == 0) continue;
          if constexpr (std::is_same_v<W, int64_t>) {
            dst[o++] = src != nullptr ? src[i] : i;
          } else {
            dst[o++] = src[i];
          }
        }
      }
    });
    return absl::OkStatus();
  };
  struct Bytes16 {
    uint64_t lo, hi;
  };
  switch (ItemSize(want)) {
    case 1:
      return write(uint8_t{});
    case 2:
      return write(uint16_t{});
    case 4:
      return write(uint32_t{});
    case 8:
      return write(int64_t{});
    case 16:
      return write(Bytes16{});
    default:
      return Mismatch("extract");
  }
}

}  // namespace resident::cpu

#include "kernels/cpu/reduce_axes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/reduce.h"

namespace resident::cpu {
namespace {

// Walks the reduced elements of one output in row-major order: offsets into
// a, from the reduced axes' sizes and strides (an odometer, innermost last).
struct ReducedWalk {
  std::vector<int64_t> sizes, strides;
  template <typename Fn>
  void ForEach(int64_t base, Fn&& fn) const {
    const int r = static_cast<int>(sizes.size());
    std::vector<int64_t> idx(r, 0);
    int64_t off = base;
    int64_t count = 1;
    for (int64_t s : sizes) count *= s;
    for (int64_t i = 0; i < count; ++i) {
      fn(i, off);
      for (int d = r - 1; d >= 0; --d) {
        off += strides[d];
        if (++idx[d] < sizes[d]) break;
        off -= strides[d] * sizes[d];
        idx[d] = 0;
      }
    }
  }
};

// An element as its value: a bool byte reads as 0 or 1 (any nonzero byte is
// true), everything else as stored.
template <typename T>
T Value(T x) {
  if constexpr (kIsBoolStorage<T>) {
    return static_cast<T>(x != 0);
  } else {
    return x;
  }
}

template <typename T>
void ReduceTyped(ThreadPool* pool, ReduceKind kind, const T* a, absl::Span<const int64_t> shape,
                 absl::Span<const int> axes, void* out_data) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * shape[d + 1];
  std::vector<bool> reduced(rank, false);
  for (int ax : axes) reduced[ax] = true;
  ReducedWalk walk;
  std::vector<int64_t> kept_sizes, kept_strides;
  int64_t m = 1, n_out = 1;
  for (int d = 0; d < rank; ++d) {
    if (reduced[d]) {
      walk.sizes.push_back(shape[d]);
      walk.strides.push_back(stride[d]);
      m *= shape[d];
    } else {
      kept_sizes.push_back(shape[d]);
      kept_strides.push_back(stride[d]);
      n_out *= shape[d];
    }
  }
  // Reduced axes that are the innermost ones form one contiguous run.
  bool contiguous = true;
  for (int i = 0; i < static_cast<int>(axes.size()); ++i) {
    if (axes[i] != rank - static_cast<int>(axes.size()) + i) contiguous = false;
  }
  auto base_of = [&](int64_t o) {
    int64_t off = 0;
    for (int d = static_cast<int>(kept_sizes.size()) - 1; d >= 0; --d) {
      off += (o % kept_sizes[d]) * kept_strides[d];
      o /= kept_sizes[d];
    }
    return off;
  };
  constexpr bool kFloat = std::is_floating_point_v<T>;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(m, 1));
  ParallelFor(pool, n_out, grain, [&](int64_t begin, int64_t end) {
    std::vector<double> gathered_d;
    std::vector<T> gathered_t;
    for (int64_t o = begin; o < end; ++o) {
      const int64_t base = base_of(o);
      switch (kind) {
        case ReduceKind::kSum:
        case ReduceKind::kMean: {
          if constexpr (kFloat) {
            const T* run = a + base;
            if (!contiguous) {
              gathered_t.resize(m);
              walk.ForEach(base, [&](int64_t i, int64_t off) { gathered_t[i] = a[off]; });
              run = gathered_t.data();
            }
            T s;
            if constexpr (std::is_same_v<T, float>) {
              s = PairwiseSumFloat(run, m);
            } else {
              s = PairwiseSumDouble(run, m);
            }
            if (kind == ReduceKind::kMean) s = s / static_cast<T>(m);
            static_cast<T*>(out_data)[o] = s;
          } else if (kind == ReduceKind::kSum) {
            uint64_t s = 0;
            walk.ForEach(base, [&](int64_t, int64_t off) {
              s += static_cast<uint64_t>(static_cast<int64_t>(Value(a[off])));
            });
            static_cast<int64_t*>(out_data)[o] = static_cast<int64_t>(s);
          } else {  // integer mean: NumPy sums pairwise in float64
            gathered_d.resize(m);
            walk.ForEach(base, [&](int64_t i, int64_t off) {
              gathered_d[i] = static_cast<double>(Value(a[off]));
            });
            static_cast<double*>(out_data)[o] =
                PairwiseSumDouble(gathered_d.data(), m) / static_cast<double>(m);
          }
          break;
        }
        case ReduceKind::kProd: {
          if constexpr (kFloat) {
            T p = 1;
            walk.ForEach(base, [&](int64_t, int64_t off) { p *= a[off]; });
            static_cast<T*>(out_data)[o] = p;
          } else {
            uint64_t p = 1;
            walk.ForEach(base, [&](int64_t, int64_t off) {
              p *= static_cast<uint64_t>(static_cast<int64_t>(Value(a[off])));
            });
            static_cast<int64_t*>(out_data)[o] = static_cast<int64_t>(p);
          }
          break;
        }
        case ReduceKind::kMax:
        case ReduceKind::kMin:
        case ReduceKind::kArgmax:
        case ReduceKind::kArgmin: {
          const bool want_max = kind == ReduceKind::kMax || kind == ReduceKind::kArgmax;
          T best = Value(a[base]);
          int64_t best_i = 0;
          bool nan = false;
          walk.ForEach(base, [&](int64_t i, int64_t off) {
            const T v = Value(a[off]);
            if (nan) return;
            if constexpr (kFloat) {
              if (std::isnan(v)) {  // the first NaN wins, as in NumPy
                nan = true;
                best = v;
                best_i = i;
                return;
              }
            }
            if (want_max ? v > best : v < best) {
              best = v;
              best_i = i;
            }
          });
          if (IsArgReduce(kind)) {
            static_cast<int64_t*>(out_data)[o] = best_i;
          } else {
            static_cast<T*>(out_data)[o] = best;
          }
          break;
        }
        case ReduceKind::kAny:
        case ReduceKind::kAll: {
          const bool any = kind == ReduceKind::kAny;
          bool r = !any;
          walk.ForEach(base, [&](int64_t, int64_t off) {
            const bool truth = a[off] != T{0};  // NaN is truthy, as in NumPy
            if (any)
              r = r || truth;
            else
              r = r && truth;
          });
          static_cast<uint8_t*>(out_data)[o] = r ? 1 : 0;
          break;
        }
      }
    }
  });
}

// float16 and bfloat16: reduced as float32 (NumPy sums float16 in float32
// and takes its mean in float32; max, min and the arg reductions see the
// same values), the result rounded back to the half dtype once.
absl::Status ReduceHalf(ThreadPool* pool, ReduceKind kind, const ConstView& a,
                        const std::optional<std::vector<int>>& axes, bool keepdims,
                        const MutView& out) {
  std::vector<float> wide(a.size());
  const MutView wide_view{wide.data(), DType::kFloat32, a.shape};
  if (absl::Status s = Cast(pool, a, wide_view); !s.ok()) return s;
  if (ReduceResultType(kind, DType::kFloat32) != DType::kFloat32) {
    return ReduceAxes(pool, kind, wide_view.as_const(), axes, keepdims, out);  // int64, bool
  }
  std::vector<float> r(out.size());
  const MutView r_view{r.data(), DType::kFloat32, out.shape};
  if (absl::Status s = ReduceAxes(pool, kind, wide_view.as_const(), axes, keepdims, r_view);
      !s.ok()) {
    return s;
  }
  return Cast(pool, r_view.as_const(), out);
}

}  // namespace

absl::StatusOr<std::vector<int>> NormalizeAxes(ReduceKind kind, int rank,
                                               const std::optional<std::vector<int>>& axes) {
  std::vector<int> out;
  if (!axes.has_value()) {
    for (int d = 0; d < rank; ++d) out.push_back(d);
    return out;
  }
  if (IsArgReduce(kind) && axes->size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(ReduceKindName(kind), " takes one axis or none, not ", axes->size()));
  }
  std::vector<bool> seen(rank, false);
  for (int ax : *axes) {
    if (ax < -rank || ax >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("axis ", ax, " is out of bounds for array of dimension ", rank));
    }
    const int a = ax < 0 ? ax + rank : ax;
    if (seen[a]) return absl::InvalidArgumentError(absl::StrCat("duplicate value in 'axis': ", ax));
    seen[a] = true;
    out.push_back(a);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Shape ReducedShape(absl::Span<const int64_t> shape, absl::Span<const int> sorted_axes,
                   bool keepdims) {
  Shape out;
  size_t k = 0;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (k < sorted_axes.size() && sorted_axes[k] == d) {
      ++k;
      if (keepdims) out.push_back(1);
    } else {
      out.push_back(shape[d]);
    }
  }
  return out;
}

absl::Status ReduceAxes(ThreadPool* pool, ReduceKind kind, const ConstView& a,
                        const std::optional<std::vector<int>>& axes, bool keepdims,
                        const MutView& out) {
  const DType want = ReduceResultType(kind, a.dtype);
  if (out.dtype != want) {
    return absl::InvalidArgumentError(absl::StrCat(ReduceKindName(kind), " of ", NameOf(a.dtype),
                                                   " gives ", NameOf(want), ", not ",
                                                   NameOf(out.dtype)));
  }
  const int rank = static_cast<int>(a.shape.size());
  auto sorted = NormalizeAxes(kind, rank, axes);
  if (!sorted.ok()) return sorted.status();
  const Shape expected = ReducedShape(a.shape, *sorted, keepdims);
  if (!std::equal(expected.begin(), expected.end(), out.shape.begin(), out.shape.end())) {
    return absl::InvalidArgumentError(
        absl::StrCat(ReduceKindName(kind), " of ", ShapeString(a.shape), " gives ",
                     ShapeString(expected), ", not ", ShapeString(out.shape)));
  }
  if (IsHalf(a.dtype)) return ReduceHalf(pool, kind, a, axes, keepdims, out);
  int64_t m = 1;
  for (int ax : *sorted) m *= a.shape[ax];
  if (NumElements(expected) == 0) return absl::OkStatus();
  if (m == 0 && (kind == ReduceKind::kMax || kind == ReduceKind::kMin || IsArgReduce(kind))) {
    return absl::InvalidArgumentError(absl::StrCat("zero-size array to reduction operation ",
                                                   ReduceKindName(kind), " which has no identity"));
  }
  if (m == 0 && kind == ReduceKind::kMean) {
    return DispatchDType(want, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_floating_point_v<T>) {
        std::fill_n(static_cast<T*>(out.data), out.size(), std::numeric_limits<T>::quiet_NaN());
      }
      return absl::OkStatus();
    });
  }
  return DispatchDType(a.dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!kIsHalfStorage<T>) {  // halves were widened above
      ReduceTyped<T>(pool, kind, static_cast<const T*>(a.data), a.shape, *sorted, out.data);
    }
    return absl::OkStatus();
  });
}

}  // namespace resident::cpu

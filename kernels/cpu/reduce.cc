#include "kernels/cpu/reduce.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/shape.h"
#include "kernels/cpu/convert.h"

namespace resident::cpu {
namespace {

// NumPy's block size: below it, 8 interleaved partial sums; above, halves.
constexpr int64_t kPairwiseBlock = 128;
// Flat sums longer than this are cut (along the pairwise tree) into leaves
// summed in parallel.
constexpr int64_t kLeafSize = int64_t{1} << 16;
// Columns summed together when reducing a non-innermost axis.
constexpr int64_t kTile = 64;
// Rows added one after another at the bottom of a column pairwise sum.
constexpr int64_t kRowBlock = 16;

// Where NumPy's pairwise sum splits n elements.
int64_t PairwiseSplit(int64_t n) {
  int64_t n2 = n / 2;
  return n2 - n2 % 8;
}

// numpy's pairwise_sum over p[0, n), accumulating in T.
template <typename T>
T PairwiseSum(const T* p, int64_t n) {
  if (n < 8) {
    T res = 0;
    for (int64_t i = 0; i < n; ++i) res += p[i];
    return res;
  }
  if (n <= kPairwiseBlock) {
    T r[8];
    for (int j = 0; j < 8; ++j) r[j] = p[j];
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += p[i + j];
    }
    T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += p[i];
    return res;
  }
  const int64_t n2 = PairwiseSplit(n);
  return PairwiseSum(p, n2) + PairwiseSum(p + n2, n - n2);
}

// The leaves [offset, length) of the pairwise tree cut at kLeafSize.
void CollectLeaves(int64_t offset, int64_t n, std::vector<std::pair<int64_t, int64_t>>& leaves) {
  if (n <= kLeafSize) {
    leaves.emplace_back(offset, n);
    return;
  }
  const int64_t n2 = PairwiseSplit(n);
  CollectLeaves(offset, n2, leaves);
  CollectLeaves(offset + n2, n - n2, leaves);
}

// Recombines leaf sums in the tree's order: the same bits as PairwiseSum.
template <typename T>
T CombineLeaves(int64_t n, const T*& sums) {
  if (n <= kLeafSize) return *sums++;
  const int64_t n2 = PairwiseSplit(n);
  const T left = CombineLeaves<T>(n2, sums);
  return left + CombineLeaves<T>(n - n2, sums);
}

// PairwiseSum with its upper levels spread over the pool.
template <typename T>
T ParallelPairwiseSum(ThreadPool* pool, const T* p, int64_t n) {
  if (n <= kLeafSize) return PairwiseSum(p, n);
  std::vector<std::pair<int64_t, int64_t>> leaves;
  CollectLeaves(0, n, leaves);
  std::vector<T> sums(leaves.size());
  ParallelFor(pool, static_cast<int64_t>(leaves.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      sums[i] = PairwiseSum(p + leaves[i].first, leaves[i].second);
    }
  });
  const T* cursor = sums.data();
  return CombineLeaves<T>(n, cursor);
}

// An integer or bool element as the uint64 a wrapping sum adds: a bool
// byte counts 1 for any nonzero value.
template <typename T>
uint64_t AsWrapping(T x) {
  if constexpr (kIsBoolStorage<T>) {
    return x != 0 ? 1 : 0;
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(x));
  }
}

// Integer sums wrap, so any order gives the same answer.
template <typename T>
uint64_t IntegerSum(const T* p, int64_t n) {
  uint64_t s = 0;
  for (int64_t i = 0; i < n; ++i) {
    s += AsWrapping(p[i]);
  }
  return s;
}

template <typename T>
uint64_t ParallelIntegerSum(ThreadPool* pool, const T* p, int64_t n) {
  const int64_t blocks = (n + kLeafSize - 1) / kLeafSize;
  if (blocks <= 1) return IntegerSum(p, n);
  std::vector<uint64_t> sums(blocks);
  ParallelFor(pool, blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t lo = b * kLeafSize;
      sums[b] = IntegerSum(p + lo, std::min(kLeafSize, n - lo));
    }
  });
  uint64_t s = 0;
  for (uint64_t v : sums) s += v;
  return s;
}

// res[0, w) = sum over `len` rows (row r at p + r * stride) of columns
// [0, w): pairwise over rows, so a long axis keeps the error of a short one.
template <typename Acc, typename T>
void PairwiseRows(const T* p, int64_t len, int64_t stride, int64_t w, Acc* res) {
  if (len <= kRowBlock) {
    std::fill(res, res + w, Acc{0});
    for (int64_t r = 0; r < len; ++r) {
      const T* row = p + r * stride;
      for (int64_t j = 0; j < w; ++j) {
        if constexpr (std::is_floating_point_v<Acc>) {
          res[j] += row[j];
        } else {
          res[j] += static_cast<Acc>(AsWrapping(row[j]));
        }
      }
    }
    return;
  }
  const int64_t n2 = PairwiseSplit(len);
  Acc right[kTile];
  PairwiseRows(p, n2, stride, w, res);
  PairwiseRows(p + n2 * stride, len - n2, stride, w, right);
  for (int64_t j = 0; j < w; ++j) res[j] += right[j];
}

// a viewed as (outer, len, inner), out as (outer, inner).
template <typename T>
void SumTyped(ThreadPool* pool, const T* a, int64_t outer, int64_t len, int64_t inner,
              void* out_data) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  using Out = std::conditional_t<kFloat, T, int64_t>;
  using Acc = std::conditional_t<kFloat, T, uint64_t>;
  Out* out = static_cast<Out*>(out_data);
  if (inner == 1) {
    auto row_sum = [&](ThreadPool* p, const T* row) -> Out {
      if constexpr (kFloat) {
        return ParallelPairwiseSum(p, row, len);
      } else {
        return static_cast<Out>(ParallelIntegerSum(p, row, len));
      }
    };
    if (len >= kLeafSize * 2 || outer == 1) {
      for (int64_t o = 0; o < outer; ++o) out[o] = row_sum(pool, a + o * len);
    } else {
      const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(len, 1));
      ParallelFor(pool, outer, grain, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) out[o] = row_sum(nullptr, a + o * len);
      });
    }
    return;
  }
  // Column tiles of each outer slice, spread over the pool.
  const int64_t tiles = (inner + kTile - 1) / kTile;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(len * kTile, 1));
  ParallelFor(pool, outer * tiles, grain, [&](int64_t begin, int64_t end) {
    Acc acc[kTile];
    for (int64_t t = begin; t < end; ++t) {
      const int64_t o = t / tiles;
      const int64_t j0 = (t % tiles) * kTile;
      const int64_t w = std::min(kTile, inner - j0);
      PairwiseRows<Acc>(a + o * len * inner + j0, len, inner, w, acc);
      for (int64_t j = 0; j < w; ++j) {
        out[o * inner + j0 + j] = static_cast<Out>(acc[j]);
      }
    }
  });
}

}  // namespace

float PairwiseSumFloat(const float* p, int64_t n) { return PairwiseSum(p, n); }
double PairwiseSumDouble(const double* p, int64_t n) { return PairwiseSum(p, n); }

absl::Status Sum(ThreadPool* pool, const ConstView& a, std::optional<int> axis,
                 const MutView& out) {
  if (out.dtype != SumResultType(a.dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("sum of ", NameOf(a.dtype), " gives ",
                                                   NameOf(SumResultType(a.dtype)), ", not ",
                                                   NameOf(out.dtype)));
  }
  const int rank = static_cast<int>(a.shape.size());
  Shape expected;
  int64_t outer = 1, len = a.size(), inner = 1;
  if (axis.has_value()) {
    int ax = *axis;
    if (ax < -rank || ax >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("axis ", ax, " is out of bounds for shape ", ShapeString(a.shape)));
    }
    if (ax < 0) ax += rank;
    for (int d = 0; d < rank; ++d) {
      if (d < ax) outer *= a.shape[d];
      if (d > ax) inner *= a.shape[d];
      if (d != ax) expected.push_back(a.shape[d]);
    }
    len = a.shape[ax];
  }
  if (!std::equal(expected.begin(), expected.end(), out.shape.begin(), out.shape.end())) {
    return absl::InvalidArgumentError(absl::StrCat("sum of ", ShapeString(a.shape), " gives ",
                                                   ShapeString(expected), ", not ",
                                                   ShapeString(out.shape)));
  }
  if (outer == 0 || inner == 0) return absl::OkStatus();  // empty output
  if (IsHalf(a.dtype)) {
    // Summed as float32 (NumPy's float16 pairwise sum accumulates in
    // float32), rounded back once.
    std::vector<float> wide(a.size()), r(out.size());
    const MutView wide_view{wide.data(), DType::kFloat32, a.shape};
    const MutView r_view{r.data(), DType::kFloat32, out.shape};
    if (absl::Status s = Cast(pool, a, wide_view); !s.ok()) return s;
    if (absl::Status s = Sum(pool, wide_view.as_const(), axis, r_view); !s.ok()) return s;
    return Cast(pool, r_view.as_const(), out);
  }
  return DispatchDType(a.dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!kIsHalfStorage<T>) {  // halves were widened above
      SumTyped<T>(pool, static_cast<const T*>(a.data), outer, len, inner, out.data);
    }
    return absl::OkStatus();
  });
}

}  // namespace resident::cpu

// cpu::ReduceAxes against NumPy: every reduction x dtype x axis set x
// keepdims on a (2,3,4) array, cases in reduce_axes_cases.inc written by
// reduce_axes_cases.py (NumPy 2.x). Integer and bool results must be exact;
// floats within 4 ulps of the result type (n <= 24, so the pairwise sum's
// bound of log2(n) ulps; these inputs are multiples of 0.5 and mostly exact).
#include "kernels/cpu/reduce_axes.h"

#include "core/elementwise_expr.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace resident::cpu {
namespace {

using K = ReduceKind;

struct Case {
  DType in;
  K kind;
  bool has_axes;
  std::vector<int> axes;
  bool keepdims;
  DType out;
  std::vector<int64_t> shape;
  std::vector<double> values;
  std::vector<uint64_t> exact;  // integer and bool results: the exact bits
};

const Case kCases[] = {
#include "tests/unit/reduce_axes_cases.inc"
};

// The same inputs as reduce_axes_cases.py, as bytes of each dtype.
std::vector<unsigned char> Input(DType dt) {
  std::vector<unsigned char> bytes(24 * ItemSize(dt));
  for (int i = 0; i < 24; ++i) {
    const double v = i * 0.5 - 3.0;
    (void)DispatchDType(dt, [&](auto zero) {
      using T = decltype(zero);
      T t;
      if constexpr (kIsBoolStorage<T>) {
        t = (i % 3 == 0) ? 1 : 0;
      } else if constexpr (std::is_integral_v<T>) {
        t = resident_float_to_int<T>(v);  // NumPy's astype (negatives wrap for unsigned)
      } else {
        t = static_cast<T>(v);
      }
      reinterpret_cast<T*>(bytes.data())[i] = t;
      return absl::OkStatus();
    });
  }
  return bytes;
}

TEST(ReduceAxes, MatchesNumPy) {
  ThreadPool pool(2);
  const std::vector<int64_t> shape = {2, 3, 4};
  int n = 0;
  for (const Case& c : kCases) {
    SCOPED_TRACE(testing::Message() << "case " << n++ << " dtype " << DTypeName(c.in) << " kind "
                                    << static_cast<int>(c.kind) << " keepdims " << c.keepdims);
    ASSERT_EQ(ReduceResultType(c.kind, c.in), c.out);
    const auto in = Input(c.in);
    std::vector<unsigned char> out(std::max<size_t>(1, c.values.size()) * ItemSize(c.out));
    std::optional<std::vector<int>> axes;
    if (c.has_axes) axes = c.axes;
    ASSERT_TRUE(ReduceAxes(&pool, c.kind, {in.data(), c.in, shape}, axes, c.keepdims,
                           {out.data(), c.out, c.shape})
                    .ok());
    ASSERT_TRUE(DispatchDType(c.out, [&](auto zero) {
                  using T = decltype(zero);
                  const T* got = reinterpret_cast<const T*>(out.data());
                  for (size_t i = 0; i < c.values.size(); ++i) {
                    if constexpr (kIsHalfStorage<T>) {
                      // Rounded once from float32: within one of the dtype's ULPs.
                      const double eps = std::is_same_v<T, Float16> ? 0x1p-10 : 0x1p-7;
                      const double tol = eps * std::max(1.0, std::fabs(c.values[i]));
                      EXPECT_NEAR(resident_load(got[i]), c.values[i], tol) << i;
                    } else if constexpr (std::is_floating_point_v<T>) {
                      const double tol = 4 * std::numeric_limits<T>::epsilon() *
                                         std::max(1.0, std::fabs(c.values[i]));
                      EXPECT_NEAR(got[i], c.values[i], tol) << i;
                    } else {
                      EXPECT_EQ(static_cast<double>(got[i]), c.values[i]) << i;
                      EXPECT_EQ(c.exact.size(), c.values.size());
                      if (i < c.exact.size()) {
                        const uint64_t bits =
                            kIsBoolStorage<T> ? uint64_t{got[i] != 0}
                                              : static_cast<uint64_t>(static_cast<int64_t>(got[i]));
                        EXPECT_EQ(bits, c.exact[i]) << i;
                      }
                    }
                  }
                  return absl::OkStatus();
                }).ok());
  }
  EXPECT_EQ(n, 1166);
}

TEST(ReduceAxes, NanPropagatesThroughMaxMinAndArgmax) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> a = {1.0, nan, 3.0, nan};
  const std::vector<int64_t> shape = {4}, scalar = {};
  double m = 0;
  ASSERT_TRUE(ReduceAxes(nullptr, K::kMax, {a.data(), DType::kFloat64, shape}, std::nullopt, false,
                         {&m, DType::kFloat64, scalar})
                  .ok());
  EXPECT_TRUE(std::isnan(m));
  ASSERT_TRUE(ReduceAxes(nullptr, K::kMin, {a.data(), DType::kFloat64, shape}, std::nullopt, false,
                         {&m, DType::kFloat64, scalar})
                  .ok());
  EXPECT_TRUE(std::isnan(m));
  int64_t idx = -1;
  ASSERT_TRUE(ReduceAxes(nullptr, K::kArgmax, {a.data(), DType::kFloat64, shape}, std::nullopt,
                         false, {&idx, DType::kInt64, scalar})
                  .ok());
  EXPECT_EQ(idx, 1);  // np.argmax([1, nan, 3, nan]) == 1
}

TEST(ReduceAxes, Errors) {
  const std::vector<double> a(6, 1.0);
  const std::vector<int64_t> shape = {2, 3}, empty = {0, 3}, three = {3}, two = {2};
  double out[3];
  auto run = [&](K k, absl::Span<const int64_t> s, const std::optional<std::vector<int>>& axes,
                 absl::Span<const int64_t> os, DType odt = DType::kFloat64) {
    return ReduceAxes(nullptr, k, {a.data(), DType::kFloat64, s}, axes, false, {out, odt, os})
        .code();
  };
  const auto kBad = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(run(K::kMax, empty, std::vector<int>{0}, three), kBad);  // np raises ValueError
  EXPECT_EQ(run(K::kArgmin, empty, std::vector<int>{0}, three, DType::kInt64), kBad);
  EXPECT_EQ(run(K::kMax, empty, std::vector<int>{1}, {0}), absl::StatusCode::kOk);  // empty out
  EXPECT_EQ(run(K::kSum, shape, std::vector<int>{2}, three), kBad);                 // out of bounds
  EXPECT_EQ(run(K::kSum, shape, std::vector<int>{-3}, three), kBad);                // out of bounds
  EXPECT_EQ(run(K::kSum, shape, std::vector<int>{1, -1}, two), kBad);               // duplicate
  EXPECT_EQ(run(K::kArgmax, shape, std::vector<int>{0, 1}, {}, DType::kInt64), kBad);
  EXPECT_EQ(run(K::kSum, shape, std::vector<int>{0}, two), kBad);    // wrong out shape
  EXPECT_EQ(run(K::kAny, shape, std::vector<int>{0}, three), kBad);  // any gives bool
  double mean = 0;
  ASSERT_EQ(ReduceAxes(nullptr, K::kMean, {a.data(), DType::kFloat64, empty}, std::nullopt, false,
                       {&mean, DType::kFloat64, {}})
                .code(),
            absl::StatusCode::kOk);
  EXPECT_TRUE(std::isnan(mean));  // np.mean of nothing is nan
}

namespace long_cases {
#include "tests/unit/reduce_axes_long_cases.inc"
}  // namespace long_cases

// A (3,5,1000) float32 array: reductions over the innermost axes match
// NumPy's pairwise sum bit for bit, on one thread or many; axis 0 (not a
// contiguous run) within NumPy's pairwise bound.
TEST(ReduceAxes, LongFloatSumsMatchNumPyBits) {
  const std::vector<int64_t> shape = {3, 5, 1000};
  std::vector<float> a(15000);
  for (int64_t i = 0; i < 15000; ++i) {
    a[i] = static_cast<float>((i * 7919) % 10007) / 7.0f - 700.0f;
  }
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    auto reduce = [&](K k, const std::optional<std::vector<int>>& axes,
                      const std::vector<int64_t>& out_shape) {
      std::vector<float> out(std::max<int64_t>(1, NumElements(out_shape)));
      EXPECT_TRUE(ReduceAxes(&pool, k, {a.data(), DType::kFloat32, shape}, axes, false,
                             {out.data(), DType::kFloat32, out_shape})
                      .ok());
      return std::vector<double>(out.begin(), out.end());
    };
    EXPECT_EQ(reduce(K::kSum, std::vector<int>{-1}, {3, 5}), long_cases::kSumLast);
    EXPECT_EQ(reduce(K::kSum, std::vector<int>{1, 2}, {3}), long_cases::kSumInner2);
    EXPECT_EQ(reduce(K::kSum, std::nullopt, {}), long_cases::kSumAll);
    EXPECT_EQ(reduce(K::kMean, std::vector<int>{2}, {3, 5}), long_cases::kMeanLast);
    const auto axis0 = reduce(K::kSum, std::vector<int>{0}, {5, 1000});
    ASSERT_EQ(long_cases::kSumAxis0.size(), 40u);  // NumPy's [:, :8]
    for (int r = 0; r < 5; ++r) {
      for (int c = 0; c < 8; ++c) {
        // 3 terms of magnitude <= 730: 2 roundings of at most half an ulp of 2190.
        EXPECT_NEAR(axis0[r * 1000 + c], long_cases::kSumAxis0[r * 8 + c], 2 * 2190 * 6e-8);
      }
    }
  }
}

}  // namespace
}  // namespace resident::cpu

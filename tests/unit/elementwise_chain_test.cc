// kernels/cpu ElementwiseChain (a whole one-op loop, each element's chain in
// registers) equals the same op applied `trips` times by Elementwise, bit for
// bit, for every side, chunk remainder and thread split.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/elementwise.h"

namespace resident::cpu {
namespace {

template <typename T>
std::vector<T> Reference(ThreadPool* pool, ElementwiseKind kind, DType dt, ChainSide side,
                         std::vector<T> x, const std::vector<T>& c, bool c_one, int64_t trips) {
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t shape[1] = {n};
  const int64_t one[1] = {1};
  for (int64_t t = 0; t < trips; ++t) {
    std::vector<T> out(x.size());
    const ConstView vx{x.data(), dt, shape};
    const ConstView vc{c.data(), dt, c_one ? absl::Span<const int64_t>(one) : shape};
    const ConstView in[2] = {side == ChainSide::kSecond ? vc : vx,
                             side == ChainSide::kFirst ? vc : vx};
    EXPECT_TRUE(Elementwise(pool, kind, in, MutView{out.data(), dt, shape}).ok());
    x = out;
  }
  return x;
}

TEST(ElementwiseChainTest, EqualsTheOpAppliedTripsTimes) {
  ThreadPool pool(2);
  std::mt19937 rng(7);
  for (int64_t n : {1, 3, 15, 63, 64, 65, 127, 200, 4099}) {
    for (int rep = 0; rep < 3; ++rep) {
      for (ChainSide side : {ChainSide::kBoth, ChainSide::kFirst, ChainSide::kSecond}) {
        for (bool c_one : {false, true}) {
          for (ElementwiseKind kind :
               {ElementwiseKind::kAdd, ElementwiseKind::kMultiply, ElementwiseKind::kSubtract}) {
            std::vector<int64_t> x(n), c(c_one ? 1 : n);
            for (auto& v : x) v = static_cast<int64_t>(rng() % 1000);
            for (auto& v : c) v = 1 + static_cast<int64_t>(rng() % 7);
            // Trip counts around unroll and vector widths (GCC 12 once ran a
            // tail loop's 20 trips as 4).
            static constexpr int64_t kTrips[] = {1, 2, 3, 4, 7, 8, 15, 16, 17, 20, 33, 64};
            const int64_t trips = kTrips[rng() % 12];
            std::vector<int64_t> got(n);
            for (ThreadPool* p : {&pool, static_cast<ThreadPool*>(nullptr)}) {
              ASSERT_TRUE(ElementwiseChain(p, kind, DType::kInt64, side, x.data(), c.data(), c_one,
                                           got.data(), n, trips)
                              .ok());
              const std::vector<int64_t> want =
                  Reference(&pool, kind, DType::kInt64, side, x, c, c_one, trips);
              ASSERT_EQ(got, want) << "n " << n << " side " << static_cast<int>(side) << " one "
                                   << c_one << " trips " << trips;
            }
            // In place, as fused loops run it; float64 too.
            std::vector<double> xf(n), cf(c.size());
            for (int64_t i = 0; i < n; ++i) xf[i] = 0.5 + static_cast<double>(x[i]) / 7;
            for (size_t i = 0; i < c.size(); ++i) cf[i] = 1.0 + static_cast<double>(c[i]) / 3;
            const std::vector<double> want =
                Reference(&pool, kind, DType::kFloat64, side, xf, cf, c_one, trips);
            ASSERT_TRUE(ElementwiseChain(&pool, kind, DType::kFloat64, side, xf.data(), cf.data(),
                                         c_one, xf.data(), n, trips)
                            .ok());
            ASSERT_EQ(std::memcmp(xf.data(), want.data(), n * sizeof(double)), 0) << n;
          }
        }
      }
    }
  }
}

TEST(ElementwiseChainTest, RefusesUnaryKindsAndDtypesTheRuleRefuses) {
  double x[4] = {1, 2, 3, 4};
  EXPECT_FALSE(ElementwiseChain(nullptr, ElementwiseKind::kNegative, DType::kFloat64,
                                ChainSide::kBoth, x, nullptr, false, x, 4, 3)
                   .ok());
  uint8_t b[4] = {1, 0, 1, 0};
  EXPECT_FALSE(ElementwiseChain(nullptr, ElementwiseKind::kSubtract, DType::kBool, ChainSide::kBoth,
                                b, nullptr, false, b, 4, 3)
                   .ok());
}

}  // namespace
}  // namespace resident::cpu

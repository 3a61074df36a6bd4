// cpu::Slice and NormalizeSlice against NumPy: cases printed by
// slice_cases.py (NumPy 2.x; Python's slice.indices for the int64 edges).
#include "kernels/cpu/slice.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace resident::cpu {
namespace {

struct Case {
  std::vector<SliceSpec> specs;
  std::vector<int64_t> shape;
  std::vector<int64_t> values;
};

const Case kCases[] = {
    {{{std::nullopt, std::nullopt, -1}},
     {3, 4, 5},
     {40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,
      20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39,
      0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19}},
    {{{1, std::nullopt, 1}, {std::nullopt, std::nullopt, -2}},
     {2, 2, 5},
     {35, 36, 37, 38, 39, 25, 26, 27, 28, 29, 55, 56, 57, 58, 59, 45, 46, 47, 48, 49}},
    {{{std::nullopt, std::nullopt, 1}, {3, 0, -1}, {std::nullopt, std::nullopt, 2}},
     {3, 3, 3},
     {15, 17, 19, 10, 12, 14, 5,  7,  9,  35, 37, 39, 30, 32,
      34, 25, 27, 29, 55, 57, 59, 50, 52, 54, 45, 47, 49}},
    {{{-100, 100, 3}}, {1, 4, 5}, {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,
                                   10, 11, 12, 13, 14, 15, 16, 17, 18, 19}},
    {{{5, 1, 1}}, {0, 4, 5}, {}},
    {{{std::nullopt, std::nullopt, -1},
      {std::nullopt, std::nullopt, -1},
      {std::nullopt, std::nullopt, -1}},
     {3, 4, 5},
     {59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40,
      39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20,
      19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9,  8,  7,  6,  5,  4,  3,  2,  1,  0}},
    {{{2, -5, -1}, {-1, std::nullopt, -3}, {1, 4, 2}},
     {3, 2, 2},
     {56, 58, 41, 43, 36, 38, 21, 23, 16, 18, 1, 3}},
};

TEST(Slice, MatchesNumPy) {
  std::vector<int64_t> a(60);
  for (int i = 0; i < 60; ++i) a[i] = i;
  const std::vector<int64_t> shape = {3, 4, 5};
  ThreadPool pool(2);
  for (const Case& c : kCases) {
    std::vector<int64_t> out(c.values.size());
    ASSERT_TRUE(Slice(&pool, {a.data(), DType::kInt64, shape}, c.specs,
                      {out.data(), DType::kInt64, c.shape})
                    .ok());
    EXPECT_EQ(out, c.values);
  }
}

TEST(Slice, NormalizeMatchesSliceIndices) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  struct Edge {
    SliceSpec s;
    int64_t dim, first, step, length;
  };
  const Edge edges[] = {{{std::nullopt, std::nullopt, -1}, 0, -1, -1, 0},
                        {{kMin, kMax, 1}, 7, 0, 1, 7},
                        {{kMax, kMin, -3}, 7, 6, -3, 3},
                        {{3, 3, 1}, 7, 3, 1, 0},
                        {{10, std::nullopt, -4}, 7, 6, -4, 2},
                        // CPython's PySlice_Unpack clamps a step of -2**63 to
                        // -(2**63 - 1); either way range(6, -1, step) has 1 element.
                        {{std::nullopt, std::nullopt, kMin}, 7, 6, -kMax, 1}};
  for (const Edge& e : edges) {
    auto n = NormalizeSlice(e.s, e.dim);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(n->length, e.length);
    if (e.length > 0) {
      EXPECT_EQ(n->first, e.first);
    }
    EXPECT_EQ(n->step, e.step);
  }
}

TEST(Slice, Errors) {
  std::vector<int64_t> a(6);
  std::vector<int64_t> out(6);
  const std::vector<int64_t> shape = {2, 3};
  const auto bad = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(Slice(nullptr, {a.data(), DType::kInt64, shape}, {{std::nullopt, std::nullopt, 0}},
                  {out.data(), DType::kInt64, shape})
                .code(),
            bad);  // step 0
  EXPECT_EQ(Slice(nullptr, {a.data(), DType::kInt64, shape}, {{}, {}, {}},
                  {out.data(), DType::kInt64, shape})
                .code(),
            bad);  // too many indices
  EXPECT_EQ(Slice(nullptr, {a.data(), DType::kInt64, shape}, {{1, std::nullopt, 1}},
                  {out.data(), DType::kInt64, shape})
                .code(),
            bad);  // wrong out shape
}

}  // namespace
}  // namespace resident::cpu

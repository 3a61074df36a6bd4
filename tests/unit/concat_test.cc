// cpu::Concatenate, ConcatShape and StackShape against NumPy (literals from
// NumPy 2.x: a = arange(6).reshape(2,3), b = arange(100,104).reshape(2,2),
// c = arange(200,206).reshape(2,3)).
#include "kernels/cpu/concat.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace resident::cpu {
namespace {

const std::vector<int64_t> kA = {0, 1, 2, 3, 4, 5}, kB = {100, 101, 102, 103},
                           kC = {200, 201, 202, 203, 204, 205};
const std::vector<int64_t> k23 = {2, 3}, k22 = {2, 2};

TEST(Concatenate, MatchesNumPy) {
  ThreadPool pool(2);
  std::vector<int64_t> out(10);
  const std::vector<int64_t> s25 = {2, 5};
  const ConstView ab[] = {{kA.data(), DType::kInt64, k23}, {kB.data(), DType::kInt64, k22}};
  ASSERT_TRUE(Concatenate(&pool, ab, 1, {out.data(), DType::kInt64, s25}).ok());
  EXPECT_EQ(out, (std::vector<int64_t>{0, 1, 2, 100, 101, 3, 4, 5, 102, 103}));

  std::vector<int64_t> out2(12);
  const std::vector<int64_t> s43 = {4, 3};
  const ConstView ac[] = {{kA.data(), DType::kInt64, k23}, {kC.data(), DType::kInt64, k23}};
  ASSERT_TRUE(Concatenate(&pool, ac, -2, {out2.data(), DType::kInt64, s43}).ok());
  EXPECT_EQ(out2, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 200, 201, 202, 203, 204, 205}));

  // np.stack([a, c], axis=1): concatenate of (2,1,3) views along axis 1.
  ASSERT_EQ(*StackShape({Shape(k23), Shape(k23)}, 1), (Shape{2, 2, 3}));
  const std::vector<int64_t> s213 = {2, 1, 3}, s223 = {2, 2, 3};
  const ConstView st[] = {{kA.data(), DType::kInt64, s213}, {kC.data(), DType::kInt64, s213}};
  ASSERT_TRUE(Concatenate(&pool, st, 1, {out2.data(), DType::kInt64, s223}).ok());
  EXPECT_EQ(out2, (std::vector<int64_t>{0, 1, 2, 200, 201, 202, 3, 4, 5, 203, 204, 205}));
}

TEST(Concatenate, ShapeErrors) {
  const auto bad = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(ConcatShape({}, 0).status().code(), bad);
  EXPECT_EQ(ConcatShape({Shape{}, Shape{}}, 0).status().code(), bad);           // 0-d
  EXPECT_EQ(ConcatShape({Shape{2, 3}, Shape{2, 2}}, 0).status().code(), bad);   // dim 1 differs
  EXPECT_EQ(ConcatShape({Shape{2, 3}, Shape{3}}, 0).status().code(), bad);      // ranks differ
  EXPECT_EQ(ConcatShape({Shape{2, 3}, Shape{2, 3}}, 2).status().code(), bad);   // axis
  EXPECT_EQ(ConcatShape({Shape{2, 3}, Shape{2, 3}}, -3).status().code(), bad);  // axis
  const int64_t big = std::numeric_limits<int64_t>::max() / 2 + 1;
  EXPECT_EQ(ConcatShape({Shape{big}, Shape{big}}, 0).status().code(), bad);      // length overflow
  EXPECT_EQ(ConcatShape({Shape{big, 2}, Shape{1, 2}}, 0).status().code(), bad);  // count overflow
  EXPECT_EQ(StackShape({Shape{2}, Shape{3}}, 0).status().code(), bad);
  EXPECT_EQ(StackShape({Shape{2}}, 2).status().code(), bad);
  EXPECT_EQ(*StackShape({Shape{2}}, -2), (Shape{1, 2}));
  std::vector<int32_t> i32(6);
  std::vector<int64_t> out(12);
  const std::vector<int64_t> s43 = {4, 3};
  const ConstView mixed[] = {{kA.data(), DType::kInt64, k23}, {i32.data(), DType::kInt32, k23}};
  EXPECT_EQ(Concatenate(nullptr, mixed, 0, {out.data(), DType::kInt64, s43}).code(), bad);
}

}  // namespace
}  // namespace resident::cpu

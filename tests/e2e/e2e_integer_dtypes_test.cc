// The integer dtypes (int8, int16, uint8, uint16, uint32, uint64) through the
// C++ client against a real server in-process: upload, compute, download.
// Expected values are NumPy 2.4's, computed outside this code and pasted as
// literals; the NumPy expression is named beside each (u8 =
// np.array([250, 3, 0], np.uint8), i8 = np.array([-128, 127, 5], np.int8),
// u64 = np.array([2**63 + 5, 1], np.uint64)).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "client/client.h"
#include "e2e_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace resident::e2e {
namespace {

using ::testing::HasSubstr;

class IntegerDtypesTest : public SharedServerTest<IntegerDtypesTest> {
 protected:
  void SetUp() override {
    SharedServerTest::SetUp();
    if (c_ == nullptr) return;
    u8_ = UploadAs(*c_, DType::kUint8, {3}, {250, 3, 0});
    i8_ = UploadAs(*c_, DType::kInt8, {3}, {-128, 127, 5});
  }

  Array u8_, i8_;
};

TEST_F(IntegerDtypesTest, RoundTripKeepsEveryBit) {
  const std::vector<uint64_t> big = {(uint64_t{1} << 63) + 5, 1, ~uint64_t{0}};
  absl::StatusOr<Array> a = c_->Upload<uint64_t>({3}, big);
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<std::vector<uint64_t>> back = a->ToVector<uint64_t>();
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, big);
  const std::vector<int16_t> h = {-32768, 32767, -1};
  absl::StatusOr<Array> b = c_->Upload<int16_t>({3}, h);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*b->ToVector<int16_t>(), h);
  EXPECT_EQ(*b->dtype(), DType::kInt16);
}

TEST_F(IntegerDtypesTest, ArithmeticAndPromotionAsNumpy) {
  using client::astype;
  ExpectArray(u8_ + 10, DType::kUint8, {3}, {4, 13, 10}, "u8 + 10 (wraps)");
  ExpectArray(i8_ + u8_, DType::kInt16, {3}, {122, 130, 5}, "i8 + u8");
  ExpectArray(i8_ * 2, DType::kInt8, {3}, {0, -2, 10}, "i8 * 2");
  ExpectArray(-i8_, DType::kInt8, {3}, {-128, -127, -5}, "-i8");
  ExpectArray(client::floor_divide(u8_, 0), DType::kUint8, {3}, {0, 0, 0}, "u8 // 0");
  ExpectArray(u8_ % 0, DType::kUint8, {3}, {0, 0, 0}, "u8 % 0");
  ExpectArray(client::power(i8_, 2), DType::kInt8, {3}, {0, 1, 25}, "i8 ** 2");
  ExpectArray(astype(i8_, DType::kUint32), DType::kUint32, {3}, {4294967168.0, 127, 5},
              "i8.astype(uint32)");
  ExpectArray(client::sqrt(astype(u8_, DType::kUint16)), DType::kFloat32, {3},
              {15.81138801574707, 1.7320507764816284, 0}, "np.sqrt(u8.astype(uint16))");
  Array u64 = UploadAs(*c_, DType::kUint64, {2}, {9223372036854775813.0, 1});
  Array i64 = UploadAs(*c_, DType::kInt64, {2}, {1, -1});
  ExpectArray(u64 + i64, DType::kFloat64, {2}, {9223372036854775808.0, 0}, "u64 + i64");
  ExpectArray(client::where(client::greater(u8_, 100), u8_, 300), DType::kUint8, {3}, {250, 44, 44},
              "np.where(u8 > 100, u8, 300) (wraps)");
  ExpectArray(client::clip(u8_, -5, 100), DType::kUint8, {3}, {100, 3, 0}, "np.clip(u8, -5, 100)");
  ExpectArray(client::less(u64, -1), DType::kBool, {2}, {0, 0}, "u64 < -1");
  ExpectArray(client::greater(u64, -1), DType::kBool, {2}, {1, 1}, "u64 > -1");
}

TEST_F(IntegerDtypesTest, ReductionsAndDotAsNumpy) {
  ExpectArray(client::sum(u8_), DType::kUint64, {}, {253}, "u8.sum()");
  ExpectArray(client::sum(i8_), DType::kInt64, {}, {4}, "i8.sum()");
  ExpectArray(client::prod(u8_), DType::kUint64, {}, {0}, "u8.prod()");
  ExpectArray(client::max(u8_), DType::kUint8, {}, {250}, "u8.max()");
  ExpectArray(client::mean(i8_), DType::kFloat64, {}, {1.3333333333333333}, "i8.mean()");
  ExpectArray(client::dot(u8_, u8_), DType::kUint8, {}, {45}, "np.dot(u8, u8) (wraps)");
}

TEST_F(IntegerDtypesTest, ScalarsOutOfRangeAreErrors) {
  // NumPy: OverflowError: Python integer 300 out of bounds for uint8
  absl::Status s = (u8_ + 300).Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("Python integer 300 out of bounds for uint8"));
  s = (u8_ - 1 + (-1)).Evaluate();
  EXPECT_THAT(std::string(s.message()), HasSubstr("Python integer -1 out of bounds for uint8"));
  // sqrt of int8 is float16 in NumPy: np.sqrt(i8).
  ExpectArray(client::sqrt(i8_), DType::kFloat16, {3},
              {std::numeric_limits<double>::quiet_NaN(), 11.265625, 2.236328125}, "np.sqrt(i8)");
  // The server still serves.
  ExpectArray(u8_ + 1, DType::kUint8, {3}, {251, 4, 1});
}

}  // namespace
}  // namespace resident::e2e

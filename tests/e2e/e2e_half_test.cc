// float16 and bfloat16 through the C++ client against a real server
// in-process: upload, elementwise, matmul, reductions, download. Expected
// values are NumPy 2.4's (and ml_dtypes 0.7's for bfloat16), computed outside
// this code and pasted as literals; the NumPy expression is named beside
// each (a = np.array([1, 0.1, 65504, -2.5, 1e-7, np.inf], np.float16),
// b = np.array([2049, 0.2, 1, 3, 1e-7, -np.inf], np.float16),
// x = np.array([1, 3.14159, -0.5, 256.5], bfloat16),
// y = np.array([1/3, 2, 0.1, 1], bfloat16)).
#include <cstdint>
#include <limits>
#include <vector>

#include "client/client.h"
#include "e2e_fixture.h"
#include "gtest/gtest.h"

namespace resident::e2e {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class HalfDtypesTest : public SharedServerTest<HalfDtypesTest> {
 protected:
  void SetUp() override {
    SharedServerTest::SetUp();
    if (c_ == nullptr) return;
    a_ = UploadAs(*c_, DType::kFloat16, {6}, {1, 0.1, 65504, -2.5, 1e-7, kInf});
    b_ = UploadAs(*c_, DType::kFloat16, {6}, {2049, 0.2, 1, 3, 1e-7, -kInf});
    x_ = UploadAs(*c_, DType::kBFloat16, {4}, {1, 3.14159, -0.5, 256.5});
    y_ = UploadAs(*c_, DType::kBFloat16, {4}, {1.0 / 3, 2, 0.1, 1});
  }

  Array a_, b_, x_, y_;
};

TEST_F(HalfDtypesTest, UploadRoundsOnceAndRoundTripsEveryBit) {
  ExpectArray(a_, DType::kFloat16, {6},
              {1, 0.0999755859375, 65504, -2.5, 1.1920928955078125e-07, kInf}, "a");
  ExpectArray(b_, DType::kFloat16, {6}, {2048, 0.199951171875, 1, 3, 1.1920928955078125e-07, -kInf},
              "b (2049 ties to even)");
  ExpectArray(x_, DType::kBFloat16, {4}, {1, 3.140625, -0.5, 256}, "x");
  std::vector<Float16> bits;
  for (uint32_t u = 0; u < 65536; u += 7) bits.push_back(Float16{static_cast<uint16_t>(u)});
  absl::StatusOr<Array> h = c_->Upload<Float16>({static_cast<int64_t>(bits.size())}, bits);
  ASSERT_TRUE(h.ok()) << h.status();
  absl::StatusOr<std::vector<Float16>> back = h->ToVector<Float16>();
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), bits.size());
  for (size_t i = 0; i < bits.size(); ++i) EXPECT_EQ((*back)[i].bits, bits[i].bits) << i;
  EXPECT_EQ(*h->dtype(), DType::kFloat16);
  const std::vector<BFloat16> bf = {BFloat16{0x7fc1}, BFloat16{0x8001}, BFloat16{0x3f80}};
  absl::StatusOr<Array> g = c_->Upload<BFloat16>({3}, bf);
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::vector<BFloat16>> gb = g->ToVector<BFloat16>();
  ASSERT_TRUE(gb.ok()) << gb.status();
  EXPECT_EQ((*gb)[0].bits, 0x7fc1);
  EXPECT_EQ((*gb)[1].bits, 0x8001);
}

TEST_F(HalfDtypesTest, ElementwiseIsNumpysBitForBit) {
  ExpectArray(a_ + b_, DType::kFloat16, {6},
              {2048, 0.2998046875, 65504, 0.5, 2.384185791015625e-07, kNaN}, "a + b");
  ExpectArray(a_ * b_, DType::kFloat16, {6}, {2048, 0.019989013671875, 65504, -7.5, 0, -kInf},
              "a * b");
  ExpectArray(a_ / b_, DType::kFloat16, {6}, {0.00048828125, 0.5, 65504, -0.83349609375, 1, kNaN},
              "a / b");
  ExpectArray(a_ + 1, DType::kFloat16, {6}, {2, 1.099609375, 65504, -1.5, 1, kInf},
              "a + 1 (NEP 50: stays float16)");
  ExpectArray(x_ * y_, DType::kBFloat16, {4}, {0.333984375, 6.28125, -0.050048828125, 256},
              "x * y");
  ExpectArray(x_ + y_, DType::kBFloat16, {4}, {1.3359375, 5.125, -0.400390625, 256}, "x + y");
}

TEST_F(HalfDtypesTest, PromotionIsNumpysAndMlDtypes) {
  Array i8 = UploadAs(*c_, DType::kInt8, {6}, {-128, 127, 5, 0, 1, 2});
  ExpectArray(a_ + i8, DType::kFloat16, {6}, {-127, 127.125, 65504, -2.5, 1, kInf}, "a + i8");
  Array f32 = UploadAs(*c_, DType::kFloat32, {6}, {1, 1, 1, 1, 1, 1});
  absl::StatusOr<Values> s = Fetch(a_ + f32);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->dtype, DType::kFloat32) << "a + f32";
  Array a4 = UploadAs(*c_, DType::kFloat16, {4}, {1, 1, 1, 1});
  absl::StatusOr<Values> mixed = Fetch(x_ + a4);
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_EQ(mixed->dtype, DType::kFloat32) << "x + float16 (ml_dtypes: float32)";
  EXPECT_EQ(mixed->v[1], 4.140625);
}

TEST_F(HalfDtypesTest, MatmulAccumulatesInFloat32) {
  // m = np.array([[1, 2, 3], [4, 5, 6]], np.float16) * np.float16(0.1)
  // n = np.array([[1, 0.5], [0.25, 2], [3, -1]], np.float16); m @ n
  Array m =
      UploadAs(*c_, DType::kFloat16, {2, 3},
               {0.0999755859375, 0.199951171875, 0.2998046875, 0.39990234375, 0.5, 0.599609375});
  Array n = UploadAs(*c_, DType::kFloat16, {3, 2}, {1, 0.5, 0.25, 2, 3, -1});
  ExpectArray(client::matmul(m, n), DType::kFloat16, {2, 2},
              {1.0498046875, 0.150146484375, 2.32421875, 0.6005859375}, "m @ n");
  ExpectArray(client::sum(a_ * 0), DType::kFloat16, {}, {kNaN}, "(a * 0).sum(): inf * 0");
  ExpectArray(client::max(x_), DType::kBFloat16, {}, {256}, "x.max()");
  ExpectArray(client::sum(x_), DType::kBFloat16, {}, {260}, "x.sum()");
}

}  // namespace
}  // namespace resident::e2e

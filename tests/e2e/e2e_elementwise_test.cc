// Python-scalar operands (NEP 50) and the op table's newer ufuncs through the
// C++ client against a real server in-process. Expected values are NumPy
// 2.4's, computed outside this code and pasted as literals; the NumPy
// expression is named beside each (f32 = np.array([1.5, -2.0, 0.25],
// np.float32), i32 = np.array([7, -7, 2], np.int32), b = np.array([True,
// False])).
#include <cmath>
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

constexpr DType kB = DType::kBool, kI32 = DType::kInt32, kI64 = DType::kInt64,
                kF32 = DType::kFloat32, kF64 = DType::kFloat64;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

class ElementwiseTest : public SharedServerTest<ElementwiseTest> {
 protected:
  void SetUp() override {
    SharedServerTest::SetUp();
    if (c_ == nullptr) return;
    f32_ = UploadAs(*c_, kF32, {3}, {1.5, -2.0, 0.25});
    i32_ = UploadAs(*c_, kI32, {3}, {7, -7, 2});
    b_ = UploadAs(*c_, kB, {2}, {1, 0});
  }

  Array f32_, i32_, b_;
};

TEST_F(ElementwiseTest, PythonScalarsAreWeak) {
  ExpectArray(f32_ + 1.0, kF32, {3}, {2.5, -1.0, 1.25}, "f32 + 1.0");
  ExpectArray(2 * f32_, kF32, {3}, {3.0, -4.0, 0.5}, "2 * f32");
  ExpectArray(f32_ / 3, kF32, {3}, {0.5, -0.6666666865348816, 0.0833333358168602}, "f32 / 3");
  ExpectArray(1 - f32_, kF32, {3}, {-0.5, 3.0, 0.75}, "1 - f32");
  ExpectArray(i32_ + 1, kI32, {3}, {8, -6, 3}, "i32 + 1");
  ExpectArray(i32_ + 1.5, kF64, {3}, {8.5, -5.5, 3.5}, "i32 + 1.5");
  ExpectArray(i32_ / 2, kF64, {3}, {3.5, -3.5, 1.0}, "i32 / 2");
  ExpectArray(b_ + 1, kI64, {2}, {2, 1}, "b + 1");
  ExpectArray(b_ * 2.5, kF64, {2}, {2.5, 0.0}, "b * 2.5");
  ExpectArray(client::floor_divide(i32_, 2), kI32, {3}, {3, -4, 1}, "i32 // 2");
  ExpectArray(i32_ % 3, kI32, {3}, {1, 2, 2}, "i32 % 3");
  ExpectArray(-7 % i32_, kI32, {3}, {0, 0, 1}, "-7 % i32");
  ExpectArray(client::power(i32_, 2), kI32, {3}, {49, 49, 4}, "i32 ** 2");
  ExpectArray(client::power(f32_, 2), kF32, {3}, {2.25, 4.0, 0.0625}, "f32 ** 2");
  ExpectArray(client::less(f32_, 0.3), kB, {3}, {0, 1, 1}, "f32 < 0.3");
  ExpectArray(client::less(i32_, 2.5), kB, {3}, {0, 1, 1}, "np.less(i32, 2.5)");
  // NumPy 2 compares out-of-range Python ints exactly: np.equal(i32, 2**40)
  ExpectArray(client::equal(i32_, int64_t{1} << 40), kB, {3}, {0, 0, 0}, "i32 == 2**40");
}

TEST_F(ElementwiseTest, ScalarErrorsAsNumpy) {
  // NumPy: OverflowError: Python integer 1099511627776 out of bounds for int32
  absl::Status s = (i32_ + (int64_t{1} << 40)).Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("out of bounds for int32"));
  // NumPy: ValueError: Integers to negative integer powers are not allowed.
  s = client::power(i32_, -1).Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("negative integer powers"));
  // sqrt of bool is float16 in NumPy: np.sqrt(np.array([True, False])).
  ExpectArray(client::sqrt(b_), DType::kFloat16, {2}, {1, 0}, "sqrt(bool)");
  // An unknown op by name.
  s = client::Elementwise("no_such_ufunc", {f32_, f32_}).Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  // The server still serves.
  ExpectArray(f32_ + 1.0, kF32, {3}, {2.5, -1.0, 1.25});
}

TEST_F(ElementwiseTest, NewUfuncs) {
  Array f64 = UploadAs(*c_, kF64, {3}, {1.0, 4.0, -1.0});
  ExpectArray(client::sqrt(f64), kF64, {3}, {1.0, 2.0, kNaN}, "np.sqrt(f64)");
  ExpectArray(client::sqrt(i32_), kF64, {3}, {2.6457513110645907, kNaN, 1.4142135623730951},
              "np.sqrt(i32)");
  Array m = UploadAs(*c_, kF64, {3}, {kNaN, 5.0, -2.0});
  ExpectArray(client::maximum(f64, m), kF64, {3}, {kNaN, 5.0, -1.0}, "np.maximum");
  Array special = UploadAs(*c_, kF64, {3}, {kNaN, 1.0, kInf});  // nan, 1, inf
  ExpectArray(client::isnan(special), kB, {3}, {1, 0, 0}, "np.isnan");
  ExpectArray(client::isfinite(special), kB, {3}, {0, 1, 0}, "np.isfinite");
  ExpectArray(client::floor(UploadAs(*c_, kF32, {2}, {-1.5, 2.5})), kF32, {2}, {-2.0, 2.0});
  ExpectArray(client::abs(i32_), kI32, {3}, {7, 7, 2}, "np.abs(i32)");
  ExpectArray(client::sign(f64), kF64, {3}, {1.0, 1.0, -1.0}, "np.sign(f64)");
  ExpectArray(client::logical_and(i32_, UploadAs(*c_, kB, {3}, {0, 1, 0})), kB, {3}, {0, 1, 0},
              "np.logical_and(i32, [F, T, F])");
  ExpectArray(client::exp(UploadAs(*c_, kF64, {2}, {0.0, 1.0})), kF64, {2},
              {1.0, 2.718281828459045}, "np.exp");
  ExpectArray(client::remainder(UploadAs(*c_, kF64, {2}, {5.5, -5.5}), 2.0), kF64, {2}, {1.5, 0.5},
              "np.remainder");
  // Integer division by zero is 0, as NumPy gives (with a warning).
  ExpectArray(client::floor_divide(UploadAs(*c_, kI32, {3}, {5, -5, 3}),
                                   UploadAs(*c_, kI32, {3}, {0, 2, -2})),
              kI32, {3}, {0, -3, -2}, "np.floor_divide");
  ExpectArray(client::greater(i32_, 0), kB, {3}, {1, 0, 1}, "i32 > 0");
  ExpectArray(client::Elementwise("mod", {i32_, 3}), kI32, {3}, {1, 2, 2}, "np.mod(i32, 3)");
}

TEST_F(ElementwiseTest, WhereAndClip) {
  Array c = UploadAs(*c_, kB, {3}, {1, 0, 1});
  Array x = UploadAs(*c_, kF64, {3}, {1.5, kNaN, -0.0});
  Array y = UploadAs(*c_, kF32, {3}, {-1.0, 2.0, 3.0});
  ExpectArray(client::where(c, x, y), kF64, {3}, {1.5, 2.0, -0.0}, "np.where(c, x, y)");
  ExpectArray(client::where(c, i32_, 0), kI32, {3}, {7, 0, 2}, "np.where(c, i32, 0)");
  ExpectArray(client::where(UploadAs(*c_, kI32, {3}, {2, 0, -1}), i32_, 1.5), kF64, {3},
              {7.0, 1.5, 2.0}, "np.where(int cond, i32, 1.5)");
  ExpectArray(client::where(c, UploadAs(*c_, kB, {3}, {1, 1, 0}), false), kB, {3}, {1, 0, 0},
              "np.where(c, [T, T, F], False)");
  ExpectArray(client::where(reshape(c, {3, 1}), i32_, -i32_), kI32, {3, 3},
              {7, -7, 2, -7, 7, -2, 7, -7, 2}, "np.where(c[:, None], i32, -i32)");
  ExpectArray(client::where(c, UploadAs(*c_, kF64, {3}, {kInf, 1.0, kNaN}),
                            UploadAs(*c_, kF64, {3}, {1.0, -kInf, 0.0})),
              kF64, {3}, {kInf, -kInf, kNaN}, "np.where with inf and nan");
  // np.clip(x, 0.0, 1.0) keeps -0.0 and NaN
  absl::StatusOr<std::vector<double>> cl = client::clip(x, 0.0, 1.0).ToVector<double>();
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ((*cl)[0], 1.0);
  EXPECT_TRUE(std::isnan((*cl)[1]));
  EXPECT_TRUE((*cl)[2] == 0.0 && std::signbit((*cl)[2])) << (*cl)[2];
  ExpectArray(client::clip(i32_, -3, 3), kI32, {3}, {3, -3, 2}, "np.clip(i32, -3, 3)");
  ExpectArray(client::clip(i32_, 0, int64_t{1} << 40), kI32, {3}, {7, 0, 2},
              "np.clip(i32, 0, 2**40)");
  ExpectArray(client::clip(i32_, 0.5, 1.5), kF64, {3}, {1.5, 0.5, 1.5}, "np.clip(i32, .5, 1.5)");
  ExpectArray(client::clip(UploadAs(*c_, kF64, {1}, {5.0}), 3, 1), kF64, {1}, {1.0},
              "np.clip(5.0, 3, 1)");
  absl::Status bad = client::Elementwise("where", {c, x}).Evaluate();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
}

// Lazily recorded chains of a new op fold into a loop and fuse; results equal
// the op-by-op ones (np.float64 maximum of arange(4) with itself is itself).
TEST_F(ElementwiseTest, FoldedChainsOfNewOpsEqualOpByOp) {
  Array x = astype(client::arange(*c_, 4), kF64);
  Array y = x;
  for (int i = 0; i < 8; ++i) y = client::maximum(y, y);
  ExpectArray(y, kF64, {4}, {0, 1, 2, 3});
  // np.sqrt applied 3 times to [0, 1, 16, 256]: [0, 1, 1.4142135623730951, 2]
  Array z = UploadAs(*c_, kF64, {4}, {0, 1, 16, 256});
  for (int i = 0; i < 3; ++i) z = client::sqrt(z);
  ExpectArray(z, kF64, {4}, {0, 1, 1.4142135623730951, 2});
  // x = x + 0.5, 64 times, in float32 from 1e7: each add rounds back to 1e7
  // (np.float32(1e7) + 0.5 is 1e7), so a fold must keep the op-by-op order.
  Array s = UploadAs(*c_, kF32, {2}, {1e7, 0.0});
  for (int i = 0; i < 64; ++i) s = s + 0.5;
  ExpectArray(s, kF32, {2}, {1e7, 32.0}, "float32 x + 0.5, 64 times");
  // 2 * x, 40 times, int32 wraps: np.int32(3) * 2**40 mod 2**32 is 0.
  Array t = UploadAs(*c_, kI32, {1}, {3});
  for (int i = 0; i < 40; ++i) t = 2 * t;
  ExpectArray(t, kI32, {1}, {0}, "2 * x, 40 times");
  // A chain x = x <= x flips dtype after the first: folding must not apply.
  Array w = UploadAs(*c_, kF64, {2}, {1.0, kNaN});
  for (int i = 0; i < 5; ++i) w = client::less_equal(w, w);
  ExpectArray(w, kB, {2}, {1, 1});
}

}  // namespace
}  // namespace resident::e2e

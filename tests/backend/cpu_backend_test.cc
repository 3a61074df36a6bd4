// The CPU backend against NumPy: every expected value below is a literal that
// NumPy 1.24 (x86-64) printed, never something computed by the code under
// test. Bit patterns are written in hex where rounding matters.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "server/device/backend.h"
#include "server/device/cpu/cpu_backend.h"

namespace resident {
namespace {

constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
uint64_t Bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

class CpuBackendTest : public ::testing::Test {
 protected:
  // Two threads even on one core, so the threaded paths always run.
  std::unique_ptr<Backend> backend_ = NewCpuBackend(2);
  std::unique_ptr<Stream> stream_ = backend_->NewStream();

  DeviceArray Empty(DType dtype, Shape shape) {
    DeviceArray a;
    a.dtype = dtype;
    a.shape = std::move(shape);
    auto buf = backend_->Allocate(a.nbytes(), *stream_);
    EXPECT_TRUE(buf.ok()) << buf.status();
    a.buffer = *buf;
    return a;
  }
  // Bool arrays take uint8_t values.
  template <typename T>
  DeviceArray Make(DType dtype, Shape shape, const std::vector<T>& values) {
    DeviceArray a = Empty(dtype, std::move(shape));
    EXPECT_EQ(static_cast<int64_t>(values.size() * sizeof(T)), a.nbytes());
    EXPECT_TRUE(stream_->CopyToDevice(values.data(), *a.buffer, 0, a.nbytes()).ok());
    return a;
  }
  template <typename T>
  std::vector<T> Read(const DeviceArray& a) {
    std::vector<T> v(a.num_elements());
    EXPECT_TRUE(stream_->Synchronize().ok());
    EXPECT_TRUE(stream_->CopyToHost(*a.buffer, 0, v.data(), a.nbytes()).ok());
    return v;
  }
  absl::Status Binary(ElementwiseKind op, const DeviceArray& a, const DeviceArray& b,
                      DeviceArray& out) {
    return backend_->Run(*stream_, ElementwiseOp{op, {&a, &b}, &out});
  }
};

// --- Binary ------------------------------------------------------------------

TEST_F(CpuBackendTest, IntegerArithmeticWraps) {
  auto a = Make<int32_t>(DType::kInt32, {3}, {kI32Max, kI32Min, 5});
  auto b = Make<int32_t>(DType::kInt32, {3}, {1, -1, 7});
  auto out = Empty(DType::kInt32, {3});
  ASSERT_TRUE(Binary(ElementwiseKind::kAdd, a, b, out).ok());
  EXPECT_EQ(Read<int32_t>(out), (std::vector<int32_t>{kI32Min, kI32Max, 12}));
  ASSERT_TRUE(Binary(ElementwiseKind::kSubtract, b, a, out).ok());
  // np.int32([1,-1,7]) - np.int32([2147483647,-2147483648,5])
  EXPECT_EQ(Read<int32_t>(out), (std::vector<int32_t>{-2147483646, 2147483647, 2}));
  ASSERT_TRUE(Binary(ElementwiseKind::kMultiply, a, a, out).ok());
  EXPECT_EQ(Read<int32_t>(out), (std::vector<int32_t>{1, 0, 25}));

  auto c = Make<int64_t>(DType::kInt64, {2}, {kI64Max, kI64Min});
  auto two = Make<int64_t>(DType::kInt64, {}, {2});
  auto out64 = Empty(DType::kInt64, {2});
  ASSERT_TRUE(Binary(ElementwiseKind::kMultiply, c, two, out64).ok());
  EXPECT_EQ(Read<int64_t>(out64), (std::vector<int64_t>{-2, 0}));
  ASSERT_TRUE(Binary(ElementwiseKind::kAdd, c, two, out64).ok());
  EXPECT_EQ(Read<int64_t>(out64),
            (std::vector<int64_t>{-9223372036854775807, -9223372036854775806}));
}

TEST_F(CpuBackendTest, BoolAddIsOrMultiplyIsAnd) {
  auto a = Make<uint8_t>(DType::kBool, {4}, {1, 1, 0, 0});
  auto b = Make<uint8_t>(DType::kBool, {4}, {1, 0, 1, 0});
  auto out = Empty(DType::kBool, {4});
  ASSERT_TRUE(Binary(ElementwiseKind::kAdd, a, b, out).ok());
  EXPECT_EQ(Read<uint8_t>(out), (std::vector<uint8_t>{1, 1, 1, 0}));
  ASSERT_TRUE(Binary(ElementwiseKind::kMultiply, a, b, out).ok());
  EXPECT_EQ(Read<uint8_t>(out), (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(Binary(ElementwiseKind::kSubtract, a, b, out).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Binary(ElementwiseKind::kDivide, a, b, out).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(CpuBackendTest, FloatArithmeticMatchesNumPyBits) {
  auto a = Make<float>(DType::kFloat32, {3}, {0.1f, 1.0f, 1.1f});
  auto b = Make<float>(DType::kFloat32, {3}, {0.2f, 3.0f, 1.1f});
  auto out = Empty(DType::kFloat32, {3});
  ASSERT_TRUE(Binary(ElementwiseKind::kAdd, a, b, out).ok());
  EXPECT_EQ(Bits(Read<float>(out)[0]), 0x3e99999au);  // 0.1f + 0.2f
  ASSERT_TRUE(Binary(ElementwiseKind::kDivide, a, b, out).ok());
  EXPECT_EQ(Bits(Read<float>(out)[1]), 0x3eaaaaabu);  // 1f / 3f
  ASSERT_TRUE(Binary(ElementwiseKind::kMultiply, a, b, out).ok());
  EXPECT_EQ(Bits(Read<float>(out)[2]), 0x3f9ae148u);  // 1.1f * 1.1f

  auto c = Make<double>(DType::kFloat64, {1}, {0.1});
  auto d = Make<double>(DType::kFloat64, {1}, {0.2});
  auto out64 = Empty(DType::kFloat64, {1});
  ASSERT_TRUE(Binary(ElementwiseKind::kAdd, c, d, out64).ok());
  EXPECT_EQ(Read<double>(out64)[0], 0x1.3333333333334p-2);
}

TEST_F(CpuBackendTest, FloatDivisionByZero) {
  auto a = Make<double>(DType::kFloat64, {4}, {1, -1, 0, 1.5});
  auto b = Make<double>(DType::kFloat64, {4}, {0, 0, 0, 2});
  auto out = Empty(DType::kFloat64, {4});
  ASSERT_TRUE(Binary(ElementwiseKind::kDivide, a, b, out).ok());
  std::vector<double> r = Read<double>(out);
  EXPECT_EQ(r[0], kInf);
  EXPECT_EQ(r[1], -kInf);
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_EQ(r[3], 0.75);

  auto f = Make<float>(DType::kFloat32, {2}, {1, 0});
  auto z = Make<float>(DType::kFloat32, {}, {0});
  auto out32 = Empty(DType::kFloat32, {2});
  ASSERT_TRUE(Binary(ElementwiseKind::kDivide, f, z, out32).ok());
  EXPECT_EQ(Read<float>(out32)[0], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(Read<float>(out32)[1]));

  auto i = Make<int32_t>(DType::kInt32, {1}, {1});
  auto out_i = Empty(DType::kInt32, {1});
  EXPECT_EQ(Binary(ElementwiseKind::kDivide, i, i, out_i).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(CpuBackendTest, Broadcasting) {
  auto col = Make<int32_t>(DType::kInt32, {3, 1}, {1, 2, 3});
  auto row = Make<int32_t>(DType::kInt32, {4}, {10, 20, 30, 40});
  auto out = Empty(DType::kInt32, {3, 4});
  ASSERT_TRUE(Binary(ElementwiseKind::kAdd, col, row, out).ok());
  EXPECT_EQ(Read<int32_t>(out),
            (std::vector<int32_t>{11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43}));
  ASSERT_TRUE(Binary(ElementwiseKind::kSubtract, row, col, out).ok());
  EXPECT_EQ(Read<int32_t>(out),
            (std::vector<int32_t>{9, 19, 29, 39, 8, 18, 28, 38, 7, 17, 27, 37}));

  auto s = Make<double>(DType::kFloat64, {}, {0.5});
  auto m = Make<double>(DType::kFloat64, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto out2 = Empty(DType::kFloat64, {2, 3});
  ASSERT_TRUE(Binary(ElementwiseKind::kDivide, s, m, out2).ok());
  // 0.5 / np.arange(1, 7)
  EXPECT_EQ(Read<double>(out2), (std::vector<double>{0.5, 0.25, 0.5 / 3, 0.125, 0.1, 0.5 / 6}));

  // (2,1,3) * (4,1) -> (2,4,3)
  auto x = Make<int64_t>(DType::kInt64, {2, 1, 3}, {1, 2, 3, 4, 5, 6});
  auto y = Make<int64_t>(DType::kInt64, {4, 1}, {1, 10, 100, 1000});
  auto out3 = Empty(DType::kInt64, {2, 4, 3});
  ASSERT_TRUE(Binary(ElementwiseKind::kMultiply, x, y, out3).ok());
  EXPECT_EQ(Read<int64_t>(out3),
            (std::vector<int64_t>{1, 2, 3, 10, 20, 30, 100, 200, 300, 1000, 2000, 3000,
                                  4, 5, 6, 40, 50, 60, 400, 500, 600, 4000, 5000, 6000}));

  auto bad = Make<int32_t>(DType::kInt32, {3}, {1, 2, 3});
  EXPECT_EQ(Binary(ElementwiseKind::kAdd, bad, row, out).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(CpuBackendTest, LargeBroadcastAcrossThreads) {
  // (512, 1) + (1, 300) int32: out[i][j] = i * 1000 + j, > 1<<16 elements.
  std::vector<int32_t> col(512), row(300);
  for (int i = 0; i < 512; ++i) col[i] = i * 1000;
  for (int j = 0; j < 300; ++j) row[j] = j;
  auto a = Make<int32_t>(DType::kInt32, {512, 1}, col);
  auto b = Make<int32_t>(DType::kInt32, {1, 300}, row);
  auto out = Empty(DType::kInt32, {512, 300});
  ASSERT_TRUE(Binary(ElementwiseKind::kAdd, a, b, out).ok());
  std::vector<int32_t> r = Read<int32_t>(out);
  for (int i = 0; i < 512; ++i) {
    for (int j = 0; j < 300; ++j) ASSERT_EQ(r[i * 300 + j], i * 1000 + j);
  }
}

TEST_F(CpuBackendTest, InPlaceAliasing) {
  const int n = 200000;  // threaded
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = i * 0.5;
  auto a = Make<double>(DType::kFloat64, {n}, v);
  ASSERT_TRUE(Binary(ElementwiseKind::kAdd, a, a, a).ok());  // a = a + a
  std::vector<double> r = Read<double>(a);
  for (int i = 0; i < n; ++i) ASSERT_EQ(r[i], i * 1.0);
  ASSERT_TRUE(backend_->Run(*stream_, ElementwiseOp{ElementwiseKind::kNegative, {&a}, &a}).ok());
  EXPECT_EQ(Read<double>(a)[7], -7.0);
  // out aliases b only, with a broadcast scalar.
  auto one = Make<double>(DType::kFloat64, {}, {1.0});
  ASSERT_TRUE(Binary(ElementwiseKind::kSubtract, one, a, a).ok());
  EXPECT_EQ(Read<double>(a)[7], 8.0);
}

TEST_F(CpuBackendTest, NegativeWrapsAndSignsZero) {
  auto a = Make<int32_t>(DType::kInt32, {3}, {kI32Min, 5, 0});
  auto out = Empty(DType::kInt32, {3});
  ASSERT_TRUE(backend_->Run(*stream_, ElementwiseOp{ElementwiseKind::kNegative, {&a}, &out}).ok());
  EXPECT_EQ(Read<int32_t>(out), (std::vector<int32_t>{kI32Min, -5, 0}));
  auto f = Make<double>(DType::kFloat64, {}, {0.0});
  auto fo = Empty(DType::kFloat64, {});
  ASSERT_TRUE(backend_->Run(*stream_, ElementwiseOp{ElementwiseKind::kNegative, {&f}, &fo}).ok());
  EXPECT_EQ(Bits(Read<double>(fo)[0]), 0x8000000000000000u);  // -0.0
  auto b = Make<uint8_t>(DType::kBool, {1}, {1});
  auto bo = Empty(DType::kBool, {1});
  EXPECT_EQ(backend_->Run(*stream_, ElementwiseOp{ElementwiseKind::kNegative, {&b}, &bo}).code(),
            absl::StatusCode::kInvalidArgument);
}

// --- Cast --------------------------------------------------------------------

TEST_F(CpuBackendTest, CastFloatToIntegerAndBool) {
  const std::vector<double> x = {kNaN, kInf, -kInf, 3e9, -2.7, 2.7, 1e20, -0.0};
  auto a = Make<double>(DType::kFloat64, {8}, x);
  auto i32 = Empty(DType::kInt32, {8});
  ASSERT_TRUE(backend_->Run(*stream_, CastOp{&a, &i32}).ok());
  EXPECT_EQ(Read<int32_t>(i32),
            (std::vector<int32_t>{kI32Min, kI32Min, kI32Min, kI32Min, -2, 2, kI32Min, 0}));
  auto i64 = Empty(DType::kInt64, {8});
  ASSERT_TRUE(backend_->Run(*stream_, CastOp{&a, &i64}).ok());
  EXPECT_EQ(Read<int64_t>(i64),
            (std::vector<int64_t>{kI64Min, kI64Min, kI64Min, 3000000000, -2, 2, kI64Min, 0}));
  auto b = Empty(DType::kBool, {8});
  ASSERT_TRUE(backend_->Run(*stream_, CastOp{&a, &b}).ok());
  EXPECT_EQ(Read<uint8_t>(b), (std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1, 0}));

  std::vector<float> xf(x.begin(), x.end());
  auto af = Make<float>(DType::kFloat32, {8}, xf);
  ASSERT_TRUE(backend_->Run(*stream_, CastOp{&af, &i32}).ok());
  EXPECT_EQ(Read<int32_t>(i32),
            (std::vector<int32_t>{kI32Min, kI32Min, kI32Min, kI32Min, -2, 2, kI32Min, 0}));
}

TEST_F(CpuBackendTest, CastBetweenNumbers) {
  auto d = Make<double>(DType::kFloat64, {4}, {0.1, 1e39, -1e-50, 1.0 / 3});
  auto f = Empty(DType::kFloat32, {4});
  ASSERT_TRUE(backend_->Run(*stream_, CastOp{&d, &f}).ok());
  std::vector<float> r = Read<float>(f);
  EXPECT_EQ(Bits(r[0]), 0x3dcccccdu);
  EXPECT_EQ(Bits(r[1]), 0x7f800000u);
  EXPECT_EQ(Bits(r[2]), 0x80000000u);
  EXPECT_EQ(Bits(r[3]), 0x3eaaaaabu);

  auto i = Make<int64_t>(DType::kInt64, {3}, {9007199254740993, 16777217, kI64Min});
  auto fi = Empty(DType::kFloat32, {3});
  ASSERT_TRUE(backend_->Run(*stream_, CastOp{&i, &fi}).ok());
  EXPECT_EQ(Read<float>(fi),
            (std::vector<float>{9007199254740992.0f, 16777216.0f, -9.223372036854776e18f}));
  auto di = Empty(DType::kFloat64, {3});
  ASSERT_TRUE(backend_->Run(*stream_, CastOp{&i, &di}).ok());
  EXPECT_EQ(Read<double>(di)[0], 9007199254740992.0);

  auto w = Make<int64_t>(DType::kInt64, {3}, {4294967297, 2147483648, -2147483649});
  auto w32 = Empty(DType::kInt32, {3});
  ASSERT_TRUE(backend_->Run(*stream_, CastOp{&w, &w32}).ok());
  EXPECT_EQ(Read<int32_t>(w32), (std::vector<int32_t>{1, kI32Min, kI32Max}));

  auto bools = Make<uint8_t>(DType::kBool, {2}, {1, 0});
  auto bf = Empty(DType::kFloat64, {2});
  ASSERT_TRUE(backend_->Run(*stream_, CastOp{&bools, &bf}).ok());
  EXPECT_EQ(Read<double>(bf), (std::vector<double>{1.0, 0.0}));
  auto ib = Make<int32_t>(DType::kInt32, {3}, {0, -3, 256});
  auto ibo = Empty(DType::kBool, {3});
  ASSERT_TRUE(backend_->Run(*stream_, CastOp{&ib, &ibo}).ok());
  EXPECT_EQ(Read<uint8_t>(ibo), (std::vector<uint8_t>{0, 1, 1}));
}

TEST_F(CpuBackendTest, CastBroadcastsAndMayAliasSameItemSize) {
  auto a = Make<int32_t>(DType::kInt32, {2, 1}, {7, -8});
  auto out = Empty(DType::kFloat64, {2, 3});
  ASSERT_TRUE(backend_->Run(*stream_, CastOp{&a, &out}).ok());
  EXPECT_EQ(Read<double>(out), (std::vector<double>{7, 7, 7, -8, -8, -8}));
  // int64 -> float64 in place.
  auto b = Make<int64_t>(DType::kInt64, {3}, {1, -2, 3});
  DeviceArray same = b;
  same.dtype = DType::kFloat64;
  ASSERT_TRUE(backend_->Run(*stream_, CastOp{&b, &same}).ok());
  EXPECT_EQ(Read<double>(same), (std::vector<double>{1, -2, 3}));
  // int32 -> float64 into the input's own buffer (overlapping, wider).
  auto big = Empty(DType::kFloat64, {4});
  ASSERT_TRUE(
      stream_->CopyToDevice(std::vector<int32_t>{1, 2, 3, 4}.data(), *big.buffer, 0, 16).ok());
  DeviceArray narrow{big.buffer, DType::kInt32, {4}};
  ASSERT_TRUE(backend_->Run(*stream_, CastOp{&narrow, &big}).ok());
  EXPECT_EQ(Read<double>(big), (std::vector<double>{1, 2, 3, 4}));
}

// --- Fill / Arange -------------------------------------------------------------

TEST_F(CpuBackendTest, FillConvertsLikeNumPyFull) {
  auto f = Empty(DType::kFloat32, {3});
  ASSERT_TRUE(backend_->Run(*stream_, FillOp{Scalar::Float(0.1), &f}).ok());
  EXPECT_EQ(Bits(Read<float>(f)[2]), 0x3dcccccdu);
  auto i = Empty(DType::kInt32, {2});
  ASSERT_TRUE(backend_->Run(*stream_, FillOp{Scalar::Float(3e9), &i}).ok());
  EXPECT_EQ(Read<int32_t>(i),
            (std::vector<int32_t>{kI32Min, kI32Min}));  // np.full(2, 3e9, np.int32)
  auto l = Empty(DType::kInt64, {2});
  ASSERT_TRUE(backend_->Run(*stream_, FillOp{Scalar::Float(-2.7), &l}).ok());
  EXPECT_EQ(Read<int64_t>(l), (std::vector<int64_t>{-2, -2}));
  auto b = Empty(DType::kBool, {2});
  ASSERT_TRUE(backend_->Run(*stream_, FillOp{Scalar::Float(kNaN), &b}).ok());
  EXPECT_EQ(Read<uint8_t>(b), (std::vector<uint8_t>{1, 1}));
  auto d = Empty(DType::kFloat64, {2, 2});
  ASSERT_TRUE(backend_->Run(*stream_, FillOp{Scalar::Bool(true), &d}).ok());
  EXPECT_EQ(Read<double>(d), (std::vector<double>{1, 1, 1, 1}));
  auto big = Empty(DType::kInt64, {300000});
  ASSERT_TRUE(backend_->Run(*stream_, FillOp{Scalar::Int(-5), &big}).ok());
  for (int64_t v : Read<int64_t>(big)) ASSERT_EQ(v, -5);
  auto empty = Empty(DType::kInt32, {0, 4});
  EXPECT_TRUE(backend_->Run(*stream_, FillOp{Scalar::Int(1), &empty}).ok());
}

TEST_F(CpuBackendTest, ArangeFloatRounding) {
  // np.arange(0, 1, 0.1): NumPy's fill with start 0, delta 0.1.
  auto d = Empty(DType::kFloat64, {10});
  ASSERT_TRUE(
      backend_
          ->Run(*stream_, ArangeOp{Scalar::Float(0), Scalar::Float(0.1), Scalar::Float(0.1), &d})
          .ok());
  EXPECT_EQ(Read<double>(d),
            (std::vector<double>{0x0.0p+0, 0x1.999999999999ap-4, 0x1.999999999999ap-3,
                                 0x1.3333333333334p-2, 0x1.999999999999ap-2, 0x1.0000000000000p-1,
                                 0x1.3333333333334p-1, 0x1.6666666666667p-1, 0x1.999999999999ap-1,
                                 0x1.ccccccccccccdp-1}));
  // np.arange(1, 2, 0.1): the program layer passes NumPy's delta,
  // (1 + 0.1) - 1 = 0x1.99999999999a0p-4.
  ASSERT_TRUE(backend_
                  ->Run(*stream_, ArangeOp{Scalar::Float(1), Scalar::Float(0x1.99999999999a0p-4),
                                           Scalar::Float(1 + 0x1.99999999999a0p-4), &d})
                  .ok());
  EXPECT_EQ(Read<double>(d),
            (std::vector<double>{0x1.0000000000000p+0, 0x1.199999999999ap+0, 0x1.3333333333334p+0,
                                 0x1.4cccccccccccep+0, 0x1.6666666666668p+0, 0x1.8000000000002p+0,
                                 0x1.999999999999cp+0, 0x1.b333333333336p+0, 0x1.cccccccccccd0p+0,
                                 0x1.e66666666666ap+0}));
  // np.arange(0, 1, 0.1, dtype=np.float32), computed in float32.
  auto f = Empty(DType::kFloat32, {10});
  ASSERT_TRUE(
      backend_
          ->Run(*stream_, ArangeOp{Scalar::Float(0), Scalar::Float(0.1), Scalar::Float(0.1), &f})
          .ok());
  const uint32_t want[] = {0,          1036831949, 1045220557, 1050253722, 1053609165,
                           1056964608, 1058642330, 1060320051, 1061997773, 1063675495};
  std::vector<float> r = Read<float>(f);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(Bits(r[i]), want[i]) << i;
}

TEST_F(CpuBackendTest, ArangeIntegersWrap) {
  auto i = Empty(DType::kInt32, {3});
  ASSERT_TRUE(backend_
                  ->Run(*stream_,
                        ArangeOp{Scalar::Int(2147483646), Scalar::Int(1), Scalar::Int(kI32Max), &i})
                  .ok());
  EXPECT_EQ(Read<int32_t>(i), (std::vector<int32_t>{2147483646, kI32Max, kI32Min}));
  auto l = Empty(DType::kInt64, {4});
  ASSERT_TRUE(
      backend_->Run(*stream_, ArangeOp{Scalar::Int(10), Scalar::Int(-3), Scalar::Int(7), &l}).ok());
  EXPECT_EQ(Read<int64_t>(l), (std::vector<int64_t>{10, 7, 4, 1}));
  auto big = Empty(DType::kInt64, {100000});
  ASSERT_TRUE(
      backend_->Run(*stream_, ArangeOp{Scalar::Int(0), Scalar::Int(1), Scalar::Int(1), &big}).ok());
  std::vector<int64_t> r = Read<int64_t>(big);
  for (int64_t k = 0; k < 100000; ++k) ASSERT_EQ(r[k], k);
  auto two_d = Empty(DType::kInt64, {2, 2});
  EXPECT_EQ(
      backend_->Run(*stream_, ArangeOp{Scalar::Int(0), Scalar::Int(1), Scalar::Int(1), &two_d})
          .code(),
      absl::StatusCode::kInvalidArgument);
}

// --- Sum ---------------------------------------------------------------------

TEST_F(CpuBackendTest, SumPairwiseFloat32) {
  // np.ones(10**7, np.float32).sum() == 10000000.0 (a naive float32 loop
  // stops at 16777216 only much later, but drifts long before).
  auto ones = Empty(DType::kFloat32, {10000000});
  ASSERT_TRUE(backend_->Run(*stream_, FillOp{Scalar::Float(1), &ones}).ok());
  auto s = Empty(DType::kFloat32, {});
  ASSERT_TRUE(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, std::nullopt, &ones, &s}).ok());
  EXPECT_EQ(Read<float>(s)[0], 10000000.0f);

  // (np.arange(100000, dtype=np.float32) * np.float32(0.1)).sum()
  // is 499995000.0; the exact sum of those floats is 499995008.8645834.
  std::vector<float> v(100000);
  for (int i = 0; i < 100000; ++i) v[i] = static_cast<float>(i) * 0.1f;
  auto a = Make<float>(DType::kFloat32, {100000}, v);
  ASSERT_TRUE(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, std::nullopt, &a, &s}).ok());
  EXPECT_NEAR(Read<float>(s)[0], 499995000.0f, 499995000.0 * 1e-6);
}

TEST_F(CpuBackendTest, SumAxisAndDtypes) {
  std::vector<int32_t> v(24);
  for (int i = 0; i < 24; ++i) v[i] = i;
  auto a = Make<int32_t>(DType::kInt32, {2, 3, 4}, v);
  auto out = Empty(DType::kInt64, {2, 4});
  ASSERT_TRUE(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, 1, &a, &out}).ok());
  EXPECT_EQ(Read<int64_t>(out), (std::vector<int64_t>{12, 15, 18, 21, 48, 51, 54, 57}));
  ASSERT_TRUE(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, -2, &a, &out}).ok());  // same axis
  EXPECT_EQ(Read<int64_t>(out)[7], 57);
  auto last = Empty(DType::kInt64, {2, 3});
  ASSERT_TRUE(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, 2, &a, &last}).ok());
  EXPECT_EQ(Read<int64_t>(last), (std::vector<int64_t>{6, 22, 38, 54, 70, 86}));
  auto all = Empty(DType::kInt64, {});
  ASSERT_TRUE(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, std::nullopt, &a, &all}).ok());
  EXPECT_EQ(Read<int64_t>(all)[0], 276);

  auto b = Make<uint8_t>(DType::kBool, {2, 2}, {1, 1, 0, 1});
  auto bs = Empty(DType::kInt64, {2});
  ASSERT_TRUE(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, 0, &b, &bs}).ok());
  EXPECT_EQ(Read<int64_t>(bs), (std::vector<int64_t>{1, 2}));

  auto w = Make<int64_t>(DType::kInt64, {2}, {kI64Max, 2});
  auto ws = Empty(DType::kInt64, {});
  ASSERT_TRUE(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, std::nullopt, &w, &ws}).ok());
  EXPECT_EQ(Read<int64_t>(ws)[0], -9223372036854775807);  // wraps

  auto d = Make<double>(DType::kFloat64, {3, 2}, {0.5, 1, 2, 3, 4.25, 5});
  auto ds = Empty(DType::kFloat64, {2});
  ASSERT_TRUE(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, 0, &d, &ds}).ok());
  EXPECT_EQ(Read<double>(ds), (std::vector<double>{6.75, 9}));

  auto wrong = Empty(DType::kInt32, {2, 4});
  EXPECT_EQ(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, 1, &a, &wrong}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, 3, &a, &out}).code(),
            absl::StatusCode::kInvalidArgument);
  auto badshape = Empty(DType::kInt64, {2, 3});
  EXPECT_EQ(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, 1, &a, &badshape}).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(CpuBackendTest, SumLongStridedAxisIsAccurate) {
  // 100000 x 3 float32 of 0.1f summed over axis 0. The exact sum is
  // 10000.000149; NumPy adds rows one after another along a strided axis and
  // gives 9998.557. We sum rows pairwise, so we must be far closer.
  auto a = Empty(DType::kFloat32, {100000, 3});
  ASSERT_TRUE(backend_->Run(*stream_, FillOp{Scalar::Float(0.1), &a}).ok());
  auto s = Empty(DType::kFloat32, {3});
  ASSERT_TRUE(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, 0, &a, &s}).ok());
  for (float x : Read<float>(s)) EXPECT_NEAR(x, 10000.000149, 0.01);
}

TEST_F(CpuBackendTest, SumEmpty) {
  auto e = Empty(DType::kFloat64, {0});
  auto s = Empty(DType::kFloat64, {});
  ASSERT_TRUE(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, std::nullopt, &e, &s}).ok());
  EXPECT_EQ(Read<double>(s)[0], 0.0);
  auto e2 = Empty(DType::kInt32, {0, 3});
  auto s2 = Empty(DType::kInt64, {3});
  ASSERT_TRUE(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, 0, &e2, &s2}).ok());
  EXPECT_EQ(Read<int64_t>(s2), (std::vector<int64_t>{0, 0, 0}));
  auto s3 = Empty(DType::kInt64, {0});
  EXPECT_TRUE(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, 1, &e2, &s3}).ok());
}

// --- Matmul ------------------------------------------------------------------

TEST_F(CpuBackendTest, MatmulAllDtypes) {
  MatmulShape s{1, 2, 3, 2, 0, 0};
  auto a = Make<float>(DType::kFloat32, {2, 3}, {1.5, 2, 3, 4, 5, 6.25});
  auto b = Make<float>(DType::kFloat32, {3, 2}, {1, 2, 3, 4, 5, 6.5});
  auto o = Empty(DType::kFloat32, {2, 2});
  ASSERT_TRUE(backend_->Run(*stream_, MatmulOp{s, &a, &b, &o}).ok());
  EXPECT_EQ(Read<float>(o), (std::vector<float>{22.5, 30.5, 50.25, 68.625}));

  auto ad = Make<double>(DType::kFloat64, {2, 3}, {1.5, 2, 3, 4, 5, 6.25});
  auto bd = Make<double>(DType::kFloat64, {3, 2}, {1, 2, 3, 4, 5, 6.5});
  auto od = Empty(DType::kFloat64, {2, 2});
  ASSERT_TRUE(backend_->Run(*stream_, MatmulOp{s, &ad, &bd, &od}).ok());
  EXPECT_EQ(Read<double>(od), (std::vector<double>{22.5, 30.5, 50.25, 68.625}));

  MatmulShape s2{1, 2, 2, 2, 0, 0};
  auto ai = Make<int32_t>(DType::kInt32, {2, 2}, {1 << 30, 3, 5, 7});
  auto bi = Make<int32_t>(DType::kInt32, {2, 2}, {4, 1, 1, kI32Max});
  auto oi = Empty(DType::kInt32, {2, 2});
  ASSERT_TRUE(backend_->Run(*stream_, MatmulOp{s2, &ai, &bi, &oi}).ok());
  EXPECT_EQ(Read<int32_t>(oi), (std::vector<int32_t>{3, -1073741827, 27, 2147483646}));

  MatmulShape s3{1, 1, 2, 1, 0, 0};
  auto al = Make<int64_t>(DType::kInt64, {1, 2}, {int64_t{1} << 62, 3});
  auto bl = Make<int64_t>(DType::kInt64, {2, 1}, {4, 5});
  auto ol = Empty(DType::kInt64, {1, 1});
  ASSERT_TRUE(backend_->Run(*stream_, MatmulOp{s3, &al, &bl, &ol}).ok());
  EXPECT_EQ(Read<int64_t>(ol)[0], 15);

  auto ab = Make<uint8_t>(DType::kBool, {2, 2}, {1, 0, 0, 0});
  auto bb = Make<uint8_t>(DType::kBool, {2, 2}, {1, 1, 0, 1});
  auto ob = Empty(DType::kBool, {2, 2});
  ASSERT_TRUE(backend_->Run(*stream_, MatmulOp{s2, &ab, &bb, &ob}).ok());
  EXPECT_EQ(Read<uint8_t>(ob), (std::vector<uint8_t>{1, 1, 0, 0}));

  auto mixed = Empty(DType::kFloat64, {2, 2});
  EXPECT_EQ(backend_->Run(*stream_, MatmulOp{s, &a, &b, &mixed}).code(),
            absl::StatusCode::kInvalidArgument);
  MatmulShape too_big{1, 3, 3, 2, 0, 0};
  EXPECT_EQ(backend_->Run(*stream_, MatmulOp{too_big, &a, &b, &o}).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(CpuBackendTest, MatmulBatchBroadcastAndEmpty) {
  // np.matmul(A (2x2), B (2,2,1)): a broadcast with stride 0.
  MatmulShape s{2, 2, 2, 1, 0, 2};
  auto a = Make<double>(DType::kFloat64, {2, 2}, {1, 2, 3, 4});
  auto b = Make<double>(DType::kFloat64, {2, 2, 1}, {1, 1, 0, 1});
  auto o = Empty(DType::kFloat64, {2, 2, 1});
  ASSERT_TRUE(backend_->Run(*stream_, MatmulOp{s, &a, &b, &o}).ok());
  EXPECT_EQ(Read<double>(o), (std::vector<double>{3, 7, 2, 4}));
  auto ai = Make<int64_t>(DType::kInt64, {2, 2}, {1, 2, 3, 4});
  auto bi = Make<int64_t>(DType::kInt64, {2, 2, 1}, {1, 1, 0, 1});
  auto oi = Empty(DType::kInt64, {2, 2, 1});
  ASSERT_TRUE(backend_->Run(*stream_, MatmulOp{s, &ai, &bi, &oi}).ok());
  EXPECT_EQ(Read<int64_t>(oi), (std::vector<int64_t>{3, 7, 2, 4}));

  // k == 0: np.zeros((2,0)) @ np.zeros((0,3)) is zeros((2,3)).
  for (DType dt : kAllDTypes) {
    MatmulShape k0{1, 2, 0, 3, 0, 0};
    auto e1 = Empty(dt, {2, 0});
    auto e2 = Empty(dt, {0, 3});
    auto z = Empty(dt, {2, 3});
    ASSERT_TRUE(backend_->Run(*stream_, FillOp{Scalar::Int(9), &z}).ok());
    ASSERT_TRUE(backend_->Run(*stream_, MatmulOp{k0, &e1, &e2, &z}).ok()) << DTypeName(dt);
    std::vector<uint8_t> bytes(z.nbytes());
    ASSERT_TRUE(stream_->CopyToHost(*z.buffer, 0, bytes.data(), z.nbytes()).ok());
    for (uint8_t x : bytes) ASSERT_EQ(x, 0) << DTypeName(dt);
    MatmulShape m0{1, 0, 2, 3, 0, 0};
    auto e3 = Empty(dt, {0, 2});
    auto e4 = Empty(dt, {2, 3});
    auto e5 = Empty(dt, {0, 3});
    EXPECT_TRUE(backend_->Run(*stream_, MatmulOp{m0, &e3, &e4, &e5}).ok());
    MatmulShape b0{0, 2, 2, 2, 4, 4};
    auto e6 = Empty(dt, {0, 2, 2});
    EXPECT_TRUE(backend_->Run(*stream_, MatmulOp{b0, &e6, &e6, &e6}).ok());
  }
}

// --- Transpose -----------------------------------------------------------------

TEST_F(CpuBackendTest, Transpose3D) {
  std::vector<int32_t> v(24);
  for (int i = 0; i < 24; ++i) v[i] = i;
  auto a = Make<int32_t>(DType::kInt32, {2, 3, 4}, v);
  auto o = Empty(DType::kInt32, {4, 2, 3});
  const int p201[] = {2, 0, 1};
  ASSERT_TRUE(backend_->Run(*stream_, TransposeOp{p201, &a, &o}).ok());
  EXPECT_EQ(Read<int32_t>(o), (std::vector<int32_t>{0, 4, 8,  12, 16, 20, 1, 5, 9,  13, 17, 21,
                                                    2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23}));
  auto o2 = Empty(DType::kInt32, {3, 2, 4});
  const int p102[] = {1, 0, 2};
  ASSERT_TRUE(backend_->Run(*stream_, TransposeOp{p102, &a, &o2}).ok());
  EXPECT_EQ(Read<int32_t>(o2),
            (std::vector<int32_t>{0,  1,  2,  3,  12, 13, 14, 15, 4,  5,  6,  7,
                                  16, 17, 18, 19, 8,  9,  10, 11, 20, 21, 22, 23}));
  const int bad[] = {0, 0, 1};
  EXPECT_EQ(backend_->Run(*stream_, TransposeOp{bad, &a, &o2}).code(),
            absl::StatusCode::kInvalidArgument);
  const int short_perm[] = {0, 1};
  EXPECT_EQ(backend_->Run(*stream_, TransposeOp{short_perm, &a, &o2}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(backend_->Run(*stream_, TransposeOp{p201, &a, &o2}).code(),
            absl::StatusCode::kInvalidArgument);  // wrong out shape
}

TEST_F(CpuBackendTest, TransposeLarge2DAndBool) {
  // 300 x 257 float64, blocked and threaded: out[j][i] == a[i][j].
  const int r = 300, c = 257;
  std::vector<double> v(r * c);
  for (int i = 0; i < r * c; ++i) v[i] = i;
  auto a = Make<double>(DType::kFloat64, {r, c}, v);
  auto o = Empty(DType::kFloat64, {c, r});
  const int p10[] = {1, 0};
  ASSERT_TRUE(backend_->Run(*stream_, TransposeOp{p10, &a, &o}).ok());
  std::vector<double> t = Read<double>(o);
  for (int j = 0; j < c; ++j) {
    for (int i = 0; i < r; ++i) ASSERT_EQ(t[j * r + i], i * c + j);
  }
  auto b = Make<uint8_t>(DType::kBool, {2, 3}, {1, 0, 0, 1, 1, 0});
  auto bo = Empty(DType::kBool, {3, 2});
  ASSERT_TRUE(backend_->Run(*stream_, TransposeOp{p10, &b, &bo}).ok());
  EXPECT_EQ(Read<uint8_t>(bo), (std::vector<uint8_t>{1, 1, 0, 1, 0, 0}));
}

// --- Empty and 0-d arrays --------------------------------------------------------

TEST_F(CpuBackendTest, EmptyAndZeroDimensional) {
  auto e = Empty(DType::kFloat64, {0, 3});
  auto e_out = Empty(DType::kFloat64, {0, 3});
  EXPECT_TRUE(Binary(ElementwiseKind::kAdd, e, e, e_out).ok());
  auto e_cast = Empty(DType::kInt32, {0, 3});
  EXPECT_TRUE(backend_->Run(*stream_, CastOp{&e, &e_cast}).ok());
  auto e_t = Empty(DType::kFloat64, {3, 0});
  const int p10[] = {1, 0};
  EXPECT_TRUE(backend_->Run(*stream_, TransposeOp{p10, &e, &e_t}).ok());
  auto ar = Empty(DType::kInt64, {0});
  EXPECT_TRUE(
      backend_->Run(*stream_, ArangeOp{Scalar::Int(0), Scalar::Int(1), Scalar::Int(1), &ar}).ok());

  auto x = Make<int64_t>(DType::kInt64, {}, {5});
  auto y = Make<int64_t>(DType::kInt64, {}, {-7});
  auto z = Empty(DType::kInt64, {});
  ASSERT_TRUE(Binary(ElementwiseKind::kMultiply, x, y, z).ok());
  EXPECT_EQ(Read<int64_t>(z), (std::vector<int64_t>{-35}));
  auto zf = Empty(DType::kFloat32, {});
  ASSERT_TRUE(backend_->Run(*stream_, CastOp{&z, &zf}).ok());
  EXPECT_EQ(Read<float>(zf)[0], -35.0f);
  auto zs = Empty(DType::kInt64, {});
  ASSERT_TRUE(backend_->Run(*stream_, ReduceOp{ReduceKind::kSum, std::nullopt, &z, &zs}).ok());
  EXPECT_EQ(Read<int64_t>(zs)[0], -35);
  auto zt = Empty(DType::kInt64, {});
  ASSERT_TRUE(backend_->Run(*stream_, TransposeOp{{}, &z, &zt}).ok());
  EXPECT_EQ(Read<int64_t>(zt)[0], -35);
}

// --- Memory and copies ---------------------------------------------------------

TEST_F(CpuBackendTest, AllocatorAlignsCachesAndTrims) {
  auto zero = backend_->Allocate(0, *stream_);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ((*zero)->size(), 0);
  EXPECT_NE((*zero)->data(), nullptr);
  EXPECT_EQ(backend_->Allocate(-1, *stream_).status().code(), absl::StatusCode::kInvalidArgument);
  for (int64_t bytes : {1, 100, 4096, 1 << 20, 3 << 20}) {
    auto b = backend_->Allocate(bytes, *stream_);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*b)->data()) % 64, 0u) << bytes;
  }
  backend_->Trim();
  const int64_t bytes = 8 << 20;
  void* first = nullptr;
  {
    auto b = backend_->Allocate(bytes, *stream_);
    ASSERT_TRUE(b.ok());
    first = (*b)->data();
    EXPECT_EQ(backend_->memory().in_use, bytes);
  }
  MemoryInfo m = backend_->memory();
  EXPECT_EQ(m.in_use, 0);
  EXPECT_GE(m.cached, bytes);
  EXPECT_GT(m.total, 0);
  EXPECT_GT(m.free, 0);
  {
    auto b = backend_->Allocate(bytes - 100, *stream_);  // a cached block fits
    ASSERT_TRUE(b.ok());
    EXPECT_EQ((*b)->data(), first);
    EXPECT_EQ((*b)->size(), bytes - 100);
  }
  backend_->Trim();
  EXPECT_EQ(backend_->memory().cached, 0);
}

TEST_F(CpuBackendTest, HugeAllocationIsResourceExhausted) {
  auto b = backend_->Allocate(int64_t{1} << 50, *stream_);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST_F(CpuBackendTest, BuffersMayOutliveTheBackend) {
  auto backend = NewCpuBackend(1);
  auto stream = backend->NewStream();
  auto b = backend->Allocate(4 << 20, *stream);
  ASSERT_TRUE(b.ok());
  std::shared_ptr<Buffer> keep = *b;
  backend.reset();
  std::memset(keep->data(), 1, 16);
  keep.reset();  // no crash, no leak (ASan build checks)
}

TEST_F(CpuBackendTest, CopiesAreBoundsChecked) {
  auto b = backend_->Allocate(16, *stream_);
  ASSERT_TRUE(b.ok());
  char buf[32] = {};
  EXPECT_TRUE(stream_->CopyToDevice(buf, **b, 8, 8).ok());
  EXPECT_EQ(stream_->CopyToDevice(buf, **b, 8, 9).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(stream_->CopyToHost(**b, -1, buf, 4).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(stream_->CopyToHost(**b, 0, buf, 17).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(stream_->CopyToHost(**b, 16, buf, 0).ok());
}

TEST_F(CpuBackendTest, UndersizedBufferIsRefused) {
  DeviceArray a = Empty(DType::kFloat64, {2});
  DeviceArray lie = a;
  lie.shape = {4};
  auto out = Empty(DType::kFloat64, {4});
  EXPECT_EQ(Binary(ElementwiseKind::kAdd, lie, lie, out).code(),
            absl::StatusCode::kInvalidArgument);
  DeviceArray none;
  none.shape = {3};
  EXPECT_EQ(backend_->Run(*stream_, FillOp{Scalar::Int(0), &none}).code(),
            absl::StatusCode::kInvalidArgument);
  auto i = Empty(DType::kInt32, {2});
  EXPECT_EQ(Binary(ElementwiseKind::kAdd, a, i, out).code(),
            absl::StatusCode::kInvalidArgument);  // dtype mismatch
}

}  // namespace
}  // namespace resident

// complex64 and complex128 through the C++ client against a real server
// in-process: upload and download, elementwise, NumPy 2 promotion with weak
// Python scalars, casts, reductions, matmul and the refusals. Expected
// values are NumPy 2.4's, computed outside this code and pasted as literals,
// the NumPy expression beside each:
//   a = np.array([1+2j, -0.5+0.25j, 3-4j, 0j, 1e30+1e-30j, 0.1+0.7j], np.complex64)
//   b = np.array([2-1j, 0.125+0j, -3-4j, 1+1j, 3e-30+2j, 0.3-0.9j], np.complex64)
#include <stdlib.h>

#include <complex>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "client/client.h"
#include "core/npy.h"
#include "e2e_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace resident::e2e {
namespace {

using ::testing::HasSubstr;
using C64 = std::complex<float>;
using C128 = std::complex<double>;

class ComplexDtypesTest : public SharedServerTest<ComplexDtypesTest> {
 public:
  // A data dir, so named arrays are written as .npy files.
  static const std::string& DataDir() {
    static const std::string dir = [] {
      char t[] = "/tmp/resident-e2e-complex-XXXXXX";
      return std::string(mkdtemp(t) != nullptr ? t : "");
    }();
    return dir;
  }
  static ServerOptions Options() {
    ServerOptions o;
    o.data_dir = DataDir();
    return o;
  }

 protected:
  void SetUp() override {
    SharedServerTest::SetUp();
    if (c_ == nullptr) return;
    const std::vector<C64> a = {{1, 2}, {-0.5, 0.25},    {3, -4},
                                {0, 0}, {1e30f, 1e-30f}, {0.1f, 0.7f}};
    const std::vector<C64> b = {{2, -1}, {0.125, 0}, {-3, -4}, {1, 1}, {3e-30f, 2}, {0.3f, -0.9f}};
    a_ = c_->Upload<C64>({6}, a).value();
    b_ = c_->Upload<C64>({6}, b).value();
  }

  // The array's dtype and elements as complex128 (both complex dtypes).
  static void Expect(const Array& x, DType dtype, const std::vector<C128>& want,
                     const std::string& what) {
    absl::StatusOr<client::HostData> d = x.Download();
    ASSERT_TRUE(d.ok()) << what << ": " << d.status();
    ASSERT_EQ(DTypeName(d->dtype), std::string(DTypeName(dtype))) << what;
    std::vector<C128> got;
    if (dtype == DType::kComplex64) {
      std::vector<C64> v(d->bytes.size() / sizeof(C64));
      std::memcpy(v.data(), d->bytes.data(), d->bytes.size());
      for (C64 z : v) got.emplace_back(z.real(), z.imag());
    } else {
      got.resize(d->bytes.size() / sizeof(C128));
      std::memcpy(got.data(), d->bytes.data(), d->bytes.size());
    }
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << what << " [" << i << "]";
  }

  Array a_, b_;
};

TEST_F(ComplexDtypesTest, UploadDownloadAndDescribe) {
  Expect(a_, DType::kComplex64,
         {{1, 2},
          {-0.5, 0.25},
          {3, -4},
          {0, 0},
          {1.0000000150474662e+30, 1.0000000031710769e-30},
          {0.10000000149011612, 0.699999988079071}},
         "a");
  EXPECT_EQ(*a_.dtype(), DType::kComplex64);
  const std::vector<C128> z = {{1e300, -0.0}, {5e-324, 1}};
  absl::StatusOr<Array> w = c_->Upload<C128>({2}, z);
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<std::vector<C128>> back = w->ToVector<C128>();
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, z);
  // ones / zeros / full of complex, a complex fill giving complex128.
  Expect(ones(*c_, {2}, DType::kComplex64), DType::kComplex64, {{1, 0}, {1, 0}}, "ones");
  Expect(full(*c_, {3}, Scalar::Complex(1, -2)), DType::kComplex128, {{1, -2}, {1, -2}, {1, -2}},
         "np.full(3, 1-2j)");
  Expect(full(*c_, {1}, Scalar::Float(2.5), DType::kComplex128), DType::kComplex128, {{2.5, 0}},
         "np.full(1, 2.5, complex128)");
  // A named array is written to the data dir as NumPy's '<c16' .npy and
  // attaches as it was.
  ASSERT_TRUE(c_->Keep(*w, "complex-named").ok());
  absl::StatusOr<Array> named = c_->Attach("complex-named");
  ASSERT_TRUE(named.ok()) << named.status();
  Expect(*named, DType::kComplex128, z, "attached");
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(DataDir() + "/arrays")) {
    if (f.path().extension() != ".npy") continue;
    absl::StatusOr<HostArray> h = ReadNpy(f.path().string());
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(h->dtype, DType::kComplex128);
    EXPECT_EQ(h->bytes, std::string(reinterpret_cast<const char*>(z.data()), 32));
    ++files;
  }
  EXPECT_EQ(files, 1);
  ASSERT_TRUE(c_->Delete("complex-named").ok());
}

TEST_F(ComplexDtypesTest, ElementwiseIsNumpysBitForBit) {
  Expect(a_ + b_, DType::kComplex64,
         {{3, 1},
          {-0.375, 0.25},
          {0, -8},
          {1, 1},
          {1.0000000150474662e+30, 2},
          {0.4000000059604645, -0.19999998807907104}},
         "a + b");
  Expect(a_ * b_, DType::kComplex64,
         {{4, 3},
          {-0.0625, 0.03125},
          {-25, 0},
          {0, 0},
          {3, 2.0000000300949324e+30},
          {0.6600000262260437, 0.12000001221895218}},
         "a * b");
  Expect(a_ / b_, DType::kComplex64,
         {{0, 1},
          {-4, 2},
          {0.2800000011920929, 0.9599999785423279},
          {0, 0},
          {0.75, -5.000000075237331e+29},
          {-0.6666666269302368, 0.3333333432674408}},
         "a / b");
  Expect(-a_, DType::kComplex64,
         {{-1, -2},
          {0.5, -0.25},
          {-3, 4},
          {-0.0, -0.0},
          {-1.0000000150474662e+30, -1.0000000031710769e-30},
          {-0.10000000149011612, -0.699999988079071}},
         "-a");
  ExpectArray(client::absolute(a_), DType::kFloat32, {6},
              {2.2360680103302, 0.55901700258255, 5, 0, 1.0000000150474662e+30, 0.7071067690849304},
              "np.abs(a)");
  ExpectArray(client::equal(a_, b_), DType::kBool, {6}, {0, 0, 0, 0, 0, 0}, "a == b");
  ExpectArray(client::less(a_, b_), DType::kBool, {6}, {1, 1, 0, 1, 0, 1}, "a < b (lexicographic)");
  Expect(client::maximum(a_, b_), DType::kComplex64,
         {{2, -1},
          {0.125, 0},
          {3, -4},
          {1, 1},
          {1.0000000150474662e+30, 1.0000000031710769e-30},
          {0.30000001192092896, -0.8999999761581421}},
         "np.maximum(a, b)");
}

TEST_F(ComplexDtypesTest, PromotionAndWeakScalarsAsNumpy2) {
  Array f64 = UploadAs(*c_, DType::kFloat64, {6}, {1, 2, 3, 4, 5, 6});
  Expect(a_ + f64, DType::kComplex128,
         {{2, 2},
          {1.5, 0.25},
          {6, -4},
          {4, 0},
          {1.0000000150474662e+30, 1.0000000031710769e-30},
          {6.100000001490116, 0.699999988079071}},
         "a + f64");
  Array f32 = UploadAs(*c_, DType::kFloat32, {6}, {1.5, -2, 0, 3, 4, 5});
  Expect(f32 + C128(0.5, 2), DType::kComplex64,
         {{2, 2}, {-1.5, 2}, {0.5, 2}, {3.5, 2}, {4.5, 2}, {5.5, 2}}, "f32 + (0.5+2j)");
  Array i32 = UploadAs(*c_, DType::kInt32, {6}, {1, 2, 3, 4, 5, 6});
  Expect(i32 * C128(1, -1), DType::kComplex128,
         {{1, -1}, {2, -2}, {3, -3}, {4, -4}, {5, -5}, {6, -6}}, "i32 * (1-1j)");
  Expect(a_ + 1.5, DType::kComplex64,
         {{2.5, 2},
          {1, 0.25},
          {4.5, -4},
          {1.5, 0},
          {1.0000000150474662e+30, 1.0000000031710769e-30},
          {1.600000023841858, 0.699999988079071}},
         "a + 1.5 (stays complex64)");
}

TEST_F(ComplexDtypesTest, CastsAsNumpy) {
  Array c128 = client::astype(a_, DType::kComplex128) * C128(1.1, 0.3);
  ExpectArray(client::astype(c128, DType::kFloat64), DType::kFloat64, {6},
              {0.5000000000000001, -0.625, 4.5, 0, 1.100000016552213e+30, -0.09999999478459357},
              "c128.astype(f64): the real part");
  const std::vector<C64> z = {{0, 0}, {0, 1}, {1, 0}, {-0.0f, -0.0f}};
  Array zz = c_->Upload<C64>({4}, z).value();
  ExpectArray(client::astype(zz, DType::kBool), DType::kBool, {4}, {0, 1, 1, 0},
              "astype(bool): either part nonzero");
  Array f32 = UploadAs(*c_, DType::kFloat32, {2}, {1.5, -2});
  Expect(client::astype(f32, DType::kComplex64), DType::kComplex64, {{1.5, 0}, {-2, 0}},
         "f32.astype(c64)");
}

TEST_F(ComplexDtypesTest, ReductionsAndMatmul) {
  absl::StatusOr<std::vector<C128>> s =
      client::sum(client::astype(a_, DType::kComplex128)).ToVector<C128>();
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->size(), 1u);
  EXPECT_DOUBLE_EQ((*s)[0].real(), 1.0000000150474662e+30);
  EXPECT_NEAR((*s)[0].imag(), -1.050000011920929, 1e-12);
  absl::StatusOr<std::vector<C64>> m = client::mean(b_).ToVector<C64>();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_NEAR((*m)[0].real(), 0.07083333283662796, 1e-6);
  EXPECT_NEAR((*m)[0].imag(), -0.4833333492279053, 1e-6);
  const std::vector<C128> g = {{1, 2}, {3, -1}, {0, 0.5}, {-2, 0}};
  Array x = c_->Upload<C128>({2, 2}, g).value();
  Expect(client::sum(x, 0), DType::kComplex128, {{1, 2.5}, {1, -1}}, "sum(axis=0)");
  Expect(client::prod(x, 1), DType::kComplex128, {{5, 5}, {0, -1}}, "prod(axis=1)");
  Expect(client::prod(x), DType::kComplex128, {{5, -5}}, "prod()");
  Expect(client::prod(client::slice(x, {{0, 0}})), DType::kComplex128, {{1, 0}}, "empty prod");
  const std::vector<C64> z = {{0, 0}, {0, 0}, {0, 1}};
  Array zz = c_->Upload<C64>({3}, z).value();
  ExpectArray(client::any(zz), DType::kBool, {}, {1}, "any");
  ExpectArray(client::all(zz), DType::kBool, {}, {0}, "all");
  const std::vector<C64> mv = {{1, 1}, {2, 0}, {0, 0}, {1, -2}};
  const std::vector<C64> nv = {{3, 0}, {0, 1}, {2, -1}, {-1, 0}};
  Array mm = c_->Upload<C64>({2, 2}, mv).value();
  Array nn = c_->Upload<C64>({2, 2}, nv).value();
  Expect(client::matmul(mm, nn), DType::kComplex64, {{7, 1}, {-3, 1}, {0, -5}, {-1, 2}}, "m @ n");
}

TEST_F(ComplexDtypesTest, RefusalsAreInvalidArgumentAndTheServerServesOn) {
  for (const Array& bad : {client::floor(a_), client::arctan2(a_, b_), client::remainder(a_, b_)}) {
    absl::StatusOr<client::HostData> d = bad.Download();
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << d.status();
    EXPECT_THAT(std::string(d.status().message()), HasSubstr("complex64")) << d.status();
  }
  Expect(a_ - a_, DType::kComplex64, {{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}},
         "still serving");
  // max and min are NumPy's lexicographic ones.
  Expect(client::max(a_), DType::kComplex64, {{1e30f, 1e-30f}}, "max");
  Expect(client::min(a_), DType::kComplex64, {{-0.5, 0.25}}, "min");
  absl::StatusOr<std::vector<int64_t>> at = client::argmax(a_).ToVector<int64_t>();
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ(*at, std::vector<int64_t>{4});
  at = client::argmin(a_).ToVector<int64_t>();
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ(*at, std::vector<int64_t>{1});
}

}  // namespace
}  // namespace resident::e2e

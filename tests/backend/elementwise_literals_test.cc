// Every elementwise op of the table on every backend ("cpu", "cuda:0" when
// present) against NumPy's own results (elementwise_literals.inc, generated
// by make_elementwise_literals.py with NumPy 2): special values (0, -0,
// tiny, huge, inf, -inf, nan, INT_MIN, ...) and random inputs, in each
// dtype NumPy has a same-dtype loop for; the others must be refused.
//
// What "agrees" means: bit-identical (any NaN matches any NaN), except the
// transcendental functions (power, exp, log, log1p, expm1, sin, cos, tanh)
// on floats, which agree within kMaxUlps units in the last place (8 for
// float32 power): the CPU backend calls glibc's libm (< 1 ULP), CUDA its
// libdevice functions (documented: 1-2 ULP, powf 4), NumPy its own SIMD
// loops (measured against correctly rounded results on an AVX-512 host:
// float32 log 3, exp/log1p/expm1 2, sin/cos/tanh 1; float64 1). float16
// and bfloat16 compute in float32 and round once, so they meet the same
// bound in their own ULP (in practice 0 or 1). inf and NaN results must match
// exactly; signed zeros are not compared for maximum/minimum ties (NumPy's answer depends on the
// CPU's SIMD loop). Bool-valued ops write 0/1 of the compute dtype (device_op.h); the test reads
// them as `!= 0`.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/device/backend.h"
#include "server/device/device.h"
#include "tests/backend/backend_test_support.h"

namespace resident {
namespace {

struct LiteralCase {
  const char* op;
  DType dtype;
  int n;
  const uint64_t* a;
  const uint64_t* b;     // nullptr for unary ops
  const uint64_t* want;  // nullptr: NumPy has no such loop
};
#include "tests/backend/elementwise_literals.inc"

constexpr int64_t kMaxUlps = 4;

double AsDouble(const std::vector<uint8_t>& bytes, int i, DType d) {
  return backend_test::FloatAt(bytes, i, d);
}

using ElementwiseLiteralsTest = backend_test::BackendTest;

TEST_P(ElementwiseLiteralsTest, EveryOpAndDtypeMatchesNumpy) {
  int checked = 0;
  for (const LiteralCase& c : kLiteralCases) {
    const ElementwiseInfo* e = FindElementwise(c.op);
    ASSERT_NE(e, nullptr) << c.op;
    SCOPED_TRACE(std::string(c.op) + " " + DTypeName(c.dtype));
    EXPECT_EQ(ElementwiseAccepts(e->kind, c.dtype), c.want != nullptr);
    absl::StatusOr<DeviceArray> a =
        Upload(c.dtype, c.n, backend_test::LiteralBytes(c.a, c.n, c.dtype));
    ASSERT_TRUE(a.ok()) << a.status();
    absl::StatusOr<DeviceArray> b = a;
    if (c.b != nullptr) b = Upload(c.dtype, c.n, backend_test::LiteralBytes(c.b, c.n, c.dtype));
    ASSERT_TRUE(b.ok()) << b.status();
    absl::StatusOr<DeviceArray> out =
        Upload(c.dtype, c.n, std::vector<uint8_t>(c.n * ItemSize(c.dtype), 0xAB));
    ASSERT_TRUE(out.ok()) << out.status();
    ElementwiseOp op{e->kind, {&*a, c.b != nullptr ? &*b : nullptr}, &*out};
    absl::Status s = backend_->Run(*stream_, op);
    if (s.ok()) s = stream_->Synchronize();
    if (c.want == nullptr) {
      EXPECT_FALSE(s.ok()) << "NumPy has no " << c.op << " loop for " << DTypeName(c.dtype);
      continue;
    }
    ASSERT_TRUE(s.ok()) << s;
    std::vector<uint8_t> got(out->nbytes());
    ASSERT_TRUE(stream_->CopyToHost(*out->buffer, 0, got.data(), out->nbytes()).ok());
    const bool bool_result = e->rule == ElementwiseRule::kBoolResult;
    const DType wd = bool_result ? DType::kBool : c.dtype;
    const std::vector<uint8_t> want = backend_test::LiteralBytes(c.want, c.n, wd);
    const int64_t item = ItemSize(c.dtype);
    for (int i = 0; i < c.n; ++i) {
      const std::string at = "element " + std::to_string(i) + " (a bits 0x" +
                             absl::StrCat(absl::Hex(c.a[i])) +
                             (c.b ? ", b bits 0x" + absl::StrCat(absl::Hex(c.b[i])) : "") + ")";
      if (bool_result) {
        bool g = false;
        for (int64_t k = 0; k < item; ++k) g |= got[i * item + k] != 0;
        EXPECT_EQ(g, want[i] != 0) << at;
        continue;
      }
      if (std::memcmp(&got[i * item], &want[i * item], item) == 0) continue;
      if (!IsFloating(c.dtype)) {
        ADD_FAILURE() << at << ": bits differ";
        continue;
      }
      const double g = AsDouble(got, i, c.dtype), w = AsDouble(want, i, c.dtype);
      if (std::isnan(g) && std::isnan(w)) continue;
      if ((e->kind == ElementwiseKind::kMaximum || e->kind == ElementwiseKind::kMinimum ||
           e->kind == ElementwiseKind::kFmax || e->kind == ElementwiseKind::kFmin) &&
          g == 0 && w == 0) {
        continue;  // a tie of zeros: NumPy's sign depends on its loop (dtype, length)
      }
      const int64_t ulps = e->kind == ElementwiseKind::kPower && c.dtype == DType::kFloat32
                               ? 2 * kMaxUlps
                               : kMaxUlps;
      const bool close = backend_test::Transcendental(e->kind) && std::isfinite(g) &&
                         std::isfinite(w) && backend_test::UlpDistance(g, w, c.dtype) <= ulps;
      EXPECT_TRUE(close) << at << ": got " << g << ", NumPy " << w;
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, ElementwiseLiteralsTest, ::testing::Values("cpu", "cuda:0"),
                         backend_test::BackendName);

}  // namespace
}  // namespace resident

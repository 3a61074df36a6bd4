// What the backend suites share: a fixture over one backend per test
// parameter ("cpu", "cuda:0"; CUDA skips where it is absent), literal bits to
// bytes, float distances in ULP, and which ops are transcendental (compared
// within a ULP bound rather than bit for bit).
#ifndef RESIDENT_TESTS_BACKEND_BACKEND_TEST_SUPPORT_H_
#define RESIDENT_TESTS_BACKEND_BACKEND_TEST_SUPPORT_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/elementwise_kind.h"
#include "gtest/gtest.h"
#include "server/device/backend.h"
#include "server/device/device.h"

namespace resident::backend_test {

// Each of the n literals' low ItemSize(d) bytes, in order (little-endian).
inline std::vector<uint8_t> LiteralBytes(const uint64_t* bits, int n, DType d) {
  const int64_t item = ItemSize(d);
  std::vector<uint8_t> out(n * item);
  for (int i = 0; i < n; ++i) std::memcpy(&out[i * item], &bits[i], item);
  return out;
}

// The float's position on a line where adjacent floats of `d` differ by 1.
inline int64_t OrderedFloat(double v, DType d) {
  if (IsHalf(d)) {
    const uint16_t u =
        d == DType::kFloat16 ? resident_double_to_half(v).bits : resident_double_to_bf16(v).bits;
    return (u & 0x8000) ? -static_cast<int64_t>(u & 0x7fff) : u;
  }
  if (d == DType::kFloat32) {
    const float f = static_cast<float>(v);
    int32_t i;
    std::memcpy(&i, &f, 4);
    return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : i;
  }
  int64_t i;
  std::memcpy(&i, &v, 8);
  return i < 0 ? -(i & 0x7fffffffffffffff) : i;
}

// Element i of host bytes of float dtype d, as a double.
inline double FloatAt(const std::vector<uint8_t>& bytes, int i, DType d) {
  if (IsHalf(d)) {
    uint16_t u;
    std::memcpy(&u, &bytes[i * 2], 2);
    return d == DType::kFloat16 ? resident_half_to_float(ResidentFloat16{u})
                                : resident_bf16_to_float(ResidentBFloat16{u});
  }
  if (d == DType::kFloat32) {
    float f;
    std::memcpy(&f, &bytes[i * 4], 4);
    return f;
  }
  double f;
  std::memcpy(&f, &bytes[i * 8], 8);
  return f;
}

// Adjacent floats of `d` between a and b.
inline int64_t UlpDistance(double a, double b, DType d) {
  const int64_t diff = OrderedFloat(a, d) - OrderedFloat(b, d);
  return diff < 0 ? -diff : diff;
}

// The ops whose float results libm, libdevice and NumPy round differently.
inline bool Transcendental(ElementwiseKind k) {
  switch (k) {
    case ElementwiseKind::kPower:
    case ElementwiseKind::kExp:
    case ElementwiseKind::kLog:
    case ElementwiseKind::kLog1p:
    case ElementwiseKind::kExpm1:
    case ElementwiseKind::kSin:
    case ElementwiseKind::kCos:
    case ElementwiseKind::kTanh:
    case ElementwiseKind::kTan:
    case ElementwiseKind::kArcsin:
    case ElementwiseKind::kArccos:
    case ElementwiseKind::kArctan:
    case ElementwiseKind::kSinh:
    case ElementwiseKind::kCosh:
    case ElementwiseKind::kArcsinh:
    case ElementwiseKind::kArccosh:
    case ElementwiseKind::kArctanh:
    case ElementwiseKind::kLog2:
    case ElementwiseKind::kLog10:
    case ElementwiseKind::kArctan2:
    case ElementwiseKind::kHypot:
    case ElementwiseKind::kLogaddexp:
      return true;
    default:
      return false;
  }
}

// One backend (the parameter) with a stream; Upload puts n elements of d on it.
class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string& spec = GetParam();
    const bool cuda = spec.rfind("cuda", 0) == 0;
    if (cuda && !CudaSupportBuilt()) GTEST_SKIP() << spec << ": this build has no CUDA support";
    absl::StatusOr<std::unique_ptr<Backend>> made = CreateBackend(spec);
    if (!made.ok()) {
      if (cuda) GTEST_SKIP() << spec << ": no usable device: " << made.status();
      FAIL() << spec << ": " << made.status();
    }
    backend_ = *std::move(made);
    stream_ = backend_->NewStream();
  }

  absl::StatusOr<DeviceArray> Upload(DType d, int n, const std::vector<uint8_t>& bytes) {
    DeviceArray a;
    a.dtype = d;
    a.shape = {n};
    absl::StatusOr<std::shared_ptr<Buffer>> buf =
        backend_->Allocate(static_cast<int64_t>(bytes.size()), *stream_);
    if (!buf.ok()) return buf.status();
    a.buffer = *buf;
    absl::Status s =
        stream_->CopyToDevice(bytes.data(), *a.buffer, 0, static_cast<int64_t>(bytes.size()));
    if (!s.ok()) return s;
    return a;
  }

  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Stream> stream_;
};

// Test names for the backend parameter: "cpu", "cuda_0".
inline std::string BackendName(const ::testing::TestParamInfo<std::string>& p) {
  std::string name = p.param;
  for (char& c : name) c = c == ':' ? '_' : c;
  return name;
}

// How far a backend's complex result of `kind` may be from NumPy's (or the
// CPU backend's, which is glibc's, NumPy's own): 0 for the kinds computed
// with NumPy's exact arithmetic (bit for bit), 4 ULP of the larger part for
// those on library functions, 8 for the inverse functions (glibc's own are
// up to 3 ULP off, tests/unit/complex_math_test.cc), and -1 for the kinds
// whose error depends on the inputs (power's exp(y log x), NumPy's log1p
// and expm1 formulas, which cancel): complex_literals_test bounds those per
// element.
inline int ComplexUlps(ElementwiseKind kind) {
  using K = ElementwiseKind;
  switch (kind) {
    case K::kSign:
    case K::kSqrt:
    case K::kExp:
    case K::kLog:
    case K::kSin:
    case K::kCos:
    case K::kTan:
    case K::kSinh:
    case K::kCosh:
    case K::kTanh:
    case K::kLog2:
    case K::kLog10:
      return 4;
    case K::kArcsin:
    case K::kArccos:
    case K::kArctan:
    case K::kArcsinh:
    case K::kArccosh:
    case K::kArctanh:
      return 8;
    case K::kPower:
    case K::kLog1p:
    case K::kExpm1:
      return -1;
    default:
      return 0;
  }
}

}  // namespace resident::backend_test

#endif  // RESIDENT_TESTS_BACKEND_BACKEND_TEST_SUPPORT_H_

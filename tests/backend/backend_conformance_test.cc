// One suite over the Backend interface, run on every backend ("cpu" always,
// "cuda:0" when built and present) and compared with the CPU reference
// backend, op by op and dtype by dtype.
//
// What "agrees" means:
//  * Fill, Arange, Binary, Negative, Cast, Transpose: bit-identical, except
//    that any NaN matches any NaN (x86 makes 0/0 a negative NaN, CUDA a
//    positive one; NumPy prints both as nan). -0.0 and +0.0 must match.
//  * Sum and Matmul on floats: |got - want| <= rtol * sum(|terms|) with
//    rtol = 1e-5 for float32 and 1e-12 for float64, where sum(|terms|) is the
//    sum of the absolute values of what was added (for matmul, of the
//    products a[i,p] * b[p,j]). TF32 or other reduced-precision math does not
//    pass. Integer and bool results are exact.
//  * The transcendental elementwise kinds (power, exp, log, log1p, expm1,
//    sin, cos, tanh) on floats: within kTranscendentalUlps units in the last
//    place of the CPU's glibc results (CUDA's libdevice is documented at 1-2
//    ULP, powf at 4); inf, NaN and exact results as above.
//  * Refused arguments: both backends return a non-OK status.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "gtest/gtest.h"
#include "server/device/backend.h"
#include "server/device/cpu/cpu_backend.h"
#include "server/device/device.h"
#include "tests/backend/backend_test_support.h"

namespace resident {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A host copy of an array: dtype, shape and raw little-endian bytes.
struct HostArray {
  DType dtype = DType::kFloat64;
  Shape shape;
  std::vector<uint8_t> bytes;

  int64_t size() const { return NumElements(shape); }
  template <typename T>
  T at(int64_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  // Element i as a double (for tolerances and messages).
  double value(int64_t i) const {
    if (dtype == DType::kBool) return at<uint8_t>(i);
    return VisitDType(
        dtype,
        [&](auto zero) {
          using T = decltype(zero);
          if constexpr (kIsHalfStorage<T>) {
            return static_cast<double>(resident_load(at<T>(i)));
          } else {
            return static_cast<double>(at<T>(i));
          }
        },
        [] { return 0.0; });
  }
  std::string repr(int64_t i) const {
    std::ostringstream os;
    os.precision(17);
    switch (dtype) {
      case DType::kBool:
        os << (at<uint8_t>(i) ? "True" : "False") << " (byte " << int{at<uint8_t>(i)} << ")";
        break;
      case DType::kInt8:
      case DType::kInt16:
      case DType::kInt32:
      case DType::kInt64:
        os << static_cast<int64_t>(value(i));
        if (dtype == DType::kInt64) os.str(std::to_string(at<int64_t>(i)));
        break;
      case DType::kUint8:
      case DType::kUint16:
      case DType::kUint32:
      case DType::kUint64: {
        uint64_t u = 0;
        std::memcpy(&u, bytes.data() + i * ItemSize(dtype), ItemSize(dtype));
        os << u;
        break;
      }
      case DType::kFloat32: {
        uint32_t u = at<uint32_t>(i);
        os << at<float>(i) << " (0x" << std::hex << u << ")";
        break;
      }
      case DType::kFloat64: {
        uint64_t u = at<uint64_t>(i);
        os << at<double>(i) << " (0x" << std::hex << u << ")";
        break;
      }
      case DType::kFloat16:
      case DType::kBFloat16: {
        uint16_t u = at<uint16_t>(i);
        os << value(i) << " (0x" << std::hex << u << ")";
        break;
      }
      case DType::kComplex64: {
        const Complex64 z = at<Complex64>(i);
        os << "(" << z.re << ", " << z.im << ")";
        break;
      }
      case DType::kComplex128: {
        const Complex128 z = at<Complex128>(i);
        os << "(" << z.re << ", " << z.im << ")";
        break;
      }
    }
    return os.str();
  }
};

// Deterministic test data. Floats mix ordinary values with the special ones
// (NaN, +-inf, +-0, subnormals, values beyond int32/int64 range).
HostArray Random(DType dtype, Shape shape, uint64_t seed, bool specials = true) {
  HostArray h{dtype, std::move(shape), {}};
  const int64_t n = h.size();
  h.bytes.resize(n * ItemSize(dtype));
  std::mt19937_64 rng(seed);
  const double special[] = {kNaN, kInf, -kInf, 0.0, -0.0, 5e-324, 1e-310, 3e9,
                            -3e9, 1e20, -1e20, 2.5, -2.5, 0.5,    1e39};
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = rng();
    switch (dtype) {
      case DType::kBool:
        h.bytes[i] = r & 1;
        break;
      case DType::kInt8:
      case DType::kInt16:
      case DType::kInt32:
      case DType::kInt64:
      case DType::kUint8:
      case DType::kUint16:
      case DType::kUint32:
      case DType::kUint64: {
        // Mostly full range (to wrap); some small values (of either sign;
        // unsigned ones wrap to the top of the range).
        const uint64_t v =
            (r >> 40) % 4 == 0 ? static_cast<uint64_t>(static_cast<int64_t>(r % 201) - 100) : r;
        std::memcpy(&h.bytes[i * ItemSize(dtype)], &v, ItemSize(dtype));  // little-endian
        break;
      }
      case DType::kFloat32:
      case DType::kFloat64:
      case DType::kFloat16:
      case DType::kBFloat16: {
        double v;
        if (specials && r % 16 == 0) {
          v = special[(r >> 8) % std::size(special)];
        } else {
          v = (static_cast<double>(r >> 11) / 9007199254740992.0 - 0.5) * 200.0;
        }
        if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) {
          // Rounded once (float16's range is +-65504: 3e9 and 1e20 are inf).
          const uint16_t u = dtype == DType::kFloat16 ? resident_double_to_half(v).bits
                                                      : resident_double_to_bf16(v).bits;
          std::memcpy(&h.bytes[i * 2], &u, 2);
        } else if (dtype == DType::kFloat32) {
          float f = static_cast<float>(v);
          std::memcpy(&h.bytes[i * 4], &f, 4);
        } else {
          std::memcpy(&h.bytes[i * 8], &v, 8);
        }
        break;
      }
      case DType::kComplex64:
      case DType::kComplex128: {
        // Each part drawn as a float's value is.
        double parts[2];
        for (int k = 0; k < 2; ++k) {
          const uint64_t rr = k == 0 ? r : rng();
          parts[k] = specials && rr % 16 == 0
                         ? special[(rr >> 8) % std::size(special)]
                         : (static_cast<double>(rr >> 11) / 9007199254740992.0 - 0.5) * 200.0;
        }
        if (dtype == DType::kComplex64) {
          const Complex64 z{static_cast<float>(parts[0]), static_cast<float>(parts[1])};
          std::memcpy(&h.bytes[i * 8], &z, 8);
        } else {
          const Complex128 z{parts[0], parts[1]};
          std::memcpy(&h.bytes[i * 16], &z, 16);
        }
        break;
      }
    }
  }
  return h;
}

std::string Describe(DType d, const Shape& s) { return std::string(DTypeName(d)) + ShapeString(s); }

// A backend with its own stream, and helpers to move HostArrays through it.
struct Side {
  Backend* backend;
  std::unique_ptr<Stream> stream;

  absl::StatusOr<DeviceArray> Upload(const HostArray& h) {
    DeviceArray a;
    a.dtype = h.dtype;
    a.shape = h.shape;
    absl::StatusOr<std::shared_ptr<Buffer>> buf =
        backend->Allocate(static_cast<int64_t>(h.bytes.size()), *stream);
    if (!buf.ok()) return buf.status();
    a.buffer = *buf;
    absl::Status s =
        stream->CopyToDevice(h.bytes.data(), *a.buffer, 0, static_cast<int64_t>(h.bytes.size()));
    if (!s.ok()) return s;
    return a;
  }
  absl::StatusOr<DeviceArray> Output(DType dtype, const Shape& shape) {
    HostArray h{dtype, shape, {}};
    h.bytes.assign(h.size() * ItemSize(dtype), 0xAB);  // garbage, not zero
    return Upload(h);
  }
  absl::StatusOr<HostArray> Download(const DeviceArray& a) {
    absl::Status s = stream->Synchronize();
    if (!s.ok()) return s;
    HostArray h{a.dtype, a.shape, std::vector<uint8_t>(a.nbytes())};
    s = stream->CopyToHost(*a.buffer, 0, h.bytes.data(), a.nbytes());
    if (!s.ok()) return s;
    return h;
  }
};

// An op on one backend: inputs already uploaded, out allocated.
using OpFn =
    std::function<absl::Status(Backend&, Stream&, std::vector<DeviceArray>&, DeviceArray&)>;

// Per-output-element tolerance scale (sum of |terms|); empty for exact ops.
using ScaleFn = std::function<std::vector<double>()>;

class BackendConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string& spec = GetParam();
    const bool cuda = spec.rfind("cuda", 0) == 0;
    if (cuda && !CudaSupportBuilt()) {
      GTEST_SKIP() << spec << ": this build has no CUDA support "
                   << "(configure with -DRESIDENT_CUDA=ON on a machine with nvcc)";
    }
    absl::StatusOr<std::unique_ptr<Backend>> made = CreateBackend(spec);
    if (!made.ok()) {
      if (cuda) GTEST_SKIP() << spec << ": no usable device: " << made.status();
      FAIL() << spec << ": " << made.status();
    }
    test_backend_ = *std::move(made);
    ref_backend_ = NewCpuBackend();
    test_ = Side{test_backend_.get(), test_backend_->NewStream()};
    ref_ = Side{ref_backend_.get(), ref_backend_->NewStream()};
  }

  // Runs `op` on both backends and compares. `what` names the case in
  // failure messages. rtol applies when scale is given (float sum/matmul).
  void Check(const std::string& what, const std::vector<HostArray>& inputs, DType out_dtype,
             const Shape& out_shape, const OpFn& op, const ScaleFn& scale = nullptr) {
    SCOPED_TRACE(what);
    absl::StatusOr<HostArray> want = RunOn(ref_, inputs, out_dtype, out_shape, op);
    absl::StatusOr<HostArray> got = RunOn(test_, inputs, out_dtype, out_shape, op);
    if (!want.ok()) {
      EXPECT_FALSE(got.ok()) << GetParam() << " accepted what the reference "
                             << "refused (" << want.status() << ")";
      return;
    }
    ASSERT_TRUE(got.ok()) << GetParam() << " failed: " << got.status();
    Compare(*want, *got, scale ? scale() : std::vector<double>{});
  }

  absl::StatusOr<HostArray> RunOn(Side& side, const std::vector<HostArray>& inputs, DType out_dtype,
                                  const Shape& out_shape, const OpFn& op) {
    std::vector<DeviceArray> in;
    for (const HostArray& h : inputs) {
      absl::StatusOr<DeviceArray> a = side.Upload(h);
      if (!a.ok()) return a.status();
      in.push_back(*a);
    }
    absl::StatusOr<DeviceArray> out = side.Output(out_dtype, out_shape);
    if (!out.ok()) return out.status();
    absl::Status s = op(*side.backend, *side.stream, in, *out);
    if (s.ok()) s = side.stream->Synchronize();
    if (!s.ok()) return s;
    return side.Download(*out);
  }

  void Compare(const HostArray& want, const HostArray& got, const std::vector<double>& scale) {
    ASSERT_EQ(want.dtype, got.dtype);
    if (IsComplex(want.dtype)) {  // part by part, as floats of the parts' dtype
      auto parts = [](const HostArray& h) {
        HostArray p{ComplexComponent(h.dtype), h.shape, h.bytes};
        p.shape.push_back(2);
        return p;
      };
      if (complex_ulps_ > 0) return CompareComplexUlps(parts(want), parts(got));
      std::vector<double> part_scale;
      for (double x : scale) part_scale.insert(part_scale.end(), {x, x});
      return Compare(parts(want), parts(got), part_scale);
    }
    ASSERT_EQ(want.bytes.size(), got.bytes.size());
    const bool is_float = IsFloating(want.dtype);
    // float16 / bfloat16 results are rounded to 11 / 8 significant bits
    // once, so two accumulation orders may differ by one of their ULPs.
    const double rtol = want.dtype == DType::kFloat16    ? 2e-3
                        : want.dtype == DType::kBFloat16 ? 1.6e-2
                        : want.dtype == DType::kFloat32  ? 1e-5
                                                         : 1e-12;
    const int64_t item = ItemSize(want.dtype);
    int64_t mismatches = 0, first = -1;
    for (int64_t i = 0; i < want.size(); ++i) {
      bool same = std::memcmp(&want.bytes[i * item], &got.bytes[i * item], item) == 0;
      if (!same && is_float) {
        const double w = want.value(i), g = got.value(i);
        if (std::isnan(w) && std::isnan(g)) {
          same = true;
        } else if (!scale.empty() && std::isfinite(w) && std::isfinite(g)) {
          same = std::fabs(w - g) <= rtol * scale[i] + 1e-300;
        } else if (ulps_ > 0 && std::isfinite(w) && std::isfinite(g)) {
          same = backend_test::UlpDistance(w, g, want.dtype) <= ulps_;
        }
      }
      if (!same) {
        if (first < 0) first = i;
        ++mismatches;
      }
    }
    if (mismatches > 0) {
      ADD_FAILURE() << GetParam() << " differs from cpu at " << mismatches << " of " << want.size()
                    << " elements of " << Describe(want.dtype, want.shape)
                    << "; first at flat index " << first << ": cpu " << want.repr(first) << ", "
                    << GetParam() << " " << got.repr(first)
                    << (scale.empty()
                            ? std::string(" (bit-identical required)")
                            : " (allowed |diff| " + std::to_string(rtol * scale[first]) + ")");
    }
  }

  // Parts (re, im pairs) within complex_ulps_ ULP of the larger part of
  // want; a non-finite part must match (any NaN matches any NaN).
  void CompareComplexUlps(const HostArray& want, const HostArray& got) {
    ASSERT_EQ(want.bytes.size(), got.bytes.size());
    const bool f32 = want.dtype == DType::kFloat32;
    int64_t mismatches = 0, first = -1;
    for (int64_t i = 0; i + 1 < want.size(); i += 2) {
      const double w[2] = {want.value(i), want.value(i + 1)};
      const double g[2] = {got.value(i), got.value(i + 1)};
      double m = 0;
      for (double v : w) m = std::isfinite(v) ? std::max(m, std::fabs(v)) : m;
      const double ulp = f32 ? static_cast<double>(std::nextafter(static_cast<float>(m), INFINITY) -
                                                   static_cast<float>(m))
                             : std::nextafter(m, INFINITY) - m;
      bool same = true;
      for (int p = 0; p < 2; ++p) {
        if (!std::isfinite(w[p])) {
          same &= (std::isnan(w[p]) && std::isnan(g[p])) || w[p] == g[p];
        } else {
          same &= std::isfinite(g[p]) && std::fabs(g[p] - w[p]) <= complex_ulps_ * ulp;
        }
      }
      if (!same) {
        if (first < 0) first = i / 2;
        ++mismatches;
      }
    }
    if (mismatches > 0) {
      ADD_FAILURE() << GetParam() << " differs from cpu at " << mismatches << " complex elements "
                    << "by more than " << complex_ulps_ << " ULP of the larger part; first at "
                    << first << ": cpu (" << want.value(2 * first) << ", "
                    << want.value(2 * first + 1) << "), " << GetParam() << " ("
                    << got.value(2 * first) << ", " << got.value(2 * first + 1) << ")";
    }
  }

  std::unique_ptr<Backend> test_backend_, ref_backend_;
  Side test_{nullptr, nullptr}, ref_{nullptr, nullptr};
  int64_t ulps_ = 0;  // > 0: floats may differ by this many ULP (transcendentals)
  // > 0: complex results may differ by this many ULP of the larger part
  // (sign and the library functions: glibc on the CPU, core/complex_math.h
  // on CUDA, each within the README's bound of NumPy's).
  int64_t complex_ulps_ = 0;
};

constexpr int64_t kTranscendentalUlps = 8;

const char* OpName(ElementwiseKind op) { return ElementwiseName(op); }

// Every binary kind: a new one is tested on every backend without an edit here.
const std::vector<ElementwiseKind> kOps = [] {
  std::vector<ElementwiseKind> ops;
  for (ElementwiseKind k : kAllElementwiseKinds) {
    if (Arity(k) == 2) ops.push_back(k);
  }
  return ops;
}();

bool Accepted(ElementwiseKind op, DType d) { return ElementwiseAccepts(op, d); }

// --- Elementwise ---------------------------------------------------------------

TEST_P(BackendConformanceTest, BinaryEveryOpDtypeAndBroadcast) {
  const std::vector<std::pair<Shape, Shape>> cases = {{{1000}, {1000}},
                                                      {{3, 1}, {4}},
                                                      {{}, {2, 3}},
                                                      {{2, 3}, {}},
                                                      {{}, {}},
                                                      {{5, 1, 7}, {1, 6, 1}},
                                                      {{4, 1, 3, 1}, {2, 1, 5}},
                                                      {{0, 3}, {3}},
                                                      {{1}, {17}},
                                                      {{17}, {1}},
                                                      {{2, 1, 3}, {2, 4, 3}},
                                                      {{(1 << 17) + 3}, {(1 << 17) + 3}},
                                                      {{300, 1}, {1, 301}},
                                                      {{64, 33}, {33}}};
  uint64_t seed = 1;
  for (ElementwiseKind op : kOps) {
    ulps_ = backend_test::Transcendental(op) ? kTranscendentalUlps : 0;
    for (DType d : kAllDTypes) {
      for (const auto& [sa, sb] : cases) {
        absl::StatusOr<Shape> out = BroadcastShapes(sa, sb);
        ASSERT_TRUE(out.ok());
        const std::string what =
            std::string(OpName(op)) + " " + Describe(d, sa) + " , " + Describe(d, sb);
        Check(what, {Random(d, sa, seed++), Random(d, sb, seed++)}, d, *out,
              [op](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
                return b.Run(s, ElementwiseOp{op, {in.data(), &in[1]}, &o});
              });
        if (!Accepted(op, d)) break;  // refusal checked once per pair is enough
      }
    }
  }
  ulps_ = 0;
}

TEST_P(BackendConformanceTest, BinaryInPlace) {
  for (DType d : kAllDTypes) {
    for (ElementwiseKind op : kOps) {
      if (!Accepted(op, d)) continue;
      ulps_ = backend_test::Transcendental(op) ? kTranscendentalUlps : 0;
      const Shape shape = {100003};
      const HostArray a = Random(d, shape, 7), b = Random(d, shape, 8);
      const HostArray s0 = Random(d, {}, 9), b2 = Random(d, shape, 10);
      // logaddexp cancels (x + log1p(exp(-|d|)) near 0): within the
      // operands' magnitude, not ULPs of the result.
      auto magnitude = [](const HostArray& x, const HostArray& y, double twice) -> ScaleFn {
        return [x, y, twice] {
          std::vector<double> m(y.size());
          for (int64_t i = 0; i < y.size(); ++i) {
            m[i] =
                twice * std::max(std::fabs(x.value(x.size() == 1 ? 0 : i)), std::fabs(y.value(i)));
          }
          return m;
        };
      };
      const bool cancels = op == ElementwiseKind::kLogaddexp;
      // out aliases a; then out aliases b with b broadcast from a scalar-like a.
      Check(
          std::string("in-place a = a ") + OpName(op) + " b, " + DTypeName(d), {a, b}, d, shape,
          [op](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
            absl::Status st = b.Run(s, ElementwiseOp{op, {in.data(), &in[1]}, in.data()});
            if (!st.ok()) return st;
            return b.Run(s, ElementwiseOp{ElementwiseKind::kAdd, {in.data(), in.data()}, &o});
          },
          cancels ? magnitude(a, b, 2.0) : ScaleFn());
      Check(
          std::string("in-place b = scalar ") + OpName(op) + " b, " + DTypeName(d), {s0, b2}, d,
          shape,
          [op](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
            absl::Status st = b.Run(s, ElementwiseOp{op, {in.data(), &in[1]}, &in[1]});
            if (!st.ok()) return st;
            return b.Run(s, CastOp{&in[1], &o});
          },
          cancels ? magnitude(s0, b2, 1.0) : ScaleFn());
    }
  }
}

// Every unary kind but negative (below): large arrays (the vectorised CUDA
// paths), a 0-d and an empty one, and in place.
TEST_P(BackendConformanceTest, UnaryEveryOpAndDtype) {
  uint64_t seed = 100;
  for (ElementwiseKind op : kAllElementwiseKinds) {
    if (Arity(op) != 1 || op == ElementwiseKind::kNegative) continue;
    ulps_ = backend_test::Transcendental(op) ? kTranscendentalUlps : 0;
    for (DType d : kAllDTypes) {
      for (const Shape& shape : std::vector<Shape>{{}, {0}, {1000}, {(1 << 17) + 5}}) {
        Check(std::string(OpName(op)) + " " + Describe(d, shape), {Random(d, shape, seed++)}, d,
              shape, [op](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
                return b.Run(s, ElementwiseOp{op, {in.data()}, &o});
              });
        if (!Accepted(op, d)) break;
      }
      if (!Accepted(op, d)) continue;
      Check(std::string(OpName(op)) + " in place " + DTypeName(d), {Random(d, {4099}, seed++)}, d,
            {4099}, [op](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
              absl::Status st = b.Run(s, ElementwiseOp{op, {in.data()}, in.data()});
              if (!st.ok()) return st;
              return b.Run(s, CastOp{in.data(), &o});
            });
    }
  }
  ulps_ = 0;
}

TEST_P(BackendConformanceTest, NegativeEveryDtype) {
  for (DType d : kAllDTypes) {
    for (const Shape& shape : std::vector<Shape>{{}, {0}, {1000}, {1 << 17}}) {
      Check("negative " + Describe(d, shape), {Random(d, shape, 11)}, d, shape,
            [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
              return b.Run(s, ElementwiseOp{ElementwiseKind::kNegative, {in.data()}, &o});
            });
    }
    Check(std::string("negative in place ") + DTypeName(d), {Random(d, {4096}, 12)}, d, {4096},
          [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
            absl::Status st =
                b.Run(s, ElementwiseOp{ElementwiseKind::kNegative, {in.data()}, in.data()});
            if (!st.ok()) return st;
            return b.Run(s, CastOp{in.data(), &o});
          });
  }
}

TEST_P(BackendConformanceTest, CastEveryPair) {
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      const std::string name = std::string("cast ") + DTypeName(from) + " -> " + DTypeName(to);
      const OpFn cast = [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
        return b.Run(s, CastOp{in.data(), &o});
      };
      Check(name + " (70001,)", {Random(from, {70001}, 13)}, to, {70001}, cast);
      Check(name + " (3,1)->(3,5)", {Random(from, {3, 1}, 14)}, to, {3, 5}, cast);
      Check(name + " ()->(2,2)", {Random(from, {}, 15)}, to, {2, 2}, cast);
      Check(name + " (0,)", {Random(from, {0}, 16)}, to, {0}, cast);
    }
  }
  // Edge values around the integer limits, float32 and float64.
  HostArray edges{DType::kFloat64, {}, {}};
  const double values[] = {2147483647.0,
                           2147483647.9,
                           2147483648.0,
                           -2147483648.0,
                           -2147483648.9,
                           -2147483649.0,
                           9223372036854775807.0,
                           -9223372036854775808.0,
                           9.3e18,
                           -9.3e18,
                           16777217.0,
                           0.49999999999999994,
                           -0.0,
                           kNaN,
                           kInf,
                           -kInf};
  for (double v : values) {
    edges.bytes.resize(edges.bytes.size() + 8);
    std::memcpy(edges.bytes.data() + edges.bytes.size() - 8, &v, 8);
  }
  edges.shape = {static_cast<int64_t>(std::size(values))};
  for (DType to : kAllDTypes) {
    Check(std::string("cast edge float64 -> ") + DTypeName(to), {edges}, to, edges.shape,
          [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
            return b.Run(s, CastOp{in.data(), &o});
          });
    Check(std::string("cast edge float64 -> float32 -> ") + DTypeName(to), {edges}, to, edges.shape,
          [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
            DeviceArray f32;
            f32.dtype = DType::kFloat32;
            f32.shape = in[0].shape;
            absl::StatusOr<std::shared_ptr<Buffer>> buf = b.Allocate(f32.nbytes(), s);
            if (!buf.ok()) return buf.status();
            f32.buffer = *buf;
            absl::Status st = b.Run(s, CastOp{in.data(), &f32});
            if (!st.ok()) return st;
            return b.Run(s, CastOp{&f32, &o});
          });
  }
}

// --- Creation ------------------------------------------------------------------

TEST_P(BackendConformanceTest, FillEveryDtype) {
  const Scalar values[] = {Scalar::Bool(true),      Scalar::Bool(false),    Scalar::Int(-7),
                           Scalar::Int(4294967297), Scalar::Int(INT64_MIN), Scalar::Float(0.1),
                           Scalar::Float(-2.7),     Scalar::Float(kNaN),    Scalar::Float(3e9),
                           Scalar::Float(-kInf),    Scalar::Float(-0.0),    Scalar::Float(1e300)};
  for (DType d : kAllDTypes) {
    for (const Scalar& v : values) {
      for (const Shape& shape : std::vector<Shape>{{}, {0}, {3, 5}, {(1 << 17) + 1}}) {
        Check("fill " + v.ToString() + " " + Describe(d, shape), {}, d, shape,
              [v](Backend& b, Stream& s, std::vector<DeviceArray>&, DeviceArray& o) {
                return b.Run(s, FillOp{v, &o});
              });
      }
    }
  }
}

TEST_P(BackendConformanceTest, ArangeEveryDtype) {
  const std::pair<Scalar, Scalar> params[] = {
      {Scalar::Int(0), Scalar::Int(1)},
      {Scalar::Int(-5), Scalar::Int(3)},
      {Scalar::Int(2147483600), Scalar::Int(7)},  // wraps in int32
      {Scalar::Int(INT64_MAX - 10), Scalar::Int(1)},
      {Scalar::Float(0), Scalar::Float(0.1)},
      {Scalar::Float(1), Scalar::Float(0x1.99999999999a0p-4)},
      {Scalar::Float(-3.25), Scalar::Float(1e-3)},
  };
  for (DType d : kAllDTypes) {
    for (const auto& param : params) {
      const auto& start = param.first;  // not a binding: lambdas capture these
      const auto& delta = param.second;
      for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{10}, int64_t{1} << 20}) {
        Check("arange " + start.ToString() + " + i*" + delta.ToString() + " " + Describe(d, {n}),
              {}, d, {n},
              [start, delta](Backend& b, Stream& s, std::vector<DeviceArray>&, DeviceArray& o) {
                // The stored second element: start + delta as NumPy computes it.
                const Scalar second =
                    start.is_int()
                        ? Scalar::Int(static_cast<int64_t>(static_cast<uint64_t>(start.as_int64()) +
                                                           static_cast<uint64_t>(delta.as_int64())))
                        : Scalar::Float(start.as_double() + delta.as_double());
                return b.Run(s, ArangeOp{start, delta, second, &o});
              });
      }
    }
  }
}

// --- Reductions ----------------------------------------------------------------

// sum(|a|) along the reduced elements, in double (the tolerance scale).
std::vector<double> AbsSumScale(const HostArray& a, std::optional<int> axis) {
  const int rank = static_cast<int>(a.shape.size());
  int64_t outer = 1, len = a.size(), inner = 1;
  if (axis) {
    const int ax = *axis < 0 ? *axis + rank : *axis;
    outer = inner = 1;
    for (int d = 0; d < ax; ++d) outer *= a.shape[d];
    for (int d = ax + 1; d < rank; ++d) inner *= a.shape[d];
    len = a.shape[ax];
  }
  std::vector<double> s(outer * inner, 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t l = 0; l < len; ++l) {
      for (int64_t j = 0; j < inner; ++j) {
        s[o * inner + j] += std::fabs(a.value((o * len + l) * inner + j));
      }
    }
  }
  return s;
}

TEST_P(BackendConformanceTest, SumEveryDtype) {
  struct Case {
    Shape shape;
    std::optional<int> axis;
  };
  const std::vector<Case> cases = {{{}, std::nullopt},
                                   {{0}, std::nullopt},
                                   {{1}, std::nullopt},
                                   {{7}, std::nullopt},
                                   {{127}, std::nullopt},
                                   {{1000}, std::nullopt},
                                   {{(1 << 20) + 5}, std::nullopt},
                                   {{3, 4, 5}, 0},
                                   {{3, 4, 5}, 1},
                                   {{3, 4, 5}, 2},
                                   {{3, 4, 5}, -1},
                                   {{1000, 3}, 0},
                                   {{3, 1000}, 1},
                                   {{0, 4}, 0},
                                   {{0, 4}, 1},
                                   {{200, 70, 3}, 1},
                                   {{5, 1 << 15}, 0},
                                   {{1 << 15, 5}, 1}};
  for (DType d : kAllDTypes) {
    for (const Case& c : cases) {
      // No NaN/inf in sums: they would make every tolerance meaningless.
      HostArray a = Random(d, c.shape, 17, /*specials=*/false);
      Shape out_shape;
      if (c.axis) {
        const int ax = *c.axis < 0 ? *c.axis + static_cast<int>(c.shape.size()) : *c.axis;
        for (int i = 0; i < static_cast<int>(c.shape.size()); ++i) {
          if (i != ax) out_shape.push_back(c.shape[i]);
        }
      }
      const std::optional<int> axis = c.axis;
      Check(
          "sum " + Describe(d, c.shape) + " axis " +
              (axis ? std::to_string(*axis) : std::string("None")),
          {a}, SumResultType(d), out_shape,
          [axis](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
            return b.Run(s, ReduceOp{ReduceKind::kSum, axis, in.data(), &o});
          },
          [a, axis] { return AbsSumScale(a, axis); });
    }
  }
}

// --- Matmul --------------------------------------------------------------------

std::vector<double> MatmulScale(const MatmulShape& sh, const HostArray& a, const HostArray& b) {
  std::vector<double> s(sh.batch * sh.m * sh.n, 0.0);
  for (int64_t t = 0; t < sh.batch; ++t) {
    for (int64_t i = 0; i < sh.m; ++i) {
      for (int64_t p = 0; p < sh.k; ++p) {
        const double x = std::fabs(a.value(t * sh.a_batch_stride + i * sh.k + p));
        for (int64_t j = 0; j < sh.n; ++j) {
          s[(t * sh.m + i) * sh.n + j] +=
              x * std::fabs(b.value(t * sh.b_batch_stride + p * sh.n + j));
        }
      }
    }
  }
  return s;
}

TEST_P(BackendConformanceTest, MatmulEveryDtype) {
  // batch, m, k, n, a_batch_stride, b_batch_stride ("full" = m*k / k*n).
  struct Case {
    int64_t batch, m, k, n;
    bool a_shared, b_shared;
  };
  const Case cases[] = {
      {1, 2, 3, 4, false, false}, {1, 1, 1, 1, false, false},   {1, 64, 128, 48, false, false},
      {3, 5, 7, 2, false, false}, {4, 6, 5, 3, true, false},    {4, 6, 5, 3, false, true},
      {2, 3, 0, 4, false, false}, {1, 0, 3, 4, false, false},   {1, 3, 4, 0, false, false},
      {0, 3, 4, 5, false, false}, {1, 1, 300, 1, false, false}, {2, 33, 65, 17, false, false}};
  for (DType d : kAllDTypes) {
    for (const Case& c : cases) {
      MatmulShape sh{
          c.batch, c.m, c.k, c.n, c.a_shared ? 0 : c.m * c.k, c.b_shared ? 0 : c.k * c.n};
      const HostArray a = Random(d, {c.a_shared ? 1 : c.batch, c.m, c.k}, 18, false);
      const HostArray b = Random(d, {c.b_shared ? 1 : c.batch, c.k, c.n}, 19, false);
      std::ostringstream what;
      what << "matmul " << DTypeName(d) << " batch=" << c.batch << " m=" << c.m << " k=" << c.k
           << " n=" << c.n << " strides=" << sh.a_batch_stride << "," << sh.b_batch_stride;
      Check(
          what.str(), {a, b}, d, {c.batch, c.m, c.n},
          [sh](Backend& be, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
            return be.Run(s, MatmulOp{sh, in.data(), &in[1], &o});
          },
          IsFloating(d) ? ScaleFn([sh, a, b] { return MatmulScale(sh, a, b); }) : ScaleFn());
    }
  }
}

// --- Complex -------------------------------------------------------------------

// complex64 / complex128: every op the backends compute in complex (the
// table's others are refused alike), casts from and to every dtype, fill,
// transpose and cgemm / zgemm, against the CPU reference.
TEST_P(BackendConformanceTest, ComplexOpsCastsFillTransposeMatmul) {
  const std::vector<std::pair<Shape, Shape>> cases = {{{1000}, {1000}},
                                                      {{3, 1}, {4}},
                                                      {{}, {2, 3}},
                                                      {{2, 3}, {}},
                                                      {{5, 1, 7}, {1, 6, 1}},
                                                      {{0, 3}, {3}},
                                                      {{(1 << 16) + 3}, {(1 << 16) + 3}}};
  const OpFn cast = [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
    return b.Run(s, CastOp{in.data(), &o});
  };
  uint64_t seed = 500;
  for (DType d : kComplexDTypes) {
    for (ElementwiseKind op : kAllElementwiseKinds) {
      // Kinds with input-dependent bounds are complex_literals_test's.
      if (backend_test::ComplexUlps(op) < 0) continue;
      complex_ulps_ = backend_test::ComplexUlps(op);
      for (const auto& [sa, sb] : cases) {
        absl::StatusOr<Shape> out = BroadcastShapes(sa, Arity(op) == 2 ? sb : sa);
        ASSERT_TRUE(out.ok());
        std::vector<HostArray> in = {Random(d, sa, seed++)};
        if (Arity(op) == 2) in.push_back(Random(d, sb, seed++));
        Check(
            std::string(OpName(op)) + " " + Describe(d, sa), in, d, *out,
            [op](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
              return b.Run(s, ElementwiseOp{op, {in.data(), in.size() > 1 ? &in[1] : nullptr}, &o});
            });
        if (!ElementwiseAccepts(op, d)) break;
      }
    }
    complex_ulps_ = 0;
    for (DType other : kEveryDType) {
      const std::string to = std::string("cast ") + DTypeName(d) + " -> " + DTypeName(other);
      const std::string from = std::string("cast ") + DTypeName(other) + " -> " + DTypeName(d);
      Check(to + " (70001,)", {Random(d, {70001}, seed++)}, other, {70001}, cast);
      Check(to + " (3,1)->(3,5)", {Random(d, {3, 1}, seed++)}, other, {3, 5}, cast);
      Check(from + " (70001,)", {Random(other, {70001}, seed++)}, d, {70001}, cast);
      Check(from + " ()->(2,2)", {Random(other, {}, seed++)}, d, {2, 2}, cast);
    }
    for (const Scalar& v : {Scalar::Complex(1.5, -2.25), Scalar::Float(-0.0), Scalar::Int(3),
                            Scalar::Bool(true), Scalar::Complex(kNaN, kInf)}) {
      Check(std::string("fill ") + DTypeName(d) + " " + v.ToString(), {}, d, {1031},
            [v](Backend& b, Stream& s, std::vector<DeviceArray>&, DeviceArray& o) {
              return b.Run(s, FillOp{v, &o});
            });
    }
    for (const std::vector<int>& perm : {std::vector<int>{1, 0}, std::vector<int>{2, 0, 1}}) {
      const Shape shape = perm.size() == 2 ? Shape{70, 33} : Shape{4, 5, 6};
      Shape out;
      for (int i : perm) out.push_back(shape[i]);
      Check("transpose " + Describe(d, shape), {Random(d, shape, seed++)}, d, out,
            [perm](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
              return b.Run(s, TransposeOp{perm, in.data(), &o});
            });
    }
    struct MatmulCase {
      int64_t batch, m, k, n;
    };
    for (const MatmulCase& c : {MatmulCase{1, 2, 3, 4}, MatmulCase{3, 5, 7, 2},
                                MatmulCase{1, 64, 128, 48}, MatmulCase{2, 3, 0, 4}}) {
      const MatmulShape sh{c.batch, c.m, c.k, c.n, c.m * c.k, c.k * c.n};
      const HostArray a = Random(d, {c.batch, c.m, c.k}, seed++, false);
      const HostArray b = Random(d, {c.batch, c.k, c.n}, seed++, false);
      // Parts are within +-100: each result part is a sum of 2k products.
      const int64_t outs = c.batch * c.m * c.n;
      const double scale = 2.0 * static_cast<double>(c.k) * 100 * 100 + 1;
      Check(
          "matmul " + Describe(d, {c.batch, c.m, c.k}), {a, b}, d, {c.batch, c.m, c.n},
          [sh](Backend& be, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
            return be.Run(s, MatmulOp{sh, in.data(), &in[1], &o});
          },
          [outs, scale] { return std::vector<double>(outs, scale); });
    }
  }
}

// --- Transpose -----------------------------------------------------------------

TEST_P(BackendConformanceTest, TransposeEveryDtype) {
  struct Case {
    Shape shape;
    std::vector<int> perm;
  };
  std::vector<Case> cases = {{{70, 33}, {1, 0}},
                             {{513, 257}, {1, 0}},
                             {{2, 3, 4, 5}, {3, 1, 0, 2}},
                             {{1, 5, 1, 3}, {3, 2, 1, 0}},
                             {{}, {}},
                             {{0, 3}, {1, 0}},
                             {{6}, {0}},
                             {{8, 40, 40}, {0, 2, 1}},
                             {{40, 8, 40}, {2, 1, 0}}};
  std::vector<int> p = {0, 1, 2};
  do {
    cases.push_back({{4, 5, 6}, p});
  } while (std::next_permutation(p.begin(), p.end()));
  for (DType d : kAllDTypes) {
    for (const Case& c : cases) {
      Shape out;
      for (int i : c.perm) out.push_back(c.shape[i]);
      std::string perm;
      for (int i : c.perm) perm += std::to_string(i) + ",";
      const std::vector<int> pv = c.perm;
      Check("transpose " + Describe(d, c.shape) + " by (" + perm + ")", {Random(d, c.shape, 20)}, d,
            out, [pv](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
              return b.Run(s, TransposeOp{pv, in.data(), &o});
            });
    }
  }
}

// --- Sorting, gathers along an axis, scans ---------------------------------------

TEST_P(BackendConformanceTest, ArgsortEveryDtype) {
  // Rows of one, a few and many; ties, NaNs and signed zeros among the
  // specials Random gives; descending too. Exact: indices are unique.
  const std::vector<Shape> shapes = {{1}, {37}, {5, 64}, {300, 3}, {2, 3, 129}, {4097}, {0, 5}};
  for (DType d : kAllDTypes) {
    for (const Shape& shape : shapes) {
      for (bool descending : {false, true}) {
        Check(std::string("argsort ") + (descending ? "descending " : "") + Describe(d, shape),
              {Random(d, shape, 31)}, DType::kInt64, shape,
              [descending](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
                return b.Run(s, ArgsortOp{in.data(), &o, descending});
              });
      }
    }
  }
}

TEST_P(BackendConformanceTest, SortValuesEveryDtype) {
  // The sorted elements themselves, bit for bit (NaN payloads, the order of
  // -0.0 among +0.0): one radix sort of (key, element) pairs on CUDA, the
  // argsort's gather elsewhere; rows enough for 8-byte keys to need the
  // row-and-key fallback too.
  const std::vector<Shape> shapes = {{1}, {37}, {5, 64}, {300, 3}, {4097}, {0, 5}, {3000, 2}};
  for (DType d : kAllDTypes) {
    for (const Shape& shape : shapes) {
      for (bool descending : {false, true}) {
        Check(std::string("sort ") + (descending ? "descending " : "") + Describe(d, shape),
              {Random(d, shape, 33)}, d, shape,
              [descending](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
                return b.Run(s, ArgsortOp{in.data(), &o, descending, /*values=*/true});
              });
      }
    }
  }
}

TEST_P(BackendConformanceTest, ComplexSortsAndScans) {
  // NumPy's complex order: parts drawn from a few values (ties, signed
  // zeros, infinities and NaNs in either part), argsort and sort in both
  // orders, one long row and many short ones. Running sums and products
  // within the running sum (product) of |terms|: CUDA combines in a tree.
  const double pool[] = {kNaN, -kInf, -1.0, -0.0, 0.0, 1.0, 2.5, kInf};
  for (DType d : {DType::kComplex64, DType::kComplex128}) {
    auto make = [d](const Shape& shape, uint64_t seed, const std::function<double(uint64_t)>& f) {
      HostArray a{d, shape, {}};
      a.bytes.resize(a.size() * ItemSize(d));
      std::mt19937_64 rng(seed);
      for (int64_t i = 0; i < 2 * a.size(); ++i) {
        const double v = f(rng());
        if (d == DType::kComplex64) {
          const float x = static_cast<float>(v);
          std::memcpy(&a.bytes[i * 4], &x, 4);
        } else {
          std::memcpy(&a.bytes[i * 8], &v, 8);
        }
      }
      return a;
    };
    for (const Shape& shape : std::vector<Shape>{{1}, {37}, {5, 64}, {300, 3}, {4097}, {0, 4}}) {
      const HostArray a =
          make(shape, 47, [&pool](uint64_t r) { return pool[r % std::size(pool)]; });
      for (bool descending : {false, true}) {
        const std::string order = descending ? " descending " : " ";
        Check("argsort" + order + Describe(d, shape), {a}, DType::kInt64, shape,
              [descending](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
                return b.Run(s, ArgsortOp{in.data(), &o, descending});
              });
        Check("sort" + order + Describe(d, shape), {a}, d, shape,
              [descending](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
                return b.Run(s, ArgsortOp{in.data(), &o, descending, /*values=*/true});
              });
      }
      // Parts in [-1.2, 1.2]: products of 64 terms stay in range.
      const HostArray z = make(shape, 48, [](uint64_t r) {
        return (static_cast<double>(r >> 11) / 9007199254740992.0 - 0.5) * 2.4;
      });
      const int64_t n = shape.back(), rows = n == 0 ? 0 : z.size() / n;
      for (ReduceKind kind : {ReduceKind::kSum, ReduceKind::kProd}) {
        if (kind == ReduceKind::kProd && n > 64) continue;
        const HostArray parts{ComplexComponent(d), {z.size(), 2}, z.bytes};
        ScaleFn scale = [parts, n, rows, kind] {
          std::vector<double> out(static_cast<size_t>(rows * n));
          for (int64_t r = 0; r < rows; ++r) {
            double acc = kind == ReduceKind::kSum ? 0.0 : 1.0;
            for (int64_t j = 0; j < n; ++j) {
              const int64_t e = r * n + j;
              const double x = std::hypot(parts.value(2 * e), parts.value(2 * e + 1));
              acc = kind == ReduceKind::kSum ? acc + x : acc * x * 2;
              out[r * n + j] = acc;
            }
          }
          return out;
        };
        Check(
            std::string(kind == ReduceKind::kSum ? "cumsum " : "cumprod ") + Describe(d, shape),
            {z}, d, shape,
            [kind](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
              return b.Run(s, ScanOp{kind, in.data(), &o});
            },
            scale);
      }
    }
  }
}

TEST_P(BackendConformanceTest, SortValuesKeepNaNBitsAndSignedZerosInOrder) {
  // One row of floats whose NaNs are of one positive pattern (CUDA sorts
  // them as plain keys), of several patterns or signs (the pairs' fallback),
  // and signed zeros among them: bit for bit the reference's, both orders.
  const uint32_t f32_nans[] = {0x7fc00000u, 0xffc00000u, 0x7fc00001u};
  const uint64_t f64_nans[] = {0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff8000000000001ull};
  for (DType d : {DType::kFloat32, DType::kFloat64}) {
    for (int patterns : {0, 1, 2, 3}) {
      HostArray a = Random(d, {5000}, 35, /*specials=*/false);
      const int64_t item = ItemSize(d);
      for (int64_t i = 0; i < a.size(); i += 7) {
        const int pick = static_cast<int>((i / 7) % 5);
        if (pick < patterns) {
          if (d == DType::kFloat32) {
            std::memcpy(&a.bytes[i * item], &f32_nans[pick], 4);
          } else {
            std::memcpy(&a.bytes[i * item], &f64_nans[pick], 8);
          }
        } else if (pick == 3 || pick == 4) {
          const double z = pick == 3 ? -0.0 : 0.0;
          if (d == DType::kFloat32) {
            const float f = static_cast<float>(z);
            std::memcpy(&a.bytes[i * item], &f, 4);
          } else {
            std::memcpy(&a.bytes[i * item], &z, 8);
          }
        }
      }
      for (bool descending : {false, true}) {
        SCOPED_TRACE(absl::StrCat(DTypeName(d), " NaN patterns ", patterns,
                                  descending ? " descending" : ""));
        auto op = [descending](Backend& b, Stream& s, std::vector<DeviceArray>& in,
                               DeviceArray& o) {
          return b.Run(s, ArgsortOp{in.data(), &o, descending, /*values=*/true});
        };
        absl::StatusOr<HostArray> want = RunOn(ref_, {a}, d, a.shape, op);
        absl::StatusOr<HostArray> got = RunOn(test_, {a}, d, a.shape, op);
        ASSERT_TRUE(want.ok()) << want.status();
        ASSERT_TRUE(got.ok()) << got.status();
        EXPECT_TRUE(want->bytes == got->bytes) << GetParam() << " differs from the reference";
      }
    }
  }
}

TEST_P(BackendConformanceTest, ExtractEveryDtype) {
  // The elements (or, without values, the int64 positions) where a bool
  // condition is true; lengths around CUB's tiles, an empty result, nothing.
  for (DType d : kEveryDType) {
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{37}, int64_t{5000}, int64_t{70001}}) {
      const HostArray cond = Random(DType::kBool, {n}, 36);
      int64_t count = 0;
      for (uint8_t b : cond.bytes) count += b != 0;
      Check("extract " + Describe(d, {n}), {cond, Random(d, {n}, 37)}, d, {count},
            [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
              return b.Run(s, ExtractOp{&in[0], &in[1], &o});
            });
      if (d == DType::kInt64) {
        Check("flatnonzero " + Describe(DType::kBool, {n}), {cond}, DType::kInt64, {count},
              [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
                return b.Run(s, ExtractOp{&in[0], nullptr, &o});
              });
      }
    }
  }
  // A count the data does not have is refused by both, whether more (which
  // would write past the output) or fewer.
  const HostArray cond = Random(DType::kBool, {1000}, 38);
  int64_t count = 0;
  for (uint8_t b : cond.bytes) count += b != 0;
  for (int64_t declared : {count - 1, count + 1}) {
    absl::StatusOr<HostArray> got =
        RunOn(test_, {cond, Random(DType::kFloat32, {1000}, 39)}, DType::kFloat32, {declared},
              [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
                return b.Run(s, ExtractOp{&in[0], &in[1], &o});
              });
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(got.status().message()).find("true elements"), std::string::npos)
        << got.status();
  }
}

TEST_P(BackendConformanceTest, FftEveryKindAndPrecision) {
  // Complex to complex both ways, real to complex and back, in both
  // precisions; lengths of small primes, powers of two and one; one row and
  // many. Within the transform's rounding: a multiple of the row's sum of
  // |terms| (the reference is FFTW, CUDA's cuFFT: another algorithm).
  struct Case {
    Shape in;
    int64_t n;  // the logical length
  };
  const std::vector<Case> cases = {{{1, 1}, 1},       {{3, 7}, 7},    {{2, 1024}, 1024},
                                   {{1, 1000}, 1000}, {{40, 12}, 12}, {{1, 4099}, 4099}};
  for (bool f32 : {true, false}) {
    const DType complex = f32 ? DType::kComplex64 : DType::kComplex128;
    const DType real = f32 ? DType::kFloat32 : DType::kFloat64;
    for (FftKind kind :
         {FftKind::kForward, FftKind::kInverse, FftKind::kRealForward, FftKind::kRealInverse}) {
      for (const Case& c : cases) {
        const int64_t rows = c.in[0], n = c.n, half = n / 2 + 1;
        Shape in_shape = {rows, kind == FftKind::kRealInverse ? half : n};
        Shape out_shape = {rows, kind == FftKind::kRealForward ? half : n};
        const DType in_dtype = kind == FftKind::kRealForward ? real : complex;
        const DType out_dtype = kind == FftKind::kRealInverse ? real : complex;
        const HostArray a = Random(in_dtype, in_shape, 40, /*specials=*/false);
        ScaleFn scale = [a, rows, out_shape] {
          // 1e-5 (float32's rtol) times 50 |terms| covers log2(n) roundings.
          // Complex inputs are summed part by part.
          HostArray parts = a;
          if (IsComplex(a.dtype)) {
            parts.dtype = ComplexComponent(a.dtype);
            parts.shape.push_back(2);
          }
          const int64_t per = parts.size() / rows, out_per = NumElements(out_shape) / rows;
          std::vector<double> s;
          for (int64_t r = 0; r < rows; ++r) {
            double sum = 0;
            for (int64_t j = 0; j < per; ++j) sum += std::fabs(parts.value(r * per + j));
            s.insert(s.end(), static_cast<size_t>(out_per), 50.0 * sum);
          }
          return s;
        };
        Check(
            absl::StrCat("fft kind ", static_cast<int>(kind), " ", Describe(in_dtype, in_shape)),
            {a}, out_dtype, out_shape,
            [kind](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
              return b.Run(s, FftOp{kind, in.data(), &o});
            },
            scale);
      }
    }
  }
  // Shapes that do not fit the kind are refused by both.
  absl::StatusOr<HostArray> got =
      RunOn(test_, {Random(DType::kFloat32, {2, 8}, 41)}, DType::kComplex64, {2, 8},
            [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
              return b.Run(s, FftOp{FftKind::kRealForward, in.data(), &o});
            });
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(BackendConformanceTest, FftOverSeveralAxes) {
  // One transform over the last 2 or 3 axes (cuFFT's and FFTW's plans of
  // that rank), complex both ways and real to complex, one transform and
  // several; within 50 x the sum of every |term| times the dtype's rtol.
  struct Case {
    Shape in;
    int axes;
  };
  const std::vector<Case> cases = {
      {{2, 8, 6}, 2}, {{3, 4, 5}, 3}, {{5, 16, 16}, 2}, {{1, 6, 10}, 2}, {{2, 3, 4, 8}, 3}};
  for (bool f32 : {true, false}) {
    const DType complex = f32 ? DType::kComplex64 : DType::kComplex128;
    const DType real = f32 ? DType::kFloat32 : DType::kFloat64;
    for (FftKind kind : {FftKind::kForward, FftKind::kInverse, FftKind::kRealForward}) {
      for (const Case& c : cases) {
        Shape out_shape = c.in;
        if (kind == FftKind::kRealForward) out_shape.back() = c.in.back() / 2 + 1;
        const DType in_dtype = kind == FftKind::kRealForward ? real : complex;
        const HostArray a = Random(in_dtype, c.in, 42, /*specials=*/false);
        ScaleFn scale = [a, out_shape] {
          HostArray parts = a;
          if (IsComplex(a.dtype)) {
            parts.dtype = ComplexComponent(a.dtype);
            parts.shape.push_back(2);
          }
          double sum = 0;
          for (int64_t j = 0; j < parts.size(); ++j) sum += std::fabs(parts.value(j));
          return std::vector<double>(static_cast<size_t>(NumElements(out_shape)), 50.0 * sum);
        };
        const int axes = c.axes;
        Check(
            absl::StrCat("fft kind ", static_cast<int>(kind), " over ", axes, " axes ",
                         Describe(in_dtype, c.in)),
            {a}, complex, out_shape,
            [kind, axes](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
              return b.Run(s, FftOp{kind, in.data(), &o, axes});
            },
            scale);
      }
    }
  }
  // irfft takes one axis; four axes, or more than the array has, are refused.
  for (auto [kind, axes, in_dtype, shape] :
       {std::tuple{FftKind::kRealInverse, 2, DType::kComplex64, Shape{2, 8, 5}},
        std::tuple{FftKind::kForward, 4, DType::kComplex64, Shape{2, 2, 2, 8}},
        std::tuple{FftKind::kForward, 3, DType::kComplex64, Shape{2, 8}}}) {
    const DType out_dtype = kind == FftKind::kRealInverse ? DType::kFloat32 : in_dtype;
    Shape out_shape = shape;
    if (kind == FftKind::kRealInverse) out_shape.back() = 8;
    absl::StatusOr<HostArray> got =
        RunOn(test_, {Random(in_dtype, shape, 43)}, out_dtype, out_shape,
              [kind, axes](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
                return b.Run(s, FftOp{kind, in.data(), &o, axes});
              });
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST_P(BackendConformanceTest, LinalgEveryRoutineAndDtype) {
  // Well-conditioned stacks (entries in [-2, 2] plus n on the diagonal;
  // A A^H + n I for Cholesky and eigvalsh), against the reference within a
  // multiple of the dtype's epsilon times the largest result (another
  // library's algorithm: cuSOLVER against LAPACK).
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kComplex64, DType::kComplex128}) {
    const DType real = IsComplex(d) ? ComplexComponent(d) : d;
    const double tol = real == DType::kFloat32 ? 2e-4 : 1e-10;
    auto stack = [&](Shape shape, uint64_t seed, bool hermitian) {
      HostArray h = Random(d, shape, seed, /*specials=*/false);
      HostArray parts = h;
      if (IsComplex(d)) {
        parts.dtype = real;
        parts.shape.push_back(2);
      }
      const size_t rank = shape.size();
      const int64_t m = shape[rank - 2], n = shape[rank - 1], per = IsComplex(d) ? 2 : 1;
      const int64_t batch = h.size() / std::max<int64_t>(m * n, 1);
      std::vector<double> v(static_cast<size_t>(parts.size()));
      for (int64_t i = 0; i < parts.size(); ++i) v[i] = parts.value(i) / 50.0;
      for (int64_t b = 0; b < batch; ++b) {
        double* mat = v.data() + b * m * n * per;
        if (hermitian) {  // v := v v^H + n I (real part symmetric, imaginary antisymmetric)
          std::vector<double> w(static_cast<size_t>(m * n * per), 0.0);
          for (int64_t i = 0; i < n; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              for (int64_t k = 0; k < n; ++k) {
                const double ar = mat[(i * n + k) * per], br = mat[(j * n + k) * per];
                const double ai = per == 2 ? mat[(i * n + k) * 2 + 1] : 0.0;
                const double bi = per == 2 ? mat[(j * n + k) * 2 + 1] : 0.0;
                w[(i * n + j) * per] += ar * br + ai * bi;  // a_ik conj(a_jk)
                if (per == 2) w[(i * n + j) * 2 + 1] += ai * br - ar * bi;
              }
            }
          }
          std::copy(w.begin(), w.end(), mat);
        }
        for (int64_t i = 0; i < std::min(m, n); ++i)
          mat[(i * n + i) * per] += static_cast<double>(n);
      }
      for (int64_t i = 0; i < parts.size(); ++i) {
        if (real == DType::kFloat32) {
          const float f = static_cast<float>(v[i]);
          std::memcpy(&h.bytes[i * 4], &f, 4);
        } else {
          std::memcpy(&h.bytes[i * 8], &v[i], 8);
        }
      }
      return h;
    };
    struct Case {
      LinalgKind kind;
      Shape a, out;
      DType out_dtype;
      Shape b = {};
    };
    const std::vector<Case> cases = {
        {LinalgKind::kCholesky, {3, 4, 4}, {3, 4, 4}, d},
        {LinalgKind::kSolve, {3, 4, 4}, {3, 4, 1}, d, {3, 4, 1}},
        {LinalgKind::kSolve, {2, 5, 5}, {2, 5, 3}, d, {2, 5, 3}},
        {LinalgKind::kInv, {3, 4, 4}, {3, 4, 4}, d},
        {LinalgKind::kDet, {3, 4, 4}, {3}, d},
        {LinalgKind::kDet, {2, 0, 0}, {2}, d},
        {LinalgKind::kEigvalsh, {3, 4, 4}, {3, 4}, real},
        {LinalgKind::kSvdvals, {2, 3, 5}, {2, 3}, real},
        {LinalgKind::kSvdvals, {2, 5, 3}, {2, 3}, real},
        // Stacks of small matrices take the batched routines on CUDA; one
        // matrix, or matrices past their order, one call per matrix.
        {LinalgKind::kSolve, {5, 32, 32}, {5, 32, 7}, d, {5, 32, 7}},
        {LinalgKind::kSolve, {4, 4}, {4, 2}, d, {4, 2}},
        {LinalgKind::kInv, {2, 130, 130}, {2, 130, 130}, d},
        {LinalgKind::kCholesky, {2, 130, 130}, {2, 130, 130}, d},
        {LinalgKind::kDet, {1, 6, 6}, {1}, d},
    };
    uint64_t seed = 50;
    for (const Case& c : cases) {
      SCOPED_TRACE(
          absl::StrCat(DTypeName(d), " routine ", static_cast<int>(c.kind), " ", Describe(d, c.a)));
      const bool hermitian = c.kind == LinalgKind::kCholesky || c.kind == LinalgKind::kEigvalsh;
      std::vector<HostArray> in = {stack(c.a, seed++, hermitian)};
      if (!c.b.empty()) in.push_back(stack(c.b, seed++, false));
      const LinalgKind kind = c.kind;
      auto op = [kind](Backend& b, Stream& s, std::vector<DeviceArray>& args, DeviceArray& o) {
        return b.Run(s, LinalgOp{kind, &args[0], args.size() > 1 ? &args[1] : nullptr, &o});
      };
      absl::StatusOr<HostArray> want = RunOn(ref_, in, c.out_dtype, c.out, op);
      absl::StatusOr<HostArray> got = RunOn(test_, in, c.out_dtype, c.out, op);
      ASSERT_TRUE(want.ok()) << want.status();
      ASSERT_TRUE(got.ok()) << GetParam() << ": " << got.status();
      HostArray w = *want, g = *got;
      if (IsComplex(w.dtype)) {
        for (HostArray* p : {&w, &g}) {
          p->dtype = ComplexComponent(p->dtype);
          p->shape.push_back(2);
        }
      }
      double big = 1.0;
      for (int64_t i = 0; i < w.size(); ++i) big = std::max(big, std::fabs(w.value(i)));
      for (int64_t i = 0; i < w.size(); ++i) {
        ASSERT_LE(std::fabs(w.value(i) - g.value(i)), tol * big)
            << GetParam() << " at " << i << ": " << w.repr(i) << " vs " << g.repr(i);
      }
    }
  }
  // A singular matrix is NumPy's LinAlgError on every backend, alone or in
  // a stack; its determinant is 0.
  for (int64_t batch : {1, 3}) {
    HostArray zeros{DType::kFloat64, {batch, 2, 2}, std::vector<uint8_t>(batch * 32, 0)};
    absl::StatusOr<HostArray> got =
        RunOn(test_, {zeros}, DType::kFloat64, {batch, 2, 2},
              [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
                return b.Run(s, LinalgOp{LinalgKind::kInv, &in[0], nullptr, &o});
              });
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(got.status().message(), "LinAlgError: Singular matrix");
    got = RunOn(test_, {zeros}, DType::kFloat64, {batch},
                [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
                  return b.Run(s, LinalgOp{LinalgKind::kDet, &in[0], nullptr, &o});
                });
    ASSERT_TRUE(got.ok()) << got.status();
    for (int64_t i = 0; i < batch; ++i) EXPECT_EQ(got->value(i), 0.0);
  }
}

// Element i of a float or complex array as a complex double.
std::complex<double> Complex(const HostArray& h, int64_t i) {
  if (!IsComplex(h.dtype)) return {h.value(i), 0.0};
  if (h.dtype == DType::kComplex64) {
    return {h.at<float>(2 * i), h.at<float>(2 * i + 1)};
  }
  return {h.at<double>(2 * i), h.at<double>(2 * i + 1)};
}

TEST_P(BackendConformanceTest, DecompositionsEveryRoutineAndDtype) {
  // qr, svd, eigh and slogdet of well-conditioned stacks. What is unique
  // (the singular values, the eigenvalues, slogdet, |R|) against the
  // reference; Q, the singular vectors and the eigenvectors (unique up to
  // signs or phases, which differ between libraries) by what defines them:
  // A = Q R, A = U S Vh, A V = V diag(w), computed here in double.
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kComplex64, DType::kComplex128}) {
    const DType real = IsComplex(d) ? ComplexComponent(d) : d;
    const double tol = real == DType::kFloat32 ? 5e-4 : 1e-10;
    struct Case {
      LinalgKind kind;
      Shape a;
      bool full;
    };
    const std::vector<Case> cases = {
        {LinalgKind::kQr, {2, 5, 3}, false},      {LinalgKind::kQr, {2, 3, 5}, true},
        {LinalgKind::kQr, {4, 4}, true},          {LinalgKind::kSvd, {2, 5, 3}, false},
        {LinalgKind::kSvd, {2, 3, 5}, true},      {LinalgKind::kSvd, {6, 2}, true},
        {LinalgKind::kEigh, {3, 4, 4}, false},    {LinalgKind::kSlogdet, {3, 4, 4}, false},
        {LinalgKind::kSlogdet, {2, 0, 0}, false}, {LinalgKind::kSlogdet, {6, 6}, false},
    };
    uint64_t seed = 90;
    for (const Case& c : cases) {
      SCOPED_TRACE(absl::StrCat(DTypeName(d), " routine ", static_cast<int>(c.kind), " ",
                                Describe(d, c.a), c.full ? " full" : ""));
      const size_t rank = c.a.size();
      const int64_t m = c.a[rank - 2], n = c.a[rank - 1], k = std::min(m, n);
      const Shape batch(c.a.begin(), c.a.end() - 2);
      const int64_t count = NumElements(batch);
      HostArray a = Random(d, c.a, seed++, /*specials=*/false);
      if (c.kind == LinalgKind::kEigh) {  // Hermitian: a + a^H, from its lower triangle
        HostArray h = a;
        for (int64_t b = 0; b < count; ++b) {
          for (int64_t i = 0; i < n; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              const std::complex<double> v =
                  Complex(a, b * n * n + i * n + j) + std::conj(Complex(a, b * n * n + j * n + i));
              const int64_t e = b * n * n + i * n + j;
              if (real == DType::kFloat32) {
                const float parts[2] = {static_cast<float>(v.real()), static_cast<float>(v.imag())};
                std::memcpy(&h.bytes[e * ItemSize(d)], parts, ItemSize(d));
              } else {
                const double parts[2] = {v.real(), v.imag()};
                std::memcpy(&h.bytes[e * ItemSize(d)], parts, ItemSize(d));
              }
            }
          }
        }
        a = h;
      }
      auto with = [&](Shape tail) {
        Shape s = batch;
        s.insert(s.end(), tail.begin(), tail.end());
        return s;
      };
      std::vector<std::pair<DType, Shape>> outs;
      switch (c.kind) {
        case LinalgKind::kQr:
          outs = {{d, with({m, c.full ? m : k})}, {d, with({c.full ? m : k, n})}};
          break;
        case LinalgKind::kSvd:
          outs = {
              {d, with({m, c.full ? m : k})}, {real, with({k})}, {d, with({c.full ? n : k, n})}};
          break;
        case LinalgKind::kEigh:
          outs = {{real, with({n})}, {d, with({n, n})}};
          break;
        default:
          outs = {{d, batch}, {real, batch}};
          break;
      }
      auto run = [&](Side& side) -> absl::StatusOr<std::vector<HostArray>> {
        absl::StatusOr<DeviceArray> in = side.Upload(a);
        if (!in.ok()) return in.status();
        std::vector<DeviceArray> o;
        for (const auto& [dt, shape] : outs) {
          absl::StatusOr<DeviceArray> x = side.Output(dt, shape);
          if (!x.ok()) return x.status();
          o.push_back(*x);
        }
        absl::Status st = side.backend->Run(
            *side.stream,
            LinalgOp{c.kind, &*in, nullptr, &o[0], &o[1], o.size() > 2 ? &o[2] : nullptr, c.full});
        if (!st.ok()) return st;
        std::vector<HostArray> h;
        for (const DeviceArray& x : o) {
          absl::StatusOr<HostArray> got = side.Download(x);
          if (!got.ok()) return got.status();
          h.push_back(*got);
        }
        return h;
      };
      absl::StatusOr<std::vector<HostArray>> want = run(ref_), got = run(test_);
      ASSERT_TRUE(want.ok()) << want.status();
      ASSERT_TRUE(got.ok()) << GetParam() << ": " << got.status();
      const std::vector<HostArray>&w = *want, &g = *got;
      // Errors scale with the matrix's size (its largest element times n).
      double scale = 1.0;
      for (int64_t i = 0; i < a.size(); ++i) scale = std::max(scale, std::abs(Complex(a, i)));
      scale *= static_cast<double>(std::max<int64_t>(n, m));
      auto near = [&](std::complex<double> x, std::complex<double> y, const char* what, int64_t i) {
        ASSERT_LE(std::abs(x - y), tol * std::max(scale, std::abs(y)))
            << GetParam() << " " << what << " at " << i << ": " << x << " vs " << y;
      };
      auto elem = [&](const HostArray& h, int64_t b, int64_t rows, int64_t cols, int64_t i,
                      int64_t j) { return Complex(h, b * rows * cols + i * cols + j); };
      for (int64_t b = 0; b < count; ++b) {
        switch (c.kind) {
          case LinalgKind::kQr: {
            const int64_t qc = c.full ? m : k;
            for (int64_t i = 0; i < qc; ++i) {
              for (int64_t j = 0; j < n; ++j) {
                const std::complex<double> r = elem(g[1], b, qc, n, i, j);
                if (j < i) {
                  ASSERT_EQ(r, std::complex<double>(0)) << "R below its diagonal";
                }
                near(std::abs(r), std::abs(elem(w[1], b, qc, n, i, j)), "|R|", i * n + j);
              }
            }
            for (int64_t i = 0; i < m; ++i) {
              for (int64_t j = 0; j < n; ++j) {
                std::complex<double> sum = 0;
                for (int64_t t = 0; t < qc; ++t) {
                  sum += elem(g[0], b, m, qc, i, t) * elem(g[1], b, qc, n, t, j);
                }
                near(sum, elem(a, b, m, n, i, j), "Q R", i * n + j);
              }
            }
            break;
          }
          case LinalgKind::kSvd: {
            const int64_t uc = c.full ? m : k, vr = c.full ? n : k;
            for (int64_t i = 0; i < k; ++i) {
              near(g[1].value(b * k + i), w[1].value(b * k + i), "S", i);
            }
            for (int64_t i = 0; i < m; ++i) {
              for (int64_t j = 0; j < n; ++j) {
                std::complex<double> sum = 0;
                for (int64_t t = 0; t < k; ++t) {
                  sum += elem(g[0], b, m, uc, i, t) * g[1].value(b * k + t) *
                         elem(g[2], b, vr, n, t, j);
                }
                near(sum, elem(a, b, m, n, i, j), "U S Vh", i * n + j);
              }
            }
            break;
          }
          case LinalgKind::kEigh:
            for (int64_t i = 0; i < n; ++i) {
              near(g[0].value(b * n + i), w[0].value(b * n + i), "eigenvalue", i);
              for (int64_t r = 0; r < n; ++r) {  // (A v_i)_r = w_i v_ri
                std::complex<double> sum = 0;
                for (int64_t t = 0; t < n; ++t) {
                  sum += elem(a, b, n, n, r, t) * elem(g[1], b, n, n, t, i);
                }
                near(sum, g[0].value(b * n + i) * elem(g[1], b, n, n, r, i), "A v", r * n + i);
              }
            }
            break;
          default:
            near(Complex(g[0], b), Complex(w[0], b), "sign", b);
            near(g[1].value(b), w[1].value(b), "logabsdet", b);
            break;
        }
      }
    }
  }
}

TEST_P(BackendConformanceTest, IterativeLinalgRefusesNanAndInfinity) {
  // svd, svdvals, eigh and eigvalsh of a stack holding NaN or infinity where
  // the routine reads (all of it; eigh's lower triangle) are NumPy's
  // LinAlgError, raised before LAPACK or cuSOLVER runs: gesdd's iteration
  // never ends on eye(3) with inf at (0, 0) (NumPy's svd hangs there too),
  // and it refused NaN as an argument (was INTERNAL). An infinity in the
  // triangle eigh does not read changes nothing.
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr int64_t n = 3;
  // eye(3) (a stack of `batch` when batch > 0) with v at (i, j) of matrix
  // `which`, in its imaginary part with `imag`.
  auto eye_with = [&](DType d, int64_t batch, int64_t which, int64_t i, int64_t j, double v,
                      bool imag) {
    HostArray h{d, batch > 0 ? Shape{batch, n, n} : Shape{n, n}, {}};
    const int64_t count = std::max<int64_t>(batch, 1);
    h.bytes.assign(static_cast<size_t>(count * n * n * ItemSize(d)), 0);
    const int64_t per = IsComplex(d) ? 2 : 1;
    const bool single = (IsComplex(d) ? ComplexComponent(d) : d) == DType::kFloat32;
    auto put = [&](int64_t e, int64_t part, double x) {
      const int64_t at = (e * per + part) * (single ? 4 : 8);
      if (single) {
        const float f = static_cast<float>(x);
        std::memcpy(&h.bytes[at], &f, 4);
      } else {
        std::memcpy(&h.bytes[at], &x, 8);
      }
    };
    for (int64_t b = 0; b < count; ++b) {
      for (int64_t k = 0; k < n; ++k) put(b * n * n + k * n + k, 0, 1.0);
    }
    put(which * n * n + i * n + j, imag ? 1 : 0, v);
    return h;
  };
  auto run = [&](LinalgKind kind, bool full, const HostArray& a) -> absl::StatusOr<HostArray> {
    const DType d = a.dtype, real = IsComplex(d) ? ComplexComponent(d) : d;
    const Shape batch(a.shape.begin(), a.shape.end() - 2);
    auto with = [&](std::initializer_list<int64_t> tail) {
      Shape s = batch;
      s.insert(s.end(), tail.begin(), tail.end());
      return s;
    };
    std::vector<std::pair<DType, Shape>> outs;
    switch (kind) {
      case LinalgKind::kSvd:
        outs = {{d, with({n, n})}, {real, with({n})}, {d, with({n, n})}};
        break;
      case LinalgKind::kEigh:
        outs = {{real, with({n})}, {d, with({n, n})}};
        break;
      default:  // svdvals, eigvalsh
        outs = {{real, with({n})}};
        break;
    }
    ASSIGN_OR_RETURN(DeviceArray in, test_.Upload(a));
    std::vector<DeviceArray> o;
    for (const auto& [dt, shape] : outs) {
      ASSIGN_OR_RETURN(DeviceArray x, test_.Output(dt, shape));
      o.push_back(std::move(x));
    }
    RETURN_IF_ERROR(test_.backend->Run(
        *test_.stream, LinalgOp{kind, &in, nullptr, &o[0], o.size() > 1 ? &o[1] : nullptr,
                                o.size() > 2 ? &o[2] : nullptr, full}));
    return test_.Download(o[0]);
  };
  struct Case {
    int64_t batch, which, i, j;
    double v;
    bool imag;
  };
  const std::vector<Case> cases = {
      {0, 0, 0, 0, -inf, false}, {0, 0, 0, 0, inf, false},  {0, 0, 1, 1, nan, false},
      {3, 1, 2, 1, nan, false},  {3, 2, 1, 0, -inf, false}, {2, 0, 2, 2, inf, true},
  };
  const std::vector<std::pair<LinalgKind, bool>> routines = {{LinalgKind::kSvdvals, false},
                                                             {LinalgKind::kSvd, true},
                                                             {LinalgKind::kSvd, false},
                                                             {LinalgKind::kEigvalsh, false},
                                                             {LinalgKind::kEigh, false}};
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kComplex64, DType::kComplex128}) {
    for (const Case& c : cases) {
      if (c.imag && !IsComplex(d)) continue;
      const HostArray a = eye_with(d, c.batch, c.which, c.i, c.j, c.v, c.imag);
      for (auto [kind, full] : routines) {
        SCOPED_TRACE(absl::StrCat(GetParam(), " ", DTypeName(d), " routine ",
                                  static_cast<int>(kind), " ", c.v, " at ", c.which, ",", c.i, ",",
                                  c.j, c.imag ? " (imaginary)" : ""));
        absl::StatusOr<HostArray> got = run(kind, full, a);
        ASSERT_FALSE(got.ok());
        EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
        EXPECT_TRUE(absl::StartsWith(got.status().message(), "LinAlgError: ")) << got.status();
        EXPECT_NE(got.status().message().find("did not converge"), std::string::npos)
            << got.status();
      }
    }
    // The upper triangle holds inf, NaN: eigh reads the lower one, as
    // NumPy's UPLO='L', and answers eye(3)'s eigenvalues.
    for (double v : {inf, nan}) {
      const HostArray a = eye_with(d, 2, 1, 0, 2, v, false);
      for (LinalgKind kind : {LinalgKind::kEigvalsh, LinalgKind::kEigh}) {
        SCOPED_TRACE(absl::StrCat(GetParam(), " ", DTypeName(d), " upper ", v));
        absl::StatusOr<HostArray> got = run(kind, false, a);
        ASSERT_TRUE(got.ok()) << got.status();
        for (int64_t e = 0; e < got->size(); ++e) EXPECT_NEAR(got->value(e), 1.0, 1e-6);
      }
    }
  }
}

TEST_P(BackendConformanceTest, RandomFillsEqualTheReferenceBitForBit) {
  // Every draw from the same PCG64 states (NumPy's state layout; both with
  // and without a buffered 32-bit half): values and next states identical.
  // Normal and exponential draws also over 2^20 values (about 270 of the
  // normal ziggurat's tail).
  struct Case {
    DType dtype;
    double low, range;
    uint64_t off, rng;
    RandomDistribution distribution = RandomDistribution::kUniform;
  };
  const std::vector<Case> cases = {
      {DType::kFloat64, 0.0, 1.0, 0, 0},
      {DType::kFloat64, -3.5, 7.25, 0, 0},
      {DType::kFloat32, 0.0, 1.0, 0, 0},
      {DType::kInt64, 0, 0, 0, 999},
      {DType::kInt64, 0, 0, uint64_t{1} << 63, (uint64_t{1} << 62) + 12345},
      {DType::kUint64, 0, 0, 0, ~uint64_t{0}},
      {DType::kInt32, 0, 0, static_cast<uint64_t>(-5), 0x80000001ull},
      {DType::kUint32, 0, 0, 0, 0xFFFFFFFFull},
      {DType::kInt16, 0, 0, 3, 1000},
      {DType::kUint8, 0, 0, 0, 200},
      {DType::kInt8, 0, 0, static_cast<uint64_t>(-100), 130},
      {DType::kBool, 0, 0, 0, 1},
      {DType::kInt64, 0, 0, 42, 0},
      {DType::kFloat64, -0.0, 1.0, 0, 0, RandomDistribution::kNormal},
      {DType::kFloat64, 2.5, 0.75, 0, 0, RandomDistribution::kNormal},
      {DType::kFloat32, 0.0, 1.0, 0, 0, RandomDistribution::kNormal},
      {DType::kFloat64, -0.0, 2.5, 0, 0, RandomDistribution::kExponential},
      {DType::kFloat32, 0.0, 1.0, 0, 0, RandomDistribution::kExponential},
  };
  const uint64_t states[2][6] = {
      {0x1aa1b5345996452dull, 0x09585eb7a69561e3ull, 0x418ddadb3af71a82ull, 0x588133bc447873a9ull,
       0, 0},
      {0x0123456789abcdefull, 0xfedcba9876543210ull, 0x5851f42d4c957f2dull, 0x14057b7ef767814full,
       1, 0xdeadbeefull},
  };
  for (const Case& c : cases) {
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{1000}, int64_t{100003}, int64_t{1} << 20}) {
      const bool ziggurat = c.distribution != RandomDistribution::kUniform;
      if (n == int64_t{1} << 20 && !ziggurat) continue;
      for (const auto& words : states) {
        SCOPED_TRACE(absl::StrCat(DTypeName(c.dtype), " distribution ",
                                  static_cast<int>(c.distribution), " n ", n, " off ", c.off,
                                  " rng ", c.rng, " has_uint32 ", words[4]));
        HostArray state{DType::kUint64, {kRandomStateWords}, std::vector<uint8_t>(48)};
        std::memcpy(state.bytes.data(), words, 48);
        auto run = [&](Side& side) -> absl::StatusOr<std::pair<HostArray, HostArray>> {
          absl::StatusOr<DeviceArray> in = side.Upload(state);
          absl::StatusOr<DeviceArray> out = side.Output(c.dtype, {n});
          absl::StatusOr<DeviceArray> next = side.Output(DType::kUint64, {kRandomStateWords});
          if (!in.ok() || !out.ok() || !next.ok()) return absl::InternalError("allocation");
          RandomOp op{&*in, &*out, &*next, c.low, c.range, c.off, c.rng, c.distribution};
          absl::Status st = side.backend->Run(*side.stream, op);
          if (!st.ok()) return st;
          absl::StatusOr<HostArray> values = side.Download(*out), after = side.Download(*next);
          if (!values.ok()) return values.status();
          if (!after.ok()) return after.status();
          return std::make_pair(*values, *after);
        };
        auto want = run(ref_);
        auto got = run(test_);
        ASSERT_TRUE(want.ok()) << want.status();
        ASSERT_TRUE(got.ok()) << GetParam() << ": " << got.status();
        ASSERT_EQ(want->second.bytes, got->second.bytes) << GetParam() << ": the next state";
        const int64_t item = ItemSize(c.dtype);
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(std::memcmp(&want->first.bytes[i * item], &got->first.bytes[i * item], item), 0)
              << GetParam() << " at " << i << ": " << want->first.repr(i) << " vs "
              << got->first.repr(i);
        }
      }
    }
  }
  // A state of another shape is refused before anything runs.
  HostArray bad{DType::kUint64, {5}, std::vector<uint8_t>(40)};
  absl::StatusOr<DeviceArray> in = test_.Upload(bad);
  absl::StatusOr<DeviceArray> out = test_.Output(DType::kFloat64, {4});
  absl::StatusOr<DeviceArray> next = test_.Output(DType::kUint64, {5});
  ASSERT_TRUE(in.ok() && out.ok() && next.ok());
  absl::Status st = test_backend_->Run(*test_.stream, RandomOp{&*in, &*out, &*next});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
}

TEST_P(BackendConformanceTest, TakeAlongAxisEveryDtype) {
  for (DType d : kEveryDType) {
    const Shape in_shape = {3, 40};
    const Shape idx_shape = {3, 17};
    HostArray idx{DType::kInt64, idx_shape, std::vector<uint8_t>(3 * 17 * 8)};
    for (int64_t k = 0; k < 3 * 17; ++k) {
      const int64_t v = (k * 7919) % 80 - 40;  // -40..39: negative ones count from the end
      std::memcpy(idx.bytes.data() + k * 8, &v, 8);
    }
    Check("take_along_axis " + Describe(d, in_shape), {Random(d, in_shape, 32), idx}, d, idx_shape,
          [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
            return b.Run(s, TakeAlongAxisOp{&in[0], &in[1], &o});
          });
  }
  // An index out of range is refused by both.
  HostArray bad{DType::kInt64, {1, 1}, std::vector<uint8_t>(8)};
  const int64_t v = 40;
  std::memcpy(bad.bytes.data(), &v, 8);
  absl::StatusOr<HostArray> got =
      RunOn(test_, {Random(DType::kFloat32, {1, 40}, 33), bad}, DType::kFloat32, {1, 1},
            [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
              return b.Run(s, TakeAlongAxisOp{&in[0], &in[1], &o});
            });
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(got.status().message()).find("out of bounds"), std::string::npos);
}

TEST_P(BackendConformanceTest, ScansEveryDtype) {
  // Integers exactly (wrapping); floats within the running sum of |terms|
  // (CUDA adds in a tree) and, for products, the running product of |terms|.
  // {1, 200000} and {3, 40000}: long rows the CUDA backend splits into
  // chunks of 8192, offset by the scan of the chunks' totals.
  const std::vector<Shape> shapes = {{1},    {300},       {4, 1000}, {1000, 3},
                                     {2, 0}, {1, 200000}, {3, 40000}};
  for (DType d : kAllDTypes) {
    if (d == DType::kBool) continue;  // the program layer scans bool as int64
    for (const Shape& shape : shapes) {
      for (ReduceKind kind : {ReduceKind::kSum, ReduceKind::kProd}) {
        const HostArray a = Random(d, shape, 34, /*specials=*/false);
        const int64_t n = shape.back(), rows = n == 0 ? 0 : a.size() / n;
        ScaleFn scale = [a, n, rows, kind] {
          std::vector<double> s(a.size());
          for (int64_t r = 0; r < rows; ++r) {
            double acc = kind == ReduceKind::kSum ? 0.0 : 1.0;
            for (int64_t j = 0; j < n; ++j) {
              const double x = std::fabs(a.value(r * n + j));
              acc = kind == ReduceKind::kSum ? acc + x : acc * x;
              // A half's running value is rounded at every step on the
              // CPU (as NumPy's), once per element on CUDA: j + 1 roundings.
              s[r * n + j] = IsHalf(a.dtype) ? acc * static_cast<double>(j + 1) : acc;
            }
          }
          return s;
        };
        Check(
            std::string(kind == ReduceKind::kSum ? "cumsum " : "cumprod ") + Describe(d, shape),
            {a}, d, shape,
            [kind](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
              return b.Run(s, ScanOp{kind, in.data(), &o});
            },
            IsFloating(d) ? scale : ScaleFn());
      }
    }
  }
}

// --- Large arrays, memory, refusals --------------------------------------------

TEST_P(BackendConformanceTest, LargeArraysOver64MiB) {
  const Shape shape = {9 << 20};  // 72 MiB of float64
  const HostArray a = Random(DType::kFloat64, shape, 21, false);
  const HostArray b = Random(DType::kFloat64, shape, 22, false);
  Check("large add float64 (9Mi,)", {a, b}, DType::kFloat64, shape,
        [](Backend& be, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
          return be.Run(s, ElementwiseOp{ElementwiseKind::kAdd, {in.data(), &in[1]}, &o});
        });
  Check(
      "large sum float64 (9Mi,)", {a}, DType::kFloat64, {},
      [](Backend& be, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
        return be.Run(s, ReduceOp{ReduceKind::kSum, std::nullopt, in.data(), &o});
      },
      [a] { return AbsSumScale(a, std::nullopt); });
  Check("large cast float64 -> float32 (9Mi,)", {a}, DType::kFloat32, shape,
        [](Backend& be, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
          return be.Run(s, CastOp{in.data(), &o});
        });
}

TEST_P(BackendConformanceTest, HugeAllocationIsResourceExhausted) {
  Backend& b = *test_.backend;
  absl::StatusOr<std::shared_ptr<Buffer>> huge =
      b.Allocate(int64_t{1} << 50, *test_.stream);  // 1 PiB
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted) << huge.status();
  // Still serves afterwards.
  absl::StatusOr<std::shared_ptr<Buffer>> small = b.Allocate(1 << 20, *test_.stream);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ((*small)->size(), 1 << 20);
}

TEST_P(BackendConformanceTest, AllocationsAndCopies) {
  Backend& b = *test_.backend;
  Stream& s = *test_.stream;
  absl::StatusOr<std::shared_ptr<Buffer>> zero = b.Allocate(0, s);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ((*zero)->size(), 0);
  EXPECT_FALSE(b.Allocate(-1, s).ok());
  absl::StatusOr<std::shared_ptr<Buffer>> buf = b.Allocate(64, s);
  ASSERT_TRUE(buf.ok());
  std::vector<uint8_t> host(64);
  for (int i = 0; i < 64; ++i) host[i] = static_cast<uint8_t>(i);
  ASSERT_TRUE(s.CopyToDevice(host.data(), **buf, 0, 64).ok());
  ASSERT_TRUE(s.CopyToDevice(host.data(), **buf, 60, 4).ok());
  ASSERT_TRUE(s.Synchronize().ok());
  std::vector<uint8_t> back(8);
  ASSERT_TRUE(s.CopyToHost(**buf, 56, back.data(), 8).ok());
  EXPECT_EQ(back, (std::vector<uint8_t>{56, 57, 58, 59, 0, 1, 2, 3}));
  EXPECT_EQ(s.CopyToDevice(host.data(), **buf, 60, 5).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.CopyToHost(**buf, 65, back.data(), 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.CopyToHost(**buf, -8, back.data(), 8).code(), absl::StatusCode::kInvalidArgument);
  const MemoryInfo m = b.memory();
  EXPECT_GT(m.total, 0);
  EXPECT_GE(m.in_use, 64);
  b.Trim();
}

// A fused spec's steps (ops and casts) run once with the ordinary kernels on
// whole arrays of `shape`, each result appended to `slots`: the reference
// the fused op must equal.
absl::Status StepsOpByOp(Backend& b, Stream& s, const FusedLoopSpec& spec, const Shape& shape,
                         std::vector<DeviceArray>& slots) {
  for (const FusedLoopSpec::Step& st : spec.steps) {
    DeviceArray r{nullptr, st.dtype, shape};
    ASSIGN_OR_RETURN(r.buffer, b.Allocate(r.nbytes(), s));
    if (!st.op) {
      RETURN_IF_ERROR(b.Run(s, CastOp{&slots[st.a], &r}));
    } else if (Arity(*st.op) == 1) {
      RETURN_IF_ERROR(b.Run(s, ElementwiseOp{*st.op, {&slots[st.a]}, &r}));
    } else {
      RETURN_IF_ERROR(b.Run(s, ElementwiseOp{*st.op, {&slots[st.a], &slots[st.b]}, &r}));
    }
    slots.push_back(r);
  }
  return absl::OkStatus();
}

// Fused loops (one pass, values in registers/cache across iterations) must
// equal the reference bit for bit, casts, wrapping and specials included.
TEST_P(BackendConformanceTest, FusedLoopsMatchTheReference) {
  using E = ElementwiseKind;
  using Step = FusedLoopSpec::Step;
  const int64_t n = 5000;
  // x (f64, carried), s (f32, one element), b (bool), k (int32).
  FusedLoopSpec f;
  f.trip_count = 5;
  f.num_carried = 1;
  f.param_dtypes = {DType::kFloat64, DType::kFloat32, DType::kBool, DType::kInt32};
  f.param_scalar = {false, true, false, false};
  f.steps = {Step::Cast(1, DType::kFloat64),                 // 4 = f64(s)
             Step::Of(E::kMultiply, 0, 4, DType::kFloat64),  // 5 = x * s
             Step::Cast(2, DType::kFloat64),                 // 6 = f64(b)
             Step::Of(E::kAdd, 5, 6, DType::kFloat64),       // 7
             Step::Cast(3, DType::kFloat64),                 // 8 = f64(k)
             Step::Of(E::kDivide, 7, 8, DType::kFloat64),    // 9 (k may be 0)
             Step::Of(E::kNegative, 9, -1, DType::kFloat64)};
  f.yields = {10};
  auto run = [](const FusedLoopSpec& spec) {
    return [spec](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& out) {
      std::vector<DeviceArray> outs{out};
      return b.Run(s, FusedLoopOp{&spec, in, outs});
    };
  };
  // The same spec op by op with the ordinary kernels, on whole arrays.
  auto op_by_op = [](const FusedLoopSpec& spec) {
    return [spec](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& out) {
      std::vector<DeviceArray> slots = in;
      const Shape shape = in[0].shape;
      for (int64_t t = 0; t < spec.trip_count; ++t) {
        slots.resize(in.size());
        RETURN_IF_ERROR(StepsOpByOp(b, s, spec, shape, slots));
        for (int c = 0; c < spec.num_carried; ++c) slots[c] = slots[spec.yields[c]];
      }
      return b.Run(s, CastOp{slots.data(), &out});
    };
  };
  auto check_against_op_by_op = [&](const std::string& what, const std::vector<HostArray>& in,
                                    DType dtype, const Shape& shape, const FusedLoopSpec& spec) {
    SCOPED_TRACE(what + " vs op by op");
    absl::StatusOr<HostArray> want = RunOn(ref_, in, dtype, shape, op_by_op(spec));
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<HostArray> got = RunOn(test_, in, dtype, shape, run(spec));
    ASSERT_TRUE(got.ok()) << got.status();
    Compare(*want, *got, {});
  };
  check_against_op_by_op("float64 with casts",
                         {Random(DType::kFloat64, {n}, 101), Random(DType::kFloat32, {}, 102),
                          Random(DType::kBool, {n}, 103), Random(DType::kInt32, {n}, 104)},
                         DType::kFloat64, {n}, f);
  Check("float64 with casts",
        {Random(DType::kFloat64, {n}, 101), Random(DType::kFloat32, {}, 102),
         Random(DType::kBool, {n}, 103), Random(DType::kInt32, {n}, 104)},
        DType::kFloat64, {n}, run(f));
  // Integers wrap: y = -(y * k) + y, 11 times; bool: z = z + b (or).
  FusedLoopSpec g;
  g.trip_count = 11;
  g.num_carried = 1;
  g.param_dtypes = {DType::kInt32, DType::kInt32};
  g.param_scalar = {false, false};
  g.steps = {Step::Of(E::kMultiply, 0, 1, DType::kInt32),
             Step::Of(E::kNegative, 2, -1, DType::kInt32), Step::Of(E::kAdd, 3, 0, DType::kInt32)};
  g.yields = {4};
  Check("int32 wrapping", {Random(DType::kInt32, {n}, 105), Random(DType::kInt32, {n}, 106)},
        DType::kInt32, {n}, run(g));
  check_against_op_by_op("int32 wrapping",
                         {Random(DType::kInt32, {n}, 105), Random(DType::kInt32, {n}, 106)},
                         DType::kInt32, {n}, g);
  FusedLoopSpec h;
  h.trip_count = 3;
  h.num_carried = 1;
  h.param_dtypes = {DType::kBool, DType::kBool};
  h.param_scalar = {false, false};
  h.steps = {Step::Of(E::kAdd, 0, 1, DType::kBool)};
  h.yields = {2};
  Check("bool or", {Random(DType::kBool, {n}, 107), Random(DType::kBool, {n}, 108)}, DType::kBool,
        {n}, run(h));
  check_against_op_by_op("bool or",
                         {Random(DType::kBool, {n}, 107), Random(DType::kBool, {n}, 108)},
                         DType::kBool, {n}, h);
}

// Straight-line regions (a spec of no carried values, one trip: what the
// planner makes of b = x * y; c = b + s; ...) equal the same steps op by op
// on the same backend, bit for bit (transcendentals included: both run the
// same expression), for random chains over every dtype; each region writes
// two of its slots.
TEST_P(BackendConformanceTest, FusedRegionsEqualOpByOpForRandomChains) {
  using Step = FusedLoopSpec::Step;
  // Params of d: 1-D, x and y full and s one element; 2-D (rows crossing
  // the CPU's blocks), x full, a row and a column broadcast, and s.
  struct Layout {
    Shape shape;
    std::vector<Shape> params;
  };
  const int64_t n = 70001;  // several CPU blocks, a ragged end, over the CUDA threshold
  const Layout layouts[] = {{{n}, {{n}, {n}, {}}}, {{263, 267}, {{263, 267}, {267}, {263, 1}, {}}}};
  for (const Layout& layout : layouts) {
    const int np = static_cast<int>(layout.params.size());
    for (DType d : kAllDTypes) {
      std::vector<ElementwiseKind> unary, binary;
      for (ElementwiseKind k : kAllElementwiseKinds) {
        if (!ElementwiseAccepts(k, d)) continue;
        // The ops NumPy computes elsewhere (true division of integers, float
        // math of integers) run in their own dtype only where accepted.
        (Arity(k) == 2 ? binary : unary).push_back(k);
      }
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        std::mt19937_64 rng(seed * 7919 + static_cast<uint64_t>(d));
        FusedLoopSpec spec;
        spec.trip_count = 1;
        spec.num_carried = 0;
        std::vector<int> of_d;  // every slot of d (casts go out and straight back)
        for (int p = 0; p < np; ++p) {
          const Shape& ps = layout.params[p];
          spec.param_dtypes.push_back(d);
          spec.param_scalar.push_back(ps.empty());
          const std::optional<FusedBroadcastLayout> l = FusedBroadcast(ps, layout.shape);
          spec.param_broadcast.push_back(l ? l->rank : 0);
          of_d.push_back(p);
        }
        auto pick = [&](size_t bound) { return static_cast<int>(rng() % bound); };
        const DType other = d == DType::kFloat64 ? DType::kInt32 : DType::kFloat64;
        for (int k = 0; k < 10; ++k) {
          const int slot = np + static_cast<int>(spec.steps.size());
          const int a = of_d[pick(of_d.size())], b = of_d[pick(of_d.size())];
          const int choice = pick(8);
          if (choice == 0) {
            spec.steps.push_back(Step::Cast(a, other));
            spec.steps.push_back(Step::Cast(slot, d));
            of_d.push_back(slot + 1);
          } else if (choice <= 2 && !unary.empty()) {
            spec.steps.push_back(Step::Of(unary[pick(unary.size())], a, -1, d));
            of_d.push_back(slot);
          } else if (!binary.empty()) {
            spec.steps.push_back(Step::Of(binary[pick(binary.size())], a, b, d));
            of_d.push_back(slot);
          }
        }
        if (spec.steps.empty()) continue;
        const int last = of_d.back(), mid = of_d[of_d.size() / 2];
        std::vector<HostArray> in;
        for (int p = 0; p < np; ++p)
          in.push_back(Random(d, layout.params[p], 300 + 100 * p + seed));
        for (const std::vector<int>& yields : {std::vector<int>{last, mid}, {mid, last}}) {
          spec.yields = yields;
          const std::string what = std::string(DTypeName(d)) + " chain " + std::to_string(seed) +
                                   " over " + std::to_string(layout.shape.size()) + "-D" + " of " +
                                   std::to_string(spec.steps.size()) + " steps, yield " +
                                   std::to_string(yields[0]);
          SCOPED_TRACE(what);
          // outs[0] is compared; outs[1] is written too.
          auto fused = [spec](Backend& b, Stream& s, std::vector<DeviceArray>& in,
                              DeviceArray& out) -> absl::Status {
            DeviceArray second{nullptr, out.dtype, out.shape};
            absl::StatusOr<std::shared_ptr<Buffer>> buf = b.Allocate(second.nbytes(), s);
            if (!buf.ok()) return buf.status();
            second.buffer = *buf;
            std::vector<DeviceArray> outs{out, second};
            return b.Run(s, FusedLoopOp{&spec, in, outs});
          };
          auto op_by_op = [spec](Backend& b, Stream& s, std::vector<DeviceArray>& in,
                                 DeviceArray& out) -> absl::Status {
            std::vector<DeviceArray> slots = in;
            const Shape shape = out.shape;
            // Smaller params broadcast first (a copy), as the executor's
            // op-by-op lowering does: not every kernel broadcasts (negative).
            for (DeviceArray& p : slots) {
              if (p.shape == shape) continue;
              DeviceArray full{nullptr, p.dtype, shape};
              absl::StatusOr<std::shared_ptr<Buffer>> buf = b.Allocate(full.nbytes(), s);
              if (!buf.ok()) return buf.status();
              full.buffer = *buf;
              if (absl::Status st = b.Run(s, CastOp{&p, &full}); !st.ok()) return st;
              p = full;
            }
            RETURN_IF_ERROR(StepsOpByOp(b, s, spec, shape, slots));
            return b.Run(s, CastOp{&slots[spec.yields[0]], &out});
          };
          absl::StatusOr<HostArray> want = RunOn(test_, in, d, layout.shape, op_by_op);
          ASSERT_TRUE(want.ok()) << want.status();
          absl::StatusOr<HostArray> got = RunOn(test_, in, d, layout.shape, fused);
          ASSERT_TRUE(got.ok()) << got.status();
          Compare(*want, *got, {});
        }
      }
    }
  }
}

// A region's trailing reduction (the kinds and dtypes FusedReductionFits:
// order-free) equals the reduction kernels run on the region's result, bit
// for bit, with and without another slot written beside it.
TEST_P(BackendConformanceTest, FusedReductionsEqualTheReductionKernels) {
  using Step = FusedLoopSpec::Step;
  const int64_t n = 70001;
  const ReduceKind kinds[] = {ReduceKind::kSum, ReduceKind::kProd, ReduceKind::kMax,
                              ReduceKind::kMin, ReduceKind::kAny,  ReduceKind::kAll};
  for (DType d : kAllDTypes) {
    std::vector<ElementwiseKind> binary;
    for (ElementwiseKind k : kAllElementwiseKinds) {
      if (Arity(k) == 2 && ElementwiseAccepts(k, d)) binary.push_back(k);
    }
    for (ReduceKind kind : kinds) {
      if (!FusedReductionFits(kind, d) || binary.empty()) continue;
      std::mt19937_64 rng(static_cast<uint64_t>(d) * 31 + static_cast<uint64_t>(kind));
      FusedLoopSpec spec;
      spec.trip_count = 1;
      spec.num_carried = 0;
      spec.param_dtypes = {d, d};
      spec.param_scalar = {false, false};
      std::vector<int> of_d = {0, 1};
      for (int k = 0; k < 4; ++k) {
        const int a = of_d[rng() % of_d.size()], b = of_d[rng() % of_d.size()];
        spec.steps.push_back(Step::Of(binary[rng() % binary.size()], a, b, d));
        of_d.push_back(1 + static_cast<int>(spec.steps.size()));
      }
      spec.reduction = FusedLoopSpec::Reduction{kind, of_d.back()};
      const DType out_dtype = ReduceResultType(kind, d);
      const std::vector<HostArray> in = {Random(d, {n}, 700 + static_cast<uint64_t>(kind)),
                                         Random(d, {n}, 800 + static_cast<uint64_t>(kind))};
      for (bool beside : {false, true}) {
        spec.yields = beside ? std::vector<int>{of_d[2]} : std::vector<int>{};
        SCOPED_TRACE(std::string(DTypeName(d)) + " " + ReduceKindName(kind) +
                     (beside ? " with a slot written" : ""));
        auto fused = [spec](Backend& b, Stream& s, std::vector<DeviceArray>& in,
                            DeviceArray& out) -> absl::Status {
          const Shape shape = in[0].shape;
          std::vector<DeviceArray> outs;
          if (!spec.yields.empty()) {
            DeviceArray slot{nullptr, spec.steps[spec.yields[0] - 2].dtype, shape};
            ASSIGN_OR_RETURN(slot.buffer, b.Allocate(slot.nbytes(), s));
            outs.push_back(slot);
          }
          outs.push_back(out);
          return b.Run(s, FusedLoopOp{&spec, in, outs, &shape});
        };
        auto op_by_op = [spec](Backend& b, Stream& s, std::vector<DeviceArray>& in,
                               DeviceArray& out) -> absl::Status {
          std::vector<DeviceArray> slots = in;
          RETURN_IF_ERROR(StepsOpByOp(b, s, spec, in[0].shape, slots));
          const DeviceArray& r = slots[spec.reduction->slot];
          if (spec.reduction->kind == ReduceKind::kSum) {
            return b.Run(s, ReduceOp{ReduceKind::kSum, std::nullopt, &r, &out});
          }
          const int axes[] = {0};
          return b.Run(s, ReduceAxesOp{spec.reduction->kind, axes, &r, &out});
        };
        absl::StatusOr<HostArray> want = RunOn(test_, in, out_dtype, {}, op_by_op);
        ASSERT_TRUE(want.ok()) << want.status();
        absl::StatusOr<HostArray> got = RunOn(test_, in, out_dtype, {}, fused);
        ASSERT_TRUE(got.ok()) << got.status();
        ASSERT_EQ(want->bytes, got->bytes);
      }
    }
  }
  // Malformed: a float sum, a reducing loop, the wrong out dtype, no shape.
  Backend& b = *test_.backend;
  Stream& s = *test_.stream;
  FusedLoopSpec spec;
  spec.trip_count = 1;
  spec.param_dtypes = {DType::kFloat32};
  spec.param_scalar = {false};
  spec.steps = {Step::Of(ElementwiseKind::kNegative, 0, -1, DType::kFloat32)};
  spec.reduction = FusedLoopSpec::Reduction{ReduceKind::kSum, 1};
  DeviceArray x{nullptr, DType::kFloat32, {64}}, r{nullptr, DType::kFloat32, {}};
  x.buffer = b.Allocate(x.nbytes(), s).value();
  r.buffer = b.Allocate(8, s).value();
  const Shape shape = x.shape;
  const std::vector<DeviceArray> ins{x}, outs{r};
  EXPECT_EQ(b.Run(s, FusedLoopOp{&spec, ins, outs, &shape}).code(),
            absl::StatusCode::kInvalidArgument);
  spec.reduction = FusedLoopSpec::Reduction{ReduceKind::kAny, 1};
  EXPECT_EQ(b.Run(s, FusedLoopOp{&spec, ins, outs, &shape}).code(),
            absl::StatusCode::kInvalidArgument);  // any gives bool
  r.dtype = DType::kBool;
  const std::vector<DeviceArray> bool_out{r};
  EXPECT_TRUE(b.Run(s, FusedLoopOp{&spec, ins, bool_out, &shape}).ok());
  EXPECT_EQ(b.Run(s, FusedLoopOp{&spec, ins, bool_out}).code(), absl::StatusCode::kInvalidArgument);
  const Shape empty = {0};
  EXPECT_EQ(b.Run(s, FusedLoopOp{&spec, ins, bool_out, &empty}).code(),
            absl::StatusCode::kInvalidArgument);
  spec.num_carried = 1;
  spec.trip_count = 2;
  spec.yields = {1};
  EXPECT_EQ(b.Run(s, FusedLoopOp{&spec, ins, bool_out, &shape}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(s.Synchronize().ok());
}

// A select step (NumPy's where in a region) picks bit patterns: NaN payloads
// and -0.0 pass unchanged, any nonzero condition byte is true, and a
// one-element operand broadcasts; the condition here is a float cast to
// bool inside the region (NaN is true), as the planner makes it.
TEST_P(BackendConformanceTest, FusedRegionSelectsKeepEveryBit) {
  using Step = FusedLoopSpec::Step;
  const int64_t n = 70001;
  for (DType d : kAllDTypes) {
    SCOPED_TRACE(DTypeName(d));
    FusedLoopSpec spec;
    spec.trip_count = 1;
    spec.num_carried = 0;
    spec.param_dtypes = {DType::kFloat32, d, d};
    spec.param_scalar = {false, false, true};
    spec.steps = {Step::Cast(0, DType::kBool), Step::Select(3, 1, 2, d)};
    spec.yields = {4};
    const HostArray cond = Random(DType::kFloat32, {n}, 601);
    const HostArray a = Random(d, {n}, 602), b = Random(d, {}, 603);
    HostArray want{d, {n}, std::vector<uint8_t>(static_cast<size_t>(n * ItemSize(d)))};
    const int64_t item = ItemSize(d);
    for (int64_t i = 0; i < n; ++i) {
      const float c = cond.at<float>(i);
      const uint8_t* from = c != 0.0f ? &a.bytes[i * item] : &b.bytes[0];  // NaN != 0
      std::memcpy(&want.bytes[i * item], from, item);
    }
    absl::StatusOr<HostArray> got =
        RunOn(test_, {cond, a, b}, d, {n},
              [spec](Backend& be, Stream& s, std::vector<DeviceArray>& in, DeviceArray& out) {
                std::vector<DeviceArray> outs{out};
                return be.Run(s, FusedLoopOp{&spec, in, outs});
              });
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->bytes, want.bytes) << "a select changed some element's bits";
  }
}

// A region's outs must match its yields' dtypes and one shape, and every
// full param that shape: anything else is refused, never read out of bounds.
TEST_P(BackendConformanceTest, FusedRegionsRefuseMismatchedArrays) {
  using Step = FusedLoopSpec::Step;
  Backend& b = *test_.backend;
  Stream& s = *test_.stream;
  FusedLoopSpec spec;
  spec.trip_count = 1;
  spec.num_carried = 0;
  spec.param_dtypes = {DType::kFloat32, DType::kFloat32};
  spec.param_scalar = {false, false};
  spec.steps = {Step::Of(ElementwiseKind::kAdd, 0, 1, DType::kFloat32),
                Step::Of(ElementwiseKind::kLess, 2, 0, DType::kFloat32),
                Step::Cast(3, DType::kBool)};
  spec.yields = {2, 4};
  auto array = [&](DType d, int64_t n) {
    DeviceArray a{nullptr, d, {n}};
    a.buffer = b.Allocate(a.nbytes(), s).value();
    return a;
  };
  const DeviceArray x = array(DType::kFloat32, 64), short_y = array(DType::kFloat32, 8);
  const DeviceArray sum = array(DType::kFloat32, 64), flag = array(DType::kBool, 64);
  const DeviceArray wrong_dtype = array(DType::kFloat32, 64);
  const std::vector<DeviceArray> good_in{x, x}, short_in{x, short_y};
  const std::vector<DeviceArray> good_out{sum, flag}, bad_dtype{sum, wrong_dtype};
  EXPECT_TRUE(b.Run(s, FusedLoopOp{&spec, good_in, good_out}).ok());
  EXPECT_EQ(b.Run(s, FusedLoopOp{&spec, short_in, good_out}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(b.Run(s, FusedLoopOp{&spec, good_in, bad_dtype}).code(),
            absl::StatusCode::kInvalidArgument);
  const std::vector<DeviceArray> one_out{sum};
  EXPECT_EQ(b.Run(s, FusedLoopOp{&spec, good_in, one_out}).code(),
            absl::StatusCode::kInvalidArgument);
  spec.yields = {2, 9};
  EXPECT_EQ(b.Run(s, FusedLoopOp{&spec, good_in, good_out}).code(),
            absl::StatusCode::kInvalidArgument);
  // A select whose condition is not bool, or that reads a later slot.
  spec.yields = {2, 4};
  spec.steps[2] = Step::Select(0, 2, 2, DType::kFloat32);
  EXPECT_EQ(b.Run(s, FusedLoopOp{&spec, good_in, good_out}).code(),
            absl::StatusCode::kInvalidArgument);
  spec.steps[2] = Step::Select(3, 2, 9, DType::kFloat32);
  EXPECT_EQ(b.Run(s, FusedLoopOp{&spec, good_in, good_out}).code(),
            absl::StatusCode::kInvalidArgument);
  // A broadcast param must have the layout the spec names: x (64,) over
  // outs of (8, 64) fits a rank-2 layout {8 stretched, 64}; the wrong rank,
  // a length that does not broadcast, or a broadcast carried value do not.
  spec.steps[2] = Step::Cast(3, DType::kBool);
  spec.param_broadcast = {2, 0};
  DeviceArray sum2{nullptr, DType::kFloat32, {8, 64}}, flag2{nullptr, DType::kBool, {8, 64}};
  sum2.buffer = b.Allocate(sum2.nbytes(), s).value();
  flag2.buffer = b.Allocate(flag2.nbytes(), s).value();
  DeviceArray full2 = sum2;
  full2.buffer = b.Allocate(full2.nbytes(), s).value();
  const std::vector<DeviceArray> rows_in{x, full2}, outs2{sum2, flag2};
  EXPECT_TRUE(b.Run(s, FusedLoopOp{&spec, rows_in, outs2}).ok());
  const std::vector<DeviceArray> short_rows{short_y, full2};
  EXPECT_EQ(b.Run(s, FusedLoopOp{&spec, short_rows, outs2}).code(),
            absl::StatusCode::kInvalidArgument);
  spec.param_broadcast = {3, 0};
  EXPECT_EQ(b.Run(s, FusedLoopOp{&spec, rows_in, outs2}).code(),
            absl::StatusCode::kInvalidArgument);
  spec.param_broadcast = {2};
  EXPECT_EQ(b.Run(s, FusedLoopOp{&spec, rows_in, outs2}).code(),
            absl::StatusCode::kInvalidArgument);
  FusedLoopSpec loop = spec;
  loop.num_carried = 1;
  loop.trip_count = 2;
  loop.param_broadcast = {2, 0};
  loop.yields = {2};
  const std::vector<DeviceArray> loop_out{sum2};
  EXPECT_EQ(b.Run(s, FusedLoopOp{&loop, rows_in, loop_out}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(s.Synchronize().ok());
  EXPECT_FALSE(b.poisoned());
}

// The server allocates through Device, which wraps each buffer to return its
// bytes to the memory budget: ops must accept those wrapped buffers.
TEST_P(BackendConformanceTest, BuffersFromTheBudgetedDevice) {
  absl::StatusOr<std::unique_ptr<Backend>> made = CreateBackend(GetParam());
  ASSERT_TRUE(made.ok()) << made.status();
  Device device(*std::move(made), int64_t{1} << 30);
  std::unique_ptr<Stream> s = device.backend().NewStream();
  {
    DeviceArray a{nullptr, DType::kFloat64, {4}};
    absl::StatusOr<std::shared_ptr<Buffer>> buf = device.Allocate(a.nbytes(), *s);
    ASSERT_TRUE(buf.ok()) << buf.status();
    a.buffer = *buf;
    EXPECT_EQ(device.budget().used(), 32);
    ASSERT_TRUE(device.backend().Run(*s, FillOp{Scalar::Float(2.5), &a}).ok());
    ASSERT_TRUE(device.backend().Run(*s, ElementwiseOp{ElementwiseKind::kAdd, {&a, &a}, &a}).ok());
    ASSERT_TRUE(s->Synchronize().ok());
    std::vector<double> back(4);
    ASSERT_TRUE(s->CopyToHost(*a.buffer, 0, back.data(), 32).ok());
    EXPECT_EQ(back, (std::vector<double>{5.0, 5.0, 5.0, 5.0}));
  }
  EXPECT_EQ(device.budget().used(), 0);
  EXPECT_EQ(device.Allocate(int64_t{2} << 30, *s).status().code(),
            absl::StatusCode::kResourceExhausted);
}

// An array larger than its buffer is INVALID_ARGUMENT on every op, never a
// write past the buffer (on a GPU: an illegal address that poisons it).
TEST_P(BackendConformanceTest, ArrayLargerThanItsBufferIsRefused) {
  Backend& b = *test_.backend;
  Stream& s = *test_.stream;
  absl::StatusOr<std::shared_ptr<Buffer>> buf = b.Allocate(800, s);
  ASSERT_TRUE(buf.ok()) << buf.status();
  const DeviceArray fits{*buf, DType::kFloat64, {100}};
  const DeviceArray big{*buf, DType::kFloat64, {1000}};
  EXPECT_EQ(b.Run(s, FillOp{Scalar::Float(1), &big}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(b.Run(s, ElementwiseOp{ElementwiseKind::kAdd, {&fits, &fits}, &big}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(b.Run(s, CastOp{&big, &fits}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(b.poisoned());
  EXPECT_TRUE(b.Run(s, FillOp{Scalar::Float(1), &fits}).ok());
  EXPECT_TRUE(s.Synchronize().ok());
}

// Buffers outlive the stream they were allocated on and may be used on
// another stream; freeing one then waits for that stream's work.
TEST_P(BackendConformanceTest, BuffersOutliveTheirStreamAndMoveBetweenStreams) {
  Backend& b = *test_.backend;
  const int64_t n = 1 << 18;
  std::shared_ptr<Buffer> survivor;
  {
    std::unique_ptr<Stream> first = b.NewStream();
    absl::StatusOr<std::shared_ptr<Buffer>> buf = b.Allocate(n * 4, *first);
    ASSERT_TRUE(buf.ok()) << buf.status();
    survivor = *buf;
    const DeviceArray x{survivor, DType::kFloat32, {n}};
    ASSERT_TRUE(b.Run(*first, FillOp{Scalar::Float(2.5), &x}).ok());
    ASSERT_TRUE(first->Synchronize().ok());
  }  // the first stream is gone; its buffer is not
  {
    std::unique_ptr<Stream> second = b.NewStream();
    const DeviceArray x{survivor, DType::kFloat32, {n}};
    ASSERT_TRUE(b.Run(*second, ElementwiseOp{ElementwiseKind::kAdd, {&x, &x}, &x}).ok());
    std::vector<float> back(n);
    ASSERT_TRUE(second->CopyToHost(*survivor, 0, back.data(), n * 4).ok());
    EXPECT_EQ(back.front(), 5.0f);
    EXPECT_EQ(back.back(), 5.0f);
    // Still queued when the last owner lets go: the free waits for it.
    ASSERT_TRUE(b.Run(*second, ElementwiseOp{ElementwiseKind::kAdd, {&x, &x}, &x}).ok());
    survivor.reset();
    EXPECT_TRUE(second->Synchronize().ok());
  }
  EXPECT_TRUE(test_.stream->Synchronize().ok());
  EXPECT_FALSE(b.poisoned());
}

// A stream or a buffer of another device is INVALID_ARGUMENT. (A CPU stream
// holds no device state, so the CPU backend takes any stream.)
TEST_P(BackendConformanceTest, StreamsAndBuffersOfAnotherDeviceAreRefused) {
  if (GetParam() == "cpu") GTEST_SKIP() << "CPU streams and buffers are host memory";
  Backend& b = *test_.backend;
  std::unique_ptr<Stream> foreign_stream = ref_backend_->NewStream();
  EXPECT_EQ(b.Allocate(64, *foreign_stream).status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::shared_ptr<Buffer>> mine = b.Allocate(64, *test_.stream);
  ASSERT_TRUE(mine.ok()) << mine.status();
  const DeviceArray x{*mine, DType::kFloat64, {8}};
  EXPECT_EQ(b.Run(*foreign_stream, FillOp{Scalar::Float(1), &x}).code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::shared_ptr<Buffer>> host = ref_backend_->Allocate(64, *ref_.stream);
  ASSERT_TRUE(host.ok()) << host.status();
  const DeviceArray h{*host, DType::kFloat64, {8}};
  EXPECT_EQ(b.Run(*test_.stream, CastOp{&h, &x}).code(), absl::StatusCode::kInvalidArgument);
  std::vector<uint8_t> bytes(64);
  EXPECT_EQ(test_.stream->CopyToDevice(bytes.data(), **host, 0, 64).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(b.poisoned());
}

TEST_P(BackendConformanceTest, BadArgumentsAreRefused) {
  const HostArray f = Random(DType::kFloat64, {2, 3}, 23);
  const HostArray i = Random(DType::kInt32, {2, 3}, 24);
  // Each must fail on the reference, and Check demands the same of the test.
  Check("binary dtype mismatch", {f, i}, DType::kFloat64, {2, 3},
        [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
          return b.Run(s, ElementwiseOp{ElementwiseKind::kAdd, {in.data(), &in[1]}, &o});
        });
  Check("binary shapes do not broadcast", {f, Random(DType::kFloat64, {4}, 25)}, DType::kFloat64,
        {2, 3}, [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
          return b.Run(s, ElementwiseOp{ElementwiseKind::kAdd, {in.data(), &in[1]}, &o});
        });
  Check("negative dtype mismatch", {f}, DType::kFloat32, {2, 3},
        [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
          return b.Run(s, ElementwiseOp{ElementwiseKind::kNegative, {in.data()}, &o});
        });
  Check("sum bad axis", {f}, DType::kFloat64, {2},
        [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
          return b.Run(s, ReduceOp{ReduceKind::kSum, 2, in.data(), &o});
        });
  Check("sum wrong result dtype", {i}, DType::kInt32, {},
        [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
          return b.Run(s, ReduceOp{ReduceKind::kSum, std::nullopt, in.data(), &o});
        });
  Check("transpose bad perm", {f}, DType::kFloat64, {3, 2},
        [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
          const int perm[] = {1, 1};
          return b.Run(s, TransposeOp{perm, in.data(), &o});
        });
  Check("matmul shape does not fit", {f, f}, DType::kFloat64, {2, 2},
        [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& o) {
          return b.Run(s, MatmulOp{MatmulShape{1, 3, 3, 2, 0, 0}, in.data(), &in[1], &o});
        });
  Check("arange of bool", {}, DType::kBool, {4},
        [](Backend& b, Stream& s, std::vector<DeviceArray>&, DeviceArray& o) {
          return b.Run(s, ArangeOp{Scalar::Int(0), Scalar::Int(1), Scalar::Int(1), &o});
        });
}

#include "tests/backend/reduce_shape_conformance.inc"

INSTANTIATE_TEST_SUITE_P(Backends, BackendConformanceTest, ::testing::Values("cpu", "cuda:0"),
                         backend_test::BackendName);

}  // namespace
}  // namespace resident

// CUDA backend smoke test and benchmark: every op on random data (special
// float values included), on cuda:0 and on the CPU reference backend, compared
// (elementwise bit-for-bit, NaN-aware; sums and float matmul within a relative
// bound); error paths; then timings with CUDA events (median of many).
// Build: -DRESIDENT_CUDA_SMOKE=ON, target resident_cuda_smoke.
// Usage: resident_cuda_smoke [--no-bench] [--quick]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "server/device/backend.h"
#include "server/device/cpu/cpu_backend.h"
#include "server/device/cuda/cuda_backend.h"
#include "server/device/cuda/cuda_backend_internal.h"

namespace resident {
namespace {

int g_failures = 0, g_checks = 0;
bool g_cpu_only = false;
std::mt19937_64 g_rng(12345);

#define EXPECT(cond, ...)                                   \
  do {                                                      \
    ++g_checks;                                             \
    if (!(cond)) {                                          \
      ++g_failures;                                         \
      std::printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::printf(__VA_ARGS__);                             \
      std::printf("\n");                                    \
    }                                                       \
  } while (0)

std::string Str(absl::Span<const int64_t> s) { return ShapeString(s); }
const char* Name(DType d) {
  static const char* names[] = {"bool", "int32", "int64", "float32", "float64"};
  return names[static_cast<int>(d)];
}

struct Host {
  DType dtype;
  Shape shape;
  std::vector<uint8_t> bytes;
  int64_t n() const { return NumElements(shape); }
};

double SpecialOr(double x, int kind) {
  static const double specials[] = {
      std::numeric_limits<double>::quiet_NaN(), INFINITY, -INFINITY, 0.0, -0.0,
      3e9, -3e9, 9.3e18, -9.3e18, 1e300, 5e-324, 2147483648.0, -2147483648.5,
      9223372036854775808.0, -0.99};
  return kind < 15 ? specials[kind] : x;
}

Host Random(DType dt, Shape shape, bool specials = true, bool small_ints = false) {
  Host h{dt, shape, {}};
  const int64_t n = h.n();
  h.bytes.resize(n * ItemSize(dt));
  std::uniform_real_distribution<double> u(-100, 100);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = g_rng();
    switch (dt) {
      case DType::kBool: h.bytes[i] = r & 1; break;
      case DType::kInt32: {
        int32_t v = small_ints ? static_cast<int32_t>(r % 21) - 10 : static_cast<int32_t>(r);
        std::memcpy(&h.bytes[i * 4], &v, 4);
        break;
      }
      case DType::kInt64: {
        int64_t v = small_ints ? static_cast<int64_t>(r % 21) - 10 : static_cast<int64_t>(r);
        std::memcpy(&h.bytes[i * 8], &v, 8);
        break;
      }
      case DType::kFloat32: {
        double x = u(g_rng);
        if (specials && r % 16 == 0) x = SpecialOr(x, static_cast<int>((r >> 8) % 16));
        float v = static_cast<float>(x);
        std::memcpy(&h.bytes[i * 4], &v, 4);
        break;
      }
      case DType::kFloat64: {
        double x = u(g_rng);
        if (specials && r % 16 == 0) x = SpecialOr(x, static_cast<int>((r >> 8) % 16));
        std::memcpy(&h.bytes[i * 8], &x, 8);
        break;
      }
    }
  }
  return h;
}

double ValueAt(const Host& h, int64_t i) {
  switch (h.dtype) {
    case DType::kBool: return h.bytes[i];
    case DType::kInt32: { int32_t v; std::memcpy(&v, &h.bytes[i * 4], 4); return v; }
    case DType::kInt64: { int64_t v; std::memcpy(&v, &h.bytes[i * 8], 8); return static_cast<double>(v); }
    case DType::kFloat32: { float v; std::memcpy(&v, &h.bytes[i * 4], 4); return v; }
    case DType::kFloat64: { double v; std::memcpy(&v, &h.bytes[i * 8], 8); return v; }
  }
  return 0;
}

struct Side {
  Backend* backend;
  std::unique_ptr<Stream> stream;
};

absl::StatusOr<DeviceArray> Upload(Side& s, const Host& h) {
  DeviceArray a;
  a.dtype = h.dtype;
  a.shape = h.shape;
  auto buf = s.backend->Allocate(static_cast<int64_t>(h.bytes.size()), *s.stream);
  if (!buf.ok()) return buf.status();
  a.buffer = *buf;
  if (auto st = s.backend->CopyToDevice(*s.stream, h.bytes.data(), *a.buffer, 0,
                                        h.bytes.size());
      !st.ok())
    return st;
  return a;
}

absl::StatusOr<DeviceArray> Empty(Side& s, DType dt, Shape shape) {
  DeviceArray a;
  a.dtype = dt;
  a.shape = shape;
  auto buf = s.backend->Allocate(a.nbytes(), *s.stream);
  if (!buf.ok()) return buf.status();
  a.buffer = *buf;
  // Poison: every element must be written by the op.
  std::vector<uint8_t> junk(a.nbytes(), 0xA5);
  if (!junk.empty()) {
    auto st = s.backend->CopyToDevice(*s.stream, junk.data(), *a.buffer, 0, junk.size());
    if (!st.ok()) return st;
    st = s.backend->Synchronize(*s.stream);
    if (!st.ok()) return st;
  }
  return a;
}

Host Download(Side& s, const DeviceArray& a) {
  Host h{a.dtype, a.shape, std::vector<uint8_t>(a.nbytes())};
  if (!h.bytes.empty()) {
    auto st = s.backend->CopyToHost(*s.stream, *a.buffer, 0, h.bytes.data(), h.bytes.size());
    EXPECT(st.ok(), "download: %s", std::string(st.message()).c_str());
  }
  return h;
}

Side* g_cpu;
Side* g_gpu;

using OpFn = std::function<absl::Status(Backend&, Stream&, std::vector<DeviceArray>&, DeviceArray&)>;

enum class Cmp { kExact, kTolerance };

// Runs op on both backends and compares. tol_scale: per-output bound scale
// (|terms| sum) for kTolerance.
void RunBoth(const std::string& label, const std::vector<Host>& inputs, DType out_dt,
             Shape out_shape, const OpFn& op, Cmp cmp = Cmp::kExact, double rel = 0,
             double scale = 1, bool expect_ok = true) {
  Host results[2];
  absl::Status statuses[2];
  Side* sides[2] = {g_cpu, g_gpu};
  // Invalid cases run on cuda only (the CPU backend's rejection path is not
  // what this checks).
  if (!expect_ok && g_cpu_only) return;
  for (int k = expect_ok ? 0 : 1; k < 2; ++k) {
    Side& s = *sides[k];
    std::vector<DeviceArray> ins;
    for (const Host& h : inputs) {
      auto a = Upload(s, h);
      EXPECT(a.ok(), "%s upload", label.c_str());
      if (!a.ok()) return;
      ins.push_back(*a);
    }
    auto out = Empty(s, out_dt, out_shape);
    EXPECT(out.ok(), "%s alloc: %s", label.c_str(), std::string(out.status().message()).c_str());
    if (!out.ok()) return;
    statuses[k] = op(*s.backend, *s.stream, ins, *out);
    if (statuses[k].ok()) statuses[k] = s.backend->Synchronize(*s.stream);
    if (statuses[k].ok()) results[k] = Download(s, *out);
  }
  if (!expect_ok) {
    EXPECT(!statuses[1].ok() && statuses[1].code() == absl::StatusCode::kInvalidArgument,
           "%s: cuda should reject: %s", label.c_str(), statuses[1].ToString().c_str());
    return;
  }
  EXPECT(statuses[0].ok(), "%s: cpu: %s", label.c_str(), statuses[0].ToString().c_str());
  EXPECT(statuses[1].ok(), "%s: cuda: %s", label.c_str(), statuses[1].ToString().c_str());
  if (!statuses[0].ok() || !statuses[1].ok()) return;
  const Host& ref = results[0];
  const Host& got = results[1];
  const int64_t n = ref.n();
  const int64_t item = ItemSize(out_dt);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool ok;
    if (cmp == Cmp::kExact) {
      ok = std::memcmp(&ref.bytes[i * item], &got.bytes[i * item], item) == 0;
      if (!ok && IsFloating(out_dt)) {
        ok = std::isnan(ValueAt(ref, i)) && std::isnan(ValueAt(got, i));
      }
    } else {
      const double r = ValueAt(ref, i), g = ValueAt(got, i);
      ok = (std::isnan(r) && std::isnan(g)) || r == g ||
           std::fabs(r - g) <= rel * scale;
    }
    if (!ok && bad++ < 3) {
      std::printf("  %s [%lld]: cpu %.17g cuda %.17g\n", label.c_str(),
                  static_cast<long long>(i), ValueAt(ref, i), ValueAt(got, i));
    }
  }
  EXPECT(bad == 0, "%s: %lld of %lld elements differ", label.c_str(),
         static_cast<long long>(bad), static_cast<long long>(n));
}

const DType kTypes[] = {DType::kBool, DType::kInt32, DType::kInt64, DType::kFloat32,
                        DType::kFloat64};

void TestBinary(bool quick) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{}, {}}, {{0}, {0}}, {{7}, {7}}, {{1}, {7}}, {{7}, {}},
      {{quick ? 100003 : 1000003}, {quick ? 100003 : 1000003}},
      {{1000001}, {}}, {{}, {1000001}}, {{3, 1}, {1, 4}}, {{2, 3, 4}, {4}},
      {{5, 1, 3}, {1, 7, 1}}, {{257, 513}, {513}}, {{257, 513}, {257, 1}},
      {{2, 1, 2, 1, 2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2, 1, 2, 1, 2}},
  };
  for (DType dt : kTypes) {
    for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kSubtract, BinaryOp::kMultiply, BinaryOp::kDivide}) {
      const bool valid = !((dt == DType::kBool && op == BinaryOp::kSubtract) ||
                           (op == BinaryOp::kDivide && !IsFloating(dt)));
      for (const auto& [sa, sb] : cases) {
        auto out_shape = BroadcastShapes(sa, sb);
        const std::string label = std::string("binary ") + Name(dt) + " op" +
                                  std::to_string(static_cast<int>(op)) + " " + Str(sa) + Str(sb);
        RunBoth(label, {Random(dt, sa), Random(dt, sb)}, dt, *out_shape,
                [op](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& out) {
                  return b.Binary(s, op, in[0], in[1], out);
                }, Cmp::kExact, 0, 1, valid);
        if (!valid) break;
      }
      if (!valid) continue;
      // In place, a + a into a (the seed workload's shape of call).
      Host h = Random(dt, {4099});
      RunBoth(std::string("binary in-place self ") + Name(dt), {h}, dt, {4099},
              [op](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& out) {
                auto st = b.Binary(s, op, in[0], in[0], in[0]);
                if (!st.ok()) return st;
                return b.Cast(s, in[0], out);  // copy the result out
              });
    }
  }
  // Rank 64 with alternating broadcast (not collapsible).
  Shape a64(64, 1), b64(64, 1);
  for (int i = 0; i < 48; i += 8) { a64[i] = 2; b64[i + 4] = 3; }
  RunBoth("binary rank-64", {Random(DType::kFloat64, a64), Random(DType::kFloat64, b64)},
          DType::kFloat64, *BroadcastShapes(a64, b64),
          [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& out) {
            return b.Binary(s, BinaryOp::kAdd, in[0], in[1], out);
          });
}

void TestUnaryCastFill(bool quick) {
  for (DType dt : kTypes) {
    RunBoth(std::string("negative ") + Name(dt), {Random(dt, {10007})}, dt, {10007},
            [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& out) {
              return b.Negative(s, in[0], out);
            }, Cmp::kExact, 0, 1, dt != DType::kBool);
    for (DType to : kTypes) {
      for (const auto& [from_shape, to_shape] : std::vector<std::pair<Shape, Shape>>{
               {{100003}, {100003}}, {{3, 1, 5}, {4, 3, 7, 5}}, {{}, {33}}}) {
        RunBoth(std::string("cast ") + Name(dt) + "->" + Name(to) + Str(from_shape) + Str(to_shape),
                {Random(dt, from_shape)}, to, to_shape,
                [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& out) {
                  return b.Cast(s, in[0], out);
                });
      }
    }
    for (Scalar v : {Scalar::Int(7), Scalar::Int(-3000000000LL), Scalar::Float(3e9),
                     Scalar::Float(-2.5), Scalar::Float(NAN), Scalar::Bool(true),
                     Scalar::Float(0.1), Scalar::Int(0), Scalar::Int(16777217)}) {
      for (Shape sh : std::vector<Shape>{{}, {1}, {13}, {quick ? 1001 : 1000003}}) {
        RunBoth(std::string("fill ") + Name(dt) + " " + v.ToString() + Str(sh), {}, dt, sh,
                [v](Backend& b, Stream& s, std::vector<DeviceArray>&, DeviceArray& out) {
                  return b.Fill(s, v, out);
                });
      }
    }
    for (auto [start, delta] : std::vector<std::pair<Scalar, Scalar>>{
             {Scalar::Int(0), Scalar::Int(1)}, {Scalar::Float(0.5), Scalar::Float(0.1)},
             {Scalar::Int(INT64_MAX - 5), Scalar::Int(3)}, {Scalar::Float(-3), Scalar::Float(1e-3)},
             {Scalar::Int(2147483600), Scalar::Int(7)}}) {
      RunBoth(std::string("arange ") + Name(dt) + " " + start.ToString() + "," + delta.ToString(),
              {}, dt, {100003},
              [start, delta](Backend& b, Stream& s, std::vector<DeviceArray>&, DeviceArray& out) {
                return b.Arange(s, start, delta, out);
              }, Cmp::kExact, 0, 1, dt != DType::kBool);
    }
  }
}

void TestSum(bool quick) {
  const std::vector<Shape> shapes = {{},          {0},          {1},         {7},
                                     {quick ? 100003 : 3000017}, {5, 0, 3},  {3, 100000},
                                     {100000, 3}, {2, 50000, 2}, {64, 64, 64}, {1, 1000000},
                                     {1000, 7},   {7, 1000},    {40000, 40}};
  for (DType dt : kTypes) {
    for (const Shape& sh : shapes) {
      Host h = Random(dt, sh, /*specials=*/false);
      double scale = 0;
      for (int64_t i = 0; i < h.n(); ++i) scale += std::fabs(ValueAt(h, i));
      const double rel = dt == DType::kFloat32 ? 1e-5 : dt == DType::kFloat64 ? 1e-12 : 0;
      const Cmp cmp = IsFloating(dt) ? Cmp::kTolerance : Cmp::kExact;
      RunBoth(std::string("sum ") + Name(dt) + Str(sh), {h}, SumResultType(dt), {},
              [](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& out) {
                return b.Sum(s, in[0], std::nullopt, out);
              }, cmp, rel, scale);
      for (int ax = 0; ax < static_cast<int>(sh.size()); ++ax) {
        Shape o = sh;
        o.erase(o.begin() + ax);
        RunBoth(std::string("sum ") + Name(dt) + Str(sh) + " axis " + std::to_string(ax), {h},
                SumResultType(dt), o,
                [ax](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& out) {
                  return b.Sum(s, in[0], ax, out);
                }, cmp, rel, scale);
      }
    }
  }
}

void TestMatmul() {
  struct C { int64_t batch, m, k, n; bool bcast_a, bcast_b; };
  const std::vector<C> cases = {{1, 1, 1, 1, false, false}, {1, 33, 17, 65, false, false},
                                {3, 31, 64, 9, false, true}, {4, 16, 5, 16, true, false},
                                {1, 200, 300, 100, false, false}, {2, 4, 0, 5, false, false},
                                {1, 0, 4, 5, false, false}, {1, 1, 1000, 1, false, false}};
  for (DType dt : kTypes) {
    for (const C& c : cases) {
      const int64_t as = c.bcast_a ? 0 : c.m * c.k, bs = c.bcast_b ? 0 : c.k * c.n;
      Host a = Random(dt, {c.bcast_a ? 1 : c.batch, c.m, c.k}, false, true);
      Host b = Random(dt, {c.bcast_b ? 1 : c.batch, c.k, c.n}, false, true);
      Backend::MatmulShape shape{c.batch, c.m, c.k, c.n, as, bs};
      const double rel = dt == DType::kFloat32 ? 1e-5 : 1e-12;
      RunBoth(std::string("matmul ") + Name(dt) + " " + std::to_string(c.batch) + "x" +
                  std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n),
              {a, b}, dt, {c.batch, c.m, c.n},
              [shape](Backend& bk, Stream& s, std::vector<DeviceArray>& in, DeviceArray& out) {
                return bk.Matmul(s, shape, in[0], in[1], out);
              }, IsFloating(dt) ? Cmp::kTolerance : Cmp::kExact, rel,
              static_cast<double>(std::max<int64_t>(c.k, 1)) * 100 * 100);
    }
    // Wrapping: large int values.
    if (IsInteger(dt)) {
      Backend::MatmulShape shape{1, 9, 13, 11, 0, 0};
      RunBoth(std::string("matmul wrap ") + Name(dt), {Random(dt, {9, 13}), Random(dt, {13, 11})},
              dt, {9, 11},
              [shape](Backend& bk, Stream& s, std::vector<DeviceArray>& in, DeviceArray& out) {
                return bk.Matmul(s, shape, in[0], in[1], out);
              });
    }
  }
}

void TestTranspose() {
  const std::vector<std::pair<Shape, std::vector<int>>> cases = {
      {{33, 65}, {1, 0}}, {{1025, 2049}, {1, 0}}, {{3, 33, 65}, {0, 2, 1}},
      {{4, 5, 6}, {2, 1, 0}}, {{4, 5, 6}, {1, 0, 2}}, {{4, 5, 6}, {2, 0, 1}},
      {{4, 5, 6}, {1, 2, 0}}, {{4, 5, 6}, {0, 1, 2}}, {{2, 3, 4, 5}, {3, 1, 0, 2}},
      {{7}, {0}}, {{}, {}}, {{1, 9, 1, 8}, {3, 2, 1, 0}}, {{0, 3}, {1, 0}}};
  for (DType dt : kTypes) {
    for (const auto& [sh, perm] : cases) {
      Shape o(sh.size());
      for (size_t i = 0; i < sh.size(); ++i) o[i] = sh[perm[i]];
      std::string p;
      for (int x : perm) p += std::to_string(x);
      RunBoth(std::string("transpose ") + Name(dt) + Str(sh) + " perm " + p, {Random(dt, sh)}, dt, o,
              [perm](Backend& b, Stream& s, std::vector<DeviceArray>& in, DeviceArray& out) {
                return b.Transpose(s, in[0], perm, out);
              });
    }
  }
}

void TestErrorsAndLifetimes(Backend& gpu) {
  auto stream = gpu.NewStream();
  // Out of memory: RESOURCE_EXHAUSTED, and the device still works after.
  auto huge = gpu.Allocate(int64_t{1} << 50, *stream);
  EXPECT(!huge.ok() && huge.status().code() == absl::StatusCode::kResourceExhausted,
         "huge alloc: %s", huge.status().ToString().c_str());
  EXPECT(!gpu.poisoned(), "poisoned after OOM");
  // Mismatched dtypes: INVALID_ARGUMENT.
  auto buf = gpu.Allocate(800, *stream);
  EXPECT(buf.ok(), "alloc");
  DeviceArray a{*buf, DType::kFloat64, {100}}, b{*buf, DType::kInt64, {100}};
  auto st = gpu.Binary(*stream, BinaryOp::kAdd, a, b, a);
  EXPECT(st.code() == absl::StatusCode::kInvalidArgument, "%s", st.ToString().c_str());
  // Array larger than its buffer: INVALID_ARGUMENT, never an illegal address.
  DeviceArray big{*buf, DType::kFloat64, {1000}};
  st = gpu.Fill(*stream, Scalar::Float(1), big);
  EXPECT(st.code() == absl::StatusCode::kInvalidArgument, "%s", st.ToString().c_str());
  // Copy out of bounds.
  std::vector<uint8_t> host(16);
  st = gpu.CopyToHost(*stream, **buf, 795, host.data(), 16);
  EXPECT(st.code() == absl::StatusCode::kInvalidArgument, "%s", st.ToString().c_str());
  // A CPU stream on the CUDA backend.
  auto cpu = NewCpuBackend(1);
  auto cpu_stream = cpu->NewStream();
  st = gpu.Synchronize(*cpu_stream);
  EXPECT(st.code() == absl::StatusCode::kInvalidArgument, "%s", st.ToString().c_str());
  // Buffers outliving their stream, and used on another stream.
  std::shared_ptr<Buffer> survivor;
  {
    auto s1 = gpu.NewStream();
    auto b1 = gpu.Allocate(1 << 20, *s1);
    EXPECT(b1.ok(), "alloc s1");
    survivor = *b1;
    DeviceArray arr{survivor, DType::kFloat32, {1 << 18}};
    EXPECT(gpu.Fill(*s1, Scalar::Float(2.5), arr).ok(), "fill s1");
    EXPECT(gpu.Synchronize(*s1).ok(), "sync s1");
  }  // s1 destroyed, buffer alive
  {
    auto s2 = gpu.NewStream();
    EXPECT(gpu.Synchronize(*s2).ok(), "sync s2");
    DeviceArray arr{survivor, DType::kFloat32, {1 << 18}};
    EXPECT(gpu.Binary(*s2, BinaryOp::kAdd, arr, arr, arr).ok(), "add s2");
    std::vector<float> out(1 << 18);
    EXPECT(gpu.CopyToHost(*s2, *survivor, 0, out.data(), out.size() * 4).ok(), "copy s2");
    EXPECT(out[0] == 5.0f && out.back() == 5.0f, "cross-stream value %g", out[0]);
    EXPECT(gpu.Binary(*s2, BinaryOp::kAdd, arr, arr, arr).ok(), "add s2 again");
    survivor.reset();  // freed on the dead s1's stream after waiting for s2
  }
  EXPECT(gpu.Synchronize(*stream).ok(), "sync after lifetimes");
  MemoryInfo m = gpu.memory();
  std::printf("memory: total %lld free %lld in_use %lld cached %lld\n",
              static_cast<long long>(m.total), static_cast<long long>(m.free),
              static_cast<long long>(m.in_use), static_cast<long long>(m.cached));
  EXPECT(m.total > 0 && m.in_use >= 800, "memory figures");
  gpu.Trim();
  EXPECT(!gpu.poisoned(), "poisoned at end");
}

// --- benchmark ---------------------------------------------------------------

double MedianUs(std::vector<float>& ms) {
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1000.0;
}

void Bench(Backend& gpu) {
  auto stream = gpu.NewStream();
  cudaStream_t cs = static_cast<cuda_internal::CudaStream&>(*stream).state()->stream();
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  auto time_op = [&](const char* label, double bytes, double flops, int reps,
                     const std::function<absl::Status()>& fn) {
    for (int i = 0; i < 5; ++i) (void)fn();
    (void)gpu.Synchronize(*stream);
    std::vector<float> ms;
    for (int i = 0; i < reps; ++i) {
      cudaEventRecord(e0, cs);
      absl::Status st = fn();
      cudaEventRecord(e1, cs);
      cudaEventSynchronize(e1);
      if (!st.ok()) { std::printf("%s: %s\n", label, st.ToString().c_str()); return; }
      float t;
      cudaEventElapsedTime(&t, e0, e1);
      ms.push_back(t);
    }
    const double us = MedianUs(ms);
    std::printf("BENCH %-44s median %9.2f us  %8.1f GB/s  %8.2f TFLOP/s\n", label, us,
                bytes / us / 1e3, flops / us / 1e6);
  };
  const int64_t n = 8 << 20;  // 8M float64 = 64 MiB
  Host h = Random(DType::kFloat64, {n}, false);
  Side side{&gpu, nullptr};
  side.stream = gpu.NewStream();
  auto a = Upload(side, h);
  auto c = Empty(side, DType::kFloat64, {n});
  auto f32 = Empty(side, DType::kFloat32, {n});
  auto s0 = Empty(side, DType::kFloat64, {});
  (void)gpu.Synchronize(*side.stream);
  DeviceArray A = *a, C = *c, F = *f32, S = *s0;
  // Device-to-device copy: the ceiling.
  time_op("memcpy D2D 64 MiB (ceiling)", 2.0 * n * 8, 0, 200, [&] {
    return cudaMemcpyAsync(C.data(), A.data(), n * 8, cudaMemcpyDeviceToDevice, cs) == cudaSuccess
               ? absl::OkStatus() : absl::InternalError("memcpy");
  });
  // Rotate through buffers so the 60 MB L2 cannot hold them.
  time_op("add f64 8M in place (a = a + a)", 2.0 * n * 8, n, 500, [&] {
    return gpu.Binary(*stream, BinaryOp::kAdd, A, A, A);
  });
  time_op("add f64 8M (c = a + c)", 3.0 * n * 8, n, 200, [&] {
    return gpu.Binary(*stream, BinaryOp::kAdd, A, C, C);
  });
  time_op("mul f64 8M by scalar", 2.0 * n * 8, n, 200, [&] {
    return gpu.Binary(*stream, BinaryOp::kMultiply, A, S, C);
  });
  time_op("cast f64->f32 8M", 12.0 * n, 0, 200, [&] { return gpu.Cast(*stream, A, F); });
  time_op("fill f64 8M", 8.0 * n, 0, 200, [&] { return gpu.Fill(*stream, Scalar::Float(1.5), C); });
  time_op("sum f64 8M (all)", 8.0 * n, n, 200, [&] { return gpu.Sum(*stream, A, std::nullopt, S); });
  {
    DeviceArray A2 = A; A2.shape = {2048, 4096};
    DeviceArray R = C; R.shape = {2048};
    time_op("sum f64 2048x4096 axis 1", 8.0 * n, n, 200, [&] { return gpu.Sum(*stream, A2, 1, R); });
    DeviceArray R0 = C; R0.shape = {4096};
    time_op("sum f64 2048x4096 axis 0", 8.0 * n, n, 200, [&] { return gpu.Sum(*stream, A2, 0, R0); });
    DeviceArray T = C; T.shape = {4096, 2048};
    const int perm[] = {1, 0};
    time_op("transpose f64 2048x4096", 16.0 * n, 0, 200, [&] { return gpu.Transpose(*stream, A2, perm, T); });
    DeviceArray A3 = A; A3.shape = {64, 128, 1024};
    DeviceArray T3 = C; T3.shape = {1024, 64, 128};
    const int perm3[] = {2, 0, 1};
    time_op("transpose f64 64x128x1024 perm 201", 16.0 * n, 0, 100, [&] { return gpu.Transpose(*stream, A3, perm3, T3); });
    DeviceArray B = A; B.shape = {4096};
    DeviceArray C2 = C; C2.shape = {2048, 4096};
    time_op("add f64 2048x4096 + 4096 (broadcast)", 16.0 * n, n, 200, [&] {
      return gpu.Binary(*stream, BinaryOp::kAdd, A2, B, C2);
    });
  }
  // Matmuls: 4096^3 float32 / float64 via cuBLAS (true fp32).
  {
    const int64_t m = 4096;
    auto ma = Upload(side, Random(DType::kFloat32, {m, m}, false));
    auto mb = Upload(side, Random(DType::kFloat32, {m, m}, false));
    auto mc = Empty(side, DType::kFloat32, {m, m});
    Backend::MatmulShape shape{1, m, m, m, 0, 0};
    time_op("matmul f32 4096^3 (cuBLAS, fp32)", 0, 2.0 * m * m * m, 20, [&] {
      return gpu.Matmul(*stream, shape, *ma, *mb, *mc);
    });
    auto da = Upload(side, Random(DType::kFloat64, {m, m}, false));
    auto db = Upload(side, Random(DType::kFloat64, {m, m}, false));
    auto dc = Empty(side, DType::kFloat64, {m, m});
    time_op("matmul f64 4096^3 (cuBLAS)", 0, 2.0 * m * m * m, 10, [&] {
      return gpu.Matmul(*stream, shape, *da, *db, *dc);
    });
    auto ia = Upload(side, Random(DType::kInt64, {1024, 1024}, false, true));
    auto ib = Upload(side, Random(DType::kInt64, {1024, 1024}, false, true));
    auto ic = Empty(side, DType::kInt64, {1024, 1024});
    Backend::MatmulShape ishape{1, 1024, 1024, 1024, 0, 0};
    time_op("matmul i64 1024^3 (tiled kernel)", 0, 2.0 * 1024 * 1024 * 1024, 10, [&] {
      return gpu.Matmul(*stream, ishape, *ia, *ib, *ic);
    });
  }
  std::printf("description: %s\n", gpu.description().c_str());
}

}  // namespace
}  // namespace resident

int main(int argc, char** argv) {
  using namespace resident;
  bool bench = true, quick = false, only_bench = false, cpu_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--no-bench") bench = false;
    if (std::string(argv[i]) == "--quick") quick = true;
    if (std::string(argv[i]) == "--only-bench") only_bench = true;
    // Harness self-check without a GPU: the CPU backend on both sides.
    if (std::string(argv[i]) == "--cpu-only") cpu_only = true;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (cpu_only) {
    g_cpu_only = true;
    auto cpu = NewCpuBackend();
    auto cpu2 = NewCpuBackend();
    Side a{cpu.get(), cpu->NewStream()}, b{cpu2.get(), cpu2->NewStream()};
    g_cpu = &a;
    g_gpu = &b;
    TestBinary(true);
    TestUnaryCastFill(true);
    TestSum(true);
    TestMatmul();
    TestTranspose();
    std::printf("RESULT (cpu-only): %d checks, %d failures\n", g_checks, g_failures);
    return 0;
  }
  std::printf("CUDA devices: %d\n", CudaDeviceCount());
  if (CudaDeviceCount() == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 0;
  }
  auto gpu_or = NewCudaBackend(0);
  if (!gpu_or.ok()) {
    std::printf("NewCudaBackend: %s\n", gpu_or.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<Backend> gpu = std::move(*gpu_or);
  std::unique_ptr<Backend> cpu = NewCpuBackend();
  std::printf("%s: %s\n", gpu->name().c_str(), gpu->description().c_str());
  Side cpu_side{cpu.get(), cpu->NewStream()};
  Side gpu_side{gpu.get(), gpu->NewStream()};
  g_cpu = &cpu_side;
  g_gpu = &gpu_side;
  if (!only_bench) {
    TestBinary(quick);
    std::printf("binary done: %d checks, %d failures\n", g_checks, g_failures);
    TestUnaryCastFill(quick);
    std::printf("unary/cast/fill/arange done: %d checks, %d failures\n", g_checks, g_failures);
    TestSum(quick);
    std::printf("sum done: %d checks, %d failures\n", g_checks, g_failures);
    TestMatmul();
    std::printf("matmul done: %d checks, %d failures\n", g_checks, g_failures);
    TestTranspose();
    std::printf("transpose done: %d checks, %d failures\n", g_checks, g_failures);
    TestErrorsAndLifetimes(*gpu);
  }
  if (bench) Bench(*gpu);
  std::printf("RESULT: %d checks, %d failures, poisoned=%d\n", g_checks, g_failures,
              gpu->poisoned() ? 1 : 0);
  return g_failures == 0 && !gpu->poisoned() ? 0 : 1;
}

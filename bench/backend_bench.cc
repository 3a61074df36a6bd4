// resident-backend-bench: each device op timed on one backend through the
// Backend interface, below the server (no RPC, no planner, no budget): what
// the kernels themselves cost, beside the memory-bandwidth ceiling. These
// are the timings the former scripts/cuda_smoke took; its checks are the
// conformance suite's (tests/backend/backend_conformance_test.cc).
//
// Method: every figure waits for the device. A round queues the op `--batch`
// times on one stream and synchronises; time per op is the round's wall time
// over the batch, and the figure is the median of `--reps` rounds after one
// warm-up round. Queued launches overlap, so on a GPU this is the op's
// device time plus little launch overhead.
//
//   resident-backend-bench --device cuda:0 [--quick] [--only add,sum] [--json FILE]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "server/device/backend.h"
#include "server/device/device.h"

ABSL_FLAG(std::string, device, "auto", "backend to time: auto, cpu or cuda:N");
ABSL_FLAG(bool, quick, false, "small sizes (1 Mi elements, 512^3 matmuls), for a CPU run");
ABSL_FLAG(std::string, only, "", "comma-separated substrings of the op labels to run");
ABSL_FLAG(int, reps, 0, "timed rounds per op (0: 21, or 5 with --quick)");
ABSL_FLAG(int, batch, 0, "ops queued per round (0: 10, or 3 with --quick)");
ABSL_FLAG(std::string, json, "", "also write the results to this file");
ABSL_FLAG(int, matmul_n, 0, "float matmuls' size n (n^3; 0: 4096, or 512 with --quick)");
ABSL_FLAG(bool, latency, false,
          "instead: one op at a time, each waited for; the host's time to queue it (launch) "
          "and to wait for it (sync): where a single call's time goes below the server");

namespace resident {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& what, const absl::Status& s) {
  std::fprintf(stderr, "resident-backend-bench: %s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}

struct Result {
  std::string label;
  double median_us, gbs, tflops;
};

class Bench {
 public:
  Bench(Backend& backend, int reps, int batch, std::vector<std::string> only)
      : backend_(backend),
        stream_(backend.NewStream()),
        reps_(reps),
        batch_(batch),
        only_(std::move(only)) {}

  // A new array of `shape` filled with `value`.
  DeviceArray Array(DType dtype, Shape shape, double value) {
    DeviceArray a{nullptr, dtype, std::move(shape)};
    absl::StatusOr<std::shared_ptr<Buffer>> buf = backend_.Allocate(a.nbytes(), *stream_);
    if (!buf.ok()) Die("allocate", buf.status());
    a.buffer = *std::move(buf);
    Check(backend_.Run(*stream_, FillOp{Scalar::Float(value), &a}), "fill");
    Check(stream_->Synchronize(), "synchronize");
    return a;
  }
  // The same memory seen with another shape (like a reshape).
  static DeviceArray As(const DeviceArray& a, Shape shape) {
    return {a.buffer, a.dtype, std::move(shape)};
  }

  // Times `op`; bytes and flops per op give the rates (0: not shown).
  void Time(const std::string& label, double bytes, double flops, const DeviceOp& op) {
    if (!Selected(label)) return;
    auto round = [&]() {
      const Clock::time_point t0 = Clock::now();
      for (int i = 0; i < batch_; ++i) Check(backend_.Run(*stream_, op), label);
      Check(stream_->Synchronize(), label);
      return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / batch_;
    };
    round();  // warm-up: pools, handles, caches
    std::vector<double> us;
    us.reserve(reps_);
    for (int r = 0; r < reps_; ++r) us.push_back(round());
    std::sort(us.begin(), us.end());
    const double median = us[us.size() / 2];
    const Result res{label, median, bytes / median / 1e3, flops / median / 1e6};
    std::printf("%-46s median %10.1f us", label.c_str(), median);
    if (bytes > 0) std::printf("  %8.1f GB/s", res.gbs);
    if (flops > 0) std::printf("  %8.3f TFLOP/s", res.tflops);
    std::printf("\n");
    results_.push_back(res);
  }

  // One op at a time: `prepare` (untimed), then `op` queued (launch, timed on
  // the host) and waited for (sync). Medians of --reps calls after one warm-up.
  void Latency(const std::string& label, const std::function<void()>& op) {
    if (!Selected(label)) return;
    std::vector<double> launch, sync;
    for (int r = 0; r <= reps_; ++r) {
      const Clock::time_point t0 = Clock::now();
      op();
      const Clock::time_point t1 = Clock::now();
      Check(stream_->Synchronize(), label);
      const Clock::time_point t2 = Clock::now();
      if (r == 0) continue;  // warm-up
      launch.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      sync.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
    }
    std::sort(launch.begin(), launch.end());
    std::sort(sync.begin(), sync.end());
    std::printf("%-46s launch %9.1f us  sync %9.1f us  (medians, min launch %.1f)\n", label.c_str(),
                launch[launch.size() / 2], sync[sync.size() / 2], launch[0]);
  }
  void Run(const DeviceOp& op, const std::string& what) { Check(backend_.Run(*stream_, op), what); }
  std::shared_ptr<Buffer> Allocate(int64_t bytes) {
    absl::StatusOr<std::shared_ptr<Buffer>> buf = backend_.Allocate(bytes, *stream_);
    if (!buf.ok()) Die("allocate", buf.status());
    return *std::move(buf);
  }

  const std::vector<Result>& results() const { return results_; }

 private:
  bool Selected(const std::string& label) const {
    if (only_.empty()) return true;
    return std::any_of(only_.begin(), only_.end(),
                       [&](const std::string& o) { return label.find(o) != std::string::npos; });
  }
  static void Check(const absl::Status& s, const std::string& what) {
    if (!s.ok()) Die(what, s);
  }

  Backend& backend_;
  std::unique_ptr<Stream> stream_;
  const int reps_, batch_;
  const std::vector<std::string> only_;
  std::vector<Result> results_;
};

void RunAll(Bench& b, bool quick) {
  using E = ElementwiseKind;
  const DType f64 = DType::kFloat64;
  // 8 Mi float64 = 64 MiB per array: past any GPU's L2 (H200: 60 MB).
  const int64_t n = quick ? int64_t{1} << 20 : int64_t{8} << 20;
  const int64_t rows = quick ? 256 : 2048, cols = n / rows;
  const std::string nm = quick ? "1M" : "8M";
  DeviceArray a = b.Array(f64, {n}, 1.0);
  DeviceArray c = b.Array(f64, {n}, 2.0);
  DeviceArray s = b.Array(f64, {}, 1.5);
  DeviceArray f32 = b.Array(DType::kFloat32, {n}, 0.0);
  const double nb = 8.0 * static_cast<double>(n);

  // A same-dtype cast of contiguous memory is a device-to-device copy (a
  // cudaMemcpyAsync on CUDA, a memcpy on the CPU): the bandwidth ceiling.
  b.Time("copy f64 " + nm + " (ceiling)", 2 * nb, 0, CastOp{&a, &c});
  b.Time("add f64 " + nm + " in place (a = a + a)", 2 * nb, n,
         ElementwiseOp{E::kAdd, {&a, &a}, &a});
  b.Time("add f64 " + nm + " (c = a + c)", 3 * nb, n, ElementwiseOp{E::kAdd, {&a, &c}, &c});
  b.Time("mul f64 " + nm + " by a scalar", 2 * nb, n, ElementwiseOp{E::kMultiply, {&a, &s}, &c});
  b.Time("negative f64 " + nm, 2 * nb, n, ElementwiseOp{E::kNegative, {&a}, &c});
  b.Time("cast f64 -> f32 " + nm, 1.5 * nb, 0, CastOp{&a, &f32});
  b.Time("fill f64 " + nm, nb, 0, FillOp{Scalar::Float(1.5), &c});
  b.Time("sum f64 " + nm + " (all)", nb, n, ReduceOp{ReduceKind::kSum, std::nullopt, &a, &s});

  const DeviceArray a2 = Bench::As(a, {rows, cols});
  const std::string rc = absl::StrFormat("%dx%d", rows, cols);
  const DeviceArray by_row = Bench::As(c, {rows}), by_col = Bench::As(c, {cols});
  b.Time("sum f64 " + rc + " axis 1", nb, n, ReduceOp{ReduceKind::kSum, 1, &a2, &by_row});
  b.Time("sum f64 " + rc + " axis 0", nb, n, ReduceOp{ReduceKind::kSum, 0, &a2, &by_col});
  const DeviceArray t2 = Bench::As(c, {cols, rows});
  static constexpr int kSwap[] = {1, 0};
  b.Time("transpose f64 " + rc, 2 * nb, 0, TransposeOp{kSwap, &a2, &t2});
  const int64_t d0 = quick ? 16 : 64, d1 = 128, d2 = n / (d0 * d1);
  const DeviceArray a3 = Bench::As(a, {d0, d1, d2}), t3 = Bench::As(c, {d2, d0, d1});
  static constexpr int kRotate[] = {2, 0, 1};
  b.Time(absl::StrFormat("transpose f64 %dx%dx%d perm (2,0,1)", d0, d1, d2), 2 * nb, 0,
         TransposeOp{kRotate, &a3, &t3});
  const DeviceArray c2 = Bench::As(c, {rows, cols});
  // Reductions over axis sets, slices and concatenation (ReduceAxesOp etc.).
  static constexpr int kAll1[] = {0}, kCols[] = {1}, kOuter[] = {0, 2};
  b.Time("max f64 " + nm + " (all)", nb, n, ReduceAxesOp{ReduceKind::kMax, kAll1, &a, &s});
  DeviceArray arg_rows = b.Array(DType::kInt64, {rows}, 0);
  b.Time("argmax f64 " + rc + " axis 1", nb, n,
         ReduceAxesOp{ReduceKind::kArgmax, kCols, &a2, &arg_rows});
  const DeviceArray by_mid = Bench::As(c, {d1});
  b.Time(absl::StrFormat("mean f64 %dx%dx%d axes (0,2)", d0, d1, d2), nb, n,
         ReduceAxesOp{ReduceKind::kMean, kOuter, &a3, &by_mid});
  static const SliceAxisSpec kEveryOtherReversed[] = {{rows - 1, -2}, {0, 1}};
  const DeviceArray half = Bench::As(c, {rows / 2, cols});
  b.Time("slice f64 " + rc + " [::-2]", nb, 0, SliceOp{kEveryOtherReversed, &a2, &half});
  const DeviceArray halves[] = {Bench::As(a, {rows, cols / 2}), Bench::As(a, {rows, cols / 2})};
  b.Time("concatenate f64 2 x " + absl::StrFormat("%dx%d", rows, cols / 2) + " axis 1", 2 * nb, 0,
         ConcatOp{halves, 1, &c2});
  const DeviceArray row = Bench::As(a, {cols});
  b.Time("add f64 " + rc + " + " + std::to_string(cols) + " (broadcast)", 2 * nb, n,
         ElementwiseOp{E::kAdd, {&a2, &row}, &c2});

  const int64_t mi = quick ? 256 : 1024;
  const int64_t m = absl::GetFlag(FLAGS_matmul_n) > 0 ? absl::GetFlag(FLAGS_matmul_n)
                    : quick                           ? 512
                                                      : 4096;
  for (DType d : {DType::kFloat32, DType::kFloat64}) {
    DeviceArray x = b.Array(d, {m, m}, 0.5), y = b.Array(d, {m, m}, 0.25);
    DeviceArray z = b.Array(d, {m, m}, 0.0);
    b.Time(absl::StrFormat("matmul %s %d^3", DTypeName(d), m), 0, 2.0 * m * m * m,
           MatmulOp{MatmulShape{1, m, m, m, 0, 0}, &x, &y, &z});
  }
  DeviceArray xi = b.Array(DType::kInt64, {mi, mi}, 3), yi = b.Array(DType::kInt64, {mi, mi}, 5);
  DeviceArray zi = b.Array(DType::kInt64, {mi, mi}, 0);
  b.Time(absl::StrFormat("matmul int64 %d^3", mi), 0, 2.0 * mi * mi * mi,
         MatmulOp{MatmulShape{1, mi, mi, mi, 0, 0}, &xi, &yi, &zi});
}

// Single calls, each waited for: what one small request pays below the
// server (allocation, launch, synchronisation), and the fused seed loop's
// rounds, so the server's Run phases can be split further.
void RunLatency(Bench& b, bool quick) {
  using E = ElementwiseKind;
  const DType f32 = DType::kFloat32, f64 = DType::kFloat64;
  b.Latency("empty stream sync", [] {});
  b.Latency("allocate 64 B + free", [&] { b.Allocate(64); });
  b.Latency("allocate 256 MiB + free", [&] { b.Allocate(int64_t{256} << 20); });
  DeviceArray x = b.Array(f32, {16}, 1.0), y = b.Array(f32, {16}, 2.0);
  DeviceArray z = b.Array(f32, {16}, 0.0);
  b.Latency("add f32 16 (into an existing array)", [&] {
    b.Run(ElementwiseOp{E::kAdd, {&x, &y}, &z}, "add");
  });
  b.Latency("add f32 16 (allocate the result)", [&] {
    DeviceArray out{b.Allocate(64), f32, {16}};
    b.Run(ElementwiseOp{E::kAdd, {&x, &y}, &out}, "add");
  });
  // The seed loop (x = x + x) fused, as the executor's rounds run it.
  const Shape seed = quick ? Shape{16, 512, 4, 4} : Shape{1024, 512, 4, 4};
  DeviceArray s = b.Array(f64, seed, 1.0);
  FusedLoopSpec spec;
  spec.num_carried = 1;
  spec.param_dtypes = {f64};
  spec.param_scalar = {false};
  spec.steps = {FusedLoopSpec::Step::Of(E::kAdd, 0, 0, f64)};
  spec.yields = {1};
  for (int64_t trips : {int64_t{1}, int64_t{16}, int64_t{1024}}) {
    FusedLoopSpec t = spec;
    t.trip_count = trips;
    b.Latency(absl::StrFormat("fused seed loop, %d trips, in place", trips), [&] {
      b.Run(FusedLoopOp{&t, absl::MakeConstSpan(&s, 1), absl::MakeConstSpan(&s, 1)}, "fused");
    });
  }
  const int64_t m = absl::GetFlag(FLAGS_matmul_n) > 0 ? absl::GetFlag(FLAGS_matmul_n)
                    : quick                           ? 512
                                                      : 8192;
  for (DType d : {f32, f64}) {
    DeviceArray p = b.Array(d, {m, m}, 0.5), q = b.Array(d, {m, m}, 0.25);
    DeviceArray r = b.Array(d, {m, m}, 0.0);
    b.Latency(absl::StrFormat("matmul %s %d^3 (into an existing array)", DTypeName(d), m), [&] {
      b.Run(MatmulOp{MatmulShape{1, m, m, m, 0, 0}, &p, &q, &r}, "matmul");
    });
    b.Latency(absl::StrFormat("matmul %s %d^3 (allocate the result)", DTypeName(d), m), [&] {
      DeviceArray out{b.Allocate(r.nbytes()), d, {m, m}};
      b.Run(MatmulOp{MatmulShape{1, m, m, m, 0, 0}, &p, &q, &out}, "matmul");
    });
  }
}

void WriteJson(const std::string& path, const Backend& backend,
               const std::vector<Result>& results) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) Die("open " + path, absl::UnavailableError("cannot write"));
  std::fprintf(f, "{\"device\": \"%s\", \"description\": \"%s\", \"results\": [",
               backend.name().c_str(), backend.description().c_str());
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    std::fprintf(f, "%s\n  {\"op\": \"%s\", \"median_us\": %.3f, \"gbs\": %.3f, \"tflops\": %.5f}",
                 i == 0 ? "" : ",", r.label.c_str(), r.median_us, r.gbs, r.tflops);
  }
  std::fprintf(f, "\n]}\n");
  std::fclose(f);
}

}  // namespace
}  // namespace resident

int main(int argc, char** argv) {
  using namespace resident;
  absl::SetProgramUsageMessage(
      "Times each device op through the Backend interface.\n"
      "  resident-backend-bench [--device cpu|cuda:0] [--quick] [--only add,sum] [--json FILE]\n"
      "  resident-backend-bench --latency [--device cuda:0] [--quick]");
  absl::ParseCommandLine(argc, argv);
  const bool quick = absl::GetFlag(FLAGS_quick);
  int reps = absl::GetFlag(FLAGS_reps), batch = absl::GetFlag(FLAGS_batch);
  if (reps <= 0) reps = quick ? 5 : 21;
  if (batch <= 0) batch = quick ? 3 : 10;
  absl::StatusOr<std::unique_ptr<Backend>> made = CreateBackend(absl::GetFlag(FLAGS_device));
  if (!made.ok()) Die("device", made.status());
  Backend& backend = **made;
  std::vector<std::string> only;
  if (!absl::GetFlag(FLAGS_only).empty()) {
    only = absl::StrSplit(absl::GetFlag(FLAGS_only), ',');
  }
  std::printf("resident-backend-bench: %s (%s), %s, median of %d rounds of %d ops\n",
              backend.name().c_str(), backend.description().c_str(), quick ? "quick" : "full", reps,
              batch);
  Bench bench(backend, reps, batch, std::move(only));
  if (absl::GetFlag(FLAGS_latency)) {
    RunLatency(bench, quick);
  } else {
    RunAll(bench, quick);
  }
  if (!absl::GetFlag(FLAGS_json).empty()) {
    WriteJson(absl::GetFlag(FLAGS_json), backend, bench.results());
  }
  return backend.poisoned() ? 1 : 0;
}

// resident-bench: Resident on the seed tutorial's workloads, timed honestly.
//
// Every figure waits for the result: a request has returned, and the server
// synchronises its device before answering. Each workload warms up first and
// reports the median (and min) of several repetitions. bench/baseline.py runs
// the same workloads in CuPy and NumPy; bench/run.sh runs both and merges.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/client.h"
#include "client/client_core.h"
#include "core/flags_util.h"
#include "resident/v1/resident.grpc.pb.h"
#include "tests/support/http_get.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "Resident server, HOST:PORT");
ABSL_FLAG(std::string, json, "", "write machine-readable results to this file");
ABSL_FLAG(bool, quick, false, "smaller sizes, for a CPU smoke run");
ABSL_FLAG(std::string, only, "", "comma-separated workloads (default: all)");
ABSL_FLAG(int, reps, 0, "timed repetitions per figure (0: 5, or 3 with --quick)");
ABSL_FLAG(double, copy_bw_gbs, 4270,
          "device copy bandwidth for the seed's memory floor, GB/s (H200 D2D: 4270)");
ABSL_FLAG(int, samples, 2000, "roundtrip samples of each kind");
ABSL_FLAG(int, metrics_port, 0,
          "the server's metrics port on 127.0.0.1 (--metrics_listen): if set, the roundtrip "
          "and eager seed figures come with the server's time per Run phase");
ABSL_FLAG(bool, first_result, false, "(internal) one tiny program from a fresh process");

namespace {

using resident::DType;
using resident::Shape;
using resident::client::Array;
using resident::client::Client;
using resident::client::ClientOptions;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

[[noreturn]] void Die(const std::string& what, const absl::Status& s) {
  std::fprintf(stderr, "resident-bench: %s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}
void Ok(const absl::Status& s, const std::string& what) {
  if (!s.ok()) Die(what, s);
}
template <typename T>
T Ok(absl::StatusOr<T> v, const std::string& what) {
  if (!v.ok()) Die(what, v.status());
  return *std::move(v);
}

struct Stats {
  double min = 0, median = 0, p99 = 0;
};
Stats Summarise(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))]; };
  return {v.front(), at(0.5), at(0.99)};
}

// Runs `fn` (which times itself, in ms) once to warm up, then `reps` times.
Stats Repeat(int reps, const std::function<double()>& fn) {
  fn();
  std::vector<double> t;
  t.reserve(reps);
  for (int i = 0; i < reps; ++i) t.push_back(fn());
  return Summarise(t);
}

// Flat name -> number results, written as JSON at the end.
struct Results {
  std::vector<std::pair<std::string, double>> metrics;
  void Add(const std::string& k, double v) { metrics.emplace_back(k, v); }
  void AddStats(const std::string& k, const Stats& s) {
    Add(k, s.median);
    Add(k + "_min", s.min);
  }
};

// busy: the client spins on the connection while it waits for a Run
// (ClientOptions::busy_poll); the figures are given both ways.
// local_data: shared-memory transfers when the server is on this host.
std::unique_ptr<Client> Connect(bool lazy = true, bool busy = false, bool local_data = true) {
  ClientOptions o;
  o.lazy = lazy;
  o.busy_poll = busy;
  o.local_data = local_data;
  return Ok(Client::Connect(absl::GetFlag(FLAGS_server), o), "connect");
}

// --- where a Run's time goes, from the server's resident_run_phase_seconds ---

// phase -> (sum of seconds, count), scraped now; empty without --metrics_port.
using PhaseTotals = std::map<std::string, std::pair<double, double>>;
PhaseTotals ScrapePhases() {
  PhaseTotals t;
  const int port = absl::GetFlag(FLAGS_metrics_port);
  if (port == 0) return t;
  const std::string text = resident::HttpGet(port, "/metrics");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    constexpr absl::string_view kPrefix = "resident_run_phase_seconds_";
    if (!absl::StartsWith(line, kPrefix)) continue;
    line.remove_prefix(kPrefix.size());
    const bool sum = absl::StartsWith(line, "sum{phase=\"");
    if (!sum && !absl::StartsWith(line, "count{phase=\"")) continue;
    line.remove_prefix(line.find('"') + 1);
    const size_t quote = line.find('"');
    const std::string phase(line.substr(0, quote));
    const double v = std::strtod(std::string(line.substr(line.rfind(' ') + 1)).c_str(), nullptr);
    (sum ? t[phase].first : t[phase].second) = v;
  }
  return t;
}

// The server's resident_fused_ops_total by form (zeros without --metrics_port).
struct FusedCounts {
  int64_t loops = 0, regions = 0, reductions = 0;
};
FusedCounts ScrapeFused() {
  FusedCounts f;
  const int port = absl::GetFlag(FLAGS_metrics_port);
  if (port == 0) return f;
  const std::string text = resident::HttpGet(port, "/metrics");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    constexpr absl::string_view kReductions = "resident_fused_reductions_total ";
    if (absl::StartsWith(line, kReductions)) {
      f.reductions =
          std::strtoll(std::string(line.substr(kReductions.size())).c_str(), nullptr, 10);
      continue;
    }
    constexpr absl::string_view kPrefix = "resident_fused_ops_total{form=\"";
    if (!absl::StartsWith(line, kPrefix)) continue;
    line.remove_prefix(kPrefix.size());
    const int64_t v =
        std::strtoll(std::string(line.substr(line.rfind(' ') + 1)).c_str(), nullptr, 10);
    (absl::StartsWith(line, "loop") ? f.loops : f.regions) = v;
  }
  return f;
}

// The phase totals of `after` less those of `before`.
PhaseTotals Diff(const PhaseTotals& before, const PhaseTotals& after) {
  PhaseTotals d;
  for (const auto& [phase, a] : after) {
    auto b = before.find(phase);
    d[phase] =
        b == before.end() ? a : std::pair{a.first - b->second.first, a.second - b->second.second};
  }
  return d;
}

// Sums the phases of the timed part of each call of a Repeat body, warm-up
// (the first call: NVRTC compiles, cuBLAS loads) left out.
class PhaseSampler {
 public:
  void Begin() { before_ = ScrapePhases(); }
  void End() {
    if (calls_++ == 0) return;
    for (const auto& [phase, d] : Diff(before_, ScrapePhases())) {
      sum_[phase].first += d.first;
      sum_[phase].second += d.second;
    }
  }
  const PhaseTotals& sum() const { return sum_; }

 private:
  PhaseTotals before_, sum_;
  int calls_ = 0;
};

// Prints and records the mean µs per Run of each phase in `d`.
void ReportPhases(const PhaseTotals& d, const std::string& key, Results& r) {
  if (d.empty()) return;
  std::printf("  server time per Run (mean us):");
  double runs = 0;
  for (const char* phase : {"queued", "session", "plan", "launch", "sync", "results", "reply"}) {
    auto a = d.find(phase);
    if (a == d.end() || a->second.second <= 0) continue;
    const auto [sum, n] = a->second;
    runs = n;
    std::printf(" %s %.1f", phase, sum / n * 1e6);
    r.Add(absl::StrFormat("%s.phase_%s_us", key, phase), sum / n * 1e6);
  }
  std::printf(" (%.0f Runs)\n", runs);
}

// --- seed: 1024 x `x = x + x` on a (1024,512,4,4) float64 array -------------

void Seed(int reps, Results& r) {
  const Shape shape = absl::GetFlag(FLAGS_quick) ? Shape{16, 512, 4, 4} : Shape{1024, 512, 4, 4};
  const int adds = 1024;
  const double nbytes = static_cast<double>(resident::NumElements(shape)) * 8;
  auto eager = Connect(false);
  auto eager_busy = Connect(false, true);
  auto lazy = Connect(true);

  // A fresh x of ones, on the server before the clock starts.
  auto fresh = [&](Client& c) {
    Array x = resident::client::ones(c, shape);
    Ok(x.Evaluate(), "seed ones");
    return x;
  };
  // 1.0 doubled 1024 times is inf in float64; its sum is too (checked untimed).
  auto check = [&](const Array& x, const char* mode) {
    std::vector<double> s = Ok(resident::client::sum(x).ToVector<double>(), "seed sum");
    if (s.size() != 1 || !std::isinf(s[0]) || s[0] < 0) {
      std::fprintf(stderr, "resident-bench: seed %s: sum is %g, want inf\n", mode,
                   s.empty() ? NAN : s[0]);
      std::exit(1);
    }
  };
  PhaseSampler pe, pp, pl;
  std::vector<double> record_us;  // the lazy program's client side: recording the adds
  auto run_eager = [&](Client& c) {
    Array x = fresh(c);
    pe.Begin();
    const auto t0 = Clock::now();
    for (int i = 0; i < adds; ++i) {
      x = x + x;
      Ok(x.Evaluate(), "seed eager add");
    }
    const double ms = Since(t0);
    pe.End();
    check(x, "eager");
    return ms;
  };
  const Stats e = Repeat(reps, [&] { return run_eager(*eager); });
  const Stats eb = Repeat(reps, [&] { return run_eager(*eager_busy); });
  const Stats p = Repeat(reps, [&] {
    Array x = fresh(*lazy);
    pp.Begin();
    const auto t0 = Clock::now();
    for (int i = 0; i < adds; ++i) x = x + x;  // recorded
    record_us.push_back(Since(t0) * 1e3);
    Ok(x.Evaluate(), "seed program");  // one request
    const double ms = Since(t0);
    pp.End();
    check(x, "program");
    return ms;
  });
  const Stats l = Repeat(reps, [&] {
    Array x = fresh(*lazy);
    pl.Begin();
    const auto t0 = Clock::now();
    std::vector<Array> out = lazy->Loop(
        adds, {x}, [](const std::vector<Array>& c) { return std::vector<Array>{c[0] + c[0]}; });
    Ok(out[0].Evaluate(), "seed loop");
    const double ms = Since(t0);
    pl.End();
    check(out[0], "loop");
    return ms;
  });
  // Each add reads and writes the array: 2 x nbytes (128 MiB at full size).
  const double floor_ms = adds * 2 * nbytes / (absl::GetFlag(FLAGS_copy_bw_gbs) * 1e9) * 1e3;
  std::printf("seed: %d x (x = x + x), x float64 %s (%.0f MiB), result sum = inf (checked)\n", adds,
              resident::ShapeString(shape).c_str(), nbytes / (1 << 20));
  for (auto [name, s] : {std::pair{"eager (1 request/add)", e},
                         {"eager, busy-polled", eb},
                         {"one lazy program", p},
                         {"Client::Loop", l}}) {
    std::printf("  %-22s median %9.2f ms  min %9.2f ms  %8.2f us/add  %6.2fx floor\n", name,
                s.median, s.min, s.median * 1e3 / adds, s.median / floor_ms);
  }
  std::printf("  memory floor %.2f ms (%d x %.0f MiB at %.0f GB/s)\n", floor_ms, adds,
              2 * nbytes / (1 << 20), absl::GetFlag(FLAGS_copy_bw_gbs));
  std::sort(record_us.begin(), record_us.end());
  std::printf("  lazy program: recording the %d adds in the client, median %.1f us\n", adds,
              record_us[record_us.size() / 2]);
  r.Add("seed.program_record_us", record_us[record_us.size() / 2]);
  std::printf("  eager (both ways):");
  ReportPhases(pe.sum(), "seed.eager", r);
  std::printf("  lazy program:");
  ReportPhases(pp.sum(), "seed.program", r);
  std::printf("  Client::Loop:");
  ReportPhases(pl.sum(), "seed.loop", r);
  r.Add("seed.adds", adds);
  r.Add("seed.nbytes", nbytes);
  r.AddStats("seed.eager_ms", e);
  r.AddStats("seed.eager_busy_ms", eb);
  r.AddStats("seed.program_ms", p);
  r.AddStats("seed.loop_ms", l);
  r.Add("seed.floor_ms", floor_ms);
  r.Add("seed.copy_bw_gbs", absl::GetFlag(FLAGS_copy_bw_gbs));
  r.Add("seed.program_over_floor", p.median / floor_ms);
  r.Add("seed.loop_over_floor", l.median / floor_ms);
}

// --- roundtrip: a tiny program vs a no-op RPC, interleaved -------------------

void Roundtrip(bool busy, Results& r) {
  auto c = Connect(true, busy);
  const Shape s16{16};
  Array a = resident::client::ones(*c, s16, DType::kFloat32);
  Array b = resident::client::ones(*c, s16, DType::kFloat32);
  Ok(c->EvaluateAll({a, b}), "roundtrip inputs");
  auto core = c->core();
  Array keep;  // the last result, kept on the server (released on the next run)
  auto program = [&] {
    const auto t0 = Clock::now();
    keep = a + b;
    Ok(keep.Evaluate(), "roundtrip program");
    return Since(t0) * 1e3;
  };
  // The reference waits as the program does: blocking, or polled on this
  // thread as ClientCore::CallRun polls.
  auto noop = [&] {
    resident::v1::RenewSessionRequest req;
    req.set_session(core->session);
    resident::v1::RenewSessionResponse resp;
    grpc::ClientContext ctx;
    grpc::Status status;
    const auto t0 = Clock::now();
    if (busy) {
      grpc::CompletionQueue cq;
      auto call = core->stub->AsyncRenewSession(&ctx, req, &cq);
      int done = 0;
      call->Finish(&resp, &status, &done);
      void* tag = nullptr;
      bool ok = false;
      while (cq.AsyncNext(&tag, &ok, gpr_time_0(GPR_CLOCK_MONOTONIC)) !=
             grpc::CompletionQueue::GOT_EVENT) {
      }
      cq.Shutdown();
      while (cq.Next(&tag, &ok)) {
      }
    } else {
      status = core->stub->RenewSession(&ctx, req, &resp);
    }
    const double us = Since(t0) * 1e3;
    Ok(resident::client::FromGrpc(status), "renew");
    return us;
  };
  const int n = absl::GetFlag(FLAGS_samples);
  for (int i = 0; i < 200; ++i) program(), noop();  // warm up
  std::vector<double> tp, tn;
  const PhaseTotals before = ScrapePhases();
  for (int i = 0; i < n; ++i) {  // alternate which goes first
    if (i % 2) {
      tp.push_back(program());
      tn.push_back(noop());
    } else {
      tn.push_back(noop());
      tp.push_back(program());
    }
  }
  const Stats p = Summarise(tp), q = Summarise(tn);
  const std::string key = busy ? "roundtrip_busy" : "roundtrip";
  std::printf("roundtrip%s (%d samples each, interleaved):\n", busy ? ", client busy-polling" : "",
              n);
  std::printf("  tiny program (16-elt f32 add, kept)  p50 %7.1f us  p99 %7.1f us\n", p.median,
              p.p99);
  std::printf("  no-op RPC (RenewSession)             p50 %7.1f us  p99 %7.1f us\n", q.median,
              q.p99);
  std::printf("  ratio p50 %.2f  p99 %.2f\n", p.median / q.median, p.p99 / q.p99);
  ReportPhases(Diff(before, ScrapePhases()), key, r);
  r.Add(key + ".samples", n);
  r.Add(key + ".program_p50_us", p.median);
  r.Add(key + ".program_p99_us", p.p99);
  r.Add(key + ".noop_p50_us", q.median);
  r.Add(key + ".noop_p99_us", q.p99);
  r.Add(key + ".ratio_p50", p.median / q.median);
  r.Add(key + ".ratio_p99", p.p99 / q.p99);
}

// --- tiny_ops: one program of 10,000 chained 16-element adds -----------------

void TinyOps(int reps, Results& r) {
  auto c = Connect(true);
  const int ops = 10000;
  Array a = resident::client::ones(*c, {16}, DType::kFloat32);
  Ok(a.Evaluate(), "tiny_ops input");
  const Stats s = Repeat(reps, [&] {
    const auto t0 = Clock::now();
    Array x = a;
    for (int i = 0; i < ops; ++i) x = x + a;  // recording is part of the cost
    Ok(x.Evaluate(), "tiny_ops program");
    return Since(t0);
  });
  std::printf("tiny_ops: %d chained 16-element adds in one program: median %.2f ms, %.0f ops/s\n",
              ops, s.median, ops / (s.median / 1e3));
  r.Add("tiny_ops.ops", ops);
  r.AddStats("tiny_ops.ms", s);
  r.Add("tiny_ops.ops_per_s", ops / (s.median / 1e3));
}

// --- chain: y = sqrt(x * x + 1) * 0.5 - x, five elementwise ops in one program

void Chain(int reps, Results& r) {
  const int64_t n = absl::GetFlag(FLAGS_quick) ? int64_t{1} << 17 : int64_t{1} << 23;
  auto c = Connect(true);
  namespace rc = resident::client;
  Array x = rc::arange(*c, resident::Scalar::Int(0), resident::Scalar::Int(n),
                       resident::Scalar::Int(1), DType::kFloat64) *
            (1.0 / static_cast<double>(n));
  Ok(x.Evaluate(), "chain input");
  PhaseSampler ps;
  const FusedCounts before = ScrapeFused();
  const Stats s = Repeat(reps, [&] {
    ps.Begin();
    const auto t0 = Clock::now();
    Array y = rc::sqrt(x * x + 1.0) * 0.5 - x;  // recorded: one request
    Ok(y.Evaluate(), "chain program");
    const double us = Since(t0) * 1e3;
    ps.End();
    return us;
  });
  const FusedCounts after = ScrapeFused();
  // x read once and y written once when fused: 2 x 8 bytes per element.
  const double floor_us = 2.0 * 8 * n / (absl::GetFlag(FLAGS_copy_bw_gbs) * 1e9) * 1e6;
  std::printf(
      "chain: y = sqrt(x * x + 1) * 0.5 - x on %lld float64 (%.0f MiB): median %.1f us  min %.1f "
      "us, %.2fx the one-pass memory floor (%.1f us); fused regions run %lld (of %d runs + "
      "warm-up)\n",
      static_cast<long long>(n), 8.0 * n / (1 << 20), s.median, s.min, s.median / floor_us,
      floor_us, static_cast<long long>(after.regions - before.regions), reps);
  ReportPhases(ps.sum(), "chain", r);
  r.Add("chain.n", static_cast<double>(n));
  r.AddStats("chain.us", s);
  r.Add("chain.floor_us", floor_us);
  r.Add("chain.fused_regions", static_cast<double>(after.regions - before.regions));
}

// --- fused: broadcast operands and a trailing reduction in one region ----------

// bias: y = x * w + b, x (4096, 2048) float32, w and b rows of 2048 (read in
// place by the fused kernel); count: (x > 0.5).sum(), the bool array never
// written. Each one request, its result ready on the server.
void FusedForms(int reps, Results& r) {
  const bool quick = absl::GetFlag(FLAGS_quick);
  const int64_t rows = quick ? 64 : 4096, cols = 2048, n = rows * cols;
  auto c = Connect(true);
  namespace rc = resident::client;
  using resident::Scalar;
  const Array ramp =
      rc::arange(*c, Scalar::Int(0), Scalar::Int(n), Scalar::Int(1), DType::kFloat32) *
      (1.0 / static_cast<double>(n));
  Array x = rc::reshape(ramp, {rows, cols});
  Array w =
      rc::arange(*c, Scalar::Int(0), Scalar::Int(cols), Scalar::Int(1), DType::kFloat32) * 0.001;
  Array b =
      rc::arange(*c, Scalar::Int(0), Scalar::Int(cols), Scalar::Int(1), DType::kFloat32) * -0.5;
  Ok(c->EvaluateAll({x, w, b}), "fused inputs");
  const double bw = absl::GetFlag(FLAGS_copy_bw_gbs) * 1e9;
  const FusedCounts before = ScrapeFused();
  for (const bool count : {false, true}) {
    const std::string key = count ? "fused_count" : "fused_bias";
    PhaseSampler ps;
    const Stats s = Repeat(reps, [&] {
      ps.Begin();
      const auto t0 = Clock::now();
      if (count) {
        Array k = rc::sum(rc::greater(x, 0.5));
        Ok(k.Evaluate(), "count program");
      } else {
        Array y = x * w + b;
        Ok(y.Evaluate(), "bias program");
      }
      const double us = Since(t0) * 1e3;
      ps.End();
      return us;
    });
    // One pass: bias reads x and writes y; count reads x.
    const double floor_us = (count ? 1.0 : 2.0) * 4 * n / bw * 1e6;
    std::printf(
        "%s: %s on (%lld, %lld) float32: median %.1f us  min %.1f us (one-pass floor %.1f us)\n",
        key.c_str(), count ? "(x > 0.5).sum()" : "x * w + b (w, b rows)",
        static_cast<long long>(rows), static_cast<long long>(cols), s.median, s.min, floor_us);
    ReportPhases(ps.sum(), key, r);
    r.AddStats(key + ".us", s);
    r.Add(key + ".floor_us", floor_us);
  }
  const FusedCounts after = ScrapeFused();
  std::printf("fused: regions run %lld, of which with a reduction %lld (2 x (%d runs + warm-up))\n",
              static_cast<long long>(after.regions - before.regions),
              static_cast<long long>(after.reductions - before.reductions), reps);
  r.Add("fused.regions", static_cast<double>(after.regions - before.regions));
  r.Add("fused.reductions", static_cast<double>(after.reductions - before.reductions));
}

// --- dot: n x n float32 / float64, result kept on the server ------------------

void Dot(int reps, Results& r) {
  const int64_t n = absl::GetFlag(FLAGS_quick) ? 1024 : 8192;
  r.Add("dot.n", static_cast<double>(n));
  for (bool busy : {false, true}) {
    auto c = Connect(true, busy);
    for (auto [dt, name] : {std::pair{DType::kFloat32, "f32"}, {DType::kFloat64, "f64"}}) {
      Array a = resident::client::ones(*c, {n, n}, dt);
      Array b = resident::client::ones(*c, {n, n}, dt);
      Ok(c->EvaluateAll({a, b}), "dot inputs");
      PhaseSampler ps;
      const Stats s = Repeat(std::max(reps, 5), [&] {
        ps.Begin();
        const auto t0 = Clock::now();
        Array p = resident::client::dot(a, b);
        Ok(p.Evaluate(), "dot");
        const double ms = Since(t0);
        ps.End();
        return ms;
      });
      const double tflops = 2.0 * n * n * n / (s.median / 1e3) / 1e12;
      const std::string key = absl::StrFormat("dot.%s%s", name, busy ? "_busy" : "");
      std::printf("dot %s %lldx%lld%s: median %.2f ms  min %.2f ms  %.3f TFLOP/s\n", name,
                  static_cast<long long>(n), static_cast<long long>(n),
                  busy ? " (client busy-polling)" : "", s.median, s.min, tflops);
      ReportPhases(ps.sum(), key, r);
      r.AddStats(key + "_ms", s);
      r.Add(key + "_tflops", tflops);
    }
  }
}

// --- sort: sort, argsort, cumsum, take_along_axis and x[x > 0] of 2^26 elements

// Times op() until its result is evaluated (at least 5 repetitions after
// a warm-up), prints key and `label`, and records key_ms.
void TimeEvaluated(const std::string& key, const std::string& label, int reps,
                   const std::function<Array()>& op, Results& r) {
  PhaseSampler phases;  // where the server spends each Run (with --metrics_port)
  const Stats s = Repeat(std::max(reps, 5), [&] {
    phases.Begin();
    const auto t0 = Clock::now();
    double ms;
    {
      Array out = op();
      Ok(out.Evaluate(), key);
      ms = Since(t0);
    }
    phases.End();
    return ms;
  });
  std::printf("%s%s: median %.2f ms  min %.2f ms\n", key.c_str(), label.c_str(), s.median, s.min);
  r.AddStats(key + "_ms", s);
  ReportPhases(phases.sum(), key, r);
}

// Uniform random values of `dt` (float32 or int64), the same stream as
// baseline.py's (numpy.random.default_rng(7)), uploaded once.
Array RandomArray(Client& c, DType dt, int64_t n) {
  std::mt19937_64 gen(7);
  std::string host(static_cast<size_t>(n * ItemSize(dt)), '\0');
  if (dt == DType::kFloat32) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    auto* p = reinterpret_cast<float*>(host.data());
    for (int64_t i = 0; i < n; ++i) p[i] = u(gen);
  } else {
    std::uniform_int_distribution<int64_t> u(-(int64_t{1} << 40), int64_t{1} << 40);
    auto* p = reinterpret_cast<int64_t*>(host.data());
    for (int64_t i = 0; i < n; ++i) p[i] = u(gen);
  }
  return Ok(c.Upload(dt, {n}, host), "upload");
}

void Sort(int reps, Results& r) {
  const int64_t n = absl::GetFlag(FLAGS_quick) ? int64_t{1} << 20 : int64_t{1} << 26;
  r.Add("sort.n", static_cast<double>(n));
  auto c = Connect(true, false);
  auto time_op = [&](const std::string& key, const std::function<Array()>& op) {
    TimeEvaluated(key, absl::StrFormat(" (n=%lld)", static_cast<long long>(n)), reps, op, r);
  };
  for (auto [dt, name] : {std::pair{DType::kFloat32, "f32"}, {DType::kInt64, "i64"}}) {
    Array a = RandomArray(*c, dt, n);
    time_op(absl::StrFormat("sort.sort_%s", name), [&] { return resident::client::sort(a); });
    time_op(absl::StrFormat("sort.argsort_%s", name), [&] { return resident::client::argsort(a); });
    time_op(absl::StrFormat("sort.cumsum_%s", name), [&] { return resident::client::cumsum(a); });
    if (dt == DType::kFloat32) {
      Array idx = resident::client::argsort(a);
      Ok(idx.Evaluate(), "indices");
      time_op("sort.take_f32", [&] { return resident::client::take_along_axis(a, idx); });
      // x[x > 0] as the Python client records it (_indexing.py): the
      // count (one round trip), then numpy.extract of the mask.
      time_op("sort.mask_f32", [&] {
        namespace rc = resident::client;
        Array m = rc::greater(a, 0.0);
        const int64_t count =
            Ok(rc::sum(rc::astype(m, DType::kInt64)).ToVector<int64_t>(), "count")[0];
        return rc::extract(m, a, count);
      });
    }
  }
}

// --- fft: the numerical-libraries issue's transforms --------------------------

// fft of 2^24 complex128, fftn (one 2-D transform) of 4096^2 complex64 and
// rfft of 2^26 float32 (quick: 2^16, 256^2, 2^18), uniform values in [-1, 1).
void Fft(int reps, Results& r) {
  const bool quick = absl::GetFlag(FLAGS_quick);
  auto c = Connect(true, false);
  auto upload = [&](DType dt, const Shape& shape) {
    const int64_t reals = resident::NumElements(shape) * (resident::IsComplex(dt) ? 2 : 1);
    std::mt19937_64 gen(11);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::string host(static_cast<size_t>(resident::NumElements(shape) * resident::ItemSize(dt)),
                     '\0');
    for (int64_t i = 0; i < reals; ++i) {
      if (dt == DType::kComplex128) {
        reinterpret_cast<double*>(host.data())[i] = u(gen);
      } else {
        reinterpret_cast<float*>(host.data())[i] = static_cast<float>(u(gen));
      }
    }
    return Ok(c->Upload(dt, shape, host), "upload");
  };
  auto time_op = [&](const std::string& key, const std::function<Array()>& op) {
    TimeEvaluated(key, "", reps, op, r);
  };
  namespace rc = resident::client;
  {
    Array a = upload(DType::kComplex128, {quick ? int64_t{1} << 16 : int64_t{1} << 24});
    time_op("fft.fft_c128", [&] { return rc::fft(a); });
  }
  {
    const int64_t side = quick ? 256 : 4096;
    Array a = upload(DType::kComplex64, {side, side});
    time_op("fft.fftn_c64", [&] { return rc::fftn(a, {0, 1}); });
  }
  {
    Array a = upload(DType::kFloat32, {quick ? int64_t{1} << 18 : int64_t{1} << 26});
    time_op("fft.rfft_f32", [&] { return rc::rfft(a); });
  }
}

// --- linalg: the numerical-libraries issue's factorisations -----------------

// solve (one right-hand side), cholesky, inv, det and eigvalsh of a 4096^2
// float64 matrix (quick: 256^2), and solve of 10,000 stacked 32^2 systems
// (quick: 500): uniform [-1, 1) plus n on the diagonal (and A A^T + n I for
// the Hermitian routines), uploaded once.
void Linalg(int reps, Results& r) {
  const bool quick = absl::GetFlag(FLAGS_quick);
  auto c = Connect(true, false);
  auto upload = [&](const Shape& shape, bool spd) {
    const int64_t n = shape.back(), batch = resident::NumElements(shape) / (n * n);
    std::mt19937_64 gen(13);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> host(static_cast<size_t>(resident::NumElements(shape)));
    for (double& v : host) v = u(gen);
    for (int64_t b = 0; b < batch; ++b) {
      double* m = host.data() + b * n * n;
      if (spd) {  // symmetric: the upper triangle mirrored
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < i; ++j) m[i * n + j] = m[j * n + i];
        }
      }
      for (int64_t i = 0; i < n; ++i) m[i * n + i] += static_cast<double>(n);
    }
    std::string bytes(reinterpret_cast<const char*>(host.data()), host.size() * 8);
    return Ok(c->Upload(DType::kFloat64, shape, bytes), "upload");
  };
  auto time_op = [&](const std::string& key, const std::function<Array()>& op) {
    TimeEvaluated(key, "", reps, op, r);
  };
  namespace rc = resident::client;
  const int64_t n = quick ? 256 : 4096;
  Array a = upload({n, n}, false), h = upload({n, n}, true), b = upload({n, 1}, false);
  time_op("linalg.solve_f64", [&] { return rc::solve(a, b); });
  time_op("linalg.cholesky_f64", [&] { return rc::cholesky(h); });
  time_op("linalg.inv_f64", [&] { return rc::inv(a); });
  time_op("linalg.det_f64", [&] { return rc::det(a); });
  time_op("linalg.eigvalsh_f64", [&] { return rc::eigvalsh(h); });
  // The routines of several results: every result is kept, as a script
  // keeps them.
  auto all_of = [](std::vector<Array> results) {
    Array last = results.back();
    for (Array& x : results) Ok(x.Evaluate(), "evaluate");
    return last;
  };
  time_op("linalg.qr_f64", [&] { return all_of(rc::qr(a)); });
  time_op("linalg.svd_f64", [&] { return all_of(rc::svd(a, false)); });
  time_op("linalg.eigh_f64", [&] { return all_of(rc::eigh(h)); });
  const int64_t stack = quick ? 500 : 10000;
  Array sa = upload({stack, 32, 32}, false), sb = upload({stack, 32, 1}, false);
  time_op("linalg.solve_batched_f64", [&] { return rc::solve(sa, sb); });
}

// --- random: numpy.random.default_rng(0)'s streams, made on the server ------

// default_rng(0).random(2^28) float64 and float32, integers(0, 1000, 2^26)
// int64, standard_normal(2^26) and standard_exponential(2^26) (quick:
// 2^20, 2^20, 2^18, 2^18, 2^18), from the state NumPy's SeedSequence gives
// seed 0 (PCG64(0).state), uploaded once; each draw is one program (the
// state advances between repetitions, as a script's draws do).
void Random(int reps, Results& r) {
  const bool quick = absl::GetFlag(FLAGS_quick);
  auto c = Connect(true, false);
  const uint64_t words[6] = {0x1aa1b5345996452dull,
                             0x09585eb7a69561e3ull,
                             0x418ddadb3af71a82ull,
                             0x588133bc447873a9ull,
                             0,
                             0};
  Array state =
      Ok(c->Upload(DType::kUint64, {6}, std::string(reinterpret_cast<const char*>(words), 48)),
         "upload");
  namespace rc = resident::client;
  auto draw = [&](std::vector<Array> results) {
    state = results[1];
    return results[0];
  };
  const int64_t n = quick ? int64_t{1} << 20 : int64_t{1} << 28;
  TimeEvaluated(
      "random.random_f64", "", reps, [&] { return draw(rc::random(state, DType::kFloat64, {n})); },
      r);
  TimeEvaluated(
      "random.random_f32", "", reps, [&] { return draw(rc::random(state, DType::kFloat32, {n})); },
      r);
  TimeEvaluated(
      "random.integers_i64", "", reps,
      [&] { return draw(rc::random_integers(state, DType::kInt64, {n / 4}, 0, 999)); }, r);
  TimeEvaluated(
      "random.normal_f64", "", reps,
      [&] { return draw(rc::standard_normal(state, DType::kFloat64, {n / 4})); }, r);
  TimeEvaluated(
      "random.exponential_f64", "", reps,
      [&] { return draw(rc::standard_exponential(state, DType::kFloat64, {n / 4})); }, r);
}

// --- transfer: Upload / Download vs a loopback TCP copy ----------------------

// Copies `buf` over a loopback TCP connection into a second buffer; ms.
double TcpCopy(const std::string& buf, std::string& sink) {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (ls < 0 || bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(ls, 1) != 0 || getsockname(ls, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("tcp listen");
    std::exit(1);
  }
  int cs = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(cs, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("tcp connect");
    std::exit(1);
  }
  int rs = accept(ls, nullptr, nullptr);
  close(ls);
  const size_t total = buf.size(), chunk = 4 << 20;
  const auto t0 = Clock::now();
  std::thread receiver([&] {
    size_t got = 0;
    while (got < total) {
      ssize_t k = read(rs, sink.data() + got, std::min(chunk, total - got));
      if (k <= 0) break;
      got += static_cast<size_t>(k);
    }
  });
  for (size_t sent = 0; sent < total;) {
    ssize_t k = write(cs, buf.data() + sent, std::min(chunk, total - sent));
    if (k <= 0) break;
    sent += static_cast<size_t>(k);
  }
  receiver.join();
  const double ms = Since(t0);
  close(cs);
  close(rs);
  return ms;
}

// Upload and download of `host` as float64 through `c`, the round trip checked.
std::pair<Stats, Stats> UpDown(Client& c, int reps, const std::string& host) {
  const int64_t n = static_cast<int64_t>(host.size()) / 8;
  Array x;
  const Stats up = Repeat(reps, [&] {
    if (x.valid()) Ok(x.Release(), "release");  // one GiB copy at a time, untimed
    const auto t0 = Clock::now();
    x = Ok(c.Upload(DType::kFloat64, {n}, host), "upload");
    return Since(t0);
  });
  std::string down;
  const Stats dn = Repeat(reps, [&] {
    const auto t0 = Clock::now();
    resident::client::HostData d = Ok(x.Download(), "download");
    const double ms = Since(t0);
    down = std::move(d.bytes);
    return ms;
  });
  if (down != host) {
    std::fprintf(stderr, "resident-bench: transfer: downloaded bytes differ from uploaded\n");
    std::exit(1);
  }
  return {up, dn};
}

// The gRPC path (as a remote client gets it) beside a loopback TCP copy, and
// the shared-memory path (a client on the server's host) beside a memcpy.
void Transfer(int reps, Results& r) {
  auto c = Connect(true, false, /*local_data=*/false);
  const int64_t n = absl::GetFlag(FLAGS_quick) ? int64_t{1} << 23 : int64_t{1} << 27;
  const double bytes = static_cast<double>(n) * 8;
  std::string host(static_cast<size_t>(n) * 8, '\0');
  for (int64_t i = 0; i < n; ++i)
    reinterpret_cast<double*>(host.data())[i] = static_cast<double>(i);
  const auto [up, dn] = UpDown(*c, reps, host);
  std::string down(host.size(), '\0');
  const Stats tcp = Repeat(reps, [&] { return TcpCopy(host, down); });
  auto gbs = [&](const Stats& s) { return bytes / (s.median / 1e3) / 1e9; };
  std::printf("transfer %.0f MiB float64 (round trip checked):\n", bytes / (1 << 20));
  std::printf("  upload    median %8.1f ms  %6.2f GB/s  (%.2fx TCP)\n", up.median, gbs(up),
              gbs(up) / gbs(tcp));
  std::printf("  download  median %8.1f ms  %6.2f GB/s  (%.2fx TCP)\n", dn.median, gbs(dn),
              gbs(dn) / gbs(tcp));
  std::printf("  loopback TCP socket copy  %8.1f ms  %6.2f GB/s\n", tcp.median, gbs(tcp));
  r.Add("transfer.bytes", bytes);
  r.AddStats("transfer.upload_ms", up);
  r.AddStats("transfer.download_ms", dn);
  r.AddStats("transfer.tcp_ms", tcp);
  r.Add("transfer.upload_gbs", gbs(up));
  r.Add("transfer.download_gbs", gbs(dn));
  r.Add("transfer.tcp_gbs", gbs(tcp));
  r.Add("transfer.upload_over_tcp", gbs(up) / gbs(tcp));
  r.Add("transfer.download_over_tcp", gbs(dn) / gbs(tcp));
  c.reset();

  auto local = Connect(true, false, /*local_data=*/true);
  if (local->transport() != "shared-memory") {
    std::printf("  shared memory: not used (%s)\n", local->transport_detail().c_str());
    return;
  }
  const auto [sup, sdn] = UpDown(*local, reps, host);
  // Array::DownloadView: the bytes stay in the region the server wrote.
  Array x = Ok(local->Upload(DType::kFloat64, {n}, host), "upload");
  const Stats view = Repeat(reps, [&] {
    const auto t0 = Clock::now();
    resident::client::HostView v = Ok(x.DownloadView(), "download view");
    const double ms = Since(t0);
    if (v.bytes().size() != host.size() || std::memcmp(v.bytes().data(), host.data(), 4096) != 0) {
      std::fprintf(stderr, "resident-bench: transfer: the view's bytes differ\n");
      std::exit(1);
    }
    return ms;
  });
  std::string sink(host.size(), '\0');
  std::memcpy(sink.data(), host.data(), host.size());  // touched: time the copy, not faults
  const Stats cpy = Repeat(reps, [&] {
    const auto t0 = Clock::now();
    std::memcpy(sink.data(), host.data(), host.size());
    return Since(t0);
  });
  std::printf("  shared memory upload   median %8.1f ms  %6.2f GB/s  (%.2fx memcpy)\n", sup.median,
              gbs(sup), gbs(sup) / gbs(cpy));
  std::printf("  shared memory download median %8.1f ms  %6.2f GB/s  (%.2fx memcpy)\n", sdn.median,
              gbs(sdn), gbs(sdn) / gbs(cpy));
  std::printf("  shared memory DownloadView median %8.1f ms  %6.2f GB/s  (%.2fx memcpy)\n",
              view.median, gbs(view), gbs(view) / gbs(cpy));
  std::printf("  memcpy                 median %8.1f ms  %6.2f GB/s\n", cpy.median, gbs(cpy));
  r.AddStats("transfer.shm_download_view_ms", view);
  r.Add("transfer.shm_download_view_gbs", gbs(view));
  r.AddStats("transfer.shm_upload_ms", sup);
  r.AddStats("transfer.shm_download_ms", sdn);
  r.AddStats("transfer.memcpy_ms", cpy);
  r.Add("transfer.shm_upload_gbs", gbs(sup));
  r.Add("transfer.shm_download_gbs", gbs(sdn));
  r.Add("transfer.memcpy_gbs", gbs(cpy));
}

// --- first_result: a fresh process's first answer ----------------------------

int FirstResultChild() {
  auto c = Connect(true);
  Array y = resident::client::ones(*c, {16}) + resident::client::ones(*c, {16});
  std::vector<double> v = Ok(y.ToVector<double>(), "first result");
  for (double e : v) {
    if (e != 2.0) return 1;
  }
  return v.size() == 16 ? 0 : 1;
}

void FirstResult(Results& r) {
  const std::string server = "--server=" + absl::GetFlag(FLAGS_server);
  // This same binary, by its real path (the child must not depend on cwd).
  char path[4096] = {};
  if (readlink("/proc/self/exe", path, sizeof path - 1) <= 0)
    Die("readlink", absl::InternalError("no /proc/self/exe"));
  std::string self = path;
  std::vector<char*> argv = {self.data(), const_cast<char*>("--first_result"),
                             const_cast<char*>(server.c_str()), nullptr};
  const Stats s = Repeat(5, [&] {
    const auto t0 = Clock::now();
    pid_t pid;
    int status = 0;
    if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), environ) != 0 ||
        waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "resident-bench: first_result child failed (status %d)\n", status);
      std::exit(1);
    }
    return Since(t0);
  });
  std::printf(
      "first_result: fresh process, connect, ones(16)+ones(16), download, exit: "
      "median %.1f ms  min %.1f ms\n",
      s.median, s.min);
  r.AddStats("first_result.ms", s);
}

void WriteJson(const std::string& path, const Results& r,
               const resident::client::ServerInfo& info) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::perror(path.c_str());
    std::exit(1);
  }
  auto esc = [](const std::string& s) {
    std::string o;
    for (char ch : s) {
      if (ch == '"' || ch == '\\') o += '\\';
      if (static_cast<unsigned char>(ch) >= 0x20) o += ch;
    }
    return o;
  };
  std::fprintf(f, "{\n  \"tool\": \"resident-bench\",\n  \"server\": \"%s\",\n",
               esc(absl::GetFlag(FLAGS_server)).c_str());
  std::fprintf(f, "  \"device\": \"%s\",\n  \"device_description\": \"%s\",\n",
               esc(info.device_name).c_str(), esc(info.device_description).c_str());
  std::fprintf(f, "  \"quick\": %s,\n  \"metrics\": {",
               absl::GetFlag(FLAGS_quick) ? "true" : "false");
  for (size_t i = 0; i < r.metrics.size(); ++i) {
    std::fprintf(f, "%s\n    \"%s\": %.9g", i ? "," : "", r.metrics[i].first.c_str(),
                 r.metrics[i].second);
  }
  std::fprintf(f, "\n  }\n}\n");
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Times Resident on the seed tutorial's workloads.\n"
      "  resident-bench --server HOST:PORT [--json FILE] [--quick] [--only seed,dot]");
  std::vector<std::string> flag_storage;
  resident::DashesToUnderscores(argc, argv, flag_storage);
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_first_result)) return FirstResultChild();

  const std::vector<std::string> all = {"seed",   "roundtrip", "tiny_ops", "chain",
                                        "fused",  "dot",       "sort",     "fft",
                                        "linalg", "random",    "transfer", "first_result"};
  std::set<std::string> only;
  for (absl::string_view w : absl::StrSplit(absl::GetFlag(FLAGS_only), ',', absl::SkipEmpty())) {
    if (std::find(all.begin(), all.end(), w) == all.end()) {
      std::fprintf(stderr, "resident-bench: unknown workload '%s'\n", std::string(w).c_str());
      return 2;
    }
    only.insert(std::string(w));
  }
  auto want = [&](const std::string& w) { return only.empty() || only.contains(w); };
  int reps = absl::GetFlag(FLAGS_reps);
  if (reps <= 0) reps = absl::GetFlag(FLAGS_quick) ? 3 : 5;

  resident::client::ServerInfo info = Ok(Connect()->Info(), "info");
  std::printf("resident-bench: server %s, device %s (%s), %s, median of %d after warm-up\n",
              absl::GetFlag(FLAGS_server).c_str(), info.device_name.c_str(),
              info.device_description.c_str(), absl::GetFlag(FLAGS_quick) ? "quick" : "full", reps);
  Results r;
  if (want("seed")) Seed(reps, r);
  if (want("roundtrip")) Roundtrip(false, r), Roundtrip(true, r);
  if (want("tiny_ops")) TinyOps(reps, r);
  if (want("chain")) Chain(reps, r);
  if (want("fused")) FusedForms(reps, r);
  if (want("dot")) Dot(reps, r);
  if (want("sort")) Sort(reps, r);
  if (want("fft")) Fft(reps, r);
  if (want("linalg")) Linalg(reps, r);
  if (want("random")) Random(reps, r);
  if (want("transfer")) Transfer(reps, r);
  if (want("first_result")) FirstResult(r);
  std::fflush(stdout);
  if (!absl::GetFlag(FLAGS_json).empty()) WriteJson(absl::GetFlag(FLAGS_json), r, info);
  return 0;
}

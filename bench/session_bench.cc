// resident-session-bench: the session layer's own cost per call, without a
// network: SessionManager driven directly on one device (the CPU unless
// --device names another).
//
// Each workload runs `--reps` times (best and median printed, in ns per
// call); tiny arrays, so the figures are the bookkeeping (locks, tables,
// quota accounting), not the device. Used to check that a change to
// server/session does not slow it down: run it before and after.
//
// The "tiny add" figures are resident-bench's round-trip program (a + b of
// 16 float32, kept, the previous result released) without gRPC: run on the
// calling thread, and handed each time to another thread as the server's
// callback threads do, with the executor's phases (plan, launch, sync,
// results) beside them. Subtracted from the server's own phases they say
// what the RPC layer adds.
//
//   build/bench/resident-session-bench [--device cuda:0] [--reps 5] [--scale 1]
//       [--only renew,stats]
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "server/device/device.h"
#include "server/session/session_manager.h"

namespace resident {
namespace {

using Clock = std::chrono::steady_clock;

void Check(const absl::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}
template <typename T>
T Must(absl::StatusOr<T> v, const char* what) {
  Check(v.status(), what);
  return *std::move(v);
}

// ones((4,)) kept as a handle.
std::shared_ptr<const Program> OnesProgram() {
  auto p = std::make_shared<Program>();
  Instruction ones;
  ones.op = OpKind::kOnes;
  ones.shape = {4};
  ones.dtype = DType::kFloat64;
  p->instructions.push_back(ones);
  return p;
}

HandleId RunOnes(SessionManager& m, const HandleId& s, const std::shared_ptr<const Program>& p) {
  std::vector<ProgramResult> r =
      Must(m.Run("bench", s, p, {OutputSpec{0, /*keep=*/true, false}}, {}), "run");
  return r[0].array.handle;
}

// a + b of two handles, the result kept.
std::shared_ptr<const Program> AddProgram(const HandleId& a, const HandleId& b) {
  auto p = std::make_shared<Program>();
  Instruction add;
  add.op = OpKind::kElementwise;
  add.elementwise = ElementwiseKind::kAdd;
  add.operands = {Operand::Handle(a), Operand::Handle(b)};
  p->instructions.push_back(add);
  return p;
}

// ones(shape) of `dtype`, kept.
HandleId Ones(SessionManager& m, const HandleId& s, Shape shape, DType dtype) {
  auto p = std::make_shared<Program>();
  Instruction ones;
  ones.op = OpKind::kOnes;
  ones.shape = std::move(shape);
  ones.dtype = dtype;
  p->instructions.push_back(ones);
  return Must(m.Run("bench", s, p, {OutputSpec{0, true, false}}, {}), "ones")[0].array.handle;
}

// dot(a, b) of two handles, the result kept.
std::shared_ptr<const Program> DotProgram(const HandleId& a, const HandleId& b) {
  auto p = std::make_shared<Program>();
  Instruction dot;
  dot.op = OpKind::kDot;
  dot.operands = {Operand::Handle(a), Operand::Handle(b)};
  p->instructions.push_back(dot);
  return p;
}

struct Figure {
  const char* name;
  int64_t calls;  // per repetition
  std::function<void()> body;
};

// Prints the figure's best and median ns per call; returns the median.
// `after_warmup` runs between the warm-up and the timed repetitions.
double Report(const Figure& f, int reps, const std::function<void()>& after_warmup) {
  std::vector<double> ns;
  f.body();  // warm-up
  after_warmup();
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    f.body();
    ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
                 static_cast<double>(f.calls));
  }
  std::sort(ns.begin(), ns.end());
  std::printf("%-34s best %9.0f ns  median %9.0f ns  (%lld calls)\n", f.name, ns.front(),
              ns[ns.size() / 2], static_cast<long long>(f.calls));
  return ns[ns.size() / 2];
}

int Main(int argc, char** argv) {
  int reps = 5;
  int64_t scale = 1;
  std::string only;  // run only the figures whose name contains one of these (a,b,...)
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--scale") == 0) scale = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--only") == 0) only = argv[i + 1];
  }
  std::string device_spec = "cpu";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--device") == 0) device_spec = argv[i + 1];
  }
  Device device(Must(CreateBackend(device_spec), "device"), 0);
  std::printf("device %s\n", device.name().c_str());
  SessionOptions opts;
  opts.reap_interval = absl::Seconds(3600);
  SessionManager m(device, opts);
  const auto ones = OnesProgram();
  const HandleId s = Must(m.Open("bench"), "open");
  const std::string chunk(32, '\0');

  std::vector<Figure> figures;
  const int64_t n = 20000 * scale;
  figures.push_back({"open + close", n, [&] {
                       for (int64_t i = 0; i < n; ++i) {
                         Check(m.Close("bench", Must(m.Open("bench"), "open")), "close");
                       }
                     }});
  figures.push_back({"run (keep 1) + release", n, [&] {
                       for (int64_t i = 0; i < n; ++i) {
                         Check(m.Release("bench", s, {RunOnes(m, s, ones)}), "release");
                       }
                     }});
  figures.push_back({"upload 32 B + release", n, [&] {
                       for (int64_t i = 0; i < n; ++i) {
                         auto up = Must(m.BeginUpload("bench", s, DType::kFloat64, {4}), "up");
                         Check(up->Append(chunk), "append");
                         ArrayDescription d = Must(up->Finish(), "finish");
                         Check(m.Release("bench", s, {d.handle}), "release");
                       }
                     }});
  figures.push_back({"download 32 B", n, [&] {
                       const HandleId h = RunOnes(m, s, ones);
                       char buf[32];
                       for (int64_t i = 0; i < n; ++i) {
                         auto d = Must(m.BeginDownload("bench", s, h), "down");
                         Check(d->Read(0, 32, buf), "read");
                       }
                       Check(m.Release("bench", s, {h}), "release");
                     }});
  figures.push_back({"keep + attach + delete name", n, [&] {
                       const HandleId h = RunOnes(m, s, ones);
                       for (int64_t i = 0; i < n; ++i) {
                         Must(m.Keep("bench", s, h, "w"), "keep");
                         ArrayDescription a = Must(m.Attach("bench", s, "w"), "attach");
                         Check(m.Release("bench", s, {a.handle}, {"w"}), "delete");
                       }
                       Check(m.Release("bench", s, {h}), "release");
                     }});
  figures.push_back({"renew", 10 * n, [&] {
                       for (int64_t i = 0; i < 10 * n; ++i) Check(m.Renew("bench", s), "renew");
                     }});
  // Eight threads, each in its own session: the lock under contention.
  const int64_t per_thread = 2500 * scale;
  figures.push_back({"8 threads: run + release", 8 * per_thread, [&] {
                       std::vector<std::thread> threads;
                       threads.reserve(8);
                       for (int t = 0; t < 8; ++t) {
                         threads.emplace_back([&] {
                           const HandleId own = Must(m.Open("bench"), "open");
                           for (int64_t i = 0; i < per_thread; ++i) {
                             Check(m.Release("bench", own, {RunOnes(m, own, ones)}), "rel");
                           }
                           Check(m.Close("bench", own), "close");
                         });
                       }
                       for (std::thread& t : threads) t.join();
                     }});
  // The round-trip program, phases summed over every call of the figure.
  const HandleId ta = Ones(m, s, {16}, DType::kFloat32), tb = Ones(m, s, {16}, DType::kFloat32);
  RunPhases phases;
  int64_t phase_calls = 0;
  HandleId kept;
  // Runs `program`, keeps its result and releases the last one kept.
  auto run_kept = [&](const std::shared_ptr<const Program>& program) {
    ExecOptions o;
    o.phases = &phases;
    o.check_continue = [] { return absl::OkStatus(); };  // as the server's per-op check
    std::vector<ProgramResult> r =
        Must(m.Run("bench", s, program, {OutputSpec{0, true, false}}, o), "run");
    if (!(kept == HandleId())) Check(m.Release("bench", s, {kept}), "release");
    kept = r[0].array.handle;
    ++phase_calls;
  };
  const auto add = AddProgram(ta, tb);
  auto tiny_add = [&] { run_kept(add); };
  auto print_phases = [&](const char* name) {
    const double k = 1e6 / static_cast<double>(std::max<int64_t>(1, phase_calls));
    std::printf("  %s phases (mean us): plan %.1f launch %.1f sync %.1f results %.1f\n", name,
                phases.plan * k, phases.launch * k, phases.sync * k, phases.results * k);
    phases = RunPhases();
    phase_calls = 0;
  };
  const int64_t tiny_n = 2000 * scale;
  figures.push_back({"tiny add, this thread", tiny_n, [&] {
                       for (int64_t i = 0; i < tiny_n; ++i) tiny_add();
                     }});
  // Each call handed to the next of 4 long-lived threads, as gRPC's callback
  // threads take turns: the device calls then come from a thread whose caches
  // (and the CUDA runtime's per-thread state) the last call did not warm.
  figures.push_back({"tiny add, handed to 4 threads", tiny_n, [&] {
                       std::mutex mu;
                       std::condition_variable cv;
                       int64_t next = 0;  // the call to run next; tiny_n: all done
                       std::vector<std::thread> workers;
                       for (int w = 0; w < 4; ++w) {
                         workers.emplace_back([&, w] {
                           std::unique_lock<std::mutex> lock(mu);
                           for (;;) {
                             cv.wait(lock, [&] { return next >= tiny_n || next % 4 == w; });
                             if (next >= tiny_n) return;
                             lock.unlock();
                             tiny_add();
                             lock.lock();
                             ++next;
                             cv.notify_all();
                           }
                         });
                       }
                       for (std::thread& t : workers) t.join();
                     }});
  // resident-bench's dot (ones n x n, the result kept) without gRPC: beside
  // resident-backend-bench's matmul it says what the session and executor
  // add to one GEMM.
  const int64_t dot_n = device_spec == "cpu" ? 512 : 8192;
  for (auto [dtype, name] : {std::pair{DType::kFloat32, "dot f32"}, {DType::kFloat64, "dot f64"}}) {
    const HandleId da = Ones(m, s, {dot_n, dot_n}, dtype), db = Ones(m, s, {dot_n, dot_n}, dtype);
    const auto dot = DotProgram(da, db);
    figures.push_back({name, 4, [&, dot] {
                         for (int i = 0; i < 4; ++i) run_kept(dot);
                       }});
  }
  // Whole-table reads with 100 sessions of 100 handles each.
  std::vector<HandleId> sessions;
  HandleId some_handle;
  for (int i = 0; i < 100; ++i) {
    sessions.push_back(Must(m.Open("bench"), "open"));
    for (int j = 0; j < 100; ++j) some_handle = RunOnes(m, sessions.back(), ones);
  }
  figures.push_back({"stats (10k handles)", 200, [&] {
                       for (int i = 0; i < 200; ++i) m.Stats();
                     }});
  figures.push_back({"snapshot (100 sessions)", 200, [&] {
                       for (int i = 0; i < 200; ++i) m.Snapshot();
                     }});
  figures.push_back({"list (10k handles)", 200, [&] {
                       for (int i = 0; i < 200; ++i) Must(m.List("bench", s), "list");
                     }});
  figures.push_back({"array bytes lookup", n, [&] {
                       for (int64_t i = 0; i < n; ++i) m.ArrayBytes("bench", some_handle);
                     }});
  for (const Figure& f : figures) {
    bool wanted = only.empty();
    for (size_t at = 0; !wanted && at <= only.size();) {  // comma-separated parts
      const size_t end = std::min(only.find(',', at), only.size());
      wanted = std::string(f.name).find(only.substr(at, end - at)) != std::string::npos;
      at = end + 1;
    }
    if (!wanted) continue;
    const double median_ns = Report(f, reps, [&] {
      phases = RunPhases();
      phase_calls = 0;
    });
    if (phase_calls > 0) print_phases(f.name);
    if (std::string_view(f.name).substr(0, 3) == "dot") {
      const double n = static_cast<double>(dot_n);
      std::printf("  n = %.0f: %.2f TFLOP/s at the median\n", n, 2 * n * n * n / median_ns / 1e3);
    }
  }
  return 0;
}

}  // namespace
}  // namespace resident

int main(int argc, char** argv) { return resident::Main(argc, argv); }

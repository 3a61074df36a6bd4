// resident-session-bench: the session layer's own cost per call, without a
// network: SessionManager driven directly on the CPU device.
//
// Each workload runs `--reps` times (best and median printed, in ns per
// call); tiny arrays, so the figures are the bookkeeping (locks, tables,
// quota accounting), not the device. Used to check that a change to
// server/session does not slow it down: run it before and after.
//
//   build/bench/resident-session-bench [--reps 5] [--scale 1] [--only renew,stats]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/device/cpu/cpu_backend.h"
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

struct Figure {
  const char* name;
  int64_t calls;  // per repetition
  std::function<void()> body;
};

void Report(const Figure& f, int reps) {
  std::vector<double> ns;
  f.body();  // warm-up
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    f.body();
    ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
                 static_cast<double>(f.calls));
  }
  std::sort(ns.begin(), ns.end());
  std::printf("%-34s best %9.0f ns  median %9.0f ns  (%lld calls)\n", f.name, ns.front(),
              ns[ns.size() / 2], static_cast<long long>(f.calls));
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
  Device device(NewCpuBackend(1), 0);
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
    if (wanted) Report(f, reps);
  }
  return 0;
}

}  // namespace
}  // namespace resident

int main(int argc, char** argv) { return resident::Main(argc, argv); }

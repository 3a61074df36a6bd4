#include "client/cli/seed.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/client.h"

namespace resident::cli {
namespace {

using client::Array;
using client::Client;
using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// What NumPy gives for 1.0 doubled n times in float64: 2**n, which
// overflows to inf from n = 1024 on.
double Expected(int64_t n) { return std::ldexp(1.0, static_cast<int>(std::min<int64_t>(n, 2000))); }

struct Row {
  std::string mode;
  int64_t requests = 0;
  double ms = 0;
  double value = 0;
  bool ok = false;
};

// Downloads x (outside the timed region) and checks every element.
absl::Status Check(const Array& x, double want, Row& row) {
  absl::StatusOr<std::vector<double>> v = x.ToVector<double>();
  if (!v.ok()) return v.status();
  row.value = v->empty() ? NAN : (*v)[0];
  row.ok = true;
  for (double e : *v) {
    if (!(e == want)) row.ok = false;
  }
  return absl::OkStatus();
}

absl::StatusOr<Row> Eager(const SeedOptions& o, double want) {
  client::ClientOptions co = o.connection;
  co.lazy = false;
  absl::StatusOr<std::unique_ptr<Client>> c = Client::Connect(o.server, co);
  if (!c.ok()) return c.status();
  Array x = client::ones(**c, o.shape);
  if (absl::Status s = x.Evaluate(); !s.ok()) return s;
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < o.iterations; ++i) {
    x = x + x;
    if (absl::Status s = x.Evaluate(); !s.ok()) return s;
  }
  Row row{"eager (one request per add)", o.iterations, Ms(t0, Clock::now())};
  if (absl::Status s = Check(x, want, row); !s.ok()) return s;
  return row;
}

absl::StatusOr<Row> Batched(const SeedOptions& o, double want) {
  absl::StatusOr<std::unique_ptr<Client>> c = Client::Connect(o.server, o.connection);
  if (!c.ok()) return c.status();
  Array x = client::ones(**c, o.shape);
  if (absl::Status s = x.Evaluate(); !s.ok()) return s;
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < o.iterations; ++i) x = x + x;  // recorded
  if (absl::Status s = x.Evaluate(); !s.ok()) return s;  // one request
  Row row{"one batched program (lazy)", 1, Ms(t0, Clock::now())};
  if (absl::Status s = Check(x, want, row); !s.ok()) return s;
  return row;
}

absl::StatusOr<Row> ServerLoop(const SeedOptions& o, double want) {
  absl::StatusOr<std::unique_ptr<Client>> c = Client::Connect(o.server, o.connection);
  if (!c.ok()) return c.status();
  Array x = client::ones(**c, o.shape);
  if (absl::Status s = x.Evaluate(); !s.ok()) return s;
  const auto t0 = Clock::now();
  std::vector<Array> out = (*c)->Loop(o.iterations, {x}, [](const std::vector<Array>& v) {
    return std::vector<Array>{v[0] + v[0]};
  });
  if (absl::Status s = out[0].Evaluate(); !s.ok()) return s;
  Row row{"server-side loop", 1, Ms(t0, Clock::now())};
  if (absl::Status s = Check(out[0], want, row); !s.ok()) return s;
  return row;
}

Row Local(const SeedOptions& o, double want) {
  std::vector<double> x(static_cast<size_t>(NumElements(o.shape)), 1.0);
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < o.iterations; ++i) {
    for (double& e : x) e = e + e;
  }
  Row row{"local CPU loop (this process, 1 thread)", 0, Ms(t0, Clock::now())};
  row.value = x.empty() ? NAN : x[0];
  row.ok = true;
  for (double e : x) row.ok &= e == want;
  return row;
}

}  // namespace

absl::Status RunSeed(const SeedOptions& o) {
  const double want = Expected(o.iterations);
  absl::StatusOr<std::unique_ptr<Client>> probe = Client::Connect(o.server, o.connection);
  if (!probe.ok()) return probe.status();
  absl::StatusOr<client::ServerInfo> info = (*probe)->Info();
  if (!info.ok()) return info.status();
  probe->reset();
  std::printf(
      "seed job: x = add(x, x) %lld times, x = ones(%s, float64), "
      "server %s, device %s (%s)\n",
      static_cast<long long>(o.iterations), ShapeString(o.shape).c_str(), o.server.c_str(),
      info->device_name.c_str(), info->device_description.c_str());
  std::vector<Row> rows;
  for (auto* mode : {&Eager, &Batched, &ServerLoop}) {
    absl::StatusOr<Row> r = mode(o, want);
    if (!r.ok()) return r.status();
    rows.push_back(*r);
  }
  rows.push_back(Local(o, want));
  std::printf("%-40s %9s %11s %12s %12s  %s\n", "mode", "requests", "wall ms", "ms per add", "x[0]",
              "check");
  bool all_ok = true;
  for (const Row& r : rows) {
    all_ok &= r.ok;
    std::printf("%-40s %9s %11.1f %12.3f %12g  %s\n", r.mode.c_str(),
                r.requests ? absl::StrCat(r.requests).c_str() : "-", r.ms,
                r.ms / static_cast<double>(o.iterations), r.value, r.ok ? "ok" : "WRONG");
  }
  std::printf("expected every element = %g (NumPy: 1.0 doubled %lld times%s)\n", want,
              static_cast<long long>(o.iterations),
              std::isinf(want) ? " overflows float64 to inf" : "");
  if (!all_ok) return absl::InternalError("a result differs from NumPy's");
  return absl::OkStatus();
}

}  // namespace resident::cli

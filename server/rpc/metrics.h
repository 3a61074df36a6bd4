// The server's Prometheus metrics: counters and a latency histogram kept
// here, gauges (resident bytes, device memory) read at scrape time by the
// caller. A plain object owned by the Server and passed to whoever records;
// no process-wide registry.
//
//   Metrics metrics;
//   metrics.RecordCall("/resident.v1.Resident/Run", absl::StatusCode::kOk, 0.003);
//   std::string text = metrics.Render(gauges);  // text exposition format 0.0.4
#ifndef RESIDENT_SERVER_RPC_METRICS_H_
#define RESIDENT_SERVER_RPC_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "server/program/executor.h"

namespace resident {

// Figures read when the metrics are scraped.
struct MetricsGauges {
  struct Tenant {
    std::string tenant;
    int64_t resident_bytes = 0;
    int64_t arrays = 0;
    int64_t sessions = 0;
  };
  std::vector<Tenant> tenants;
  struct DeviceGauges {
    std::string device;  // its unique name: "cpu", "cuda:0", "cpu#1"
    int64_t total_bytes = 0;
    int64_t free_bytes = 0;
    int64_t used_bytes = 0;    // held by arrays and running programs
    int64_t cached_bytes = 0;  // freed blocks the backend keeps for reuse
    int64_t limit_bytes = 0;   // --max-memory (per device)
    int64_t allocations = 0;   // buffers allocated since start
    int64_t peer_copies = 0;   // arrays copied here from another device
    int64_t peer_copy_bytes = 0;
  };
  std::vector<DeviceGauges> devices;  // in index order
  int64_t sessions = 0;               // open, every tenant
  int64_t handles = 0;                // handles of every session
  int64_t named_arrays = 0;
  int64_t table_host_bytes = 0;  // host memory of the session/handle tables
};

class Metrics {
 public:
  // Upper bounds of the latency histogram's buckets, seconds.
  static constexpr std::array<double, 14> kLatencyBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 10.0};

  // One finished RPC: its full method name, outcome and duration.
  void RecordCall(absl::string_view method, absl::StatusCode code, double seconds);
  // A program that ran to completion with `ops` operations (loop bodies
  // counted once per iteration).
  void RecordProgram(const std::string& tenant, int64_t ops);
  // Where a Run's time went: `queued` from the handler's start to the
  // program's (authentication, decoding, scheduling), `session` the session
  // layer's own part (locks, quotas, reservations, piggybacked releases),
  // the program's phases, and `reply` (encoding the response).
  void RecordRunPhases(double queued, double session, const RunPhases& phases, double reply);
  // The fused ops a completed program ran (loops, straight-line regions).
  void RecordFusion(const FusionCounts& fused);
  // The while loops a completed program ran, their trips, and the capped ones.
  void RecordLoops(const LoopCounts& loops);
  void RecordUpload(const std::string& tenant, int64_t bytes);
  void RecordDownload(const std::string& tenant, int64_t bytes);

  // Everything in the Prometheus text exposition format, version 0.0.4.
  std::string Render(const MetricsGauges& gauges) const;

 private:
  struct Histogram {
    std::array<uint64_t, kLatencyBuckets.size()> buckets{};  // not cumulative
    uint64_t count = 0;
    double sum = 0;
  };
  struct TenantCounters {
    uint64_t programs = 0;
    uint64_t ops = 0;
    uint64_t upload_bytes = 0;
    uint64_t download_bytes = 0;
  };

  static constexpr std::array<const char*, 7> kRunPhases = {"queued", "session", "plan", "launch",
                                                            "sync",   "results", "reply"};
  static void Observe(Histogram& h, double seconds);
  // `name`_bucket/_sum/_count lines of one labelled histogram.
  static void RenderHistogram(std::string& out, const char* name, const char* label,
                              const std::string& value, const Histogram& h);

  mutable std::mutex mu_;
  std::array<Histogram, kRunPhases.size()> run_phases_;
  std::map<std::pair<std::string, std::string>, uint64_t> calls_;  // (method, code)
  std::map<std::string, Histogram> latency_;                       // by method
  std::map<std::string, TenantCounters> tenants_;
  FusionCounts fused_;
  LoopCounts loops_;
};

// A label value escaped for the text format (backslash, quote, newline).
std::string EscapeLabel(absl::string_view value);

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_METRICS_H_

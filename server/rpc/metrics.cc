#include "server/rpc/metrics.h"

#include "absl/strings/str_cat.h"

namespace resident {
namespace {

// "/resident.v1.Resident/Run" -> "Resident/Run": short and still unique.
std::string ShortMethod(absl::string_view method) {
  if (!method.empty() && method[0] == '/') method.remove_prefix(1);
  const size_t dot = method.rfind('.', method.find('/'));
  if (dot != absl::string_view::npos) method.remove_prefix(dot + 1);
  return std::string(method);
}

void Header(std::string& out, const char* name, const char* type, const char* help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

std::string Double(double v) { return absl::StrCat(v); }

}  // namespace

std::string EscapeLabel(absl::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

void Metrics::RecordCall(absl::string_view method, absl::StatusCode code, double seconds) {
  const std::string m = ShortMethod(method);
  std::lock_guard<std::mutex> lock(mu_);
  ++calls_[{m, absl::StatusCodeToString(code)}];
  Observe(latency_[m], seconds);
}

void Metrics::Observe(Histogram& h, double seconds) {
  size_t i = 0;
  while (i < kLatencyBuckets.size() && seconds > kLatencyBuckets[i]) ++i;
  if (i < kLatencyBuckets.size()) ++h.buckets[i];
  ++h.count;
  h.sum += seconds;
}

void Metrics::RenderHistogram(std::string& out, const char* name, const char* label,
                              const std::string& value, const Histogram& h) {
  const std::string labels = absl::StrCat(label, "=\"", value, "\"");
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    cumulative += h.buckets[i];
    absl::StrAppend(&out, name, "_bucket{", labels, ",le=\"", Double(kLatencyBuckets[i]), "\"} ",
                    cumulative, "\n");
  }
  absl::StrAppend(&out, name, "_bucket{", labels, ",le=\"+Inf\"} ", h.count, "\n");
  absl::StrAppend(&out, name, "_sum{", labels, "} ", Double(h.sum), "\n");
  absl::StrAppend(&out, name, "_count{", labels, "} ", h.count, "\n");
}

void Metrics::RecordRunPhases(double queued, double session, const RunPhases& phases,
                              double reply) {
  const std::array<double, kRunPhases.size()> seconds = {
      queued, session, phases.plan, phases.launch, phases.sync, phases.results, reply};
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < seconds.size(); ++i) Observe(run_phases_[i], seconds[i]);
}

void Metrics::RecordFusion(const FusionCounts& fused) {
  if (fused.loops == 0 && fused.regions == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  fused_.loops += fused.loops;
  fused_.regions += fused.regions;
  fused_.reductions += fused.reductions;
}

void Metrics::RecordLoops(const LoopCounts& loops) {
  if (loops.whiles == 0 && loops.graph_loops == 0 && loops.graph_fallbacks == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  loops_.whiles += loops.whiles;
  loops_.while_trips += loops.while_trips;
  loops_.capped += loops.capped;
  loops_.graph_whiles += loops.graph_whiles;
  loops_.graph_loops += loops.graph_loops;
  loops_.graph_fallbacks += loops.graph_fallbacks;
  loops_.graph_cache_hits += loops.graph_cache_hits;
  loops_.graph_setup_seconds += loops.graph_setup_seconds;
  loops_.graph_arena_bytes += loops.graph_arena_bytes;
  loops_.graph_arena_peak_bytes += loops.graph_arena_peak_bytes;
}

void Metrics::RecordProgram(const std::string& tenant, int64_t ops) {
  std::lock_guard<std::mutex> lock(mu_);
  TenantCounters& t = tenants_[tenant];
  ++t.programs;
  t.ops += static_cast<uint64_t>(ops);
}

void Metrics::RecordUpload(const std::string& tenant, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  tenants_[tenant].upload_bytes += static_cast<uint64_t>(bytes);
}

void Metrics::RecordDownload(const std::string& tenant, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  tenants_[tenant].download_bytes += static_cast<uint64_t>(bytes);
}

std::string Metrics::Render(const MetricsGauges& g) const {
  std::string out;
  // Gauges first: read by the caller, no lock needed.
  Header(out, "resident_tenant_resident_bytes", "gauge",
         "Device bytes held by each tenant's arrays.");
  for (const auto& t : g.tenants) {
    absl::StrAppend(&out, "resident_tenant_resident_bytes{tenant=\"", EscapeLabel(t.tenant), "\"} ",
                    t.resident_bytes, "\n");
  }
  Header(out, "resident_tenant_arrays", "gauge", "Arrays held by each tenant.");
  for (const auto& t : g.tenants) {
    absl::StrAppend(&out, "resident_tenant_arrays{tenant=\"", EscapeLabel(t.tenant), "\"} ",
                    t.arrays, "\n");
  }
  Header(out, "resident_tenant_sessions", "gauge", "Open sessions of each tenant.");
  for (const auto& t : g.tenants) {
    absl::StrAppend(&out, "resident_tenant_sessions{tenant=\"", EscapeLabel(t.tenant), "\"} ",
                    t.sessions, "\n");
  }
  // One series per device of the set, labelled with its unique name.
  auto per_device = [&](const char* name, const char* type, const char* help,
                        int64_t MetricsGauges::DeviceGauges::*field) {
    Header(out, name, type, help);
    for (const MetricsGauges::DeviceGauges& d : g.devices) {
      absl::StrAppend(&out, name, "{device=\"", EscapeLabel(d.device), "\"} ", d.*field, "\n");
    }
  };
  using D = MetricsGauges::DeviceGauges;
  per_device("resident_device_memory_total_bytes", "gauge", "Device memory in total.",
             &D::total_bytes);
  per_device("resident_device_memory_free_bytes", "gauge",
             "Device memory free, as the device reports it.", &D::free_bytes);
  per_device("resident_device_memory_used_bytes", "gauge",
             "Device bytes held by arrays and running programs.", &D::used_bytes);
  per_device("resident_device_memory_cached_bytes", "gauge",
             "Freed device blocks the backend keeps for reuse.", &D::cached_bytes);
  per_device("resident_device_memory_limit_bytes", "gauge",
             "Device bytes the server may hold (--max-memory, per device).", &D::limit_bytes);
  per_device("resident_device_allocations_total", "counter",
             "Device buffers allocated since start.", &D::allocations);
  per_device("resident_device_peer_copies_total", "counter",
             "Arrays copied to this device from another one before a program read them.",
             &D::peer_copies);
  per_device("resident_device_peer_copy_bytes_total", "counter", "Bytes of those peer copies.",
             &D::peer_copy_bytes);
  Header(out, "resident_sessions", "gauge", "Open sessions, every tenant.");
  absl::StrAppend(&out, "resident_sessions ", g.sessions, "\n");
  Header(out, "resident_handles", "gauge", "Array handles of every session.");
  absl::StrAppend(&out, "resident_handles ", g.handles, "\n");
  Header(out, "resident_named_arrays", "gauge", "Named arrays of every tenant.");
  absl::StrAppend(&out, "resident_named_arrays ", g.named_arrays, "\n");
  Header(out, "resident_table_host_bytes", "gauge",
         "Host memory of the session and handle tables (an estimate).");
  absl::StrAppend(&out, "resident_table_host_bytes ", g.table_host_bytes, "\n");

  std::lock_guard<std::mutex> lock(mu_);
  Header(out, "resident_programs_total", "counter", "Programs run to completion.");
  for (const auto& [tenant, c] : tenants_) {
    absl::StrAppend(&out, "resident_programs_total{tenant=\"", EscapeLabel(tenant), "\"} ",
                    c.programs, "\n");
  }
  Header(out, "resident_ops_total", "counter",
         "Operations run by completed programs (loop bodies once per iteration).");
  for (const auto& [tenant, c] : tenants_) {
    absl::StrAppend(&out, "resident_ops_total{tenant=\"", EscapeLabel(tenant), "\"} ", c.ops, "\n");
  }
  Header(out, "resident_fused_ops_total", "counter",
         "Fused ops run by completed programs: loops whose body ran as one kernel, and "
         "straight-line runs of elementwise ops run as one.");
  absl::StrAppend(&out, "resident_fused_ops_total{form=\"loop\"} ", fused_.loops, "\n");
  absl::StrAppend(&out, "resident_fused_ops_total{form=\"region\"} ", fused_.regions, "\n");
  Header(out, "resident_fused_reductions_total", "counter",
         "Reductions computed inside a fused region's op (the reduced values never written).");
  absl::StrAppend(&out, "resident_fused_reductions_total ", fused_.reductions, "\n");
  Header(out, "resident_while_loops_total", "counter",
         "While loops run by completed programs, by form: trip by trip (the condition read "
         "back to the host each trip) or as a device graph after the first trip (the device "
         "tests the condition).");
  absl::StrAppend(&out, "resident_while_loops_total{form=\"trip_by_trip\"} ",
                  loops_.whiles - loops_.graph_whiles, "\n");
  absl::StrAppend(&out, "resident_while_loops_total{form=\"graph\"} ", loops_.graph_whiles, "\n");
  Header(out, "resident_loop_graphs_total", "counter",
         "Fixed-trip loops whose body did not fuse and whose trips after the first ran as a "
         "device graph.");
  absl::StrAppend(&out, "resident_loop_graphs_total ", loops_.graph_loops, "\n");
  Header(out, "resident_loop_graph_fallbacks_total", "counter",
         "Loops and whiles the plan marked for a device graph whose recording failed; they ran "
         "trip by trip (the server log says why).");
  absl::StrAppend(&out, "resident_loop_graph_fallbacks_total ", loops_.graph_fallbacks, "\n");
  Header(out, "resident_loop_graph_cache_hits_total", "counter",
         "Loop graphs made ready by updating the executable graph of an earlier loop of the "
         "same shape on the same session's stream (--loop-graph-cache), not instantiating one.");
  absl::StrAppend(&out, "resident_loop_graph_cache_hits_total ", loops_.graph_cache_hits, "\n");
  Header(out, "resident_loop_graph_setup_seconds_total", "counter",
         "Time spent recording loop graphs' trips and readying their executable graphs.");
  absl::StrAppend(&out, "resident_loop_graph_setup_seconds_total ", loops_.graph_setup_seconds,
                  "\n");
  Header(out, "resident_loop_graph_arena_bytes_total", "counter",
         "Loop graphs' arenas: the bytes reserved for them (planned), and the most each "
         "recorded trip held at once (peak).");
  absl::StrAppend(&out, "resident_loop_graph_arena_bytes_total{use=\"planned\"} ",
                  loops_.graph_arena_bytes, "\n");
  absl::StrAppend(&out, "resident_loop_graph_arena_bytes_total{use=\"peak\"} ",
                  loops_.graph_arena_peak_bytes, "\n");
  Header(out, "resident_while_loops_capped_total", "counter",
         "While loops that stopped at max_trips with their condition still true.");
  absl::StrAppend(&out, "resident_while_loops_capped_total ", loops_.capped, "\n");
  Header(out, "resident_while_trips_total", "counter", "Trips taken by completed while loops.");
  absl::StrAppend(&out, "resident_while_trips_total ", loops_.while_trips, "\n");
  Header(out, "resident_transfer_bytes_total", "counter",
         "Array bytes moved by Upload and Download.");
  for (const auto& [tenant, c] : tenants_) {
    const std::string t = EscapeLabel(tenant);
    absl::StrAppend(&out, "resident_transfer_bytes_total{tenant=\"", t, "\",direction=\"upload\"} ",
                    c.upload_bytes, "\n");
    absl::StrAppend(&out, "resident_transfer_bytes_total{tenant=\"", t,
                    "\",direction=\"download\"} ", c.download_bytes, "\n");
  }
  Header(out, "resident_requests_total", "counter", "RPCs finished, by method and code.");
  for (const auto& [key, n] : calls_) {
    absl::StrAppend(&out, "resident_requests_total{method=\"", EscapeLabel(key.first), "\",code=\"",
                    key.second, "\"} ", n, "\n");
  }
  Header(out, "resident_errors_total", "counter", "RPCs that failed, by method and code.");
  for (const auto& [key, n] : calls_) {
    if (key.second == "OK") continue;
    absl::StrAppend(&out, "resident_errors_total{method=\"", EscapeLabel(key.first), "\",code=\"",
                    key.second, "\"} ", n, "\n");
  }
  Header(out, "resident_request_duration_seconds", "histogram",
         "RPC latency from the call's start to its status, by method.");
  for (const auto& [method, h] : latency_) {
    RenderHistogram(out, "resident_request_duration_seconds", "method", EscapeLabel(method), h);
  }
  Header(out, "resident_run_phase_seconds", "histogram",
         "Where Run's time goes: queued (auth, decode, schedule), session (locks, quotas), plan, "
         "launch, sync (device), results (handles, inline data), reply (encode).");
  for (size_t i = 0; i < kRunPhases.size(); ++i) {
    RenderHistogram(out, "resident_run_phase_seconds", "phase", kRunPhases[i], run_phases_[i]);
  }
  return out;
}

}  // namespace resident

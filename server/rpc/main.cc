// resident-server: serves resident.v1.Resident until SIGINT/SIGTERM.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/byte_size.h"
#include "core/flags_util.h"
#include "core/log.h"
#include "server/device/device.h"
#include "server/rpc/server.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051", "address to listen on, HOST:PORT");
ABSL_FLAG(std::string, device, "auto",
          "auto (cuda:0, else cpu), all (every CUDA device, else cpu), or a comma-separated "
          "list of cpu and cuda:N; a repeated entry (cpu,cpu) is another device instance of "
          "the same hardware, with its own budget");
ABSL_FLAG(std::string, max_memory, "0",
          "device bytes the server may hold on EACH device (suffixes K, M, G, T); 0: all");
ABSL_FLAG(std::string, log_level, "info", "debug, info, warning or error");
ABSL_FLAG(absl::Duration, session_idle_timeout, absl::Minutes(30),
          "close sessions (and free their arrays) after this long unused");
ABSL_FLAG(int64_t, max_message_bytes, 64 << 20, "largest gRPC message, bytes");
ABSL_FLAG(int64_t, max_trip_count, int64_t{1} << 30,
          "largest trip count of a loop and max_trips of a while (a while that reaches its "
          "max_trips stops there and says so); larger is INVALID_ARGUMENT");
ABSL_FLAG(bool, loop_graphs, true,
          "run loops and whiles whose bodies a device graph can record as one after their "
          "first trip (CUDA: a conditional WHILE node, the condition tested on the device); "
          "false: trip by trip, the condition read back each trip");
ABSL_FLAG(int32_t, loop_graph_cache, 16,
          "executable loop graphs each session keeps after its loops end, so that a later loop "
          "of the same shape updates one with its new addresses instead of instantiating its "
          "own (CUDA: cudaGraphExecUpdate); they hold no arrays. 0: keep none");
ABSL_FLAG(int64_t, max_inline_bytes, 4 << 20,
          "largest total of results returned inline by one program, bytes");
ABSL_FLAG(int64_t, chunk_bytes, 4 << 20, "download chunk size, bytes");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(10),
          "how long in-flight calls may finish after SIGINT/SIGTERM; the process is gone by "
          "then whatever still runs");
ABSL_FLAG(std::string, auth_tokens, "",
          "tokens file: '<sha256-hex> <tenant> <user|admin>' per line "
          "(make entries with `resident token new`); empty: single-user mode");
ABSL_FLAG(std::string, tls_cert, "", "PEM server certificate chain (enables TLS)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA: require client certificates it signed (mutual TLS)");
ABSL_FLAG(bool, insecure, false,
          "allow a non-loopback --listen without both TLS and --auth-tokens");
ABSL_FLAG(std::string, quota_config, "",
          "per-tenant quotas file: lines 'default bytes=8G arrays=1000' and "
          "'tenant NAME bytes=32G arrays=5000'; none: unlimited");
ABSL_FLAG(std::string, data_dir, "",
          "directory where named arrays are kept across restarts; none: in memory only");
ABSL_FLAG(int32_t, max_concurrent_per_tenant, 2,
          "programs of one tenant that may run at once; the rest queue");
ABSL_FLAG(int64_t, max_queued_per_tenant, 1024,
          "calls of one tenant that may wait their turn; more are RESOURCE_EXHAUSTED");
ABSL_FLAG(std::string, max_queued_bytes_per_tenant, "256M",
          "request bytes of one tenant's calls waiting their turn (suffixes K, M, G); more are "
          "RESOURCE_EXHAUSTED");
ABSL_FLAG(std::string, max_queued_bytes, "1G",
          "request bytes of every tenant's calls waiting their turn (suffixes K, M, G)");
ABSL_FLAG(int32_t, max_extra_workers, 64,
          "workers started beyond the max(4, cores) program workers, so that a tenant with "
          "nothing running never waits behind others' long programs");
ABSL_FLAG(int64_t, max_sessions, 1024, "sessions open at once, every tenant together");
ABSL_FLAG(int64_t, max_sessions_per_tenant, 256, "sessions one tenant may have open at once");
ABSL_FLAG(int64_t, max_handles, int64_t{1} << 20,
          "array handles of every session together (each costs host memory)");
ABSL_FLAG(int64_t, max_handles_per_session, int64_t{1} << 17, "array handles one session may hold");
ABSL_FLAG(int64_t, max_handles_per_tenant, int64_t{1} << 18,
          "array handles one tenant may hold in all its sessions (a share of --max-handles)");
ABSL_FLAG(int64_t, max_names_per_tenant, int64_t{1} << 16, "named arrays one tenant may keep");
ABSL_FLAG(int64_t, max_transfers_per_tenant, 64,
          "uploads and downloads of one tenant in flight at once");
ABSL_FLAG(int64_t, max_regions_per_tenant, 64,
          "shared-memory regions (local data socket) one tenant may have mapped at once");
ABSL_FLAG(std::string, max_region_bytes_per_tenant, "16G",
          "bytes of one tenant's shared-memory regions, page-locked in the server (suffixes K, "
          "M, G)");
ABSL_FLAG(std::string, local_data_socket, "auto",
          "Unix socket path of the shared-memory data path for clients on this host; auto: "
          "$TMPDIR (or /tmp)/resident-PORT.sock; off: none");
ABSL_FLAG(std::string, local_data_socket_mode, "0660",
          "file mode (octal) of --local-data-socket: who on the host may connect (the token "
          "still authenticates each request)");
ABSL_FLAG(int32_t, max_local_data_connections, 256,
          "connections to --local-data-socket open at once");
ABSL_FLAG(int32_t, max_local_data_connections_per_tenant, 32,
          "--local-data-socket connections one tenant may hold open at once");
ABSL_FLAG(int32_t, max_unauthenticated_local_data_connections_per_uid, 32,
          "--local-data-socket connections of one peer uid (SO_PEERCRED) not yet authenticated, "
          "at once; more are closed at accept");
ABSL_FLAG(absl::Duration, local_data_first_request_timeout, absl::Seconds(10),
          "a --local-data-socket connection that makes no authenticated request this long after "
          "it connects is closed (one deadline for all its bytes, not one per read)");
ABSL_FLAG(std::string, metrics_listen, "",
          "HOST:PORT to serve Prometheus metrics on (GET /metrics); empty: off");
ABSL_FLAG(std::string, health_listen, "",
          "HOST:PORT of a plaintext listener serving only grpc.health.v1.Health/Check "
          "(for kubelet gRPC probes); empty: off");

namespace {

// A call stuck in a routine that cannot be interrupted (a library call that
// never returns) would keep a drain waiting forever: the process leaves
// after `drain` with `code` whatever still runs.
void ExitAfter(absl::Duration drain, int code) {
  std::thread([drain, code] {
    absl::SleepFor(drain);
    RESIDENT_LOG(kError, "work still running at the end of the drain time (",
                 absl::FormatDuration(drain), "): exiting without it");
    resident::FlushLog();
    std::_Exit(code);
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  resident::PrepareHostLibraries(argv);  // may execute this program again, once
  absl::SetProgramUsageMessage(
      "Keeps arrays resident on a device and runs array programs for clients.\n"
      "  resident-server [--listen HOST:PORT] [--device auto|all|cpu|cuda:N[,...]] "
      "[--max-memory BYTES] [--log-level LEVEL]");
  std::vector<std::string> flag_storage;
  resident::DashesToUnderscores(argc, argv, flag_storage);
  absl::ParseCommandLine(argc, argv);

  resident::LogLevel level;
  if (!resident::ParseLogLevel(absl::GetFlag(FLAGS_log_level), &level)) {
    std::fprintf(stderr, "unknown --log-level '%s'\n", absl::GetFlag(FLAGS_log_level).c_str());
    return 2;
  }
  resident::SetLogLevel(level);

  resident::ServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.device = absl::GetFlag(FLAGS_device);
  if (!resident::ParseByteSize(absl::GetFlag(FLAGS_max_memory), &options.max_memory_bytes)) {
    std::fprintf(stderr, "bad --max-memory '%s'\n", absl::GetFlag(FLAGS_max_memory).c_str());
    return 2;
  }
  options.session_idle_timeout = absl::GetFlag(FLAGS_session_idle_timeout);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.limits.max_inline_bytes = absl::GetFlag(FLAGS_max_inline_bytes);
  options.limits.max_trip_count = absl::GetFlag(FLAGS_max_trip_count);
  if (options.limits.max_trip_count < 0) {
    std::fprintf(stderr, "--max-trip-count must not be negative\n");
    return 2;
  }
  options.limits.loop_graphs = absl::GetFlag(FLAGS_loop_graphs);
  options.loop_graph_cache = absl::GetFlag(FLAGS_loop_graph_cache);
  options.chunk_bytes = absl::GetFlag(FLAGS_chunk_bytes);
  options.auth_tokens_file = absl::GetFlag(FLAGS_auth_tokens);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  options.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  options.insecure = absl::GetFlag(FLAGS_insecure);
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.health_listen = absl::GetFlag(FLAGS_health_listen);
  if (const std::string quota_file = absl::GetFlag(FLAGS_quota_config); !quota_file.empty()) {
    absl::StatusOr<resident::QuotaConfig> quotas = resident::LoadQuotaConfig(quota_file);
    if (!quotas.ok()) {
      std::fprintf(stderr, "bad --quota-config: %s\n",
                   std::string(quotas.status().message()).c_str());
      return 2;
    }
    options.quotas = *std::move(quotas);
  }
  options.data_dir = absl::GetFlag(FLAGS_data_dir);
  options.max_concurrent_per_tenant = absl::GetFlag(FLAGS_max_concurrent_per_tenant);
  if (options.max_concurrent_per_tenant < 1) {
    std::fprintf(stderr, "--max-concurrent-per-tenant must be at least 1\n");
    return 2;
  }
  options.max_queued_per_tenant = absl::GetFlag(FLAGS_max_queued_per_tenant);
  options.table_limits.max_sessions = absl::GetFlag(FLAGS_max_sessions);
  options.table_limits.max_sessions_per_tenant = absl::GetFlag(FLAGS_max_sessions_per_tenant);
  options.table_limits.max_handles = absl::GetFlag(FLAGS_max_handles);
  options.table_limits.max_handles_per_session = absl::GetFlag(FLAGS_max_handles_per_session);
  options.table_limits.max_handles_per_tenant = absl::GetFlag(FLAGS_max_handles_per_tenant);
  if (!resident::ParseByteSize(absl::GetFlag(FLAGS_max_queued_bytes_per_tenant),
                               &options.max_queued_bytes_per_tenant) ||
      !resident::ParseByteSize(absl::GetFlag(FLAGS_max_queued_bytes), &options.max_queued_bytes) ||
      options.max_queued_bytes_per_tenant < 1 || options.max_queued_bytes < 1) {
    std::fprintf(stderr, "bad --max-queued-bytes-per-tenant or --max-queued-bytes\n");
    return 2;
  }
  options.max_extra_workers = absl::GetFlag(FLAGS_max_extra_workers);
  if (options.max_extra_workers < 0) {
    std::fprintf(stderr, "--max-extra-workers must not be negative\n");
    return 2;
  }
  options.table_limits.max_names_per_tenant = absl::GetFlag(FLAGS_max_names_per_tenant);
  options.table_limits.max_transfers_per_tenant = absl::GetFlag(FLAGS_max_transfers_per_tenant);
  options.table_limits.max_regions_per_tenant = absl::GetFlag(FLAGS_max_regions_per_tenant);
  options.local_data_socket = absl::GetFlag(FLAGS_local_data_socket);
  options.max_local_data_connections = absl::GetFlag(FLAGS_max_local_data_connections);
  options.max_local_data_connections_per_tenant =
      absl::GetFlag(FLAGS_max_local_data_connections_per_tenant);
  options.max_unauthenticated_local_data_connections_per_uid =
      absl::GetFlag(FLAGS_max_unauthenticated_local_data_connections_per_uid);
  options.local_data_first_request_timeout_ms = static_cast<int>(std::clamp<int64_t>(
      absl::ToInt64Milliseconds(absl::GetFlag(FLAGS_local_data_first_request_timeout)), 1,
      int64_t{1} << 30));
  {
    const std::string mode = absl::GetFlag(FLAGS_local_data_socket_mode);
    char* end = nullptr;
    const long m = std::strtol(mode.c_str(), &end, 8);
    if (mode.empty() || *end != '\0' || m < 0 || m > 0777) {
      std::fprintf(stderr, "--local-data-socket-mode must be an octal file mode such as 0660\n");
      return 2;
    }
    options.local_data_socket_mode = static_cast<int>(m);
  }
  if (!resident::ParseByteSize(absl::GetFlag(FLAGS_max_region_bytes_per_tenant),
                               &options.table_limits.max_region_bytes_per_tenant) ||
      options.table_limits.max_region_bytes_per_tenant < 1 ||
      options.table_limits.max_regions_per_tenant < 1 || options.max_local_data_connections < 1 ||
      options.max_local_data_connections_per_tenant < 1 ||
      options.max_unauthenticated_local_data_connections_per_uid < 1) {
    std::fprintf(stderr,
                 "--max-regions-per-tenant, --max-region-bytes-per-tenant, "
                 "--max-local-data-connections, --max-local-data-connections-per-tenant and "
                 "--max-unauthenticated-local-data-connections-per-uid must be at least 1\n");
    return 2;
  }
  if (options.max_queued_per_tenant < 1 || options.table_limits.max_sessions < 1 ||
      options.table_limits.max_sessions_per_tenant < 1 || options.table_limits.max_handles < 1 ||
      options.table_limits.max_handles_per_session < 1 ||
      options.table_limits.max_handles_per_tenant < 1 ||
      options.table_limits.max_names_per_tenant < 1 ||
      options.table_limits.max_transfers_per_tenant < 1) {
    std::fprintf(stderr,
                 "the --max-* limits of queues, sessions, handles, names and "
                 "transfers must be at least 1\n");
    return 2;
  }
  if (options.chunk_bytes <= 0 || options.chunk_bytes > options.max_message_bytes / 2) {
    std::fprintf(stderr,
                 "--chunk-bytes must be positive and at most half of --max-message-bytes\n");
    return 2;
  }

  // Signals are taken by sigwait in this thread; every thread started from
  // here on inherits the mask. A poisoned device raises SIGUSR1 to get here.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  options.on_fatal = [] { kill(getpid(), SIGUSR1); };

  auto server = resident::Server::Start(options);
  if (!server.ok()) {
    RESIDENT_LOG(kError, "cannot start: ", server.status().ToString());
    return 1;
  }
  int sig = 0;
  sigwait(&signals, &sig);
  if (sig == SIGUSR1) {
    // In-flight calls already fail with UNAVAILABLE; a supervisor restarts us.
    ExitAfter(absl::Seconds(2), 3);
    (*server)->Shutdown(absl::Seconds(1));
    RESIDENT_LOG(kError, "exiting after an unrecoverable device error");
    resident::FlushLog();
    std::_Exit(3);
  }
  const absl::Duration grace = absl::GetFlag(FLAGS_shutdown_grace);
  RESIDENT_LOG(kInfo, "signal ", sig, ": draining for up to ", absl::FormatDuration(grace));
  // The calls get the drain time less a teardown allowance, so a clean
  // stop is never cut short.
  ExitAfter(grace, 1);
  const absl::Duration teardown = std::min(absl::Seconds(1), grace / 4);
  (*server)->Shutdown(grace - teardown);
  RESIDENT_LOG(kInfo, "stopped");
  return 0;
}

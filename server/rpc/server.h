// The Resident gRPC server: options plus Start(), as tensorstore's servers.
//
//   ServerOptions options;
//   options.listen = "127.0.0.1:0";
//   ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Start(options));
//   ... connect to absl::StrCat("127.0.0.1:", server->port()) ...
//   server->Shutdown(absl::Seconds(5));
#ifndef RESIDENT_SERVER_RPC_SERVER_H_
#define RESIDENT_SERVER_RPC_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/program/planner.h"
#include "server/session/quota.h"
#include "server/session/session_manager.h"

namespace resident {

class Device;
class DeviceSet;
class SessionManager;

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";  // port 0 picks a free one
  // auto | all | a comma-separated list of cpu and cuda:N (device_set.h);
  // a repeated entry is another Device instance of the same hardware.
  std::string device = "auto";
  int64_t max_memory_bytes = 0;  // per device; 0: each device's total
  absl::Duration session_idle_timeout = absl::Minutes(30);
  int64_t max_message_bytes = 64 << 20;  // per gRPC message, both ways
  int64_t chunk_bytes = 4 << 20;         // download chunk size
  int worker_threads = 0;                // programs running at once; 0: auto
  int max_concurrent_per_tenant = 2;     // programs of one tenant running at once
  int64_t max_queued_per_tenant = 1024;  // calls of one tenant waiting their turn
  // Request bytes of calls waiting their turn: one tenant's, and everyone's.
  int64_t max_queued_bytes_per_tenant = int64_t{256} << 20;
  int64_t max_queued_bytes = int64_t{1} << 30;
  // Workers started beyond worker_threads for tenants with nothing running.
  int max_extra_workers = 64;
  TableLimits table_limits;  // sessions and handles, server-wide
  ProgramLimits limits;
  // Executable loop graphs each session's stream keeps for later loops of
  // the same shape (Backend::SetLoopGraphCache); 0: none.
  int loop_graph_cache = 16;
  QuotaConfig quotas;    // per-tenant bytes and arrays
  std::string data_dir;  // named arrays persist here; empty: memory only
  // Called (once) when the device is poisoned and the process must exit.
  std::function<void()> on_fatal;

  // --- Identity and transport security ---
  // Tokens file (`<sha256-hex> <tenant> <user|admin>` per line); empty:
  // single-user mode, every caller is tenant "default" with the admin role.
  std::string auth_tokens_file;
  std::string tls_cert_file;       // PEM server certificate (chain); with tls_key_file
  std::string tls_key_file;        // PEM private key
  std::string tls_client_ca_file;  // PEM CA: require and verify client certificates
  // Allow a non-loopback `listen` without both TLS and tokens.
  bool insecure = false;
  // HOST:PORT for Prometheus metrics over HTTP (port 0 picks one); empty: off.
  std::string metrics_listen;
  // HOST:PORT for a plaintext listener serving only grpc.health.v1.Health
  // (for kubelet's native gRPC probes; port 0 picks one); empty: off.
  std::string health_listen;
  // The local data path for clients on this host (local_data_socket.h): a
  // Unix socket's path; "auto" for $TMPDIR (or /tmp)/resident-<port>.sock
  // (PATH.data beside a unix:PATH listen address); empty or "off": none.
  std::string local_data_socket = "auto";
  int local_data_socket_mode = 0660;  // its file mode: who may connect
  int max_local_data_connections = 256;
  int max_local_data_connections_per_tenant = 32;
  // Local data connections of one peer uid not yet authenticated, at once.
  int max_unauthenticated_local_data_connections_per_uid = 32;
  // A local data connection without an authenticated request this long
  // after its accept closes (one deadline, however it spaces its bytes).
  int local_data_first_request_timeout_ms = 10000;
};

// True for 127.0.0.0/8, ::1, localhost and unix: addresses.
bool IsLoopbackAddress(const std::string& listen);

class Server {
 public:
  // Opens the device, binds, and starts serving. UNAVAILABLE if the
  // address cannot be bound, INVALID_ARGUMENT for bad options.
  static absl::StatusOr<std::unique_ptr<Server>> Start(ServerOptions options);
  ~Server();  // Shutdown(0) if still running

  int port() const;
  int metrics_port() const;               // 0 without metrics_listen
  int health_port() const;                // 0 without health_listen
  std::string local_data_socket() const;  // its path; empty when off
  std::string device_name() const;        // the first device's
  Device& device();                       // the first device
  DeviceSet& devices();
  SessionManager& sessions();

  // Stops accepting calls, lets in-flight calls finish until `grace` has
  // passed, then cancels the rest. Health turns NOT_SERVING first.
  void Shutdown(absl::Duration grace);
  // Marks health NOT_SERVING (device poisoned) without stopping.
  void SetNotServing();

  class Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_SERVER_H_

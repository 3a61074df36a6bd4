// The local data path: a Unix socket beside the gRPC port over which
// clients on the server's host register shared-memory regions (memfds
// passed as SCM_RIGHTS file descriptors), so that RegionUpload and
// RegionDownload move array bytes by DMA with none on the network.
//
// Frames are a 4-byte little-endian length and a LocalDataRequest (a
// response frame per request). A connection is authenticated per request
// with the gRPC bearer token, as a call would be, and names its session;
// the regions it registers are unmapped when it closes (the client died or
// is done), when their session ends, or when released. The socket's file
// mode limits who may connect at all.
//
// What a connection can hold is bounded before it authenticates: one
// deadline from accept to its first successful authenticated request
// (first_request_timeout_ms), at most one descriptor per frame (a register's
// memfd; a second closes them all and the connection as soon as it arrives,
// before the frame is complete), and a cap on unauthenticated connections
// per peer uid, beside the caps in all and per tenant.
//
//   ASSIGN_OR_RETURN(auto local, LocalDataSocket::Start(options, sessions, auth));
//   ... hand local->path() to clients in OpenSessionResponse ...
#ifndef RESIDENT_SERVER_RPC_LOCAL_DATA_SOCKET_H_
#define RESIDENT_SERVER_RPC_LOCAL_DATA_SOCKET_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "server/rpc/auth.h"
#include "server/session/session_manager.h"

namespace resident {

struct LocalDataOptions {
  std::string path;           // the socket's path; a stale socket there is replaced
  mode_t mode = 0660;         // its file mode: who on the host may connect
  int max_connections = 256;  // at once; more are closed at accept
  // Held by one tenant at once: a connection belongs to the tenant of its
  // first authenticated request; one more is refused (RESOURCE_EXHAUSTED) and
  // closed, so one tenant cannot take every slot.
  int max_connections_per_tenant = 32;
  // Connections not yet authenticated (no tenant yet) of one peer uid
  // (SO_PEERCRED) at once; more are closed at accept, so one local user
  // cannot fill max_connections with strangers.
  int max_unauthenticated_connections_per_uid = 32;
  // A connection that has not made one successful authenticated request
  // this long after its accept is closed, however it spaces its bytes: one
  // deadline for every read and answer until then, not one per read.
  int first_request_timeout_ms = 10000;
};

class LocalDataSocket {
 public:
  // Binds and listens; UNAVAILABLE if the path cannot be bound,
  // INVALID_ARGUMENT if something that is not a socket is there.
  static absl::StatusOr<std::unique_ptr<LocalDataSocket>> Start(const LocalDataOptions& options,
                                                                SessionManager& sessions,
                                                                const Authenticator& auth);
  // Stops accepting, closes every connection (their regions go once no
  // transfer uses them) and removes the socket file.
  ~LocalDataSocket();
  LocalDataSocket(const LocalDataSocket&) = delete;
  LocalDataSocket& operator=(const LocalDataSocket&) = delete;

  const std::string& path() const { return options_.path; }
  int connections() const;

 private:
  struct Connection {
    uint64_t owner;
    uid_t uid;  // the peer's (SO_PEERCRED)
    // The first-request deadline counts from here.
    std::chrono::steady_clock::time_point accepted;
    std::string tenant;  // set by its first authenticated request (mu_ held)
    std::mutex mu;       // guards fd: Serve closes it, Stop shuts it down
    int fd;              // -1 once closed
    std::thread thread;
    std::atomic<bool> done{false};
  };
  LocalDataSocket(const LocalDataOptions& options, SessionManager& sessions,
                  const Authenticator& auth, int listen_fd)
      : options_(options), sessions_(sessions), auth_(auth), listen_fd_(listen_fd) {}
  void AcceptLoop();
  void Serve(Connection* c);
  void ReapDone();  // joins finished connections (mu_ held)
  // Gives c to tenant on its first authenticated request: RESOURCE_EXHAUSTED
  // past the tenant's cap, PERMISSION_DENIED if c belongs to another tenant.
  absl::Status Claim(Connection* c, const std::string& tenant);

  const LocalDataOptions options_;
  SessionManager& sessions_;
  const Authenticator& auth_;
  const int listen_fd_;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> connections_;
  uint64_t next_owner_ = 1;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_LOCAL_DATA_SOCKET_H_

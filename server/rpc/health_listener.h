// A second, plaintext listener that serves grpc.health.v1.Health/Check and
// nothing else: no Resident or Admin services, no reflection. Kubelet's
// native gRPC probes speak plaintext only, and the serving port is TLS.
//
//   ASSIGN_OR_RETURN(auto health, HealthListener::Start("0.0.0.0:8081", [&] { return up; }));
//   ... health->port() ...
#ifndef RESIDENT_SERVER_RPC_HEALTH_LISTENER_H_
#define RESIDENT_SERVER_RPC_HEALTH_LISTENER_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace grpc {
class Server;
}

namespace resident {

class HealthListener {
 public:
  // Binds `listen` (port 0 picks one) and answers Check with SERVING while
  // `serving()` is true, else NOT_SERVING. UNAVAILABLE if it cannot bind.
  static absl::StatusOr<std::unique_ptr<HealthListener>> Start(const std::string& listen,
                                                               std::function<bool()> serving);
  ~HealthListener();  // stops at once (a Check is answered in microseconds)

  int port() const { return port_; }

  class Service;

 private:
  HealthListener() = default;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_HEALTH_LISTENER_H_

// `resident health`: the server's standard gRPC health check
// (grpc.health.v1.Health/Check), for a container HEALTHCHECK or an exec
// probe. The runtime image has no grpc_health_probe (not in Debian) and no
// Python, but it has this CLI.
#ifndef RESIDENT_CLIENT_CLI_HEALTH_H_
#define RESIDENT_CLIENT_CLI_HEALTH_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client.h"

namespace resident::cli {

struct HealthOptions {
  std::string server;                // HOST:PORT
  client::ClientOptions connection;  // TLS files (the health service needs no token)
  std::string tls_server_name;       // name to verify in the server's certificate
  std::string service;               // empty: the whole server
  absl::Duration timeout = absl::Seconds(5);
};

// The serving status the server reports: "SERVING", "NOT_SERVING",
// "UNKNOWN" or "SERVICE_UNKNOWN"; an error when the call itself fails
// (unreachable, TLS mismatch, deadline).
absl::StatusOr<std::string> CheckHealth(const HealthOptions& options);

}  // namespace resident::cli

#endif  // RESIDENT_CLIENT_CLI_HEALTH_H_

// The credentials a client's options ask for: insecure without TLS files,
// else TLS with the CA and (together or not at all) a certificate and key.
// Shared by the client library and the CLI's health check.
#ifndef RESIDENT_CLIENT_CHANNEL_H_
#define RESIDENT_CLIENT_CHANNEL_H_

#include <grpcpp/security/credentials.h>

#include <memory>

#include "absl/status/statusor.h"
#include "client/client.h"

namespace resident::client {

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentials(
    const ClientOptions& o);

}  // namespace resident::client

#endif  // RESIDENT_CLIENT_CHANNEL_H_

// The one place absl::Status becomes grpc::Status.
#ifndef RESIDENT_SERVER_RPC_STATUS_UTIL_H_
#define RESIDENT_SERVER_RPC_STATUS_UTIL_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace resident {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_STATUS_UTIL_H_

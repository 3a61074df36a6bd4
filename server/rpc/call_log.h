// One log line and one metrics record per RPC, from a gRPC server
// interceptor, so every method (including ones added later, health and
// reflection) is covered without each handler remembering to log.
//
// The line names a random 64-bit request id (also sent back to the client as
// `x-request-id` trailing metadata), the method, the tenant, the outcome
// code and the duration; for a failure, the message. Never the token.
#ifndef RESIDENT_SERVER_RPC_CALL_LOG_H_
#define RESIDENT_SERVER_RPC_CALL_LOG_H_

#include <grpcpp/support/server_interceptor.h>

#include <memory>

#include "server/rpc/metrics.h"

namespace resident {

class CallLogFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // Must outlive the server the factory is installed on. The tenant in the
  // line is the one the handler authenticated (kTenantTrailer), so the
  // token is checked once per call.
  explicit CallLogFactory(Metrics& metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  Metrics& metrics_;
};

// A fresh random request id: 16 hex digits.
std::string NewRequestId();

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_CALL_LOG_H_

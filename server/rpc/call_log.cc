#include "server/rpc/call_log.h"

#include <grpcpp/server_context.h>

#include <chrono>
#include <random>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "core/log.h"
#include "server/rpc/raw_call.h"
#include "server/rpc/status_util.h"

namespace resident {
namespace {

using grpc::experimental::InterceptionHookPoints;

class CallLog final : public grpc::experimental::Interceptor {
 public:
  CallLog(grpc::experimental::ServerRpcInfo* info, Metrics& metrics)
      : metrics_(metrics),
        method_(info->method()),
        start_(std::chrono::steady_clock::now()),
        id_(NewRequestId()) {}

  ~CallLog() override {
    // A call torn down without a status (server shutdown) still gets its line.
    Record(grpc::Status(grpc::StatusCode::CANCELLED, "call ended without a status"));
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      auto* trailers = methods->GetSendTrailingMetadata();
      // The handler authenticated the call and left the tenant here.
      if (auto it = trailers->find(kTenantTrailer); it != trailers->end()) {
        tenant_ = it->second;
        trailers->erase(it);
      }
      trailers->emplace("x-request-id", id_);
      Record(methods->GetSendStatus());
    }
    methods->Proceed();
  }

 private:
  void Record(const grpc::Status& status) {
    if (logged_) return;
    logged_ = true;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const absl::string_view method = method_;
    const auto code = static_cast<absl::StatusCode>(status.error_code());
    metrics_.RecordCall(method, code, seconds);
    const std::string tenant = tenant_.empty() ? "-" : tenant_;
    // Health probes and reflection are frequent and dull: debug level.
    const bool ours = absl::StartsWith(method, "/resident.");
    std::string line = absl::StrFormat("rpc id=%s method=%s tenant=%s code=%s ms=%.3f", id_, method,
                                       tenant, absl::StatusCodeToString(code), seconds * 1e3);
    if (!status.ok()) absl::StrAppend(&line, " error=\"", status.error_message(), "\"");
    if (ours && code == absl::StatusCode::kInternal) {
      RESIDENT_LOG(kError, line);
    } else if (ours) {
      RESIDENT_LOG(kInfo, line);
    } else {
      RESIDENT_LOG(kDebug, line);
    }
  }

  Metrics& metrics_;
  const std::string method_;
  const std::chrono::steady_clock::time_point start_;
  const std::string id_;
  std::string tenant_;  // from the handler; "-" in the line when unknown
  bool logged_ = false;
};

}  // namespace

std::string NewRequestId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return absl::StrFormat("%016x", rng());
}

grpc::experimental::Interceptor* CallLogFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new CallLog(info, metrics_);
}

}  // namespace resident

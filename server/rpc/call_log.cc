#include "server/rpc/call_log.h"

#include <grpcpp/server_context.h>

#include <chrono>
#include <random>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "server/base/log.h"
#include "server/rpc/status_util.h"

namespace resident {
namespace {

using grpc::experimental::InterceptionHookPoints;

class CallLog final : public grpc::experimental::Interceptor {
 public:
  CallLog(grpc::experimental::ServerRpcInfo* info, const Authenticator& auth,
          Metrics& metrics)
      : info_(info), auth_(auth), metrics_(metrics), method_(info->method()),
        start_(std::chrono::steady_clock::now()), id_(NewRequestId()) {}

  ~CallLog() override {
    // A call torn down without a status (server shutdown) still gets its
    // line; the context may be half gone by now, so no tenant.
    info_ = nullptr;
    Record(grpc::Status(grpc::StatusCode::CANCELLED, "call ended without a status"));
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      methods->GetSendTrailingMetadata()->emplace("x-request-id", id_);
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
    std::string tenant = "-";
    if (grpc::ServerContextBase* ctx = info_ ? info_->server_context() : nullptr;
        ctx != nullptr) {
      absl::StatusOr<Identity> who = auth_.Authenticate(ctx->client_metadata());
      if (who.ok()) tenant = who->tenant;
    }
    // Health probes and reflection are frequent and dull: debug level.
    const bool ours = absl::StartsWith(method, "/resident.");
    std::string line = absl::StrFormat("rpc id=%s method=%s tenant=%s code=%s ms=%.3f", id_,
                                       method, tenant, absl::StatusCodeToString(code),
                                       seconds * 1e3);
    if (!status.ok()) absl::StrAppend(&line, " error=\"", status.error_message(), "\"");
    if (ours && code == absl::StatusCode::kInternal) {
      RESIDENT_LOG(kError, line);
    } else if (ours) {
      RESIDENT_LOG(kInfo, line);
    } else {
      RESIDENT_LOG(kDebug, line);
    }
  }

  grpc::experimental::ServerRpcInfo* info_;
  const Authenticator& auth_;
  Metrics& metrics_;
  const std::string method_;
  const std::chrono::steady_clock::time_point start_;
  const std::string id_;
  bool logged_ = false;
};

}  // namespace

std::string NewRequestId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return absl::StrFormat("%016x", rng());
}

grpc::experimental::Interceptor* CallLogFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new CallLog(info, auth_, metrics_);
}

}  // namespace resident

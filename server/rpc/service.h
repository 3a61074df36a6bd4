// resident.v1.Resident on gRPC's callback API.
#ifndef RESIDENT_SERVER_RPC_SERVICE_H_
#define RESIDENT_SERVER_RPC_SERVICE_H_

#include <functional>

#include "resident/v1/resident.grpc.pb.h"
#include "server/rpc/auth.h"
#include "server/rpc/metrics.h"
#include "server/rpc/server.h"
#include "server/rpc/scheduler.h"
#include "server/session/session_manager.h"

namespace resident {

class ResidentService final : public v1::Resident::CallbackService {
 public:
  // `on_poisoned` runs when a call finds the device poisoned.
  // `auth` and `metrics` must outlive the service.
  ResidentService(SessionManager& sessions, Scheduler& scheduler,
                  const ServerOptions& options, std::function<void()> on_poisoned,
                  const Authenticator& auth, Metrics& metrics);

  grpc::ServerUnaryReactor* Describe(grpc::CallbackServerContext* ctx,
                                     const v1::DescribeRequest* req,
                                     v1::DescribeResponse* resp) override;
  grpc::ServerUnaryReactor* OpenSession(grpc::CallbackServerContext* ctx,
                                        const v1::OpenSessionRequest* req,
                                        v1::OpenSessionResponse* resp) override;
  grpc::ServerUnaryReactor* CloseSession(grpc::CallbackServerContext* ctx,
                                         const v1::CloseSessionRequest* req,
                                         v1::CloseSessionResponse* resp) override;
  grpc::ServerUnaryReactor* RenewSession(grpc::CallbackServerContext* ctx,
                                         const v1::RenewSessionRequest* req,
                                         v1::RenewSessionResponse* resp) override;
  grpc::ServerUnaryReactor* Run(grpc::CallbackServerContext* ctx,
                                const v1::RunRequest* req,
                                v1::RunResponse* resp) override;
  grpc::ServerReadReactor<v1::UploadRequest>* Upload(
      grpc::CallbackServerContext* ctx, v1::ArrayInfo* resp) override;
  grpc::ServerWriteReactor<v1::DownloadChunk>* Download(
      grpc::CallbackServerContext* ctx, const v1::DownloadRequest* req) override;
  grpc::ServerUnaryReactor* Release(grpc::CallbackServerContext* ctx,
                                    const v1::ReleaseRequest* req,
                                    v1::ReleaseResponse* resp) override;
  grpc::ServerUnaryReactor* List(grpc::CallbackServerContext* ctx,
                                 const v1::ListRequest* req,
                                 v1::ListResponse* resp) override;
  grpc::ServerUnaryReactor* Keep(grpc::CallbackServerContext* ctx,
                                 const v1::KeepRequest* req,
                                 v1::ArrayInfo* resp) override;
  grpc::ServerUnaryReactor* Attach(grpc::CallbackServerContext* ctx,
                                   const v1::AttachRequest* req,
                                   v1::ArrayInfo* resp) override;

  // Finishes `reactor` with `status`, first checking for a poisoned device.
  void Finish(grpc::ServerUnaryReactor* reactor, const absl::Status& status);
  // UNAVAILABLE once the device is poisoned; OK otherwise.
  absl::Status CheckDevice();
  // Notices device poisoning (the call's log line comes from CallLog).
  absl::Status Observe(const char* method, const absl::Status& status);

  // Every method calls this first: UNAUTHENTICATED for a missing or bad
  // token, OK for any tenant's valid one.
  absl::Status Authorize(const grpc::CallbackServerContext& ctx) const;
  // The tenant the call acts for; "" (a tenant that owns nothing) if the
  // call is not authenticated, which Authorize has refused already.
  std::string TenantOf(const grpc::CallbackServerContext& ctx) const;
  Metrics& metrics() { return metrics_; }

  SessionManager& sessions() { return sessions_; }
  const ServerOptions& options() const { return options_; }

 private:
  // Whether a Run is small enough (few elementwise/creation ops on at most
  // half a MiB each) to run on the gRPC thread when its tenant is idle.
  bool SmallProgram(const grpc::CallbackServerContext& ctx, const v1::RunRequest& req);

  SessionManager& sessions_;
  Scheduler& scheduler_;
  const ServerOptions& options_;
  std::function<void()> on_poisoned_;
  const Authenticator& auth_;
  Metrics& metrics_;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_SERVICE_H_

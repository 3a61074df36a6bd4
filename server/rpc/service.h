// resident.v1.Resident on gRPC's callback API.
//
// Every method is registered raw (ByteBuffer in, ByteBuffer out) and parses
// its own request (raw_call.h), so a request that does not parse is
// INVALID_ARGUMENT rather than gRPC's generated UNIMPLEMENTED. Each call is
// authenticated once, when it starts.
#ifndef RESIDENT_SERVER_RPC_SERVICE_H_
#define RESIDENT_SERVER_RPC_SERVICE_H_

#include <functional>
#include <mutex>
#include <string>

#include "resident/v1/resident.grpc.pb.h"
#include "server/rpc/auth.h"
#include "server/rpc/metrics.h"
#include "server/rpc/raw_call.h"
#include "server/rpc/scheduler.h"
#include "server/rpc/server.h"
#include "server/session/session_manager.h"

namespace resident {

// Every method of v1::Resident, raw.
using RawResidentService =
    v1::Resident::WithRawCallbackMethod_Describe<v1::Resident::WithRawCallbackMethod_OpenSession<
        v1::Resident::WithRawCallbackMethod_CloseSession<
            v1::Resident::WithRawCallbackMethod_RenewSession<
                v1::Resident::WithRawCallbackMethod_Run<v1::Resident::WithRawCallbackMethod_Upload<
                    v1::Resident::WithRawCallbackMethod_Download<
                        v1::Resident::WithRawCallbackMethod_Release<
                            v1::Resident::WithRawCallbackMethod_List<
                                v1::Resident::WithRawCallbackMethod_Keep<
                                    v1::Resident::WithRawCallbackMethod_Attach<
                                        v1::Resident::WithRawCallbackMethod_Copy<
                                            v1::Resident::WithRawCallbackMethod_RegionUpload<
                                                v1::Resident::WithRawCallbackMethod_RegionDownload<
                                                    v1::Resident::Service>>>>>>>>>>>>>>;

class ResidentService final : public RawResidentService {
 public:
  // `on_poisoned` runs when a call finds the device poisoned.
  // `auth` and `metrics` must outlive the service.
  ResidentService(SessionManager& sessions, Scheduler& scheduler, const ServerOptions& options,
                  std::function<void()> on_poisoned, const Authenticator& auth, Metrics& metrics);

  using Unary = grpc::ServerUnaryReactor;
  using Bytes = grpc::ByteBuffer;
  Unary* Describe(grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out) override;
  Unary* OpenSession(grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out) override;
  Unary* CloseSession(grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out) override;
  Unary* RenewSession(grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out) override;
  Unary* Run(grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out) override;
  Unary* Release(grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out) override;
  Unary* List(grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out) override;
  Unary* Keep(grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out) override;
  Unary* Attach(grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out) override;
  Unary* Copy(grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out) override;
  Unary* RegionUpload(grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out) override;
  Unary* RegionDownload(grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out) override;
  grpc::ServerReadReactor<Bytes>* Upload(grpc::CallbackServerContext* ctx, Bytes* out) override;
  grpc::ServerWriteReactor<Bytes>* Download(grpc::CallbackServerContext* ctx,
                                            const Bytes* in) override;

  // UNAVAILABLE once the device is poisoned; OK otherwise.
  absl::Status CheckDevice();
  // Passes `status` through, or UNAVAILABLE (and raises the alarm) once the
  // device is poisoned.
  absl::Status Observe(const absl::Status& status);

  Metrics& metrics() { return metrics_; }
  const Authenticator& auth() const { return auth_; }
  SessionManager& sessions() { return sessions_; }
  // The local data socket's path OpenSession hands out (empty: none).
  void set_local_data_socket(std::string path) {
    std::lock_guard<std::mutex> lock(local_data_mu_);
    local_data_socket_ = std::move(path);
  }
  const ServerOptions& options() const { return options_; }

 private:
  // A unary method answered on the calling gRPC thread: parse,
  // authenticate, check the device, `handle`, finish with what it returned.
  template <class Request, class Response>
  Unary* Serve(grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out,
               const std::function<absl::Status(UnaryCall<Request, Response>&)>& handle);

  // A RegionUpload or RegionDownload: `move` runs queued on the scheduler.
  template <class Request>
  Unary* ServeRegion(
      grpc::CallbackServerContext* ctx, const Bytes* in, Bytes* out,
      std::function<absl::StatusOr<ArrayDescription>(const std::string&, const Request&)> move);

  SessionManager& sessions_;
  Scheduler& scheduler_;
  const ServerOptions& options_;
  std::function<void()> on_poisoned_;
  const Authenticator& auth_;
  Metrics& metrics_;
  // IsSmallProgram's bounds, the smallest of the devices'.
  int64_t small_program_bytes_;
  int64_t small_program_work_;
  std::mutex local_data_mu_;
  std::string local_data_socket_;
};

// The session a request names; INVALID_ARGUMENT for none or a malformed id.
absl::StatusOr<HandleId> SessionOf(const std::string& bytes);

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_SERVICE_H_

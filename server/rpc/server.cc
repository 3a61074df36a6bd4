#include "server/rpc/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/base/log.h"
#include "server/base/status_macros.h"
#include "server/device/device.h"
#include "server/rpc/service.h"
#include "server/session/session_manager.h"

namespace resident {

class Server::Impl {
 public:
  explicit Impl(ServerOptions options) : options_(std::move(options)) {}
  ~Impl() { Shutdown(absl::ZeroDuration()); }

  absl::Status Start() {
    ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, CreateBackend(options_.device));
    if (options_.max_memory_bytes < 0) {
      return absl::InvalidArgumentError("--max-memory must not be negative");
    }
    device_ = std::make_unique<Device>(std::move(backend), options_.max_memory_bytes);
    SessionOptions so;
    so.idle_timeout = options_.session_idle_timeout;
    so.reap_interval = std::min(absl::Seconds(1), options_.session_idle_timeout / 4);
    so.limits = options_.limits;
    sessions_ = std::make_unique<SessionManager>(*device_, so);
    const int workers = options_.worker_threads > 0
                            ? options_.worker_threads
                            : std::max(4u, std::thread::hardware_concurrency());
    pool_ = std::make_unique<WorkPool>(workers);
    service_ = std::make_unique<ResidentService>(*sessions_, *pool_, options_,
                                                 [this] { OnPoisoned(); });

    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
    grpc::ServerBuilder builder;
    builder.AddListeningPort(options_.listen, grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(service_.get());
    builder.SetMaxReceiveMessageSize(static_cast<int>(options_.max_message_bytes));
    builder.SetMaxSendMessageSize(static_cast<int>(options_.max_message_bytes));
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || port_ == 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot listen on ", options_.listen));
    }
    server_->GetHealthCheckService()->SetServingStatus(true);
    RESIDENT_LOG(kInfo, "resident-server listening on ", options_.listen,
                 " (port ", port_, "), device ", device_->backend().name(), ": ",
                 device_->backend().description(), ", memory limit ",
                 device_->budget().limit(), " bytes");
    return absl::OkStatus();
  }

  void Shutdown(absl::Duration grace) {
    if (server_ == nullptr || stopped_.exchange(true)) return;
    server_->GetHealthCheckService()->SetServingStatus(false);
    server_->Shutdown(std::chrono::system_clock::now() +
                      absl::ToChronoMilliseconds(grace));
    server_->Wait();
    pool_.reset();  // after the server: queued programs finish their calls
  }

  void SetNotServing() {
    if (server_ != nullptr) server_->GetHealthCheckService()->SetServingStatus(false);
  }

  void OnPoisoned() {
    if (poisoned_.exchange(true)) return;
    RESIDENT_LOG(kError, "device ", device_->backend().name(),
                 " hit an unrecoverable error; NOT_SERVING, exiting for a restart");
    SetNotServing();
    if (options_.on_fatal) options_.on_fatal();
  }

  ServerOptions options_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<SessionManager> sessions_;
  std::unique_ptr<WorkPool> pool_;
  std::unique_ptr<ResidentService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> poisoned_{false};
};

absl::StatusOr<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  RETURN_IF_ERROR(impl->Start());
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;

int Server::port() const { return impl_->port_; }
std::string Server::device_name() const { return impl_->device_->backend().name(); }
Device& Server::device() { return *impl_->device_; }
SessionManager& Server::sessions() { return *impl_->sessions_; }
void Server::Shutdown(absl::Duration grace) { impl_->Shutdown(grace); }
void Server::SetNotServing() { impl_->SetNotServing(); }

}  // namespace resident

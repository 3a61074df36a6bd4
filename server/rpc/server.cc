#include "server/rpc/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <arpa/inet.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/log.h"
#include "core/status_macros.h"
#include "server/device/device.h"
#include "server/device/device_set.h"
#include "server/rpc/admin_service.h"
#include "server/rpc/auth.h"
#include "server/rpc/call_log.h"
#include "server/rpc/health_listener.h"
#include "server/rpc/local_data_socket.h"
#include "server/rpc/metrics.h"
#include "server/rpc/metrics_http.h"
#include "server/rpc/service.h"
#include "server/rpc/slice_pool.h"
#include "server/session/session_manager.h"

namespace resident {

class Server::Impl {
 public:
  explicit Impl(ServerOptions options) : options_(std::move(options)) {}
  ~Impl() { Shutdown(absl::ZeroDuration()); }

  absl::Status Start() {
    // Security first: a refused configuration opens no device.
    ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials, LoadSecurity());
    if (options_.max_memory_bytes < 0) {
      return absl::InvalidArgumentError("--max-memory must not be negative");
    }
    if (options_.loop_graph_cache < 0) {
      return absl::InvalidArgumentError("--loop-graph-cache must not be negative");
    }
    ASSIGN_OR_RETURN(devices_, CreateDeviceSet(options_.device, options_.max_memory_bytes));
    for (Device* d : devices_->all()) d->backend().SetLoopGraphCache(options_.loop_graph_cache);
    SessionOptions so;
    so.idle_timeout = options_.session_idle_timeout;
    so.reap_interval = std::min(absl::Seconds(1), options_.session_idle_timeout / 4);
    so.limits = options_.limits;
    so.quotas = options_.quotas;
    so.table_limits = options_.table_limits;
    so.trim_host_caches = TrimSlicePool;
    sessions_ = std::make_unique<SessionManager>(*devices_, so);
    if (!options_.data_dir.empty()) {
      RETURN_IF_ERROR(sessions_->EnableDataDir(options_.data_dir));
    }
    const int workers = options_.worker_threads > 0
                            ? options_.worker_threads
                            : std::max(4u, std::thread::hardware_concurrency());
    Scheduler::Options sched;
    sched.threads = workers;
    sched.max_concurrent_per_tenant = options_.max_concurrent_per_tenant;
    sched.max_queued_per_tenant = options_.max_queued_per_tenant;
    sched.max_queued_bytes_per_tenant = options_.max_queued_bytes_per_tenant;
    sched.max_queued_bytes = options_.max_queued_bytes;
    sched.max_extra_threads = options_.max_extra_workers;
    pool_ = std::make_unique<Scheduler>(sched);
    service_ = std::make_unique<ResidentService>(
        *sessions_, *pool_, options_, [this] { OnPoisoned(); }, auth_, metrics_);
    admin_ = std::make_unique<AdminService>(*sessions_, auth_);
    if (!options_.metrics_listen.empty()) {
      ASSIGN_OR_RETURN(metrics_http_, MetricsHttpServer::Start(options_.metrics_listen,
                                                               [this] { return RenderMetrics(); }));
    }

    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
    grpc::ServerBuilder builder;
    builder.AddListeningPort(options_.listen, credentials, &port_);
    builder.RegisterService(service_.get());
    builder.RegisterService(admin_.get());
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
        interceptors;
    interceptors.push_back(std::make_unique<CallLogFactory>(metrics_));
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
    builder.SetMaxReceiveMessageSize(static_cast<int>(options_.max_message_bytes));
    builder.SetMaxSendMessageSize(static_cast<int>(options_.max_message_bytes));
    // Find peers that vanished without closing their connection (a host
    // that died, a dropped network): their calls are cancelled and their
    // sessions expire instead of holding streams open forever.
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 60 * 1000);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20 * 1000);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || port_ == 0) {
      return absl::UnavailableError(absl::StrCat("cannot listen on ", options_.listen));
    }
    server_->GetHealthCheckService()->SetServingStatus(true);
    serving_ = true;
    if (!options_.health_listen.empty()) {
      ASSIGN_OR_RETURN(health_, HealthListener::Start(options_.health_listen,
                                                      [this] { return serving_.load(); }));
      RESIDENT_LOG(kInfo, "health (grpc.health.v1 Check only, plaintext) on ",
                   options_.health_listen, " (health port ", health_->port(), ")");
    }
    RETURN_IF_ERROR(StartLocalData());
    std::string devices;
    for (Device* d : devices_->all()) {
      // "device NAME: ..." per device, as scripts grep the log for it.
      absl::StrAppend(&devices, devices.empty() ? "" : ", ", "device ", d->name(), ": ",
                      d->backend().description(), ", memory limit ", d->budget().limit(), " bytes");
    }
    RESIDENT_LOG(kInfo, "resident-server listening on ", options_.listen, " (port ", port_, "), ",
                 devices_->size() > 1 ? absl::StrCat(devices_->size(), " devices: ") : "", devices,
                 "; ", security_summary_);
    return absl::OkStatus();
  }

  absl::Status StartLocalData() {
    std::string path = options_.local_data_socket;
    if (path.empty() || path == "off") return absl::OkStatus();
    if (path == "auto" && absl::StartsWith(options_.listen, "unix:")) {
      path = absl::StrCat(options_.listen.substr(5), ".data");  // beside the gRPC socket
    } else if (path == "auto") {
      const char* tmp = std::getenv("TMPDIR");
      path =
          absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/resident-", port_, ".sock");
    }
    LocalDataOptions local;
    local.path = path;
    local.mode = static_cast<mode_t>(options_.local_data_socket_mode);
    local.max_connections = options_.max_local_data_connections;
    local.max_connections_per_tenant = options_.max_local_data_connections_per_tenant;
    local.max_unauthenticated_connections_per_uid =
        options_.max_unauthenticated_local_data_connections_per_uid;
    local.first_request_timeout_ms = options_.local_data_first_request_timeout_ms;
    ASSIGN_OR_RETURN(local_data_, LocalDataSocket::Start(local, *sessions_, auth_));
    service_->set_local_data_socket(local_data_->path());
    RESIDENT_LOG(kInfo, "local data socket (shared-memory transfers) at ", local_data_->path());
    return absl::OkStatus();
  }

  // Reads the tokens file and TLS files, and refuses an exposed address
  // without both TLS and tokens unless --insecure.
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> LoadSecurity() {
    if (!options_.auth_tokens_file.empty()) {
      ASSIGN_OR_RETURN(auth_, Authenticator::FromFile(options_.auth_tokens_file));
    }
    const bool tls = !options_.tls_cert_file.empty() || !options_.tls_key_file.empty();
    if (tls && (options_.tls_cert_file.empty() || options_.tls_key_file.empty())) {
      return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
    }
    if (!options_.tls_client_ca_file.empty() && !tls) {
      return absl::InvalidArgumentError(
          "--tls-client-ca (mutual TLS) needs --tls-cert and --tls-key");
    }
    if (!IsLoopbackAddress(options_.listen) && !options_.insecure && !(tls && auth_.enabled())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "refusing to listen on ", options_.listen, ", which is not a loopback address, without ",
          !tls && !auth_.enabled() ? "TLS (--tls-cert/--tls-key) and tokens (--auth-tokens)"
          : !tls                   ? "TLS (--tls-cert/--tls-key)"
                                   : "tokens (--auth-tokens)",
          ": anyone who can reach it could read and overwrite every array. Add "
          "them, listen on 127.0.0.1, or pass --insecure on a trusted network"));
    }
    security_summary_ = absl::StrCat(
        auth_.enabled() ? absl::StrCat(auth_.size(), " tokens") : "single-user (no tokens)", ", ",
        tls ? (options_.tls_client_ca_file.empty() ? "TLS" : "mutual TLS") : "no TLS");
    if (!tls) return grpc::InsecureServerCredentials();
    grpc::SslServerCredentialsOptions ssl;
    grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
    ASSIGN_OR_RETURN(pair.private_key, ReadPem(options_.tls_key_file, "--tls-key"));
    ASSIGN_OR_RETURN(pair.cert_chain, ReadPem(options_.tls_cert_file, "--tls-cert"));
    ssl.pem_key_cert_pairs.push_back(std::move(pair));
    if (!options_.tls_client_ca_file.empty()) {
      ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadPem(options_.tls_client_ca_file, "--tls-client-ca"));
      ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    return grpc::SslServerCredentials(ssl);
  }

  static absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
    std::ifstream in(path);
    std::stringstream text;
    if (in) text << in.rdbuf();
    if (!in || text.str().find("-----BEGIN") == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " ", path, ": cannot read a PEM file there"));
    }
    return text.str();
  }

  std::string RenderMetrics() {
    MetricsGauges g;
    for (const SessionSnapshot& s : sessions_->Snapshot()) {
      auto it = std::find_if(g.tenants.begin(), g.tenants.end(),
                             [&](const auto& t) { return t.tenant == s.tenant; });
      if (it == g.tenants.end()) {
        g.tenants.push_back({s.tenant, 0, 0, 0});
        it = g.tenants.end() - 1;
      }
      ++it->sessions;
    }
    // Usage counts named arrays too, and a buffer behind two handles once.
    for (const auto& [tenant, usage] : sessions_->AllUsage()) {
      const std::string& name = tenant;  // a lambda cannot capture a binding in clang 14
      auto it = std::find_if(g.tenants.begin(), g.tenants.end(),
                             [&](const auto& t) { return t.tenant == name; });
      if (it == g.tenants.end()) {
        g.tenants.push_back({tenant, 0, 0, 0});
        it = g.tenants.end() - 1;
      }
      it->resident_bytes = usage.bytes;
      it->arrays = usage.arrays;
    }
    std::sort(g.tenants.begin(), g.tenants.end(),
              [](const auto& a, const auto& b) { return a.tenant < b.tenant; });
    for (Device* d : devices_->all()) {
      const MemoryInfo mem = d->backend().memory();
      MetricsGauges::DeviceGauges& dg = g.devices.emplace_back();
      dg.device = d->name();
      dg.total_bytes = mem.total;
      dg.free_bytes = mem.free;
      dg.used_bytes = d->budget().used();
      dg.cached_bytes = mem.cached;
      dg.limit_bytes = d->budget().limit();
      dg.allocations = d->allocations();
      dg.peer_copies = d->peer_copies();
      dg.peer_copy_bytes = d->peer_copy_bytes();
    }
    const TableStats st = sessions_->Stats();
    g.sessions = st.sessions;
    g.handles = st.handles;
    g.named_arrays = st.named_arrays;
    g.table_host_bytes = st.host_bytes;
    return metrics_.Render(g);
  }

  void Shutdown(absl::Duration grace) {
    if (server_ == nullptr || stopped_.exchange(true)) return;
    serving_ = false;
    server_->GetHealthCheckService()->SetServingStatus(false);
    server_->Shutdown(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(grace));
    server_->Wait();
    local_data_.reset();  // its connections end; their regions are unmapped
    health_.reset();
    pool_.reset();  // after the server: queued programs finish their calls
    metrics_http_.reset();
  }

  void SetNotServing() {
    serving_ = false;
    if (server_ != nullptr) server_->GetHealthCheckService()->SetServingStatus(false);
  }

  void OnPoisoned() {
    if (poisoned_.exchange(true)) return;
    const Device* d = devices_->FirstPoisoned();
    RESIDENT_LOG(kError, "device ", d != nullptr ? d->name() : "?",
                 " hit an unrecoverable error; NOT_SERVING, exiting for a restart");
    SetNotServing();
    if (options_.on_fatal) options_.on_fatal();
  }

  ServerOptions options_;
  // Before server_: the call-log interceptor and services use them until it is gone.
  Authenticator auth_ = Authenticator::SingleUser();
  Metrics metrics_;
  std::string security_summary_;
  std::unique_ptr<DeviceSet> devices_;
  std::unique_ptr<SessionManager> sessions_;
  std::unique_ptr<Scheduler> pool_;  // runs programs, fair across tenants
  std::unique_ptr<ResidentService> service_;
  std::unique_ptr<AdminService> admin_;
  std::unique_ptr<MetricsHttpServer> metrics_http_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::atomic<bool> serving_{false};  // what the health port answers
  std::unique_ptr<HealthListener> health_;
  std::unique_ptr<LocalDataSocket> local_data_;  // before sessions_ is gone
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
std::string Server::local_data_socket() const {
  return impl_->local_data_ ? impl_->local_data_->path() : "";
}
int Server::health_port() const { return impl_->health_ ? impl_->health_->port() : 0; }
int Server::metrics_port() const { return impl_->metrics_http_ ? impl_->metrics_http_->port() : 0; }

bool IsLoopbackAddress(const std::string& listen) {
  if (absl::StartsWith(listen, "unix:") || absl::StartsWith(listen, "unix-abstract:")) {
    return true;
  }
  std::string host = listen;
  if (!host.empty() && host.front() == '[') {  // [v6]:port
    host = host.substr(1, host.find(']') - 1);
  } else if (const size_t colon = host.rfind(':');
             colon != std::string::npos && host.find(':') == colon) {
    host.resize(colon);  // v4:port or name:port
  }
  if (host == "localhost" || host == "::1") return true;
  struct in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  return false;
}
std::string Server::device_name() const { return impl_->devices_->at(0).name(); }
Device& Server::device() { return impl_->devices_->at(0); }
DeviceSet& Server::devices() { return *impl_->devices_; }
SessionManager& Server::sessions() { return *impl_->sessions_; }
void Server::Shutdown(absl::Duration grace) { impl_->Shutdown(grace); }
void Server::SetNotServing() { impl_->SetNotServing(); }

}  // namespace resident

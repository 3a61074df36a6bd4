#include "server/rpc/metrics_http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/log.h"

namespace resident {
namespace {

// HOST:PORT as an IPv4 socket address; "localhost", "", "*" and "0.0.0.0"
// as expected.
absl::StatusOr<sockaddr_in> ParseAddress(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen '", listen, "' is not HOST:PORT"));
  }
  std::string host = listen.substr(0, colon);
  if (host == "localhost") host = "127.0.0.1";
  if (host.empty() || host == "*") host = "0.0.0.0";
  sockaddr_in addr;
  std::memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen '", listen, "': host must be an IPv4 address or localhost"));
  }
  return addr;
}

MHD_Result Reply(MHD_Connection* conn, unsigned code, const std::string& body, const char* type,
                 bool head) {
  MHD_Response* r = MHD_create_response_from_buffer(
      head ? 0 : body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (r == nullptr) return MHD_NO;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  const MHD_Result result = MHD_queue_response(conn, code, r);
  MHD_destroy_response(r);
  return result;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& listen, std::function<std::string()> render) {
  absl::StatusOr<sockaddr_in> addr = ParseAddress(listen);
  if (!addr.ok()) return addr.status();
  std::unique_ptr<MetricsHttpServer> server(new MetricsHttpServer());
  server->render_ = std::move(render);
  // One internal thread polls and answers; a scrape is small and cheap.
  server->daemon_ =
      MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, nullptr, nullptr,
                       reinterpret_cast<MHD_AccessHandlerCallback>(&MetricsHttpServer::Handle),
                       server.get(), MHD_OPTION_SOCK_ADDR, &*addr, MHD_OPTION_END);
  if (server->daemon_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", listen, " (address in use or invalid)"));
  }
  const MHD_DaemonInfo* info = MHD_get_daemon_info(server->daemon_, MHD_DAEMON_INFO_BIND_PORT);
  server->port_ = info != nullptr ? info->port : ntohs(addr->sin_port);
  RESIDENT_LOG(kInfo, "metrics on http://", listen.substr(0, listen.rfind(':')), ":", server->port_,
               "/metrics");
  return server;
}

MetricsHttpServer::~MetricsHttpServer() {
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
}

int MetricsHttpServer::Handle(void* self, MHD_Connection* conn, const char* url, const char* method,
                              const char*, const char*, size_t* upload_size, void** state) {
  // The first call per request only announces it; answer on the second.
  static int announced;
  if (*state == nullptr) {
    *state = &announced;
    return MHD_YES;
  }
  if (*upload_size != 0) {  // a body we do not want
    *upload_size = 0;
    return MHD_YES;
  }
  const bool get = std::strcmp(method, MHD_HTTP_METHOD_GET) == 0;
  const bool head = std::strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
  if (std::strcmp(url, "/metrics") != 0) {
    return Reply(conn, MHD_HTTP_NOT_FOUND, "not found; metrics are at /metrics\n", "text/plain",
                 head);
  }
  if (!get && !head) {
    return Reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n", "text/plain", false);
  }
  return Reply(conn, MHD_HTTP_OK, static_cast<MetricsHttpServer*>(self)->render_(),
               "text/plain; version=0.0.4; charset=utf-8", head);
}

}  // namespace resident

#include "server/rpc/metrics_http.h"

#include <civetweb.h>

#include <cstring>
#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/base/log.h"

namespace resident {
namespace {

int LogMessage(const struct mg_connection*, const char* message) {
  RESIDENT_LOG(kWarning, "metrics http: ", message);
  return 1;  // handled: civetweb prints nothing itself
}

// civetweb wants "HOST:PORT" as "HOST:PORT" for IPv4 and "[HOST]:PORT" for
// IPv6; "localhost" is not resolved by it.
absl::StatusOr<std::string> CivetAddress(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen '", listen, "' is not HOST:PORT"));
  }
  std::string host = listen.substr(0, colon);
  const std::string port = listen.substr(colon + 1);
  if (host == "localhost") host = "127.0.0.1";
  if (host.empty() || host == "0.0.0.0" || host == "*") return port;  // every IPv4 address
  if (host.front() == '[') return absl::StrCat(host, ":", port);
  if (host.find(':') != std::string::npos) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& listen, std::function<std::string()> render) {
  absl::StatusOr<std::string> address = CivetAddress(listen);
  if (!address.ok()) return address.status();
  static std::once_flag init;
  std::call_once(init, [] { mg_init_library(0); });

  std::unique_ptr<MetricsHttpServer> server(new MetricsHttpServer());
  server->render_ = std::move(render);
  struct mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof(callbacks));
  callbacks.log_message = LogMessage;
  const char* options[] = {"listening_ports", address->c_str(),
                           "num_threads", "2",
                           "enable_directory_listing", "no",
                           nullptr};
  server->ctx_ = mg_start(&callbacks, server.get(), options);
  if (server->ctx_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", listen, " (address in use or invalid)"));
  }
  // One handler for every path: civetweb's own 404 page (no document root)
  // crashes in Debian 12's 1.15, so unknown paths are answered here.
  mg_set_request_handler(server->ctx_, "/", &MetricsHttpServer::Handle, server.get());
  struct mg_server_port ports[4];
  std::memset(ports, 0, sizeof(ports));
  if (mg_get_server_ports(server->ctx_, 4, ports) > 0) server->port_ = ports[0].port;
  RESIDENT_LOG(kInfo, "metrics on http://", listen.substr(0, listen.rfind(':')), ":",
               server->port_, "/metrics");
  return server;
}

MetricsHttpServer::~MetricsHttpServer() {
  if (ctx_ != nullptr) mg_stop(ctx_);
}

int MetricsHttpServer::Handle(struct mg_connection* conn, void* self) {
  const struct mg_request_info* info = mg_get_request_info(conn);
  int code = 200;
  std::string body;
  if (info == nullptr || info->local_uri == nullptr ||
      std::strcmp(info->local_uri, "/metrics") != 0) {
    code = 404;
    body = "not found; metrics are at /metrics\n";
  } else if (std::strcmp(info->request_method, "GET") != 0 &&
             std::strcmp(info->request_method, "HEAD") != 0) {
    code = 405;
    body = "only GET\n";
  } else {
    body = static_cast<MetricsHttpServer*>(self)->render_();
  }
  const char* reason = code == 200 ? "OK" : code == 404 ? "Not Found" : "Method Not Allowed";
  const char* type = code == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain";
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\n"
            "Content-Type: %s\r\n"
            "Content-Length: %zu\r\n"
            "Connection: close\r\n\r\n",
            code, reason, type, body.size());
  if (std::strcmp(info != nullptr ? info->request_method : "", "HEAD") != 0) {
    mg_write(conn, body.data(), body.size());
  }
  return code;
}

}  // namespace resident

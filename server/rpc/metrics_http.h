// Serves GET /metrics over HTTP with GNU libmicrohttpd (Debian's), for
// Prometheus to scrape. The body comes from a callback run per request.
//
//   ASSIGN_OR_RETURN(auto http, MetricsHttpServer::Start("127.0.0.1:0", render));
//   ... scrape http://127.0.0.1:<http->port()>/metrics ...
#ifndef RESIDENT_SERVER_RPC_METRICS_HTTP_H_
#define RESIDENT_SERVER_RPC_METRICS_HTTP_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

struct MHD_Daemon;
struct MHD_Connection;

namespace resident {

class MetricsHttpServer {
 public:
  // Listens on HOST:PORT (port 0 picks one); UNAVAILABLE if it cannot bind,
  // INVALID_ARGUMENT for an address without a port.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const std::string& listen, std::function<std::string()> render);
  ~MetricsHttpServer();  // stops serving and joins the server's thread

  int port() const { return port_; }

 private:
  MetricsHttpServer() = default;
  static int Handle(void* self, MHD_Connection* conn, const char* url, const char* method,
                    const char* version, const char* upload_data, size_t* upload_size,
                    void** state);
  std::function<std::string()> render_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_METRICS_HTTP_H_

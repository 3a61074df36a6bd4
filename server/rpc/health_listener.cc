#include "server/rpc/health_listener.h"

#include <grpcpp/ext/health_check_service_server_builder_option.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/proto/split_message.h"

namespace resident {
namespace {

constexpr char kCheck[] = "/grpc.health.v1.Health/Check";
// The services the main port's health service knows ("" is the server).
constexpr const char* kKnown[] = {"", "resident.v1.Resident", "resident.v1.Admin"};
// A HealthCheckRequest is a service name; nothing larger is one.
constexpr int kMaxRequestBytes = 1024;

// Drops every builder plugin, so the process-wide reflection plugin does
// not add its service to this server.
class NoPlugins final : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments*) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    plugins->clear();
  }
};

// HealthCheckRequest.service (field 1, a string) from the wire: Debian
// ships no health.proto. False if the bytes are not a HealthCheckRequest.
bool ParseService(const std::string& bytes, std::string* service) {
  service->clear();
  return ForEachField(bytes,
                      [&](const WireField& f) {
                        if (f.number == 1 && f.wire_type == 2) service->assign(f.bytes);
                        return absl::OkStatus();
                      })
      .ok();
}

// One call: Check reads its request, answers and finishes; every other
// method (Watch, Resident, Admin, reflection) is UNIMPLEMENTED at once.
class Call final : public grpc::ServerGenericBidiReactor {
 public:
  Call(grpc::GenericCallbackServerContext* ctx, const std::function<bool()>& serving)
      : serving_(serving) {
    if (ctx->method() != kCheck) {
      Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                          absl::StrCat("the health port serves only ", kCheck)));
      return;
    }
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no HealthCheckRequest"));
      return;
    }
    std::vector<grpc::Slice> slices;
    std::string bytes, service;
    if (request_.Dump(&slices).ok()) {
      for (const grpc::Slice& s : slices) {
        bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
      }
    }
    if (!ParseService(bytes, &service)) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "the request could not be parsed as grpc.health.v1.HealthCheckRequest"));
      return;
    }
    bool known = false;
    for (const char* k : kKnown) known = known || service == k;
    if (!known) {
      Finish(grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown service"));
      return;
    }
    // HealthCheckResponse.status (field 1): SERVING = 1, NOT_SERVING = 2.
    const char answer[2] = {0x08, static_cast<char>(serving_() ? 1 : 2)};
    grpc::Slice slice(answer, sizeof answer);
    response_ = grpc::ByteBuffer(&slice, 1);
    StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
  }

  void OnDone() override { delete this; }

 private:
  const std::function<bool()>& serving_;
  grpc::ByteBuffer request_, response_;
};

}  // namespace

class HealthListener::Service final : public grpc::CallbackGenericService {
 public:
  explicit Service(std::function<bool()> serving) : serving_(std::move(serving)) {}
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    return new Call(ctx, serving_);
  }

 private:
  const std::function<bool()> serving_;
};

absl::StatusOr<std::unique_ptr<HealthListener>> HealthListener::Start(
    const std::string& listen, std::function<bool()> serving) {
  std::unique_ptr<HealthListener> h(new HealthListener());
  h->service_ = std::make_unique<Service>(std::move(serving));
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &h->port_);
  // Neither the default health service (ours answers) nor reflection.
  builder.SetOption(std::make_unique<grpc::HealthCheckServiceServerBuilderOption>(nullptr));
  builder.SetOption(std::make_unique<NoPlugins>());
  builder.RegisterCallbackGenericService(h->service_.get());
  builder.SetMaxReceiveMessageSize(kMaxRequestBytes);
  h->server_ = builder.BuildAndStart();
  if (h->server_ == nullptr || h->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", listen, " (--health-listen)"));
  }
  return h;
}

HealthListener::~HealthListener() {
  if (server_ == nullptr) return;
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
}

}  // namespace resident

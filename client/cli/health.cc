#include "client/cli/health.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <future>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/channel.h"
#include "core/proto/split_message.h"

namespace resident::cli {
namespace {

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const HealthOptions& o) {
  grpc::ChannelArguments args;
  if (!o.tls_server_name.empty()) args.SetSslTargetNameOverride(o.tls_server_name);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      client::ChannelCredentials(o.connection);
  if (!credentials.ok()) return credentials.status();
  return grpc::CreateCustomChannel(o.server, *credentials, args);
}

// grpc.health.v1 messages by hand (Debian ships no health.proto for
// clients): the request is field 1, a string; the response field 1, an enum.
std::string EncodeRequest(const std::string& service) {
  std::string out;
  if (service.empty()) return out;
  out.push_back(0x0a);
  AppendVarint(service.size(), &out);
  return out + service;
}

// Field 1 of a HealthCheckResponse; 0 (UNKNOWN) when absent, as proto3 says.
absl::StatusOr<int> DecodeStatus(const std::string& bytes) {
  int status = 0;
  const absl::Status s = ForEachField(bytes, [&](const WireField& f) {
    if (f.number == 1 && f.wire_type == 0) status = static_cast<int>(f.varint);
    return absl::OkStatus();
  });
  if (!s.ok()) return absl::DataLossError(absl::StrCat("malformed health response: ", s.message()));
  return status;
}

}  // namespace

absl::StatusOr<std::string> CheckHealth(const HealthOptions& o) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeChannel(o);
  if (!channel.ok()) return channel.status();
  grpc::GenericStub stub(*channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + o.timeout));
  const std::string request = EncodeRequest(o.service);
  grpc::Slice slice(request);
  grpc::ByteBuffer req(&slice, 1), resp;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &req, &resp,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  const grpc::Status s = done.get_future().get();
  if (!s.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                        absl::StrCat("health check of ", o.server, ": ", s.error_message()));
  }
  std::vector<grpc::Slice> slices;
  if (!resp.Dump(&slices).ok()) return absl::DataLossError("unreadable health response");
  std::string bytes;
  for (const grpc::Slice& sl : slices) {
    bytes.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
  }
  absl::StatusOr<int> status = DecodeStatus(bytes);
  if (!status.ok()) return status.status();
  switch (*status) {
    case 1:
      return std::string("SERVING");
    case 2:
      return std::string("NOT_SERVING");
    case 3:
      return std::string("SERVICE_UNKNOWN");
    default:
      return std::string("UNKNOWN");
  }
}

}  // namespace resident::cli

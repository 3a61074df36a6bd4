#include "client/cli/health.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <fstream>
#include <future>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"

namespace resident::cli {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, const char* what) {
  std::ifstream in(path);
  std::stringstream text;
  if (in) text << in.rdbuf();
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", what, " ", path));
  return text.str();
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const HealthOptions& o) {
  grpc::ChannelArguments args;
  if (!o.tls_server_name.empty()) args.SetSslTargetNameOverride(o.tls_server_name);
  const client::ClientOptions& c = o.connection;
  if (c.tls_ca_file.empty() && c.tls_cert_file.empty() && c.tls_key_file.empty()) {
    return grpc::CreateCustomChannel(o.server, grpc::InsecureChannelCredentials(), args);
  }
  if (c.tls_cert_file.empty() != c.tls_key_file.empty()) {
    return absl::InvalidArgumentError("a client certificate and its key go together");
  }
  grpc::SslCredentialsOptions ssl;
  if (!c.tls_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadFile(c.tls_ca_file, "CA file");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *std::move(ca);
  }
  if (!c.tls_cert_file.empty()) {
    absl::StatusOr<std::string> cert = ReadFile(c.tls_cert_file, "certificate");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadFile(c.tls_key_file, "key");
    if (!key.ok()) return key.status();
    ssl.pem_cert_chain = *std::move(cert);
    ssl.pem_private_key = *std::move(key);
  }
  return grpc::CreateCustomChannel(o.server, grpc::SslCredentials(ssl), args);
}

// grpc.health.v1 messages by hand (Debian ships no health.proto for
// clients): the request is field 1, a string; the response field 1, an enum.
std::string EncodeRequest(const std::string& service) {
  std::string out;
  if (service.empty()) return out;
  out.push_back(0x0a);
  for (size_t n = service.size();; n >>= 7) {  // varint length
    if (n < 0x80) {
      out.push_back(static_cast<char>(n));
      break;
    }
    out.push_back(static_cast<char>((n & 0x7f) | 0x80));
  }
  return out + service;
}

// Field 1 of a HealthCheckResponse; 0 (UNKNOWN) when absent, as proto3 says.
absl::StatusOr<int> DecodeStatus(const std::string& bytes) {
  size_t i = 0;
  auto varint = [&](uint64_t* v) {
    *v = 0;
    for (int shift = 0; i < bytes.size() && shift < 64; shift += 7) {
      const uint8_t b = static_cast<uint8_t>(bytes[i++]);
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  };
  int status = 0;
  while (i < bytes.size()) {
    uint64_t key = 0, v = 0;
    if (!varint(&key)) return absl::DataLossError("malformed health response");
    const int wire = static_cast<int>(key & 7);
    if (wire == 0) {
      if (!varint(&v)) return absl::DataLossError("malformed health response");
      if ((key >> 3) == 1) status = static_cast<int>(v);
    } else if (wire == 2) {
      if (!varint(&v) || v > bytes.size() - i) {
        return absl::DataLossError("malformed health response");
      }
      i += static_cast<size_t>(v);
    } else {
      return absl::DataLossError("unexpected field in health response");
    }
  }
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

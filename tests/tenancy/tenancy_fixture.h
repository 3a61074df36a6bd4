// Shared pieces of the tenancy suites: a scratch directory, a server with
// tokens for tenants "alice" and "bob", clients and raw stubs acting for
// either, and a loop program long enough to be stopped or to keep a worker
// busy.
#ifndef RESIDENT_TESTS_TENANCY_TENANCY_FIXTURE_H_
#define RESIDENT_TESTS_TENANCY_TENANCY_FIXTURE_H_

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/rpc/auth.h"
#include "tests/e2e/e2e_fixture.h"

namespace resident::tenancy {

using e2e::Target;

inline constexpr char kAliceToken[] = "alice-token-0123456789";
inline constexpr char kBobToken[] = "bob-token-9876543210";

// A fresh directory removed (with its contents) at the end.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = "/tmp/resident-tenancy-XXXXXX";
    path_ = mkdtemp(tmpl.data());
  }
  ~ScratchDir() { std::system(absl::StrCat("rm -rf '", path_, "'").c_str()); }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text) const {
    std::string p = absl::StrCat(path_, "/", name);
    std::ofstream(p) << text;
    return p;
  }

 private:
  std::string path_;
};

inline std::string TokenLine(const std::string& token, const std::string& tenant) {
  const auto h = Sha256(token);
  return absl::StrCat(HexEncode(h.data(), h.size()), " ", tenant, " user\n");
}

inline std::string TokensFile(const ScratchDir& dir) {
  return dir.Write("tokens", TokenLine(kAliceToken, "alice") + TokenLine(kBobToken, "bob"));
}

// A server on 127.0.0.1:0 where alice and bob authenticate with tokens.
inline std::unique_ptr<Server> StartTenantServer(const ScratchDir& dir, ServerOptions o = {}) {
  o.auth_tokens_file = TokensFile(dir);
  return e2e::StartServer(std::move(o));
}

inline std::unique_ptr<client::Client> ConnectAs(const Server& server, const std::string& token,
                                                 client::ClientOptions o = {}) {
  o.token = token;
  return e2e::Connect(server, o);
}

// A raw stub and per-call contexts carrying a tenant's token.
struct RawCaller {
  std::unique_ptr<v1::Resident::Stub> stub;
  std::string token;
  std::string session;

  static RawCaller Open(const Server& server, const std::string& token) {
    return OpenAt(Target(server), token);
  }
  // A session at `target` (e.g. a server process's), on a channel that
  // takes messages of up to 64 MiB (a download chunk is 4 MiB and a header).
  static RawCaller OpenAt(const std::string& target, const std::string& token) {
    RawCaller c;
    c.token = token;
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    c.stub = v1::Resident::NewStub(
        grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
    grpc::ClientContext ctx;
    c.Prepare(ctx);
    v1::OpenSessionResponse resp;
    grpc::Status s = c.stub->OpenSession(&ctx, v1::OpenSessionRequest(), &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    c.session = resp.session();
    return c;
  }
  void Prepare(grpc::ClientContext& ctx,
               std::chrono::milliseconds deadline = std::chrono::seconds(30)) const {
    ctx.AddMetadata("authorization", absl::StrCat("Bearer ", token));
    ctx.set_deadline(std::chrono::system_clock::now() + deadline);
  }
};

inline v1::Instruction Ins(const std::string& op, const std::vector<int64_t>& shape = {}) {
  v1::Instruction i;
  i.set_op(op);
  for (int64_t d : shape) i.add_shape(d);
  return i;
}

// Program: value 0 = ones(n) float64; value 1 = loop `trips` times x = x + x.
// Each trip is one op, so a deadline or a cancellation stops it promptly.
inline v1::Program DoublingProgram(int64_t n, int64_t trips) {
  v1::Program p;
  *p.add_instructions() = Ins("ones", {n});
  v1::Instruction loop = Ins("loop");
  loop.add_operands()->set_value(0);
  loop.set_trip_count(trips);
  v1::Program* body = loop.mutable_body();
  v1::Instruction* add = body->add_instructions();
  add->set_op("add");
  add->add_operands()->set_value(0);
  add->add_operands()->set_value(0);
  body->add_yields()->set_value(1);
  *p.add_instructions() = loop;
  return p;
}

}  // namespace resident::tenancy

#endif  // RESIDENT_TESTS_TENANCY_TENANCY_FIXTURE_H_

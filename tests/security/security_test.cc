// A real server in-process on 127.0.0.1:0, with tokens, TLS and metrics.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "client/client.h"
#include "client/client_core.h"
#include "core/handle_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "resident/v1/resident.grpc.pb.h"
#include "server/rpc/auth.h"
#include "server/rpc/server.h"
#include "tests/support/http_get.h"

namespace resident {
namespace {

using client::Client;
using client::ClientOptions;
using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;

constexpr char kAliceToken[] = "alice-secret-token-0123456789abcdef";
constexpr char kBobToken[] = "bob-secret-token-fedcba9876543210";
constexpr char kRootToken[] = "root-secret-token-00112233445566";

std::string HashHex(const std::string& token) {
  auto h = Sha256(token);
  return HexEncode(h.data(), h.size());
}

std::string TestDevice() {
  const char* d = std::getenv("RESIDENT_TEST_DEVICE");
  return d != nullptr && *d != '\0' ? d : "cpu";
}

// A scratch directory for the suite, removed at the end.
class Scratch {
 public:
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "resident-security-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
  }
  ~Scratch() { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::string path = (fs::path(dir_) / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::string Path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

 private:
  std::string dir_;
};

std::string TokensFile(const Scratch& s) {
  return s.Write("tokens", absl::StrCat("# lab tokens\n\n", HashHex(kAliceToken), " alice user\n",
                                        HashHex(kBobToken), "\tbob   user\n", HashHex(kRootToken),
                                        " root admin\n"));
}

ServerOptions BaseOptions() {
  ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.device = TestDevice();
  o.worker_threads = 2;
  return o;
}

std::unique_ptr<Server> Start(ServerOptions o) {
  absl::StatusOr<std::unique_ptr<Server>> s = Server::Start(std::move(o));
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

std::string Target(const Server& s) { return absl::StrCat("127.0.0.1:", s.port()); }

absl::StatusOr<std::unique_ptr<Client>> ConnectAs(const Server& s, const std::string& token,
                                                  ClientOptions o = {}) {
  o.token = token;
  o.keep_alive = false;
  return Client::Connect(Target(s), o);
}

// --- Tokens file -------------------------------------------------------------

TEST(TokensFileTest, ParsesCommentsBlankLinesAndRoles) {
  absl::StatusOr<Authenticator> a = Authenticator::FromText(
      absl::StrCat("# c\n\n  ", HashHex("t1"), " alice user\n", HashHex("t2"), " root admin\n"),
      "f");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->size(), 2u);
  std::multimap<grpc::string_ref, grpc::string_ref> md;
  const std::string bearer = "Bearer t2";
  md.emplace("authorization", bearer);
  absl::StatusOr<Identity> who = a->Authenticate(md);
  ASSERT_TRUE(who.ok()) << who.status();
  EXPECT_EQ(who->tenant, "root");
  EXPECT_EQ(who->role, Role::kAdmin);
}

TEST(TokensFileTest, MalformedLinesAreNamed) {
  const std::string h = HashHex("t");
  struct Case {
    std::string text;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"# ok\nnot-a-hash alice user\n", "f:2: the first field is not 64 hex digits"},
      {absl::StrCat(h, " alice\n"), "f:1: has 2 fields"},
      {absl::StrCat(h, " alice superuser\n"), "f:1: the role must be"},
      {absl::StrCat(h, " al/ice user\n"), "f:1: the tenant must be"},
      {absl::StrCat(h, " a user\n", h, " b user\n"), "f:2: repeats the hash"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Authenticator> a = Authenticator::FromText(c.text, "f");
    ASSERT_FALSE(a.ok()) << c.text;
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(a.status().message()), HasSubstr(c.want));
  }
}

TEST(TokensFileTest, ServerRefusesToStartWithABadFile) {
  Scratch s;
  ServerOptions o = BaseOptions();
  o.auth_tokens_file = s.Write("bad", absl::StrCat(HashHex("x"), " alice user\nbroken\n"));
  absl::StatusOr<std::unique_ptr<Server>> server = Server::Start(o);
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(std::string(server.status().message()),
              HasSubstr(absl::StrCat(o.auth_tokens_file, ":2:")));
  o.auth_tokens_file = s.Path("missing");
  EXPECT_FALSE(Server::Start(o).ok());
}

// --- Authentication, roles, isolation ----------------------------------------

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o = BaseOptions();
    o.auth_tokens_file = TokensFile(scratch_);
    server_ = Start(o);
    ASSERT_NE(server_, nullptr);
  }
  Scratch scratch_;
  std::unique_ptr<Server> server_;
};

TEST_F(AuthTest, MissingOrWrongTokenIsUnauthenticated) {
  for (const std::string& token :
       {std::string(), std::string("wrong"), std::string(kAliceToken) + "x"}) {
    absl::StatusOr<std::unique_ptr<Client>> c = ConnectAs(*server_, token);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), absl::StatusCode::kUnauthenticated) << c.status();
  }
  // Every method, through the raw stub, with a session id of a real session.
  absl::StatusOr<std::unique_ptr<Client>> alice = ConnectAs(*server_, kAliceToken);
  ASSERT_TRUE(alice.ok()) << alice.status();
  auto stub = v1::Resident::NewStub(
      grpc::CreateChannel(Target(*server_), grpc::InsecureChannelCredentials()));
  const std::string session = (*alice)->core()->session;
  auto bad = [](grpc::ClientContext& ctx) { ctx.AddMetadata("authorization", "Bearer nope"); };
  {
    grpc::ClientContext ctx;
    bad(ctx);
    v1::ListRequest req;
    req.set_session(session);
    v1::ListResponse resp;
    EXPECT_EQ(stub->List(&ctx, req, &resp).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext ctx;
    bad(ctx);
    v1::RunRequest req;
    req.set_session(session);
    v1::RunResponse resp;
    EXPECT_EQ(stub->Run(&ctx, req, &resp).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext ctx;  // no header at all
    v1::RenewSessionRequest req;
    req.set_session(session);
    v1::RenewSessionResponse resp;
    EXPECT_EQ(stub->RenewSession(&ctx, req, &resp).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext ctx;
    bad(ctx);
    v1::ArrayInfo info;
    auto w = stub->Upload(&ctx, &info);
    v1::UploadRequest m;
    m.set_session(session);
    m.set_dtype(v1::DTYPE_FLOAT64);
    m.add_shape(1);
    m.set_data(std::string(8, '\0'));
    w->Write(m);
    w->WritesDone();
    EXPECT_EQ(w->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext ctx;
    bad(ctx);
    v1::DownloadRequest req;
    req.set_session(session);
    req.set_handle(HandleId::Random().bytes());
    auto r = stub->Download(&ctx, req);
    v1::DownloadChunk chunk;
    while (r->Read(&chunk)) {
    }
    EXPECT_EQ(r->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext ctx;
    bad(ctx);
    v1::CloseSessionRequest req;
    req.set_session(session);
    v1::CloseSessionResponse resp;
    EXPECT_EQ(stub->CloseSession(&ctx, req, &resp).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  // Alice's session survived all of that.
  EXPECT_TRUE((*alice)->List().ok());
}

TEST_F(AuthTest, UserVersusAdmin) {
  absl::StatusOr<std::unique_ptr<Client>> alice = ConnectAs(*server_, kAliceToken);
  absl::StatusOr<std::unique_ptr<Client>> root = ConnectAs(*server_, kRootToken);
  ASSERT_TRUE(alice.ok() && root.ok());
  const std::vector<double> v(10, 1.5);
  absl::StatusOr<client::Array> a = (*alice)->Upload<double>({10}, v);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(a->Evaluate().ok());

  auto denied = (*alice)->ListSessions();
  EXPECT_EQ(denied.status().code(), absl::StatusCode::kPermissionDenied);
  auto denied_close = (*alice)->AdminCloseSession((*root)->session_hex());
  EXPECT_EQ(denied_close.status().code(), absl::StatusCode::kPermissionDenied);

  auto sessions = (*root)->ListSessions();
  ASSERT_TRUE(sessions.ok()) << sessions.status();
  const client::SessionListing* mine = nullptr;
  for (const auto& s : *sessions) {
    if (s.session_hex == (*alice)->session_hex()) mine = &s;
  }
  ASSERT_NE(mine, nullptr);
  EXPECT_EQ(mine->tenant, "alice");
  EXPECT_EQ(mine->arrays, 1);
  EXPECT_EQ(mine->bytes, 80);
  EXPECT_GE(mine->age_ms, 0);

  // Too short a prefix, then a good one: alice's session is gone.
  EXPECT_EQ((*root)->AdminCloseSession("abc").status().code(), absl::StatusCode::kInvalidArgument);
  auto closed = (*root)->AdminCloseSession((*alice)->session_hex().substr(0, 12));
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(*closed, (*alice)->session_hex());
  EXPECT_EQ((*alice)->List().status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ((*root)->AdminCloseSession((*alice)->session_hex()).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(AuthTest, AnotherTenantsHandleIsNotFoundLikeANeverExistingOne) {
  absl::StatusOr<std::unique_ptr<Client>> alice = ConnectAs(*server_, kAliceToken);
  absl::StatusOr<std::unique_ptr<Client>> bob = ConnectAs(*server_, kBobToken);
  ASSERT_TRUE(alice.ok() && bob.ok());
  absl::StatusOr<client::Array> a = (*alice)->Upload<double>({4}, std::vector<double>{1, 2, 3, 4});
  ASSERT_TRUE(a.ok());
  const std::string alices = HandleId::FromHex(a->handle_hex().value())->bytes();
  const std::string never = HandleId::Random().bytes();
  auto& core = *(*bob)->core();

  auto download = [&](const std::string& handle) {
    grpc::ClientContext ctx;
    v1::DownloadRequest req;
    req.set_session(core.session);
    req.set_handle(handle);
    auto r = core.stub->Download(&ctx, req);
    v1::DownloadChunk chunk;
    while (r->Read(&chunk)) ADD_FAILURE() << "bob read alice's data";
    return r->Finish();
  };
  auto release = [&](const std::string& handle) {
    grpc::ClientContext ctx;
    v1::ReleaseRequest req;
    req.set_session(core.session);
    req.add_handles(handle);
    v1::ReleaseResponse resp;
    return core.stub->Release(&ctx, req, &resp);
  };
  auto run = [&](const std::string& handle) {
    grpc::ClientContext ctx;
    v1::RunRequest req;
    req.set_session(core.session);
    v1::Instruction* ins = req.mutable_program()->add_instructions();
    ins->set_op("negative");
    ins->add_operands()->set_handle(handle);
    req.add_outputs()->set_value(0);
    v1::RunResponse resp;
    return core.stub->Run(&ctx, req, &resp);
  };
  for (const auto& call : {std::function<grpc::Status(const std::string&)>(download),
                           std::function<grpc::Status(const std::string&)>(release),
                           std::function<grpc::Status(const std::string&)>(run)}) {
    const grpc::Status foreign = call(alices), missing = call(never);
    EXPECT_EQ(foreign.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(foreign.error_message(), missing.error_message());
    EXPECT_THAT(foreign.error_message(), Not(HasSubstr(a->handle_hex().value())));
    EXPECT_THAT(foreign.error_message(), Not(HasSubstr("alice")));
  }
  // Bob's listing shows nothing of alice's; alice's array is intact.
  auto listed = (*bob)->List();
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
  EXPECT_EQ(a->ToVector<double>().value(), (std::vector<double>{1, 2, 3, 4}));
  // Bob cannot use alice's session either.
  grpc::ClientContext ctx;
  v1::ListRequest req;
  req.set_session((*alice)->core()->session);
  v1::ListResponse resp;
  EXPECT_EQ(core.stub->List(&ctx, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(AuthTest, LogsNameTheCallButNeverTheToken) {
  testing::internal::CaptureStderr();
  {
    absl::StatusOr<std::unique_ptr<Client>> alice = ConnectAs(*server_, kAliceToken);
    ASSERT_TRUE(alice.ok());
    EXPECT_FALSE(ConnectAs(*server_, kBobToken + std::string("typo")).ok());
  }
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_THAT(log,
              testing::ContainsRegex("rpc id=[0-9a-f]{16} method=/resident.v1.Resident/OpenSession "
                                     "tenant=alice code=OK ms=[0-9.]+"));
  EXPECT_THAT(log, HasSubstr("tenant=- code=UNAUTHENTICATED"));
  EXPECT_THAT(log, Not(HasSubstr(kAliceToken)));
  EXPECT_THAT(log, Not(HasSubstr(kBobToken)));
}

TEST(SingleUserTest, WithoutTokensEveryoneIsTheDefaultAdmin) {
  std::unique_ptr<Server> server = Start(BaseOptions());
  ASSERT_NE(server, nullptr);
  absl::StatusOr<std::unique_ptr<Client>> c = ConnectAs(*server, "");
  ASSERT_TRUE(c.ok()) << c.status();
  auto sessions = (*c)->ListSessions();
  ASSERT_TRUE(sessions.ok()) << sessions.status();
  ASSERT_EQ(sessions->size(), 1u);
  EXPECT_EQ((*sessions)[0].tenant, "default");
}

// --- Secure by default ---------------------------------------------------------

TEST(SecureByDefaultTest, ExposedListenNeedsTlsAndTokensOrInsecure) {
  ServerOptions o = BaseOptions();
  o.listen = "0.0.0.0:0";
  absl::StatusOr<std::unique_ptr<Server>> refused = Server::Start(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("not a loopback address, without TLS"));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--insecure"));

  Scratch s;
  o.auth_tokens_file = TokensFile(s);  // tokens alone are not enough
  refused = Server::Start(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("without TLS"));

  o.insecure = true;
  absl::StatusOr<std::unique_ptr<Server>> allowed = Server::Start(o);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_GT((*allowed)->port(), 0);
}

TEST(SecureByDefaultTest, LoopbackAddresses) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1:50051"));
  EXPECT_TRUE(IsLoopbackAddress("127.3.2.1:0"));
  EXPECT_TRUE(IsLoopbackAddress("localhost:1"));
  EXPECT_TRUE(IsLoopbackAddress("[::1]:50051"));
  EXPECT_TRUE(IsLoopbackAddress("unix:/tmp/resident.sock"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0:50051"));
  EXPECT_FALSE(IsLoopbackAddress("[::]:50051"));
  EXPECT_FALSE(IsLoopbackAddress("10.0.0.7:50051"));
  EXPECT_FALSE(IsLoopbackAddress("gpu-box:50051"));
  EXPECT_FALSE(IsLoopbackAddress("128.0.0.1:50051"));
}

// --- TLS and mutual TLS --------------------------------------------------------

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new Scratch();
    const std::string d = scratch_->Path("");
    scratch_->Write("server.ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
    scratch_->Write("client.ext", "extendedKeyUsage=clientAuth\n");
    scratch_->Write("other.ext", "extendedKeyUsage=clientAuth\n");
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string script = absl::StrCat(
        "set -e; cd '", d, "'; exec 2>openssl.log\n", "openssl req -x509 ", ec,
        " -keyout ca.key -out ca.pem -days 1 -subj /CN=test-ca\n", "openssl req -x509 ", ec,
        " -keyout other-ca.key -out other-ca.pem -days 1 -subj /CN=other-ca\n", "openssl req ", ec,
        " -keyout server.key -out server.csr -subj /CN=localhost\n",
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem "
        "-days 1 -extfile server.ext\n",
        "openssl req ", ec, " -keyout client.key -out client.csr -subj /CN=alice\n",
        "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem "
        "-days 1 -extfile client.ext\n",
        "openssl req ", ec, " -keyout other.key -out other.csr -subj /CN=mallory\n",
        "openssl x509 -req -in other.csr -CA other-ca.pem -CAkey other-ca.key -CAcreateserial -out "
        "other.pem -days 1 -extfile other.ext\n");
    const std::string path = scratch_->Write("make-certs.sh", script);
    ok_ = std::system(absl::StrCat("sh '", path, "'").c_str()) == 0;
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }
  void SetUp() override {
    if (!ok_) GTEST_FAIL() << "openssl could not make the test certificates; see openssl.log";
  }
  static std::string P(const std::string& name) { return scratch_->Path(name); }
  ServerOptions TlsOptions(bool mutual) {
    ServerOptions o = BaseOptions();
    o.auth_tokens_file = TokensFile(*scratch_);
    o.tls_cert_file = P("server.pem");
    o.tls_key_file = P("server.key");
    if (mutual) o.tls_client_ca_file = P("ca.pem");
    return o;
  }
  static Scratch* scratch_;
  static bool ok_;
};
Scratch* TlsTest::scratch_ = nullptr;
bool TlsTest::ok_ = false;

TEST_F(TlsTest, ServerTls) {
  std::unique_ptr<Server> server = Start(TlsOptions(false));
  ASSERT_NE(server, nullptr);
  ClientOptions tls;
  tls.tls_ca_file = P("ca.pem");
  absl::StatusOr<std::unique_ptr<Client>> c = ConnectAs(*server, kAliceToken, tls);
  ASSERT_TRUE(c.ok()) << c.status();
  absl::StatusOr<client::Array> a = (*c)->Upload<double>({2}, std::vector<double>{3, 4});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->ToVector<double>().value(), (std::vector<double>{3, 4}));
  // TLS does not replace the token.
  EXPECT_EQ(ConnectAs(*server, "", tls).status().code(), absl::StatusCode::kUnauthenticated);
  // A plaintext client, and one trusting another CA, get nowhere.
  EXPECT_FALSE(ConnectAs(*server, kAliceToken).ok());
  ClientOptions wrong_ca;
  wrong_ca.tls_ca_file = P("other-ca.pem");
  EXPECT_EQ(ConnectAs(*server, kAliceToken, wrong_ca).status().code(),
            absl::StatusCode::kUnavailable);
  // TLS and tokens together may listen on every address.
  ServerOptions exposed = TlsOptions(false);
  exposed.listen = "0.0.0.0:0";
  EXPECT_TRUE(Server::Start(exposed).ok());
}

TEST_F(TlsTest, MutualTlsRequiresAClientCertificateFromTheCa) {
  std::unique_ptr<Server> server = Start(TlsOptions(true));
  ASSERT_NE(server, nullptr);
  ClientOptions with_cert;
  with_cert.tls_ca_file = P("ca.pem");
  with_cert.tls_cert_file = P("client.pem");
  with_cert.tls_key_file = P("client.key");
  absl::StatusOr<std::unique_ptr<Client>> c = ConnectAs(*server, kAliceToken, with_cert);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE((*c)->List().ok());

  ClientOptions no_cert;
  no_cert.tls_ca_file = P("ca.pem");
  absl::StatusOr<std::unique_ptr<Client>> refused = ConnectAs(*server, kAliceToken, no_cert);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();

  ClientOptions foreign_cert = with_cert;
  foreign_cert.tls_cert_file = P("other.pem");
  foreign_cert.tls_key_file = P("other.key");
  EXPECT_FALSE(ConnectAs(*server, kAliceToken, foreign_cert).ok());
}

TEST_F(TlsTest, BadTlsOptionsAreRefused) {
  ServerOptions o = TlsOptions(false);
  o.tls_key_file.clear();
  EXPECT_EQ(Server::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = BaseOptions();
  o.tls_client_ca_file = P("ca.pem");
  EXPECT_EQ(Server::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = TlsOptions(false);
  o.tls_cert_file = P("missing.pem");
  EXPECT_EQ(Server::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
}

// --- Metrics -------------------------------------------------------------------

TEST(MetricsTest, ScrapedOverHttpDuringUse) {
  Scratch s;
  ServerOptions o = BaseOptions();
  o.auth_tokens_file = TokensFile(s);
  o.metrics_listen = "127.0.0.1:0";
  std::unique_ptr<Server> server = Start(o);
  ASSERT_NE(server, nullptr);
  ASSERT_GT(server->metrics_port(), 0);

  absl::StatusOr<std::unique_ptr<Client>> alice = ConnectAs(*server, kAliceToken);
  ASSERT_TRUE(alice.ok());
  absl::StatusOr<client::Array> a = (*alice)->Upload<double>({10}, std::vector<double>(10, 2.0));
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->ToVector<double>().value().size(), 10u);  // 80 bytes down
  // A program of 1 + 3 x 1 ops, kept: 2 arrays, 160 bytes resident.
  std::vector<client::Array> out = (*alice)->Loop(3, {*a}, [](const std::vector<client::Array>& c) {
    return std::vector<client::Array>{c[0] + c[0]};
  });
  ASSERT_TRUE(out[0].Evaluate().ok());
  // Failures: a never-existing handle, and a bad token.
  EXPECT_EQ((*alice)->ReleaseHandle(HandleId::Random().ToHex()).code(),
            absl::StatusCode::kNotFound);
  EXPECT_FALSE(ConnectAs(*server, "wrong").ok());

  const std::string reply = HttpGet(server->metrics_port(), "/metrics");
  ASSERT_THAT(reply, HasSubstr("200 OK"));
  EXPECT_THAT(reply, HasSubstr("text/plain; version=0.0.4"));
  EXPECT_THAT(reply, HasSubstr("\nresident_tenant_resident_bytes{tenant=\"alice\"} 160\n"));
  EXPECT_THAT(reply, HasSubstr("\nresident_tenant_arrays{tenant=\"alice\"} 2\n"));
  EXPECT_THAT(reply, HasSubstr("\nresident_programs_total{tenant=\"alice\"} 1\n"));
  EXPECT_THAT(reply, HasSubstr("\nresident_ops_total{tenant=\"alice\"} 4\n"));
  EXPECT_THAT(
      reply,
      HasSubstr("\nresident_transfer_bytes_total{tenant=\"alice\",direction=\"upload\"} 80\n"));
  EXPECT_THAT(
      reply,
      HasSubstr("\nresident_transfer_bytes_total{tenant=\"alice\",direction=\"download\"} 80\n"));
  EXPECT_THAT(
      reply,
      HasSubstr("\nresident_errors_total{method=\"Resident/Release\",code=\"NOT_FOUND\"} 1\n"));
  EXPECT_THAT(
      reply,
      HasSubstr(
          "\nresident_errors_total{method=\"Resident/Describe\",code=\"UNAUTHENTICATED\"} 1\n"));
  EXPECT_THAT(reply, HasSubstr("# TYPE resident_request_duration_seconds histogram\n"));
  EXPECT_THAT(reply, HasSubstr("\nresident_request_duration_seconds_bucket{method=\"Resident/"
                               "Upload\",le=\"+Inf\"} 1\n"));
  EXPECT_THAT(
      reply,
      HasSubstr("\nresident_request_duration_seconds_count{method=\"Resident/Upload\"} 1\n"));
  EXPECT_THAT(reply,
              testing::ContainsRegex(
                  "\nresident_device_memory_used_bytes\\{device=\"[a-z0-9:]+\"\\} [1-9][0-9]*\n"));
  EXPECT_THAT(reply,
              testing::ContainsRegex(
                  "\nresident_device_memory_free_bytes\\{device=\"[a-z0-9:]+\"\\} [0-9]+\n"));
  // The Run's time by phase (resident_run_phase_seconds), one histogram each.
  for (const char* phase : {"queued", "session", "plan", "launch", "sync", "results", "reply"}) {
    EXPECT_THAT(reply, testing::ContainsRegex(absl::StrCat(
                           "\nresident_run_phase_seconds_count\\{phase=\"", phase, "\"\\} 1\n")))
        << phase;
  }
  EXPECT_THAT(reply, testing::ContainsRegex(
                         "\nresident_run_phase_seconds_sum\\{phase=\"plan\"\\} [0-9.e-]+\n"));
  EXPECT_THAT(reply, Not(HasSubstr(kAliceToken)));
  EXPECT_THAT(reply, HasSubstr("\nresident_sessions 1\n"));
  EXPECT_THAT(reply, HasSubstr("\nresident_handles 2\n"));
  EXPECT_THAT(reply, testing::ContainsRegex("\nresident_table_host_bytes [1-9][0-9]*\n"));

  // Released arrays leave the gauges.
  alice->reset();
  const std::string after = HttpGet(server->metrics_port(), "/metrics");
  EXPECT_THAT(after, HasSubstr("\nresident_sessions 0\n"));
  EXPECT_THAT(after, HasSubstr("\nresident_handles 0\n"));
  EXPECT_THAT(after, Not(HasSubstr("resident_tenant_resident_bytes{tenant=\"alice\"} 160")));
  EXPECT_THAT(HttpGet(server->metrics_port(), "/other"), HasSubstr("404"));
}

TEST(MetricsTest, RefusesABadAddress) {
  ServerOptions o = BaseOptions();
  o.metrics_listen = "no-port";
  EXPECT_EQ(Server::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
}

// --- The plaintext health port (--health-listen) ---------------------------------

// A unary call on a raw method; the reply's bytes, or the status.
absl::StatusOr<std::string> RawCall(int port, const std::string& method,
                                    const std::string& request) {
  grpc::GenericStub stub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Slice slice(request);
  grpc::ByteBuffer req(&slice, 1), resp;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, method, grpc::StubOptions(), &req, &resp,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  const grpc::Status s = done.get_future().get();
  if (!s.ok())
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(resp.Dump(&slices).ok());
  std::string out;
  for (const grpc::Slice& sl : slices)
    out.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
  return out;
}

constexpr char kHealthCheck[] = "/grpc.health.v1.Health/Check";
const std::string kServing("\x08\x01", 2), kNotServing("\x08\x02", 2);

TEST_F(TlsTest, HealthPortServesOnlyHealthInPlaintext) {
  ServerOptions o = TlsOptions(false);
  o.health_listen = "127.0.0.1:0";
  std::unique_ptr<Server> server = Start(o);
  ASSERT_NE(server, nullptr);
  const int hp = server->health_port();
  ASSERT_GT(hp, 0);
  ASSERT_NE(hp, server->port());

  // Check, plaintext and without a token: the server, and a named service.
  EXPECT_EQ(RawCall(hp, kHealthCheck, "").value(), kServing);
  EXPECT_EQ(RawCall(hp, kHealthCheck, std::string("\x0a\x14resident.v1.Resident", 22)).value(),
            kServing);
  EXPECT_EQ(RawCall(hp, kHealthCheck, "\x0a\x04nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(RawCall(hp, kHealthCheck, "\xff\xff").status().code(),
            absl::StatusCode::kInvalidArgument);

  // Nothing else: Resident, Admin, reflection and Watch are UNIMPLEMENTED,
  // with or without a token.
  auto channel =
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", hp), grpc::InsecureChannelCredentials());
  {
    auto stub = v1::Resident::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", absl::StrCat("Bearer ", kAliceToken));
    v1::DescribeRequest req;
    v1::DescribeResponse resp;
    EXPECT_EQ(stub->Describe(&ctx, req, &resp).error_code(), grpc::StatusCode::UNIMPLEMENTED);
  }
  {
    auto stub = v1::Resident::NewStub(channel);
    grpc::ClientContext ctx;
    v1::OpenSessionRequest req;
    v1::OpenSessionResponse resp;
    EXPECT_EQ(stub->OpenSession(&ctx, req, &resp).error_code(), grpc::StatusCode::UNIMPLEMENTED);
  }
  for (const char* m : {"/resident.v1.Admin/ListSessions", "/grpc.health.v1.Health/Watch",
                        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"}) {
    EXPECT_EQ(RawCall(hp, m, "").status().code(), absl::StatusCode::kUnimplemented) << m;
  }

  // The serving port still needs TLS and a token.
  ClientOptions tls;
  tls.tls_ca_file = P("ca.pem");
  EXPECT_FALSE(ConnectAs(*server, kAliceToken).ok());
  EXPECT_EQ(ConnectAs(*server, "", tls).status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(ConnectAs(*server, kAliceToken, tls).ok());
  EXPECT_EQ(RawCall(server->port(), kHealthCheck, "").status().code(),
            absl::StatusCode::kUnavailable);  // plaintext against TLS

  // A poisoned device turns the health port NOT_SERVING; shutdown closes it.
  server->SetNotServing();
  EXPECT_EQ(RawCall(hp, kHealthCheck, "").value(), kNotServing);
  server->Shutdown(absl::ZeroDuration());
  EXPECT_EQ(RawCall(hp, kHealthCheck, "").status().code(), absl::StatusCode::kUnavailable);
}

TEST(HealthPortTest, OffByDefaultAndRefusesABadAddress) {
  std::unique_ptr<Server> server = Start(BaseOptions());
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->health_port(), 0);
  ServerOptions o = BaseOptions();
  o.health_listen = "256.1.1.1:0";
  EXPECT_EQ(Server::Start(o).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace resident

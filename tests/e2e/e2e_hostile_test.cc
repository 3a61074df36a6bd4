// Hostile and careless clients against a real server: calls cancelled
// mid-stream, headers repeated with other values, bytes that are not a
// request, floods of sessions and handles. After each, the server must
// still serve and hold exactly what it held before.
#include <grpcpp/generic/generic_stub.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "e2e_fixture.h"
#include "gmock/gmock.h"

namespace resident::e2e {
namespace {

using ::testing::HasSubstr;

absl::Status StatusOf(const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

// A stub on a channel of its own that takes messages of any size.
std::unique_ptr<v1::Resident::Stub> NewStub(const Server& server) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  return v1::Resident::NewStub(
      grpc::CreateCustomChannel(Target(server), grpc::InsecureChannelCredentials(), args));
}

std::string OpenSession(v1::Resident::Stub& stub) {
  grpc::ClientContext ctx;
  v1::OpenSessionResponse resp;
  grpc::Status s = stub.OpenSession(&ctx, v1::OpenSessionRequest(), &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp.session();
}

// Uploads `bytes` of float64 as one array of that many elements / 8.
absl::StatusOr<v1::ArrayInfo> UploadF64(v1::Resident::Stub& stub, const std::string& session,
                                        const std::string& bytes, int64_t chunk) {
  grpc::ClientContext ctx;
  v1::ArrayInfo info;
  auto writer = stub.Upload(&ctx, &info);
  for (int64_t off = 0; off < static_cast<int64_t>(bytes.size()) || off == 0; off += chunk) {
    v1::UploadRequest req;
    if (off == 0) {
      req.set_session(session);
      req.set_dtype(v1::DTYPE_FLOAT64);
      req.add_shape(static_cast<int64_t>(bytes.size() / 8));
    }
    req.set_data(bytes.substr(off, chunk));
    if (!writer->Write(req)) break;
    if (bytes.empty()) break;
  }
  writer->WritesDone();
  absl::Status s = StatusOf(writer->Finish());
  if (!s.ok()) return s;
  return info;
}

class HostileTest : public ::testing::Test {
 protected:
  void StartWith(ServerOptions o) {
    o.max_memory_bytes = 256 << 20;
    server_ = StartServer(o);
    ASSERT_NE(server_, nullptr);
    stub_ = NewStub(*server_);
    session_ = OpenSession(*stub_);
    baseline_ = server_->device().budget().used();
  }
  void SetUp() override { StartWith({}); }

  // The server still runs a program and holds what it held.
  void ExpectStillServes() {
    v1::RunRequest req;
    req.set_session(session_);
    v1::Instruction* ins = req.mutable_program()->add_instructions();
    ins->set_op("ones");
    ins->add_shape(3);
    v1::Output* out = req.add_outputs();
    out->set_value(0);
    out->set_return_data(true);
    v1::RunResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status s = stub_->Run(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(resp.results_size(), 1);
    EXPECT_EQ(resp.results(0).data().size(), 24u);
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<v1::Resident::Stub> stub_;
  std::string session_;
  int64_t baseline_ = 0;
};

// Defect: OnWriteDone(false) and Pump could both finish the call, and gRPC
// aborted the process ("call_ == nullptr") after a few dozen cancels.
TEST_F(HostileTest, DownloadsCancelledAfterTheFirstChunkNeverCrashTheServer) {
  const int64_t n = 4 << 20;  // 32 MiB of float64
  std::string bytes(static_cast<size_t>(n * 8), '\0');
  for (int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(i);
    std::memcpy(bytes.data() + 8 * i, &v, 8);
  }
  absl::StatusOr<v1::ArrayInfo> info = UploadF64(*stub_, session_, bytes, 4 << 20);
  ASSERT_TRUE(info.ok()) << info.status();
  const int64_t with_array = server_->device().budget().used();
  for (int round = 0; round < 100; ++round) {
    std::unique_ptr<v1::Resident::Stub> stub = NewStub(*server_);
    grpc::ClientContext ctx;
    v1::DownloadRequest req;
    req.set_session(session_);
    req.set_handle(info->handle());
    auto reader = stub->Download(&ctx, req);
    v1::DownloadChunk chunk;
    ASSERT_TRUE(reader->Read(&chunk)) << "round " << round;
    ASSERT_TRUE(chunk.has_array());
    ctx.TryCancel();
    while (reader->Read(&chunk)) {
    }
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED) << "round " << round;
  }  // each stub and its channel close here
  // Clients whose channel refuses the server's 4 MiB chunks (gRPC's default
  // 4 MiB receive limit): the call dies while the server writes.
  for (int round = 0; round < 100; ++round) {
    auto stub = v1::Resident::NewStub(
        grpc::CreateChannel(Target(*server_), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    v1::DownloadRequest req;
    req.set_session(session_);
    req.set_handle(info->handle());
    auto reader = stub->Download(&ctx, req);
    v1::DownloadChunk chunk;
    while (reader->Read(&chunk)) {
    }
    EXPECT_FALSE(reader->Finish().ok()) << "round " << round;
  }
  ExpectStillServes();
  // A whole download still works and gives every byte back.
  grpc::ClientContext ctx;
  v1::DownloadRequest req;
  req.set_session(session_);
  req.set_handle(info->handle());
  auto reader = stub_->Download(&ctx, req);
  std::string got;
  v1::DownloadChunk chunk;
  while (reader->Read(&chunk)) got += chunk.data();
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_TRUE(got == bytes);
  EXPECT_TRUE(WaitFor([&] { return server_->device().budget().used() == with_array; }));
}

// Defect: a later upload message repeating the header with another dtype or
// shape was accepted silently.
TEST_F(HostileTest, AHeaderFieldInALaterUploadMessageIsInvalidArgument) {
  for (int variant = 0; variant < 3; ++variant) {
    grpc::ClientContext ctx;
    v1::ArrayInfo info;
    auto writer = stub_->Upload(&ctx, &info);
    v1::UploadRequest first;
    first.set_session(session_);
    first.set_dtype(v1::DTYPE_FLOAT64);
    first.add_shape(4);
    first.set_data(std::string(16, '\0'));
    ASSERT_TRUE(writer->Write(first));
    v1::UploadRequest second;
    if (variant == 0) second.set_dtype(v1::DTYPE_INT32);
    if (variant == 1) second.add_shape(2);
    if (variant == 2) second.set_session(session_);
    second.set_data(std::string(16, '\0'));
    writer->Write(second);
    writer->WritesDone();
    absl::Status s = StatusOf(writer->Finish());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << "variant " << variant << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("only the first upload message"));
  }
  ExpectStillServes();
  EXPECT_TRUE(WaitFor([&] { return server_->device().budget().used() == baseline_; }));
}

// Defect: bytes that do not parse as the method's request got UNIMPLEMENTED
// with an empty message, as if the method did not exist.
TEST_F(HostileTest, BytesThatAreNotARequestAreInvalidArgumentForEveryMethod) {
  auto channel = grpc::CreateChannel(Target(*server_), grpc::InsecureChannelCredentials());
  grpc::GenericStub generic(channel);
  // Field 1 as a length-delimited string of 100 bytes, with 2 bytes present.
  const std::string garbage("\x0a\x64\x01\x02", 4);
  const char* methods[] = {"Resident/Describe",     "Resident/OpenSession", "Resident/CloseSession",
                           "Resident/RenewSession", "Resident/Run",         "Resident/Release",
                           "Resident/List",         "Resident/Keep",        "Resident/Attach",
                           "Resident/Download",     "Resident/Upload",      "Admin/ListSessions",
                           "Admin/CloseSession"};
  for (const char* m : methods) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::CompletionQueue cq;
    grpc::Slice slice(garbage);
    grpc::ByteBuffer request(&slice, 1);
    const std::string method = absl::StrCat("/resident.v1.", m);
    std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
        generic.PrepareCall(&ctx, method, &cq);
    void* tag = nullptr;
    bool ok = false;
    call->StartCall(reinterpret_cast<void*>(1));
    cq.Next(&tag, &ok);
    call->Write(request, reinterpret_cast<void*>(2));
    cq.Next(&tag, &ok);
    call->WritesDone(reinterpret_cast<void*>(3));
    cq.Next(&tag, &ok);
    grpc::ByteBuffer response;
    call->Read(&response, reinterpret_cast<void*>(4));
    cq.Next(&tag, &ok);
    grpc::Status status;
    call->Finish(&status, reinterpret_cast<void*>(5));
    while (cq.Next(&tag, &ok) && tag != reinterpret_cast<void*>(5)) {
    }
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << m << ": " << status.error_code() << " " << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr("could not be parsed")) << m;
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
  }
  ExpectStillServes();
}

v1::ServerUsage Usage(v1::Resident::Stub& stub) {
  grpc::ClientContext ctx;
  v1::DescribeResponse resp;
  EXPECT_TRUE(stub.Describe(&ctx, v1::DescribeRequest(), &resp).ok());
  return resp.usage();
}

// A run in `session` keeping `n` handles to one new 1-element array.
absl::Status KeepHandles(v1::Resident::Stub& stub, const std::string& session, int n) {
  v1::RunRequest req;
  req.set_session(session);
  v1::Instruction* ins = req.mutable_program()->add_instructions();
  ins->set_op("ones");
  ins->add_shape(1);
  for (int i = 0; i < n; ++i) {
    v1::Output* o = req.add_outputs();
    o->set_value(0);
    o->set_keep(true);
  }
  grpc::ClientContext ctx;
  v1::RunResponse resp;
  return StatusOf(stub.Run(&ctx, req, &resp));
}

// Defect: nothing bounded sessions or handles without a quota file (10,000
// sessions in 7.5 s; 500,000 handles to one array, counted nowhere).
TEST_F(HostileTest, SessionsPerTenantAndInAllAreBounded) {
  ServerOptions o;
  o.table_limits.max_sessions_per_tenant = 5;
  o.table_limits.max_sessions = 7;
  StartWith(o);  // its own session is the first
  std::vector<std::string> opened;
  for (int i = 1; i < 5; ++i) opened.push_back(OpenSession(*stub_));
  grpc::ClientContext ctx;
  v1::OpenSessionResponse resp;
  absl::Status s = StatusOf(stub_->OpenSession(&ctx, v1::OpenSessionRequest(), &resp));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("--max-sessions-per-tenant"));
  EXPECT_EQ(Usage(*stub_).sessions(), 5);
  EXPECT_EQ(Usage(*stub_).max_sessions_per_tenant(), 5);
  // Closing one makes room again.
  grpc::ClientContext close_ctx;
  v1::CloseSessionRequest close;
  close.set_session(opened.back());
  v1::CloseSessionResponse closed;
  ASSERT_TRUE(stub_->CloseSession(&close_ctx, close, &closed).ok());
  EXPECT_FALSE(OpenSession(*stub_).empty());
  ExpectStillServes();
}

TEST_F(HostileTest, ServerWideSessionLimitNamesItsFlag) {
  ServerOptions o;
  o.table_limits.max_sessions = 3;
  StartWith(o);
  OpenSession(*stub_);
  OpenSession(*stub_);
  grpc::ClientContext ctx;
  v1::OpenSessionResponse resp;
  absl::Status s = StatusOf(stub_->OpenSession(&ctx, v1::OpenSessionRequest(), &resp));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("--max-sessions)"));
}

TEST_F(HostileTest, HandlesPerSessionAndInAllAreBoundedAndCounted) {
  ServerOptions o;
  o.table_limits.max_handles_per_session = 10;
  o.table_limits.max_handles = 15;
  StartWith(o);
  const int64_t empty_bytes = Usage(*stub_).table_host_bytes();
  ASSERT_TRUE(KeepHandles(*stub_, session_, 10).ok());
  v1::ServerUsage u = Usage(*stub_);
  EXPECT_EQ(u.handles(), 10);
  EXPECT_GT(u.table_host_bytes(), empty_bytes) << "handles cost host memory";
  // One more in the session: refused before anything runs, nothing created.
  absl::Status s = KeepHandles(*stub_, session_, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("--max-handles-per-session"));
  EXPECT_EQ(Usage(*stub_).handles(), 10);
  // An upload into the full session is refused at its header.
  absl::StatusOr<v1::ArrayInfo> up = UploadF64(*stub_, session_, std::string(8, '\0'), 8);
  EXPECT_EQ(up.status().code(), absl::StatusCode::kResourceExhausted) << up.status();
  // The server-wide limit: another session gets 5, then no more.
  const std::string other = OpenSession(*stub_);
  ASSERT_TRUE(KeepHandles(*stub_, other, 5).ok());
  s = KeepHandles(*stub_, other, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("--max-handles)"));
  EXPECT_EQ(Usage(*stub_).handles(), 15);
  // Closing the sessions empties the table and gives its memory back.
  for (const std::string& sess : {session_, other}) {
    grpc::ClientContext ctx;
    v1::CloseSessionRequest close;
    close.set_session(sess);
    v1::CloseSessionResponse closed;
    ASSERT_TRUE(stub_->CloseSession(&ctx, close, &closed).ok());
  }
  u = Usage(*stub_);
  EXPECT_EQ(u.handles(), 0);
  EXPECT_EQ(u.sessions(), 0);
  EXPECT_TRUE(WaitFor([&] { return server_->device().budget().used() == baseline_; }));
}

TEST_F(HostileTest, NamesPerTenantAreBounded) {
  ServerOptions o;
  o.table_limits.max_names_per_tenant = 3;
  StartWith(o);
  absl::StatusOr<v1::ArrayInfo> a = UploadF64(*stub_, session_, std::string(8, '\0'), 8);
  ASSERT_TRUE(a.ok()) << a.status();
  auto keep = [&](const std::string& name) {
    grpc::ClientContext ctx;
    v1::KeepRequest req;
    req.set_session(session_);
    req.set_handle(a->handle());
    req.set_name(name);
    v1::ArrayInfo info;
    return StatusOf(stub_->Keep(&ctx, req, &info));
  };
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(keep(absl::StrCat("n", i)).ok());
  absl::Status s = keep("n3");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("--max-names-per-tenant"));
  EXPECT_EQ(Usage(*stub_).named_arrays(), 3);
}

// Stalled transfers hold host memory: a tenant gets a bounded number.
TEST_F(HostileTest, TransfersInFlightPerTenantAreBounded) {
  ServerOptions o;
  o.table_limits.max_transfers_per_tenant = 2;
  StartWith(o);
  absl::StatusOr<v1::ArrayInfo> a =
      UploadF64(*stub_, session_, std::string(32 << 20, '\1'), 4 << 20);
  ASSERT_TRUE(a.ok()) << a.status();
  v1::DownloadRequest req;
  req.set_session(session_);
  req.set_handle(a->handle());
  // Two downloads whose client reads nothing: they stall in flow control.
  grpc::ClientContext c1, c2;
  auto r1 = stub_->Download(&c1, req);
  auto r2 = stub_->Download(&c2, req);
  v1::DownloadChunk chunk;
  ASSERT_TRUE(r1->Read(&chunk));
  ASSERT_TRUE(r2->Read(&chunk));
  {
    grpc::ClientContext c3;
    auto r3 = stub_->Download(&c3, req);
    while (r3->Read(&chunk)) {
    }
    absl::Status s = StatusOf(r3->Finish());
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("--max-transfers-per-tenant"));
  }
  c1.TryCancel();
  c2.TryCancel();
  while (r1->Read(&chunk)) {
  }
  while (r2->Read(&chunk)) {
  }
  r1->Finish();
  r2->Finish();
  // The slots come back: a whole download works again.
  EXPECT_TRUE(WaitFor([&] {
    grpc::ClientContext c;
    auto r = stub_->Download(&c, req);
    int64_t bytes = 0;
    while (r->Read(&chunk)) bytes += static_cast<int64_t>(chunk.data().size());
    return r->Finish().ok() && bytes == (32 << 20);
  }));
}

TEST_F(HostileTest, DefaultLimitsAreOnWithoutAnyConfiguration) {
  const v1::ServerUsage u = Usage(*stub_);
  EXPECT_EQ(u.max_sessions(), 1024);
  EXPECT_EQ(u.max_sessions_per_tenant(), 256);
  EXPECT_EQ(u.max_handles(), 1 << 20);
  EXPECT_EQ(u.max_handles_per_session(), 1 << 17);
  EXPECT_EQ(u.max_queued_per_tenant(), 1024);
  EXPECT_EQ(u.max_names_per_tenant(), 1 << 16);
  EXPECT_EQ(u.max_transfers_per_tenant(), 64);
  EXPECT_EQ(u.sessions(), 1);
}

}  // namespace
}  // namespace resident::e2e

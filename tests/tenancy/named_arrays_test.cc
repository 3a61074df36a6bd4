// Named arrays through the client library: keep, attach from a later
// session, list, delete; name validation; leases (every call renews, named
// arrays survive session expiry); deadlines stop a program and free its
// intermediates.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tenancy/tenancy_fixture.h"

namespace resident::tenancy {
namespace {

using ::testing::HasSubstr;

class NamedArraysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o;
    o.session_idle_timeout = absl::Milliseconds(400);
    server_ = StartTenantServer(dir_, o);
    ASSERT_NE(server_, nullptr);
  }
  ScratchDir dir_;
  std::unique_ptr<Server> server_;
};

TEST_F(NamedArraysTest, KeptArraysOutliveTheirSessionAndAttachInTheNext) {
  {
    auto alice = ConnectAs(*server_, kAliceToken);
    client::Array x = client::arange(*alice, 10);
    ASSERT_TRUE(alice->Keep(x, "weights.v1").ok());
    absl::StatusOr<std::vector<client::ArrayListing>> ls = alice->List();
    ASSERT_TRUE(ls.ok());
    ASSERT_EQ(ls->size(), 1u);
    EXPECT_EQ((*ls)[0].name, "weights.v1");
    EXPECT_FALSE((*ls)[0].handle_hex.empty());
  }  // the session closes: its handle goes, the name stays
  EXPECT_EQ(server_->sessions().Usage("alice").bytes, 80);
  auto alice = ConnectAs(*server_, kAliceToken);
  absl::StatusOr<std::vector<client::ArrayListing>> ls = alice->List();
  ASSERT_TRUE(ls.ok());
  ASSERT_EQ(ls->size(), 1u);
  EXPECT_EQ((*ls)[0].name, "weights.v1");
  EXPECT_TRUE((*ls)[0].handle_hex.empty());
  absl::StatusOr<client::Array> w = alice->Attach("weights.v1");
  ASSERT_TRUE(w.ok()) << w.status();
  e2e::ExpectArray(*w, DType::kInt64, {10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  e2e::ExpectArray(*w + *w, DType::kInt64, {10}, {0, 2, 4, 6, 8, 10, 12, 14, 16, 18});
  // Keeping a name the tenant has: ALREADY_EXISTS (names are never replaced).
  absl::Status again = alice->Keep(client::ones(*alice, {2}), "weights.v1");
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(again.message()), HasSubstr("already has an array named 'weights.v1'"));
  // Delete: the name goes; the attached handle still works until released.
  ASSERT_TRUE(alice->Delete("weights.v1").ok());
  EXPECT_EQ(alice->Attach("weights.v1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(alice->Delete("weights.v1").code(), absl::StatusCode::kNotFound);
  e2e::ExpectArray(*w, DType::kInt64, {10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  ASSERT_TRUE(w->Release().ok());
  EXPECT_EQ(server_->sessions().Usage("alice").names, 0);
}

TEST_F(NamedArraysTest, NamesAreValidated) {
  auto alice = ConnectAs(*server_, kAliceToken);
  client::Array x = client::ones(*alice, {2});
  for (const std::string& bad :
       {std::string(""), std::string(129, 'a'), std::string("a b"), std::string("a/b"),
        std::string("caf\xc3\xa9"), std::string("x\n")}) {
    absl::Status s = alice->Keep(x, bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), HasSubstr("1 to 128 characters")) << bad;
    EXPECT_EQ(alice->Attach(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(alice->Keep(x, std::string(128, 'Z')).ok());
  EXPECT_TRUE(alice->Keep(x, "A-z_0.9").ok());
}

TEST_F(NamedArraysTest, EveryCallRenewsTheLeaseAndNamesSurviveExpiry) {
  client::ClientOptions idle;
  idle.keep_alive = false;  // no background renewer: only our calls renew
  auto alice = ConnectAs(*server_, kAliceToken, idle);
  client::Array x = client::ones(*alice, {4});
  ASSERT_TRUE(x.Evaluate().ok());
  ASSERT_TRUE(alice->Keep(x, "kept").ok());
  // 1.2 s of calls, 150 ms apart, with a 400 ms idle timeout: each renews.
  const std::vector<std::function<absl::Status()>> calls = {
      [&] { return alice->List().status(); },
      [&] { return x.Download().status(); },
      [&] { return (x + x).Evaluate(); },
      [&] { return alice->Attach("kept").status(); },
      [&] { return alice->Upload(DType::kInt32, {1}, std::string(4, '\0')).status(); },
  };
  for (int i = 0; i < 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    absl::Status s = calls[i % calls.size()]();
    ASSERT_TRUE(s.ok()) << "call " << i << ": " << s;
  }
  // Now idle past the timeout: the session and its handles go, the name stays.
  ASSERT_TRUE(e2e::WaitFor([&] { return server_->sessions().session_count() == 0; }));
  EXPECT_EQ(alice->List().status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(server_->sessions().Usage("alice").arrays, 1);
  EXPECT_EQ(server_->sessions().Usage("alice").bytes, 32);
  auto later = ConnectAs(*server_, kAliceToken);
  absl::StatusOr<client::Array> k = later->Attach("kept");
  ASSERT_TRUE(k.ok()) << k.status();
  e2e::ExpectArray(*k, DType::kFloat64, {4}, {1, 1, 1, 1});
}

TEST_F(NamedArraysTest, ADeadlineStopsALongLoopPromptlyAndFreesItsIntermediates) {
  RawCaller alice = RawCaller::Open(*server_, kAliceToken);
  MemoryBudget& budget = server_->device().budget();
  const int64_t before = budget.used();
  v1::RunRequest req;
  req.set_session(alice.session);
  *req.mutable_program() = DoublingProgram(100000, int64_t{1} << 30);  // hours of work
  v1::Output* o = req.add_outputs();
  o->set_value(1);
  o->set_keep(true);
  grpc::ClientContext ctx;
  alice.Prepare(ctx, std::chrono::milliseconds(300));
  v1::RunResponse resp;
  const auto start = std::chrono::steady_clock::now();
  grpc::Status s = alice.stub->Run(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  // The server stops at the next op and frees the loop's buffers.
  EXPECT_TRUE(e2e::WaitFor([&] { return budget.used() == before && budget.reserved() == 0; }))
      << "used " << budget.used() << " reserved " << budget.reserved();
  EXPECT_EQ(server_->sessions().Usage("alice").arrays, 0);
  EXPECT_EQ(server_->sessions().Usage("alice").reserved_bytes, 0);
}

}  // namespace
}  // namespace resident::tenancy

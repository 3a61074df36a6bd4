// Quotas: the config file format and its errors, and per-tenant limits on
// device bytes and arrays enforced before anything is allocated.
#include "server/session/quota.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tenancy/tenancy_fixture.h"

namespace resident::tenancy {
namespace {

using ::testing::HasSubstr;

TEST(QuotaConfigTest, DefaultsAndTenantOverrides) {
  absl::StatusOr<QuotaConfig> c = ParseQuotaConfig(
      "# lab quotas\n\n"
      "tenant alice bytes=32G arrays=5000   # alice's own\n"
      "tenant bob bytes=1M\n"
      "default bytes=8G arrays=1000\n"
      "tenant carol bytes=unlimited arrays=unlimited\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->For("alice").max_bytes, int64_t{32} << 30);
  EXPECT_EQ(c->For("alice").max_arrays, 5000);
  EXPECT_EQ(c->For("bob").max_bytes, int64_t{1} << 20);
  EXPECT_EQ(c->For("bob").max_arrays, 1000) << "missing keys come from default";
  EXPECT_EQ(c->For("carol").max_bytes, Quota::kUnlimited);
  EXPECT_EQ(c->For("someone").max_bytes, int64_t{8} << 30);
  EXPECT_EQ(ParseQuotaConfig("")->For("x").max_arrays, Quota::kUnlimited);
}

TEST(QuotaConfigTest, ErrorsNameTheLine) {
  struct Case {
    const char* text;
    const char* want;
  };
  for (const Case& c : std::vector<Case>{
           {"default bytes=8G\ntenant alice bytes=lots\n", "q.conf line 2: bad bytes 'lots'"},
           {"default bytes=8G\ndefault arrays=3\n", "line 2: a second 'default' line"},
           {"tenant alice arrays=-1\n", "line 1: bad arrays '-1'"},
           {"tenant alice bytes=1G\n\ntenant alice bytes=2G\n",
            "line 3: tenant 'alice' already has a line (line 1)"},
           {"user alice bytes=1G\n", "line 1: unknown keyword 'user'"},
           {"tenant alice memory=1G\n", "line 1: unknown key 'memory'"},
           {"tenant bytes=1G\n", "line 1: 'tenant' needs a tenant name"},
           {"default bytes=99999999999T\n", "line 1: bad bytes"},
       }) {
    absl::StatusOr<QuotaConfig> q = ParseQuotaConfig(c.text, "q.conf");
    EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(std::string(q.status().message()), HasSubstr(c.want)) << c.text;
  }
  EXPECT_EQ(LoadQuotaConfig("/nonexistent/quotas").status().code(), absl::StatusCode::kNotFound);
}

class QuotaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o;
    o.quotas = *ParseQuotaConfig("default bytes=unlimited\ntenant alice bytes=10000 arrays=3\n");
    server_ = StartTenantServer(dir_, o);
    ASSERT_NE(server_, nullptr);
    alice_ = ConnectAs(*server_, kAliceToken);
    bob_ = ConnectAs(*server_, kBobToken);
  }
  ScratchDir dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<client::Client> alice_, bob_;
};

TEST_F(QuotaTest, BytesOverTheQuotaAreRefusedBeforeAnythingIsAllocated) {
  MemoryBudget& budget = server_->device().budget();
  client::Array small = client::ones(*alice_, {1000});  // 8000 bytes
  ASSERT_TRUE(small.Evaluate().ok());
  EXPECT_EQ(server_->sessions().Usage("alice").bytes, 8000);
  const int64_t before = budget.used();
  // 8000 held + 8000 more > 10000.
  client::Array big = client::ones(*alice_, {1000});
  absl::Status s = big.Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(
      std::string(s.message()),
      HasSubstr(
          "tenant 'alice' quota of 10000 device bytes would be exceeded: it holds 8000 bytes"));
  EXPECT_EQ(budget.used(), before);
  EXPECT_EQ(server_->sessions().Usage("alice").reserved_bytes, 0);
  // An upload is refused the same way, before its buffer exists.
  absl::StatusOr<client::Array> up =
      alice_->Upload(DType::kFloat64, {500}, std::string(4000, '\0'));
  EXPECT_EQ(up.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(up.status().message()), HasSubstr("quota of 10000 device bytes"));
  EXPECT_EQ(budget.used(), before);
  // Bob has no limit; alice's quota is hers alone.
  client::Array b = client::ones(*bob_, {100000});
  EXPECT_TRUE(b.Evaluate().ok());
  // Released bytes come back to the quota.
  ASSERT_TRUE(small.Release().ok());
  EXPECT_EQ(server_->sessions().Usage("alice").bytes, 0);
  client::Array again = client::ones(*alice_, {1000});
  EXPECT_TRUE(again.Evaluate().ok());
}

TEST_F(QuotaTest, ArraysOverTheQuotaAreRefused) {
  std::vector<client::Array> kept;
  for (int i = 0; i < 3; ++i) {
    kept.push_back(client::ones(*alice_, {10}));
    ASSERT_TRUE(kept.back().Evaluate().ok()) << i;
  }
  client::Array fourth = client::ones(*alice_, {10});
  absl::Status s = fourth.Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("tenant 'alice' quota of 3 arrays would be exceeded"));
  // A name counts as an array too.
  absl::Status k = alice_->Keep(kept[0], "w");
  EXPECT_EQ(k.code(), absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE(kept[2].Release().ok());
  ASSERT_TRUE(alice_->Keep(kept[0], "w").ok());
  EXPECT_EQ(server_->sessions().Usage("alice").arrays, 3);
  // Kept under a name and held by a handle: its bytes count once.
  EXPECT_EQ(server_->sessions().Usage("alice").bytes, 160);
}

}  // namespace
}  // namespace resident::tenancy

// SessionTable on its own: limits per tenant and server-wide, ownership,
// leases, which sessions are idle (never a busy one), snapshots.
#include "server/session/session_table.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace resident {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

const absl::Time kT0 = absl::FromUnixSeconds(1'000'000);

std::shared_ptr<Session> NewSession(const std::string& tenant, absl::Time at = kT0) {
  auto s = std::make_shared<Session>();
  s->tenant = tenant;
  s->opened = at;
  s->last_used = at;
  return s;
}

TableLimits Limits(int64_t max_sessions, int64_t per_tenant) {
  TableLimits l;
  l.max_sessions = max_sessions;
  l.max_sessions_per_tenant = per_tenant;
  return l;
}

TEST(SessionTableTest, SessionsPerTenantAreBounded) {
  SessionTable table(Limits(10, 2));
  const HandleId a1 = HandleId::Random(), a2 = HandleId::Random();
  ASSERT_TRUE(table.Insert(a1, NewSession("alice")).ok());
  ASSERT_TRUE(table.Insert(a2, NewSession("alice")).ok());
  absl::Status third = table.CheckRoom("alice");
  EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(third.message(),
            "tenant 'alice' has 2 open sessions, the server's limit per tenant "
            "(--max-sessions-per-tenant); close some first");
  // Insert checks again (others may have opened sessions since CheckRoom).
  EXPECT_EQ(table.Insert(HandleId::Random(), NewSession("alice")).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(table.CheckRoom("bob").ok()) << "the limit is per tenant";
  // Closing one makes room again.
  ASSERT_TRUE(table.Remove("alice", a1).ok());
  EXPECT_TRUE(table.CheckRoom("alice").ok());
  EXPECT_EQ(table.size(), 1);
}

TEST(SessionTableTest, SessionsInAllAreBounded) {
  SessionTable table(Limits(3, 10));
  ASSERT_TRUE(table.Insert(HandleId::Random(), NewSession("alice")).ok());
  ASSERT_TRUE(table.Insert(HandleId::Random(), NewSession("bob")).ok());
  ASSERT_TRUE(table.Insert(HandleId::Random(), NewSession("carol")).ok());
  absl::Status s = table.Insert(HandleId::Random(), NewSession("dave"));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(),
            "the server's limit of 3 open sessions is reached (--max-sessions); close sessions "
            "or release handles first");
  EXPECT_EQ(table.size(), 3);
}

TEST(SessionTableTest, OnlyTheOwnerFindsASession) {
  SessionTable table(TableLimits{});
  const HandleId id = HandleId::Random();
  ASSERT_TRUE(table.Insert(id, NewSession("alice")).ok());
  // Another tenant's session, and one never opened: the same answer.
  for (const auto& [tenant, session] :
       {std::pair<std::string, HandleId>{"bob", id}, {"alice", HandleId::Random()}}) {
    EXPECT_EQ(table.Touch(tenant, session, kT0).status(), SessionNotFound());
    EXPECT_EQ(table.Renew(tenant, session, kT0), SessionNotFound());
    EXPECT_EQ(table.Remove(tenant, session).status(), SessionNotFound());
  }
  EXPECT_EQ(*table.TenantOf(id), "alice");
  EXPECT_EQ(table.TenantOf(HandleId::Random()).status(), SessionNotFound());
  EXPECT_EQ(table.size(), 1) << "a foreign Remove removes nothing";
}

TEST(SessionTableTest, RemoveMarksTheSessionClosed) {
  SessionTable table(TableLimits{});
  const HandleId id = HandleId::Random();
  std::shared_ptr<Session> s = NewSession("alice");
  ASSERT_TRUE(table.Insert(id, s).ok());
  EXPECT_FALSE(s->closed);
  absl::StatusOr<std::shared_ptr<Session>> removed = table.Remove("alice", id);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed->get(), s.get());
  EXPECT_TRUE(s->closed) << "a program running in it stops at its next op";
  EXPECT_EQ(table.Touch("alice", id, kT0).status(), SessionNotFound());
}

TEST(SessionTableTest, IdleSessionsAreReapedButNeverBusyOnes) {
  SessionTable table(TableLimits{});
  const absl::Duration timeout = absl::Minutes(30);
  const HandleId idle = HandleId::Random(), used = HandleId::Random(), busy = HandleId::Random();
  ASSERT_TRUE(table.Insert(idle, NewSession("alice")).ok());
  ASSERT_TRUE(table.Insert(used, NewSession("bob")).ok());
  std::shared_ptr<Session> running = NewSession("alice");
  ASSERT_TRUE(table.Insert(busy, running).ok());
  table.BeginRun(*running);
  const absl::Time later = kT0 + absl::Minutes(31);
  ASSERT_TRUE(table.Renew("bob", used, later - absl::Minutes(1)).ok());
  EXPECT_THAT(table.Idle(later, timeout), UnorderedElementsAre(Pair("alice", idle)));
  EXPECT_TRUE(table.Idle(kT0 + timeout, timeout).empty()) << "idle for exactly the timeout";
  // The end of the program renews the lease: idle again only a timeout later.
  table.EndRun(*running, later);
  EXPECT_THAT(table.Idle(later + absl::Seconds(1), timeout),
              UnorderedElementsAre(Pair("alice", idle)));
  EXPECT_THAT(table.Idle(later + timeout + absl::Seconds(1), timeout),
              UnorderedElementsAre(Pair("alice", idle), Pair("alice", busy), Pair("bob", used)));
}

TEST(SessionTableTest, TouchRenewsAndHandsTheSessionOut) {
  SessionTable table(TableLimits{});
  const HandleId id = HandleId::Random();
  ASSERT_TRUE(table.Insert(id, NewSession("alice")).ok());
  auto s = table.Touch("alice", id, kT0 + absl::Hours(1));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->last_used, kT0 + absl::Hours(1));
  EXPECT_EQ((*s)->opened, kT0);
}

TEST(SessionTableTest, SnapshotIsSortedByOpening) {
  SessionTable table(TableLimits{});
  const HandleId late = HandleId::Random(), early = HandleId::Random();
  ASSERT_TRUE(table.Insert(late, NewSession("bob", kT0 + absl::Seconds(5))).ok());
  ASSERT_TRUE(table.Insert(early, NewSession("alice", kT0)).ok());
  std::vector<SessionSnapshot> snap = table.Snapshot();
  ASSERT_EQ(snap.size(), 2u);
  EXPECT_EQ(snap[0].id, early);
  EXPECT_EQ(snap[0].tenant, "alice");
  EXPECT_EQ(snap[1].id, late);
  EXPECT_EQ(snap[1].opened, kT0 + absl::Seconds(5));
}

TEST(SessionTableTest, HostBytesGrowAndShrinkWithSessions) {
  SessionTable table(TableLimits{});
  const int64_t empty = table.HostBytes();
  const std::string tenant(100, 't');  // beyond the small-string buffer
  std::vector<HandleId> ids;
  for (int i = 0; i < 50; ++i) {
    ids.push_back(HandleId::Random());
    ASSERT_TRUE(table.Insert(ids.back(), NewSession(tenant)).ok());
  }
  const int64_t full = table.HostBytes();
  EXPECT_GE(full, empty + 50 * static_cast<int64_t>(sizeof(Session) + tenant.size()));
  for (const HandleId& id : ids) ASSERT_TRUE(table.Remove(tenant, id).ok());
  EXPECT_LE(table.HostBytes(), full - 50 * static_cast<int64_t>(sizeof(Session)));
}

}  // namespace
}  // namespace resident

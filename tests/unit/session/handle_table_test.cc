// HandleTable on its own: ownership, limits per session and server-wide,
// erasing one handle or a whole session, totals, the host-bytes estimate.
#include "server/session/handle_table.h"

#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/session/device_arrays.h"

namespace resident {
namespace {

using testing_session::DeviceArrays;

TableLimits Limits(int64_t max_handles, int64_t per_session) {
  TableLimits l;
  l.max_handles = max_handles;
  l.max_handles_per_session = per_session;
  return l;
}

class HandleTableTest : public ::testing::Test {
 protected:
  DeviceArrays arrays_;
  const HandleId s1_ = HandleId::Random();
  const HandleId s2_ = HandleId::Random();
};

TEST_F(HandleTableTest, OnlyTheOwningTenantFindsAHandle) {
  HandleTable table(TableLimits{});
  const DeviceArray a = arrays_.F64(3);
  const HandleId h = table.Insert(HandleEntry{"alice", s1_, a, ""});
  const HandleEntry* e = table.Find("alice", h);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->array.buffer, a.buffer);
  EXPECT_EQ(e->session, s1_);
  // Another tenant's handle and one never issued: the same answer.
  EXPECT_EQ(table.Find("bob", h), nullptr);
  EXPECT_EQ(table.Find("alice", HandleId::Random()), nullptr);
  EXPECT_EQ(table.Resolve("bob", h).status(), HandleNotFound());
  EXPECT_EQ(table.Resolve("alice", h)->nbytes(), 24);
}

TEST_F(HandleTableTest, HandlesPerSessionAreBounded) {
  HandleTable table(Limits(100, 3));
  for (int i = 0; i < 2; ++i) table.Insert(HandleEntry{"alice", s1_, arrays_.F64(1), ""});
  EXPECT_TRUE(table.CheckRoom("alice", s1_, 1).ok());
  absl::Status s = table.CheckRoom("alice", s1_, 2);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(),
            "the session holds 2 handles and this needs 2 more, over the server's limit of 3 "
            "per session (--max-handles-per-session); release handles first");
  EXPECT_TRUE(table.CheckRoom("alice", s2_, 3).ok()) << "the limit is per session";
  EXPECT_FALSE(table.CheckRoom("alice", s2_, 4).ok());
}

TEST_F(HandleTableTest, HandlesInAllAreBounded) {
  HandleTable table(Limits(4, 100));
  for (int i = 0; i < 3; ++i) table.Insert(HandleEntry{"alice", s1_, arrays_.F64(1), ""});
  EXPECT_TRUE(table.CheckRoom("alice", s2_, 1).ok());
  absl::Status s = table.CheckRoom("alice", s2_, 2);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(),
            "the server's limit of 4 handles in all sessions is reached (--max-handles); close "
            "sessions or release handles first");
}

TEST_F(HandleTableTest, EraseTakesOneHandleOutOfItsSession) {
  HandleTable table(Limits(100, 2));
  const HandleId a = table.Insert(HandleEntry{"alice", s1_, arrays_.F64(1), ""});
  table.Insert(HandleEntry{"alice", s1_, arrays_.F64(2), ""});
  EXPECT_FALSE(table.CheckRoom("alice", s1_, 1).ok());
  std::optional<HandleEntry> gone = table.Erase(a);
  ASSERT_TRUE(gone.has_value());
  EXPECT_EQ(gone->array.nbytes(), 8);
  EXPECT_FALSE(table.Erase(a).has_value()) << "already released";
  EXPECT_EQ(table.Find("alice", a), nullptr);
  EXPECT_TRUE(table.CheckRoom("alice", s1_, 1).ok()) << "the session has room again";
  EXPECT_EQ(table.SessionTotals(s1_), std::make_pair(int64_t{1}, int64_t{16}));
}

TEST_F(HandleTableTest, EraseSessionTakesAllOfItsHandlesAndNoOthers) {
  HandleTable table(TableLimits{});
  std::set<int64_t> sizes;
  for (int i = 1; i <= 3; ++i) table.Insert(HandleEntry{"alice", s1_, arrays_.F64(i), ""});
  const HandleId other = table.Insert(HandleEntry{"alice", s2_, arrays_.F64(10), ""});
  EXPECT_EQ(table.SessionTotals(s1_), std::make_pair(int64_t{3}, int64_t{48}));
  table.EraseSession(s1_, [&](const HandleEntry& e) { sizes.insert(e.array.nbytes()); });
  EXPECT_EQ(sizes, (std::set<int64_t>{8, 16, 24}));
  EXPECT_EQ(table.size(), 1);
  EXPECT_NE(table.Find("alice", other), nullptr);
  EXPECT_EQ(table.SessionTotals(s1_), std::make_pair(int64_t{0}, int64_t{0}));
  int again = 0;
  table.EraseSession(s1_, [&](const HandleEntry&) { ++again; });
  EXPECT_EQ(again, 0);
}

TEST_F(HandleTableTest, ForEachOfVisitsOnlyTheTenantsHandles) {
  HandleTable table(TableLimits{});
  const HandleId a = table.Insert(HandleEntry{"alice", s1_, arrays_.F64(1), "w"});
  table.Insert(HandleEntry{"bob", s2_, arrays_.F64(1), ""});
  std::vector<HandleId> seen;
  table.ForEachOf("alice", [&](const HandleId& id, const HandleEntry& e) {
    seen.push_back(id);
    EXPECT_EQ(e.name, "w");
  });
  EXPECT_EQ(seen, std::vector<HandleId>{a});
  table.SetName(a, "renamed");
  EXPECT_EQ(table.Find("alice", a)->name, "renamed");
}

TEST_F(HandleTableTest, HostBytesGrowWithHandlesAndShrinkWhenSessionsClose) {
  HandleTable table(TableLimits{});
  const int64_t empty = table.HostBytes();
  const std::string tenant(64, 't');  // beyond the small-string buffer
  for (int i = 0; i < 200; ++i) {
    table.Insert(HandleEntry{tenant, i % 2 ? s1_ : s2_, arrays_.F64(1), std::string(40, 'n')});
  }
  const int64_t full = table.HostBytes();
  EXPECT_GT(full, empty + 200 * static_cast<int64_t>(sizeof(HandleEntry) + 64 + 40));
  // Released handles give their heap parts back at once...
  std::vector<HandleEntry> gone;
  table.EraseSession(s1_, [&](HandleEntry e) { gone.push_back(std::move(e)); });
  ASSERT_EQ(gone.size(), 100u);
  const int64_t half = table.HostBytes();
  EXPECT_LT(half, full - 100 * (64 + 40));
  table.EraseSession(s2_, [&](HandleEntry e) { gone.push_back(std::move(e)); });
  ASSERT_EQ(gone.size(), 200u);
  EXPECT_LT(table.HostBytes(), half);
  // ...and a long name set later is counted, and given back too.
  const HandleId h = table.Insert(HandleEntry{"alice", s1_, arrays_.F64(1), ""});
  const int64_t before_name = table.HostBytes();
  table.SetName(h, std::string(1000, 'n'));
  EXPECT_GE(table.HostBytes(), before_name + 1000);
  table.Erase(h);
  EXPECT_LT(table.HostBytes(), before_name);
}

}  // namespace
}  // namespace resident

// NamedArrays on its own: the pending states of keeps and deletes, the
// limit per tenant, isolation between tenants, durability through a real
// ArrayStore in a scratch directory.
#include "server/session/named_arrays.h"

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/session/device_arrays.h"

namespace resident {
namespace {

using ::testing::HasSubstr;
using testing_session::DeviceArrays;

// A fresh directory under /tmp, removed afterwards.
struct ScratchDir {
  ScratchDir() {
    char tmpl[] = "/tmp/named_arrays_test_XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    path = tmpl;
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  std::string path;
};

class NamedArraysTest : public ::testing::Test {
 protected:
  // A table writing through a store in `dir`.
  static void OpenStore(NamedArrays& names, const std::string& dir) {
    auto store = ArrayStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    names.SetStore(*std::move(store));
    EXPECT_TRUE(names.durable());
  }
  std::vector<std::string> Listed(const NamedArrays& names, const std::string& tenant) {
    std::vector<std::string> out;
    names.ForEachOf(tenant, [&](const std::string& n, const DeviceArray&) { out.push_back(n); });
    return out;
  }
  DeviceArrays arrays_;
};

absl::Status Fits() { return absl::OkStatus(); }

TEST_F(NamedArraysTest, AKeepIsPendingUntilItEnds) {
  NamedArrays names(100);
  const DeviceArray a = arrays_.F64(2);
  ASSERT_TRUE(names.BeginKeep("alice", "w", a, Fits).ok());
  // Counted, but no one can use it yet.
  EXPECT_EQ(names.Count("alice"), 1);
  EXPECT_EQ(names.Total(), 1);
  EXPECT_EQ(names.Find("alice", "w").status(), NameNotFound());
  EXPECT_TRUE(Listed(names, "alice").empty());
  EXPECT_FALSE(names.Shows("alice", "w", a.buffer.get()));
  EXPECT_EQ(names.BeginDelete("alice", {"w"}), NameNotFound());
  // Nor take the name meanwhile.
  absl::Status again = names.BeginKeep("alice", "w", arrays_.F64(1), Fits);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(again.message()), HasSubstr("already has an array named 'w'"));
  names.EndKeep("alice", "w", /*kept=*/true);
  ASSERT_TRUE(names.Find("alice", "w").ok());
  EXPECT_EQ(names.Find("alice", "w")->buffer, a.buffer);
  EXPECT_EQ(Listed(names, "alice"), std::vector<std::string>{"w"});
  EXPECT_TRUE(names.Shows("alice", "w", a.buffer.get()));
  EXPECT_FALSE(names.Shows("alice", "w", arrays_.F64(2).buffer.get())) << "another buffer";
  EXPECT_EQ(names.BeginKeep("alice", "w", a, Fits).code(), absl::StatusCode::kAlreadyExists);
}

TEST_F(NamedArraysTest, AFailedKeepLeavesNothing) {
  NamedArrays names(100);
  ASSERT_TRUE(names.BeginKeep("alice", "w", arrays_.F64(2), Fits).ok());
  names.EndKeep("alice", "w", /*kept=*/false);
  EXPECT_EQ(names.Count("alice"), 0);
  EXPECT_EQ(names.Total(), 0);
  EXPECT_EQ(names.Find("alice", "w").status(), NameNotFound());
  EXPECT_TRUE(names.BeginKeep("alice", "w", arrays_.F64(2), Fits).ok()) << "the name is free";
}

TEST_F(NamedArraysTest, AKeepChecksTheNameThenTheQuotaThenTheLimit) {
  NamedArrays names(1);
  names.AddLoaded("alice", "taken", arrays_.F64(1));
  int asked = 0;
  auto over_quota = [&] {
    ++asked;
    return absl::ResourceExhaustedError("over alice's quota");
  };
  // A name it has: ALREADY_EXISTS, before the quota is asked.
  EXPECT_EQ(names.BeginKeep("alice", "taken", arrays_.F64(1), over_quota).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(asked, 0);
  // Over the quota and at the names limit: the quota's answer.
  EXPECT_EQ(names.BeginKeep("alice", "new", arrays_.F64(1), over_quota).message(),
            "over alice's quota");
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(names.Count("alice"), 1) << "a refused keep adds nothing";
}

TEST_F(NamedArraysTest, ADeleteIsPendingAndEitherHappensOrIsUndone) {
  NamedArrays names(100);
  names.AddLoaded("alice", "a", arrays_.F64(1));
  names.AddLoaded("alice", "b", arrays_.F64(2));
  std::vector<DeviceArray> gone;
  auto collect = [&](DeviceArray a) { gone.push_back(std::move(a)); };
  // One unknown name: nothing is marked.
  EXPECT_EQ(names.BeginDelete("alice", {"a", "nope"}), NameNotFound());
  EXPECT_TRUE(names.Find("alice", "a").ok());
  ASSERT_TRUE(names.BeginDelete("alice", {"a", "b"}).ok());
  EXPECT_EQ(names.Find("alice", "a").status(), NameNotFound());
  EXPECT_EQ(names.BeginDelete("alice", {"b"}), NameNotFound()) << "already being deleted";
  // The store refused: both are usable again.
  names.EndDelete("alice", {"a", "b"}, /*deleted=*/false, collect);
  EXPECT_TRUE(gone.empty());
  EXPECT_TRUE(names.Find("alice", "a").ok());
  EXPECT_TRUE(names.Find("alice", "b").ok());
  // The store agreed: both go, and their arrays come back (a name listed
  // twice, once).
  ASSERT_TRUE(names.BeginDelete("alice", {"a", "b", "a"}).ok());
  names.EndDelete("alice", {"a", "b", "a"}, /*deleted=*/true, collect);
  ASSERT_EQ(gone.size(), 2u);
  EXPECT_EQ(gone[0].nbytes() + gone[1].nbytes(), 24);
  EXPECT_EQ(names.Count("alice"), 0);
  EXPECT_EQ(names.Total(), 0);
}

TEST_F(NamedArraysTest, NamesAreTheTenantsOwn) {
  NamedArrays names(100);
  names.AddLoaded("alice", "w", arrays_.F64(1));
  EXPECT_EQ(names.Find("bob", "w").status(), NameNotFound());
  EXPECT_EQ(names.BeginDelete("bob", {"w"}), NameNotFound());
  EXPECT_TRUE(Listed(names, "bob").empty());
  EXPECT_EQ(names.Count("bob"), 0);
  EXPECT_TRUE(names.BeginKeep("bob", "w", arrays_.F64(1), Fits).ok()) << "bob's own 'w'";
  EXPECT_EQ(names.Total(), 2);
}

TEST_F(NamedArraysTest, NamesPerTenantAreBounded) {
  NamedArrays names(2);
  names.AddLoaded("alice", "a", arrays_.F64(1));
  ASSERT_TRUE(names.BeginKeep("alice", "b", arrays_.F64(1), Fits).ok());  // pending ones count
  absl::Status s = names.BeginKeep("alice", "c", arrays_.F64(1), Fits);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(),
            "tenant 'alice' has 2 named arrays, the server's limit (--max-names-per-tenant); "
            "delete some first");
  EXPECT_EQ(names.Count("alice"), 2);
  EXPECT_TRUE(names.BeginKeep("bob", "c", arrays_.F64(1), Fits).ok());
}

TEST_F(NamedArraysTest, ValidNames) {
  for (const char* good : {"w", "weights.v1", "A-b_c.9"}) {
    EXPECT_TRUE(ValidateArrayName(good).ok()) << good;
  }
  EXPECT_TRUE(ValidateArrayName(std::string(128, 'x')).ok());
  for (const std::string& bad : {std::string(), std::string(129, 'x'), std::string("a/b"),
                                 std::string("a b"), std::string("\xc3\xa9")}) {
    EXPECT_EQ(ValidateArrayName(bad).code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST_F(NamedArraysTest, WithoutAStoreNothingIsWritten) {
  NamedArrays names(100);
  EXPECT_FALSE(names.durable());
  EXPECT_TRUE(names.PersistKeep("alice", "w", arrays_.F64(1), std::string(8, '\0')).ok());
  EXPECT_TRUE(names.PersistDelete("alice", {"w"}).ok());
}

TEST_F(NamedArraysTest, KeepsAndDeletesAreDurableWithAStore) {
  ScratchDir scratch;
  const std::string& dir = scratch.path;
  {
    NamedArrays names(100);
    ASSERT_NO_FATAL_FAILURE(OpenStore(names, dir));
    DeviceArray a = arrays_.F64(2);
    std::string bytes(16, '\0');
    bytes[0] = 7;
    ASSERT_TRUE(names.PersistKeep("alice", "kept", a, bytes).ok());
    ASSERT_TRUE(names.PersistKeep("alice", "gone", a, bytes).ok());
    ASSERT_TRUE(names.PersistDelete("alice", {"gone"}).ok());
  }  // the store (and its lock on the dir) goes with the table
  auto reopened = ArrayStore::Open(dir);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  std::vector<ArrayStore::Stored> stored = (*reopened)->Load();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].tenant, "alice");
  EXPECT_EQ(stored[0].name, "kept");
  EXPECT_EQ(stored[0].array.shape, (Shape{2}));
  EXPECT_EQ(stored[0].array.bytes[0], 7);
}

TEST_F(NamedArraysTest, AFailedWriteNamesTheArray) {
  ScratchDir scratch;
  NamedArrays names(100);
  ASSERT_NO_FATAL_FAILURE(OpenStore(names, scratch.path));
  // The data dir disappears under the server: the write fails, naming it.
  std::filesystem::remove_all(scratch.path);
  absl::Status s = names.PersistKeep("alice", "w", arrays_.F64(1), std::string(8, '\0'));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("keeping 'w'"));
}

}  // namespace
}  // namespace resident

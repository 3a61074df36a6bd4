// TenantLedger on its own: distinct buffers with reference counts, the one
// quota check, holds set aside and given back.
#include "server/session/tenant_ledger.h"

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/session/device_arrays.h"

namespace resident {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;
using testing_session::DeviceArrays;

QuotaConfig AliceQuota(int64_t bytes, int64_t arrays) {
  QuotaConfig q;
  q.tenants["alice"] = Quota{bytes, arrays};
  return q;
}

class TenantLedgerTest : public ::testing::Test {
 protected:
  // An array kept alive for the test (as a handle keeps it): a freed
  // buffer's address may come back for the next one.
  const DeviceArray& Held(int64_t n) { return held_.emplace_back(arrays_.F64(n)); }
  DeviceArrays arrays_;
  std::deque<DeviceArray> held_;
  std::mutex mu_;
};

TEST_F(TenantLedgerTest, ABufferHeldTwiceCountsOnce) {
  TenantLedger ledger(QuotaConfig(), mu_);
  std::lock_guard<std::mutex> lock(mu_);
  const DeviceArray a = arrays_.F64(10);                             // 80 bytes
  const DeviceArray reshaped = DeviceArrays::SameBuffer(a, {2, 5});  // same buffer
  const DeviceArray b = arrays_.F64(4);                              // 32 bytes
  ledger.AddRef("alice", a);
  ledger.AddRef("alice", reshaped);
  ledger.AddRef("alice", b);
  EXPECT_EQ(ledger.Usage("alice").bytes, 112);
  EXPECT_EQ(ledger.Usage("alice").arrays, 3);
  // The buffer counts while any reference holds it.
  ledger.DropRef("alice", a);
  EXPECT_EQ(ledger.Usage("alice").bytes, 112);
  EXPECT_EQ(ledger.Usage("alice").arrays, 2);
  ledger.DropRef("alice", reshaped);
  EXPECT_EQ(ledger.Usage("alice").bytes, 32);
  ledger.DropRef("alice", b);
  EXPECT_EQ(ledger.Usage("alice").bytes, 0);
  EXPECT_EQ(ledger.Usage("alice").arrays, 0);
  // Another tenant's references are its own.
  ledger.AddRef("bob", a);
  EXPECT_EQ(ledger.Usage("bob").bytes, 80);
  EXPECT_EQ(ledger.Usage("alice").bytes, 0);
  EXPECT_EQ(ledger.Usage("nobody").arrays, 0);
}

TEST_F(TenantLedgerTest, FitsChecksBytesThenArraysAndChangesNothing) {
  TenantLedger ledger(AliceQuota(100, 2), mu_);
  std::lock_guard<std::mutex> lock(mu_);
  ledger.AddRef("alice", Held(10));  // 80 bytes, 1 array
  EXPECT_TRUE(ledger.Fits("alice", 20, 1).ok());
  absl::Status over = ledger.Fits("alice", 21, 1);
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(over.message(),
            "tenant 'alice' quota of 100 device bytes would be exceeded: it holds 80 bytes "
            "and this needs up to 21 more; release or delete arrays first");
  absl::Status too_many = ledger.Fits("alice", 0, 2);
  EXPECT_EQ(too_many.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(too_many.message(),
            "tenant 'alice' quota of 2 arrays would be exceeded: it holds 1 handles and names "
            "and this needs 2 more; release or delete arrays first");
  // A need larger than the whole quota, and one near INT64_MAX: no overflow.
  EXPECT_FALSE(ledger.Fits("alice", 101, 0).ok());
  EXPECT_FALSE(ledger.Fits("alice", Quota::kUnlimited, 0).ok());
  EXPECT_EQ(ledger.Usage("alice").reserved_bytes, 0);
  // Other tenants have the default: unlimited.
  EXPECT_TRUE(ledger.Fits("bob", Quota::kUnlimited, Quota::kUnlimited).ok());
  EXPECT_TRUE(ledger.Fits("bob", int64_t{1} << 62, 0).ok());
}

TEST_F(TenantLedgerTest, HoldsSetAsideAndGiveBack) {
  TenantLedger ledger(AliceQuota(100, 3), mu_);
  // Declared before the lock, so that any hold left at the end is destroyed
  // after it is unlocked.
  absl::StatusOr<std::unique_ptr<QuotaHold>> first, second, third, fourth;
  std::unique_lock<std::mutex> lock(mu_);
  first = ledger.Hold("alice", 60, 1);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(ledger.Usage("alice").reserved_bytes, 60);
  EXPECT_EQ(ledger.Usage("alice").bytes, 0);
  // What is set aside counts against the next hold, and the message says so.
  second = ledger.Hold("alice", 50, 1);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr("it holds 0 bytes (and 60 are reserved by calls in flight) and this "
                        "needs up to 50 more"));
  EXPECT_EQ(ledger.Usage("alice").reserved_bytes, 60) << "a refused hold sets nothing aside";
  third = ledger.Hold("alice", 40, 2);
  ASSERT_TRUE(third.ok()) << third.status();
  fourth = ledger.Hold("alice", 0, 1);
  ASSERT_FALSE(fourth.ok());
  EXPECT_THAT(std::string(fourth.status().message()),
              HasSubstr("it holds 0 handles and names (and 3 are reserved by calls in flight)"));
  // Destroying a hold takes the lock itself.
  lock.unlock();
  first->reset();
  lock.lock();
  EXPECT_EQ(ledger.Usage("alice").reserved_bytes, 40);
  EXPECT_TRUE(ledger.Fits("alice", 60, 1).ok());
  EXPECT_FALSE(ledger.Fits("alice", 61, 1).ok());
  lock.unlock();
  third->reset();
  lock.lock();
  EXPECT_EQ(ledger.Usage("alice").reserved_bytes, 0);
}

TEST_F(TenantLedgerTest, HoldsGoBackFromAnyThread) {
  TenantLedger ledger(AliceQuota(1000, 1000), mu_);
  std::vector<std::unique_ptr<QuotaHold>> holds;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < 100; ++i) holds.push_back(*ledger.Hold("alice", 10, 10));
    EXPECT_FALSE(ledger.Fits("alice", 1, 0).ok());
  }
  std::thread t1([&] {
    for (int i = 0; i < 50; ++i) holds[i].reset();
  });
  std::thread t2([&] {
    for (int i = 50; i < 100; ++i) holds[i].reset();
  });
  t1.join();
  t2.join();
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_EQ(ledger.Usage("alice").reserved_bytes, 0);
  EXPECT_TRUE(ledger.Fits("alice", 1000, 1000).ok());
}

TEST_F(TenantLedgerTest, AllListsEveryTenantThatHeldOrAsked) {
  TenantLedger ledger(AliceQuota(10, 10), mu_);
  absl::StatusOr<std::unique_ptr<QuotaHold>> refused;  // outlives the lock
  std::lock_guard<std::mutex> lock(mu_);
  ledger.AddRef("bob", Held(1));
  refused = ledger.Hold("alice", 11, 0);
  EXPECT_FALSE(refused.ok());                    // refused, but alice asked
  EXPECT_TRUE(ledger.Fits("carol", 1, 1).ok());  // only a question: not listed
  EXPECT_THAT(ledger.All(),
              UnorderedElementsAre(Pair("alice", ::testing::_), Pair("bob", ::testing::_)));
}

TEST_F(TenantLedgerTest, OverQuotaNamesTenantsHoldingTooMuch) {
  // As after a restart with a lowered quota: what is loaded stays, but the
  // tenant is over.
  TenantLedger ledger(AliceQuota(100, 1), mu_);
  std::lock_guard<std::mutex> lock(mu_);
  ledger.AddRef("alice", Held(10));
  EXPECT_TRUE(ledger.OverQuota().empty()) << "at the quota is not over it";
  ledger.AddRef("alice", Held(1));
  ledger.AddRef("bob", Held(1000));
  auto over = ledger.OverQuota();
  ASSERT_EQ(over.size(), 1u);
  EXPECT_EQ(over[0].first, "alice");
  EXPECT_EQ(over[0].second.bytes, 88);
  EXPECT_EQ(over[0].second.arrays, 2);
}

TEST_F(TenantLedgerTest, HostBytesGrowWithBuffers) {
  TenantLedger ledger(QuotaConfig(), mu_);
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t empty = ledger.HostBytes();
  std::vector<DeviceArray> held;
  for (int i = 0; i < 100; ++i) {
    held.push_back(arrays_.F64(1));
    ledger.AddRef("alice", held.back());
  }
  EXPECT_GT(ledger.HostBytes(), empty + 100 * static_cast<int64_t>(sizeof(void*)));
  ledger.Clear();
  EXPECT_EQ(ledger.Usage("alice").arrays, 0);
}

}  // namespace
}  // namespace resident

// --device parsing (ParseDeviceList, UniqueDeviceNames) and placement
// (DeviceSet::LeastLoaded, Find) over CPU backend instances.
#include "server/device/device_set.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu/cpu_backend.h"

namespace resident {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Parse(const std::string& list, int cuda) {
  absl::StatusOr<std::vector<std::string>> r = ParseDeviceList(list, cuda);
  EXPECT_TRUE(r.ok()) << list << ": " << r.status();
  return r.ok() ? *r : std::vector<std::string>{};
}

TEST(ParseDeviceList, AutoAndAll) {
  EXPECT_THAT(Parse("auto", -1), ElementsAre("cpu"));
  EXPECT_THAT(Parse("auto", 0), ElementsAre("cpu"));
  EXPECT_THAT(Parse("auto", 4), ElementsAre("cuda:0"));
  EXPECT_THAT(Parse("all", -1), ElementsAre("cpu"));
  EXPECT_THAT(Parse("all", 0), ElementsAre("cpu"));
  EXPECT_THAT(Parse("all", 3), ElementsAre("cuda:0", "cuda:1", "cuda:2"));
}

TEST(ParseDeviceList, ListsInOrderWithRepeats) {
  EXPECT_THAT(Parse("cpu", -1), ElementsAre("cpu"));
  EXPECT_THAT(Parse("cpu,cpu", -1), ElementsAre("cpu", "cpu"));
  EXPECT_THAT(Parse(" cpu , cpu ", -1), ElementsAre("cpu", "cpu"));
  EXPECT_THAT(Parse("cuda:2,cuda:0", 4), ElementsAre("cuda:2", "cuda:0"));
  EXPECT_THAT(Parse("cuda:0,cuda:0", 1), ElementsAre("cuda:0", "cuda:0"));
}

TEST(ParseDeviceList, BadListsAreInvalidArgument) {
  struct Case {
    std::string list;
    int cuda;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"", 1, "empty"},
      {"   ", 1, "empty"},
      {"cpu,", 1, "entry 1 is empty"},
      {",cpu", 1, "entry 0 is empty"},
      {"cpu,,cpu", 1, "entry 1 is empty"},
      {"gpu", 1, "unknown device 'gpu'"},
      {"cuda", 1, "unknown device 'cuda'"},
      {"cuda:", 1, "unknown device"},
      {"cuda:-1", 1, "unknown device"},
      {"cuda:+1", 1, "unknown device"},
      {"cuda:0x1", 1, "unknown device"},
      {"cuda:99999999999", 1, "unknown device"},
      {"cuda:1", 1, "out of range: 1 CUDA device(s)"},
      {"cuda:0", 0, "out of range: 0 CUDA device(s)"},
      {"cuda:0", -1, "needs CUDA support"},
      {"cpu,cuda:0", 1, "cannot be mixed"},
      {"auto,cpu", 1, "auto stands alone"},
      {"all,all", 1, "all stands alone"},
      {"CPU", 1, "unknown device"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<std::string>> r = ParseDeviceList(c.list, c.cuda);
    ASSERT_FALSE(r.ok()) << "'" << c.list << "'";
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.list;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.says)) << c.list;
  }
  std::string many = "cpu";
  for (int i = 1; i <= kMaxDevices; ++i) many += ",cpu";
  EXPECT_FALSE(ParseDeviceList(many, -1).ok());
  std::string hostile(100000, 'x');
  absl::StatusOr<std::vector<std::string>> r = ParseDeviceList(hostile, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.status().message().size(), 300u) << "the entry is not echoed in full";
}

TEST(UniqueDeviceNames, RepeatsGetACount) {
  EXPECT_THAT(UniqueDeviceNames({"cpu", "cpu", "cpu"}), ElementsAre("cpu", "cpu#1", "cpu#2"));
  EXPECT_THAT(UniqueDeviceNames({"cuda:0", "cuda:1", "cuda:0"}),
              ElementsAre("cuda:0", "cuda:1", "cuda:0#1"));
}

std::unique_ptr<DeviceSet> CpuSet(int n, int64_t limit) {
  std::vector<std::string> names = UniqueDeviceNames(std::vector<std::string>(n, "cpu"));
  std::vector<std::unique_ptr<Device>> devices;
  for (int i = 0; i < n; ++i) {
    devices.push_back(std::make_unique<Device>(NewCpuBackend(), limit, i, names[i]));
  }
  return std::make_unique<DeviceSet>(std::move(devices));
}

TEST(DeviceSet, LeastLoadedCountsUsedAndReservedTiesToLowestIndex) {
  std::unique_ptr<DeviceSet> set = CpuSet(3, 1000);
  EXPECT_EQ(set->LeastLoaded().index(), 0);
  std::unique_ptr<Stream> s0 = set->at(0).backend().NewStream();
  absl::StatusOr<std::shared_ptr<Buffer>> b0 = set->at(0).Allocate(100, *s0);
  ASSERT_TRUE(b0.ok());
  EXPECT_EQ(set->LeastLoaded().index(), 1);
  absl::StatusOr<MemoryBudget::Reservation> r1 = set->at(1).budget().Reserve(200);
  ASSERT_TRUE(r1.ok());
  EXPECT_EQ(set->LeastLoaded().index(), 2);
  absl::StatusOr<MemoryBudget::Reservation> r2 = set->at(2).budget().Reserve(100);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(set->LeastLoaded().index(), 0) << "0 and 2 tie at 900 free";
  b0->reset();  // the charge goes back
  EXPECT_EQ(set->at(0).budget().used(), 0);
  EXPECT_EQ(set->LeastLoaded().index(), 0);
}

TEST(DeviceSet, FindByIndexOrName) {
  std::unique_ptr<DeviceSet> set = CpuSet(2, 0);
  EXPECT_EQ((*set->Find("1"))->name(), "cpu#1");
  EXPECT_EQ((*set->Find("0"))->name(), "cpu");
  EXPECT_EQ((*set->Find("cpu#1"))->index(), 1);
  EXPECT_EQ((*set->Find("cpu"))->index(), 0);
  EXPECT_EQ((*set->Find(""))->index(), 0);
  for (const char* bad : {"2", "007x", "cpu#2", "cuda:0", "-1", "99999999999"}) {
    absl::StatusOr<Device*> d = set->Find(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(d.status().message()), HasSubstr("0=cpu, 1=cpu#1")) << bad;
  }
  EXPECT_EQ(set->FirstPoisoned(), nullptr);
}

TEST(DeviceSet, PeerCopyBetweenInstancesIsChargedOnTheDestination) {
  std::unique_ptr<DeviceSet> set = CpuSet(2, 64);
  Device& a = set->at(0);
  Device& b = set->at(1);
  std::unique_ptr<Stream> sa = a.backend().NewStream();
  std::unique_ptr<Stream> sb = b.backend().NewStream();
  DeviceArray x{nullptr, DType::kInt64, {4}};
  x.buffer = *a.Allocate(32, *sa);
  const int64_t v[4] = {7, -1, 1LL << 40, 0};
  ASSERT_TRUE(sa->CopyToDevice(v, *x.buffer, 0, 32).ok());
  EXPECT_EQ(DeviceOf(x, nullptr), &a);
  {
    absl::StatusOr<DeviceArray> y = b.CopyFrom(x, *sb);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(DeviceOf(*y, nullptr), &b);
    EXPECT_EQ(b.budget().used(), 32);
    EXPECT_EQ(b.peer_copies(), 1);
    EXPECT_EQ(b.peer_copy_bytes(), 32);
    int64_t back[4] = {};
    ASSERT_TRUE(sb->CopyToHost(*y->buffer, 0, back, 32).ok());
    EXPECT_EQ(back[2], 1LL << 40);
    EXPECT_EQ(back[1], -1);
    // Over the destination's budget: refused there, nothing charged.
    absl::StatusOr<DeviceArray> z = b.CopyFrom(*y, *sb);
    ASSERT_TRUE(z.ok());
    absl::StatusOr<DeviceArray> w = b.CopyFrom(x, *sb);
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(b.peer_copies(), 1) << "a copy within one device is not a peer copy";
  }
  EXPECT_EQ(b.budget().used(), 0) << "released with the copies";
  EXPECT_EQ(a.budget().used(), 32);
}

}  // namespace
}  // namespace resident

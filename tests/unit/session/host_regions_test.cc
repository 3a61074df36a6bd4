// Shared-memory regions on their own: what HostRegion::Map accepts (a
// tmpfs memfd sealed against shrinking, at least as large as asked, even
// while its client races to shrink and seal it), the ranges it hands out
// (prefaulted), and RegionTable's ownership, limits and erasure.
#include "server/session/host_regions.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu/cpu_backend.h"
#include "tests/support/memfd.h"

namespace resident {
namespace {

using ::testing::HasSubstr;
using testing_support::Memfd;

bool IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

class HostRegionTest : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> backend_ = NewCpuBackend(1);
};

TEST_F(HostRegionTest, MapsASealedMemfdAndSharesItsBytes) {
  const int fd = Memfd(1 << 16, true);
  const int mine = dup(fd);
  absl::StatusOr<std::shared_ptr<HostRegion>> r = HostRegion::Map(fd, 1 << 16, *backend_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->bytes(), 1 << 16);
  absl::StatusOr<char*> p = (*r)->Range(100, 5, HostRegion::Access::kWrite);
  ASSERT_TRUE(p.ok());
  std::memcpy(*p, "hello", 5);
  char back[5];
  ASSERT_EQ(pread(mine, back, 5, 100), 5);  // the same memory as the client's
  EXPECT_EQ(std::memcmp(back, "hello", 5), 0);
  r->reset();
  EXPECT_FALSE(IsOpen(fd)) << "the region closes the descriptor it took";
  close(mine);
}

TEST_F(HostRegionTest, RangesOutsideTheRegionAreRefused) {
  auto r = HostRegion::Map(Memfd(4096, true), 4096, *backend_);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)->Range(0, 4096, HostRegion::Access::kRead).ok());
  EXPECT_TRUE((*r)->Range(4096, 0, HostRegion::Access::kWrite).ok());
  for (auto [off, n] :
       {std::pair<int64_t, int64_t>{4000, 97}, {-1, 1}, {0, -1}, {4097, 0}, {1, INT64_MAX}}) {
    absl::StatusOr<char*> p = (*r)->Range(off, n, HostRegion::Access::kRead);
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << off << " " << n;
  }
}

TEST_F(HostRegionTest, RefusesWhatCouldFaultTheServer) {
  struct Case {
    int fd;
    int64_t bytes;
    const char* words;
  };
  const Case cases[] = {
      {Memfd(4096, false), 4096, "not sealed against shrinking"},
      {Memfd(4096, true), 8192, "fewer than the 8192"},
      {Memfd(4096, true), 0, "positive size"},
      {open("/dev/null", O_RDONLY | O_CLOEXEC), 4096, "not shared memory"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::shared_ptr<HostRegion>> r = HostRegion::Map(c.fd, c.bytes, *backend_);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr(c.words));
    EXPECT_FALSE(IsOpen(c.fd)) << "closed on refusal too: " << c.words;
  }
  EXPECT_EQ(HostRegion::Map(-1, 4096, *backend_).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(HostRegionTest, RefusesHugetlbMemfds) {
  const int fd = memfd_create("region-test-huge", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_HUGETLB);
  if (fd < 0) GTEST_SKIP() << "no hugetlbfs memfd on this host: " << std::strerror(errno);
  const int64_t huge = 2 << 20;
  if (ftruncate(fd, huge) != 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
    close(fd);
    GTEST_SKIP() << "cannot size and seal a hugetlbfs memfd here: " << std::strerror(errno);
  }
  absl::StatusOr<std::shared_ptr<HostRegion>> r = HostRegion::Map(fd, huge, *backend_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("hugetlbfs"));
  EXPECT_FALSE(IsOpen(fd));
}

// Range hands out pages already present (a sparse memfd's holes filled), so
// the caller's copy cannot fault; only the pages of the range, rounded out
// to whole pages.
TEST_F(HostRegionTest, RangesArePrefaulted) {
  const int64_t page = sysconf(_SC_PAGESIZE);
  auto r = HostRegion::Map(Memfd(16 * page, true), 16 * page, *backend_);  // all holes
  ASSERT_TRUE(r.ok()) << r.status();
  char* base = *(*r)->Range(0, 0, HostRegion::Access::kRead);
  auto resident = [&] {
    unsigned char v[16];
    EXPECT_EQ(mincore(base, 16 * page, v), 0);
    std::string s;
    for (unsigned char b : v) s += (b & 1) ? '1' : '0';
    return s;
  };
  ASSERT_EQ(resident(), "0000000000000000");
  ASSERT_TRUE((*r)->Range(page + 1, 2 * page, HostRegion::Access::kRead).ok());   // pages 1..3
  ASSERT_TRUE((*r)->Range(8 * page, page + 1, HostRegion::Access::kWrite).ok());  // pages 8, 9
  EXPECT_EQ(resident(), "0111000011000000");
  EXPECT_EQ(base[3 * page], 0);
}

// The race of issue 43: a client shrinks its memfd and then seals it while
// Map checks it. Map must never accept a region longer than the file (the
// next access would be a SIGBUS of the server). Each attempt races one of:
// shrink then seal (never acceptable), seal alone, grow a sealed file (both
// acceptable once the seal is there); every accepted region is checked
// against the file and read and written whole.
TEST_F(HostRegionTest, ARegisterRacingShrinkAndSealIsNeverMappedPastTheEnd) {
  constexpr int64_t kBytes = 16 * 4096;
  std::atomic<int> attempts{0}, accepted{0}, refused{0}, bad{0};
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  // One racer: Map against a client thread woken for each attempt, Map
  // starting 0-40 us after the wake-up, so that over many attempts the
  // client's shrink-and-seal lands at every point of Map's checks. Several
  // racers at once, more threads than cores, so that Map is also preempted
  // between its checks (how the race was first hit through the server).
  auto racer = [&](unsigned seed) {
    struct Round {
      int fd;
      int kind;  // 0 shrink then seal, 1 seal, 2 grow (already sealed)
    };
    Round round{};
    std::binary_semaphore go{0}, done{0};
    bool stop = false;
    std::thread client([&] {
      while (true) {
        go.acquire();
        if (stop) return;
        if (round.kind == 0) (void)!ftruncate(round.fd, 4096);
        if (round.kind == 2) (void)!ftruncate(round.fd, 2 * kBytes);
        if (round.kind != 2) fcntl(round.fd, F_ADD_SEALS, F_SEAL_SHRINK);
        done.release();
      }
    });
    std::mt19937 rng(seed);
    while (std::chrono::steady_clock::now() < until && bad == 0) {
      const int attempt = ++attempts;
      const int kind = static_cast<int>(rng() % 3);
      const int mine = Memfd(kBytes, kind == 2);
      round = Round{mine, kind};
      const auto at = std::chrono::steady_clock::now() + std::chrono::nanoseconds(rng() % 40000);
      go.release();
      while (std::chrono::steady_clock::now() < at) {
      }
      absl::StatusOr<std::shared_ptr<HostRegion>> r = HostRegion::Map(dup(mine), kBytes, *backend_);
      done.acquire();
      struct stat st {};
      if (!r.ok()) {
        ++refused;
        EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
      } else if (fstat(mine, &st) != 0 || st.st_size < kBytes) {
        ++bad;  // touching it would be the SIGBUS
        ADD_FAILURE() << "accepted past the memfd's end: race " << kind << ", attempt " << attempt;
      } else {
        ++accepted;
        absl::StatusOr<char*> w = (*r)->Range(0, kBytes, HostRegion::Access::kWrite);
        absl::StatusOr<char*> rd = (*r)->Range(0, kBytes, HostRegion::Access::kRead);
        EXPECT_TRUE(w.ok() && rd.ok()) << w.status() << " " << rd.status();
        if (w.ok() && rd.ok()) {
          (*w)[kBytes - 1] = 1;
          EXPECT_EQ((*rd)[kBytes - 1], 1);
        }
      }
      close(mine);
    }
    stop = true;
    go.release();
    client.join();
  };
  std::vector<std::thread> racers;
  for (unsigned i = 0; i < 4; ++i) racers.emplace_back(racer, 43 + i);
  for (std::thread& t : racers) t.join();
  std::printf("%d attempts: %d accepted, %d refused\n", attempts.load(), accepted.load(),
              refused.load());
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
}

class RegionTableTest : public HostRegionTest {
 protected:
  std::shared_ptr<HostRegion> Region(int64_t bytes) {
    return *HostRegion::Map(Memfd(bytes, true), bytes, *backend_);
  }
  TableLimits Limits(int64_t regions, int64_t bytes) {
    TableLimits l;
    l.max_regions_per_tenant = regions;
    l.max_region_bytes_per_tenant = bytes;
    return l;
  }
  const HandleId s1_ = HandleId::Random(), s2_ = HandleId::Random();
};

TEST_F(RegionTableTest, ARegionIsItsSessionsAlone) {
  RegionTable t(Limits(8, 1 << 20));
  absl::StatusOr<HandleId> id = t.Insert("alice", s1_, 1, Region(4096));
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(t.Find("alice", s1_, *id).ok());
  EXPECT_EQ(t.Find("alice", s2_, *id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(t.Find("bob", s1_, *id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(t.Find("alice", s1_, HandleId::Random()).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(t.Remove("bob", s1_, *id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(t.Remove("alice", s1_, *id).ok());
  EXPECT_EQ(t.Find("alice", s1_, *id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(t.Total().regions, 0);
}

TEST_F(RegionTableTest, LimitsPerTenantNameTheirFlags) {
  RegionTable t(Limits(2, 12288));
  ASSERT_TRUE(t.Insert("alice", s1_, 1, Region(4096)).ok());
  ASSERT_TRUE(t.Insert("alice", s1_, 1, Region(4096)).ok());
  absl::StatusOr<HandleId> third = t.Insert("alice", s1_, 1, Region(4096));
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(third.status().message(), HasSubstr("--max-regions-per-tenant"));
  EXPECT_TRUE(t.Insert("bob", s2_, 2, Region(4096)).ok()) << "per tenant";
  absl::Status big = t.CheckRoom("bob", 12288);
  EXPECT_EQ(big.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(big.message(), HasSubstr("--max-region-bytes-per-tenant"));
  EXPECT_EQ(t.TenantUsage("alice").regions, 2);
  EXPECT_EQ(t.TenantUsage("alice").bytes, 8192);
}

TEST_F(RegionTableTest, SessionsAndConnectionsTakeTheirRegionsWithThem) {
  RegionTable t(Limits(8, 1 << 20));
  ASSERT_TRUE(t.Insert("alice", s1_, 1, Region(4096)).ok());
  ASSERT_TRUE(t.Insert("alice", s1_, 2, Region(4096)).ok());
  ASSERT_TRUE(t.Insert("alice", s2_, 2, Region(4096)).ok());
  EXPECT_EQ(t.EraseOwner(2).size(), 2u);
  EXPECT_EQ(t.Total().regions, 1);
  // A transfer holding a region keeps it mapped after its session is gone.
  absl::StatusOr<HandleId> id = t.Insert("alice", s1_, 3, Region(4096));
  std::shared_ptr<HostRegion> held = *t.Find("alice", s1_, *id);
  EXPECT_EQ(t.EraseSession(s1_).size(), 2u);
  EXPECT_EQ(t.Total().regions, 0);
  EXPECT_TRUE(held->Range(0, 4096, HostRegion::Access::kRead).ok());
  std::memset(*held->Range(0, 4096, HostRegion::Access::kWrite), 7, 4096);  // still mapped
}

}  // namespace
}  // namespace resident

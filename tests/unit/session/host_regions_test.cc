// Shared-memory regions on their own: what HostRegion::Map accepts (a
// memfd sealed against shrinking, at least as large as asked), the ranges it
// hands out, and RegionTable's ownership, limits and erasure.
#include "server/session/host_regions.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu/cpu_backend.h"

namespace resident {
namespace {

using ::testing::HasSubstr;

int Memfd(int64_t size, bool seal) {
  const int fd = memfd_create("region-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(ftruncate(fd, size), 0);
  if (seal) {
    EXPECT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
  }
  return fd;
}

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
  absl::StatusOr<char*> p = (*r)->Range(100, 5);
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
  EXPECT_TRUE((*r)->Range(0, 4096).ok());
  EXPECT_TRUE((*r)->Range(4096, 0).ok());
  for (auto [off, n] :
       {std::pair<int64_t, int64_t>{4000, 97}, {-1, 1}, {0, -1}, {4097, 0}, {1, INT64_MAX}}) {
    absl::StatusOr<char*> p = (*r)->Range(off, n);
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
  EXPECT_TRUE(held->Range(0, 4096).ok());
  std::memset(*held->Range(0, 4096), 7, 4096);  // still mapped
}

}  // namespace
}  // namespace resident

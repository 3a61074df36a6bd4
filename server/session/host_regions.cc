#include "server/session/host_regions.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/log.h"
#include "core/status_macros.h"

namespace resident {

// --- HostRegion ---------------------------------------------------------------

absl::StatusOr<std::shared_ptr<HostRegion>> HostRegion::Map(int fd, int64_t bytes,
                                                            Backend& backend) {
  auto refuse = [fd](std::string why) {
    close(fd);
    return absl::InvalidArgumentError(std::move(why));
  };
  if (fd < 0) return absl::InvalidArgumentError("the region request carried no file descriptor");
  if (bytes <= 0) return refuse(absl::StrCat("a region needs a positive size, not ", bytes));
  struct stat st {};
  struct statfs fs {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || fstatfs(fd, &fs) != 0) {
    return refuse("the region's file descriptor is not shared memory (memfd_create)");
  }
  if (static_cast<uint64_t>(fs.f_type) == HUGETLBFS_MAGIC) {
    return refuse(
        "the region's memfd is on hugetlbfs (MFD_HUGETLB), which is refused: when huge pages "
        "run out, a page of it can fault the server; create it without MFD_HUGETLB");
  }
  if (static_cast<uint64_t>(fs.f_type) != TMPFS_MAGIC) {
    return refuse("the region's file descriptor is not shared memory (memfd_create)");
  }
  // The seals first, then the size: a file sealed against shrinking can
  // only grow, so the size read after them holds for the region's life. (In
  // the other order a client could shrink the file, then seal it, between
  // the two checks, and have a region mapped past its end.)
  const int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    return refuse(
        "the region's memfd is not sealed against shrinking: create it with "
        "MFD_ALLOW_SEALING and add F_SEAL_SHRINK (a region that could shrink under the "
        "server would fault its transfers)");
  }
  if (fstat(fd, &st) != 0) {
    return refuse("the region's file descriptor is not shared memory (memfd_create)");
  }
  if (st.st_size < bytes) {
    return refuse(absl::StrCat("the region's memfd holds ", st.st_size, " bytes, fewer than the ",
                               bytes, " asked for"));
  }
  void* p = mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    return refuse(absl::StrCat("the region cannot be mapped read-write (", std::strerror(err),
                               "); is it sealed against writes?"));
  }
  std::shared_ptr<HostRegion> region(new HostRegion(fd, static_cast<char*>(p), bytes));
  absl::StatusOr<std::shared_ptr<void>> pin = backend.RegisterHost(p, bytes);
  if (pin.ok()) {
    region->pin_ = *std::move(pin);
    region->pinned_ = true;
  } else {
    RESIDENT_LOG(kWarning, "a shared-memory region of ", bytes,
                 " bytes is used unpinned: ", pin.status().message());
  }
  return region;
}

HostRegion::~HostRegion() {
  pin_.reset();  // unregister before unmapping
  munmap(data_, static_cast<size_t>(bytes_));
  close(fd_);
}

absl::StatusOr<char*> HostRegion::Range(int64_t offset, int64_t n, Access access) const {
  if (offset < 0 || n < 0 || offset > bytes_ || n > bytes_ - offset) {
    return absl::InvalidArgumentError(absl::StrCat("bytes [", offset, ", ", offset, " + ", n,
                                                   ") are outside the region of ", bytes_,
                                                   " bytes"));
  }
  if (n == 0) return data_ + offset;
  // Bring every page in now, through a call that answers an error where a
  // load or store would raise SIGBUS (a page the file cannot back).
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data_ + offset) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(data_ + offset + n);
  const int advice = access == Access::kRead ? MADV_POPULATE_READ : MADV_POPULATE_WRITE;
  int rc;
  do {
    rc = madvise(reinterpret_cast<void*>(begin), end - begin, advice);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int err = errno;
    if (err == EINVAL) return data_ + offset;  // a kernel before 5.14: no MADV_POPULATE_*
    const char* what = access == Access::kRead ? "read" : "written";
    if (err == ENOMEM || err == EAGAIN) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "bytes [", offset, ", ", offset, " + ", n, ") of the region cannot be ", what,
          ": the host has no memory for their pages (", std::strerror(err), ")"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("bytes [", offset, ", ", offset, " + ", n, ") of the region cannot be ", what,
                     ": its memfd cannot back them (", std::strerror(err), "); nothing was done"));
  }
  return data_ + offset;
}

// --- RegionTable ----------------------------------------------------------------

namespace {
absl::Status RegionNotFound() {
  return absl::NotFoundError("no such shared-memory region in this session");
}
}  // namespace

absl::Status RegionTable::CheckRoom(const std::string& tenant, int64_t bytes) const {
  std::lock_guard<std::mutex> lock(mu_);
  return CheckRoomLocked(tenant, bytes);
}

absl::Status RegionTable::CheckRoomLocked(const std::string& tenant, int64_t bytes) const {
  auto it = usage_.find(tenant);
  const Usage u = it == usage_.end() ? Usage{} : it->second;
  if (u.regions >= limits_.max_regions_per_tenant) {
    return TenantLimitReached(tenant, u.regions, "shared-memory regions",
                              "the server's limit per tenant", "--max-regions-per-tenant",
                              "release some first");
  }
  if (bytes > limits_.max_region_bytes_per_tenant - u.bytes) {
    return TenantLimitReached(
        tenant, u.bytes, "bytes of shared-memory regions",
        absl::StrCat("and one more of ", bytes, " would pass the server's limit per tenant of ",
                     limits_.max_region_bytes_per_tenant),
        "--max-region-bytes-per-tenant", "release some first");
  }
  return absl::OkStatus();
}

absl::StatusOr<HandleId> RegionTable::Insert(const std::string& tenant, const HandleId& session,
                                             uint64_t owner, std::shared_ptr<HostRegion> region) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(CheckRoomLocked(tenant, region->bytes()));
  HandleId id = HandleId::Random();
  Usage& u = usage_[tenant];
  ++u.regions;
  u.bytes += region->bytes();
  entries_.emplace(id, Entry{tenant, session, owner, std::move(region)});
  return id;
}

absl::StatusOr<std::shared_ptr<HostRegion>> RegionTable::Find(const std::string& tenant,
                                                              const HandleId& session,
                                                              const HandleId& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.tenant != tenant || !(it->second.session == session)) {
    return RegionNotFound();
  }
  return it->second.region;
}

absl::StatusOr<std::shared_ptr<HostRegion>> RegionTable::Remove(const std::string& tenant,
                                                                const HandleId& session,
                                                                const HandleId& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.tenant != tenant || !(it->second.session == session)) {
    return RegionNotFound();
  }
  std::shared_ptr<HostRegion> region = std::move(it->second.region);
  entries_.erase(it);
  Forget(tenant, region->bytes());
  return region;
}

std::vector<std::shared_ptr<HostRegion>> RegionTable::EraseSession(const HandleId& session) {
  return EraseIf([&](const Entry& e) { return e.session == session; });
}

std::vector<std::shared_ptr<HostRegion>> RegionTable::EraseOwner(uint64_t owner) {
  return EraseIf([&](const Entry& e) { return e.owner == owner; });
}

std::vector<std::shared_ptr<HostRegion>> RegionTable::EraseIf(
    const std::function<bool(const Entry&)>& pred) {
  std::vector<std::shared_ptr<HostRegion>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (pred(it->second)) {
      Forget(it->second.tenant, it->second.region->bytes());
      out.push_back(std::move(it->second.region));
      entries_.erase(it++);
    } else {
      ++it;
    }
  }
  return out;
}

void RegionTable::Forget(const std::string& tenant, int64_t bytes) {
  auto it = usage_.find(tenant);
  if (it == usage_.end()) return;
  --it->second.regions;
  it->second.bytes -= bytes;
  if (it->second.regions <= 0) usage_.erase(it);
}

RegionTable::Usage RegionTable::TenantUsage(const std::string& tenant) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = usage_.find(tenant);
  return it == usage_.end() ? Usage{} : it->second;
}

RegionTable::Usage RegionTable::Total() const {
  std::lock_guard<std::mutex> lock(mu_);
  Usage t;
  for (const auto& [tenant, u] : usage_) {
    t.regions += u.regions;
    t.bytes += u.bytes;
  }
  return t;
}

}  // namespace resident

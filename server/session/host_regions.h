// Shared-memory regions of clients on the server's host: a client's memfd,
// mapped here and registered with the device once, that uploads read from
// and downloads write into with no bytes on the network.
//
// A region belongs to one session of one tenant and to the local-data
// connection that brought it (its `owner`): no other session can name it
// (NOT_FOUND, as for a foreign handle), and it goes when it is released,
// its session ends or its connection closes. A transfer holds its region
// (the shared_ptr), so the memory is unregistered and unmapped only after
// the last transfer using it is done.
//
// A client's mapping must never fault the server (a SIGBUS kills every
// tenant's work): Map takes only plain shared memory (tmpfs) sealed against
// shrinking, checking the seals before the size, and Range prefaults what it
// hands out, so a page that cannot be backed is an error of that request.
//
// Thread-safety: RegionTable locks itself; its mutex is a leaf. HostRegion
// is immutable after Map.
//
//   ASSIGN_OR_RETURN(std::shared_ptr<HostRegion> r, HostRegion::Map(fd, bytes, backend));
//   ASSIGN_OR_RETURN(HandleId id, table.Insert(tenant, session, owner, r));
//   ASSIGN_OR_RETURN(char* p, r->Range(offset, n, HostRegion::Access::kRead));
#ifndef RESIDENT_SERVER_SESSION_HOST_REGIONS_H_
#define RESIDENT_SERVER_SESSION_HOST_REGIONS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/handle_id.h"
#include "server/device/backend.h"
#include "server/session/table_limits.h"

namespace resident {

class HostRegion {
 public:
  // How the caller will touch a range: Range prefaults its pages for that.
  enum class Access { kRead, kWrite };

  // Maps the first `bytes` of `fd` (taken over: closed here, also on
  // error) read-write and registers them with `backend`. INVALID_ARGUMENT
  // unless fd is plain shared memory (a memfd on tmpfs; hugetlbfs is refused:
  // its pages can run out after a hole punch, faulting the server), sealed
  // against shrinking (F_SEAL_SHRINK: a client that could shrink it would
  // make the server's next access a SIGBUS), at least `bytes` long (checked
  // after the seals: a sealed file can only grow) and writable. A region the
  // backend cannot register still works, unpinned (pinned() false).
  static absl::StatusOr<std::shared_ptr<HostRegion>> Map(int fd, int64_t bytes, Backend& backend);
  ~HostRegion();  // unregisters, unmaps, closes
  HostRegion(const HostRegion&) = delete;
  HostRegion& operator=(const HostRegion&) = delete;

  int64_t bytes() const { return bytes_; }
  // Ready for the device's fastest copies (registered, or a device that
  // needs no registration); false when registration failed.
  bool pinned() const { return pinned_; }
  // The memory of [offset, offset + n), its pages made present for `access`
  // first (MADV_POPULATE_READ / _WRITE), so the caller's reads or writes do
  // not fault on a page that cannot be backed: that is this error instead.
  // INVALID_ARGUMENT outside the region or for pages that cannot be brought
  // in (a SIGBUS had the caller touched them); RESOURCE_EXHAUSTED when the
  // host has no memory for them. On a kernel without MADV_POPULATE_* (before
  // Linux 5.14) the range is handed out unprefaulted.
  absl::StatusOr<char*> Range(int64_t offset, int64_t n, Access access) const;

 private:
  HostRegion(int fd, char* data, int64_t bytes) : fd_(fd), data_(data), bytes_(bytes) {}
  const int fd_;
  char* const data_;
  const int64_t bytes_;
  std::shared_ptr<void> pin_;  // the backend's registration
  bool pinned_ = false;
};

class RegionTable {
 public:
  explicit RegionTable(const TableLimits& limits) : limits_(limits) {}

  // RESOURCE_EXHAUSTED naming the flag unless one more region of `bytes`
  // fits the tenant's limits (checked again by Insert).
  absl::Status CheckRoom(const std::string& tenant, int64_t bytes) const;
  // A new region id of the session, unguessable.
  absl::StatusOr<HandleId> Insert(const std::string& tenant, const HandleId& session,
                                  uint64_t owner, std::shared_ptr<HostRegion> region);
  // The session's region; NOT_FOUND for any other (unknown, released, of
  // another session or tenant: one answer).
  absl::StatusOr<std::shared_ptr<HostRegion>> Find(const std::string& tenant,
                                                   const HandleId& session,
                                                   const HandleId& id) const;
  // Takes the region out; NOT_FOUND as Find. The caller drops what comes
  // back outside its own locks (unmapping may wait for the device).
  absl::StatusOr<std::shared_ptr<HostRegion>> Remove(const std::string& tenant,
                                                     const HandleId& session, const HandleId& id);
  // Every region of a session, or of a connection, taken out.
  std::vector<std::shared_ptr<HostRegion>> EraseSession(const HandleId& session);
  std::vector<std::shared_ptr<HostRegion>> EraseOwner(uint64_t owner);

  struct Usage {
    int64_t regions = 0;
    int64_t bytes = 0;
  };
  Usage TenantUsage(const std::string& tenant) const;
  Usage Total() const;

 private:
  struct Entry {
    std::string tenant;
    HandleId session;
    uint64_t owner;
    std::shared_ptr<HostRegion> region;
  };
  absl::Status CheckRoomLocked(const std::string& tenant, int64_t bytes) const;
  std::vector<std::shared_ptr<HostRegion>> EraseIf(const std::function<bool(const Entry&)>& pred);
  void Forget(const std::string& tenant, int64_t bytes);  // usage_ after an erase (mu_ held)

  const TableLimits limits_;
  mutable std::mutex mu_;
  absl::flat_hash_map<HandleId, Entry> entries_;
  absl::flat_hash_map<std::string, Usage> usage_;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_HOST_REGIONS_H_

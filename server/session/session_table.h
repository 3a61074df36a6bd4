// SessionTable: the open sessions, their leases, and how many may be open.
//
// A session belongs to one tenant and is found only by it (NOT_FOUND for
// anyone else, the same answer as for one that never existed). Every use
// renews its lease (Touch); a session unused for the idle timeout is
// reaped, unless a program is running in it (busy, see BeginRun). Closing
// marks it closed, so a program still running in it stops at its next op.
// At most TableLimits::max_sessions are open, and max_sessions_per_tenant
// of one tenant.
//
// Thread-safety: not synchronised itself; its owner holds one mutex around
// every call, and around every read or write of a Session's `last_used`
// and `running`. `closed` is atomic (a running program polls it without the
// lock); `run_mu` is the session's own, taken without the owner's lock.
//
//   SessionTable sessions(limits);
//   RETURN_IF_ERROR(sessions.CheckRoom("alice"));
//   auto s = std::make_shared<Session>(); ... s->tenant = "alice"; ...
//   RETURN_IF_ERROR(sessions.Insert(id, s));  // checks the room again
//   ASSIGN_OR_RETURN(std::shared_ptr<Session> used, sessions.Touch("alice", id, absl::Now()));
//   for (auto& [tenant, idle] : sessions.Idle(absl::Now(), absl::Minutes(30))) ...
#ifndef RESIDENT_SERVER_SESSION_SESSION_TABLE_H_
#define RESIDENT_SERVER_SESSION_SESSION_TABLE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/handle_id.h"
#include "server/device/backend.h"
#include "server/session/table_limits.h"

namespace resident {

class Device;

struct Session {
  std::string tenant;
  Device* device = nullptr;        // where it was placed; its programs run there
  std::shared_ptr<Stream> stream;  // its own stream of that device
  absl::Time opened;
  absl::Time last_used;             // (owner's lock)
  int running = 0;                  // programs in it now (owner's lock)
  std::atomic<bool> closed{false};  // running programs stop at the next op
  std::mutex run_mu;                // one program at a time on its stream
};

// An open session as an administrator sees it.
struct SessionSnapshot {
  HandleId id;
  std::string tenant;
  absl::Time opened;
  absl::Time last_used;
  int64_t arrays = 0;  // handles of the session
  int64_t bytes = 0;   // their bytes (a buffer shared by two handles counts twice)
};

// NOT_FOUND for a closed, expired, foreign or never opened session.
absl::Status SessionNotFound();

class SessionTable {
 public:
  explicit SessionTable(const TableLimits& limits);

  // RESOURCE_EXHAUSTED, naming the flag, if one more session of `tenant`
  // would be over max_sessions or max_sessions_per_tenant.
  absl::Status CheckRoom(const std::string& tenant) const;
  // Adds an open session under `id` (CheckRoom first: others may have
  // opened sessions since the caller last checked).
  absl::Status Insert(const HandleId& id, const std::shared_ptr<Session>& session);
  // Marks the session closed and takes it out; SessionNotFound unless it is
  // the tenant's.
  absl::StatusOr<std::shared_ptr<Session>> Remove(const std::string& tenant, const HandleId& id);

  // The tenant's session, renewed at `now`; SessionNotFound otherwise.
  absl::StatusOr<std::shared_ptr<Session>> Touch(const std::string& tenant, const HandleId& id,
                                                 absl::Time now);
  // Touch without handing the session out.
  absl::Status Renew(const std::string& tenant, const HandleId& id, absl::Time now);
  // Whose session `id` is (for administrators); SessionNotFound if none.
  absl::StatusOr<std::string> TenantOf(const HandleId& id) const;

  // A program starts / ends in the session: busy sessions are never idle,
  // and the end of a program renews the lease.
  void BeginRun(Session& session);
  void EndRun(Session& session, absl::Time now);

  // Sessions that are not busy and unused for longer than `timeout` at
  // `now`: (tenant, id) pairs, for the caller to close.
  std::vector<std::pair<std::string, HandleId>> Idle(absl::Time now, absl::Duration timeout) const;
  // Every open session, sorted by opening; arrays and bytes are left zero
  // (the handle table knows them).
  std::vector<SessionSnapshot> Snapshot() const;

  int64_t size() const { return static_cast<int64_t>(sessions_.size()); }
  int64_t HostBytes() const;
  void Clear();

 private:
  // CheckRoom for a tenant with `open_of_tenant` sessions open.
  absl::Status RoomFor(const std::string& tenant, int64_t open_of_tenant) const;
  // The tenant's session `id`; nullptr for any other.
  const std::shared_ptr<Session>* Find(const std::string& tenant, const HandleId& id) const;

  const TableLimits limits_;
  absl::flat_hash_map<HandleId, std::shared_ptr<Session>> sessions_;
  absl::flat_hash_map<std::string, int64_t> per_tenant_;  // open sessions
  int64_t heap_bytes_ = 0;  // the sessions' own objects and their heap parts
};

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_SESSION_TABLE_H_

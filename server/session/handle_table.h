// HandleTable: every handle, the array behind it, and how many there may be.
//
// A handle belongs to a tenant and a session. Any session of the owning
// tenant may use it; for every other tenant it does not exist (Find gives
// nothing, the same as for a handle never issued or already released). A
// session may hold at most TableLimits::max_handles_per_session handles, a
// tenant max_handles_per_tenant and the server max_handles in all. The table
// also estimates its own host memory, which grows with handles and shrinks
// as they go: its hash tables are shrunk once mostly empty, so a flood of
// handles, once released, gives its host memory back.
//
// Thread-safety: not synchronised itself; its owner holds one mutex around
// every call. Entries handed out (Find) stay valid only while it is held.
//
//   HandleTable handles(limits);
//   RETURN_IF_ERROR(handles.CheckRoom("alice", session, 1));
//   HandleId h = handles.Insert(HandleEntry{"alice", session, array, ""});
//   if (const HandleEntry* e = handles.Find("alice", h)) ... e->array ...
//   handles.EraseSession(session, [&](HandleEntry e) { ... free e.array later ... });
#ifndef RESIDENT_SERVER_SESSION_HANDLE_TABLE_H_
#define RESIDENT_SERVER_SESSION_HANDLE_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "core/handle_id.h"
#include "server/device/backend.h"
#include "server/session/table_limits.h"

namespace resident {

struct HandleEntry {
  std::string tenant;
  HandleId session;
  DeviceArray array;
  std::string name;  // the name it was kept as or attached from
};

// NOT_FOUND message shared by unknown, released and foreign handles.
absl::Status HandleNotFound();

class HandleTable {
 public:
  explicit HandleTable(const TableLimits& limits);

  // RESOURCE_EXHAUSTED, naming the flag, if `more` handles would not fit in
  // the session, the tenant's share or the server.
  absl::Status CheckRoom(const std::string& tenant, const HandleId& session, int64_t more) const;
  // A new random handle for the entry (CheckRoom first; the session must be
  // open).
  HandleId Insert(const HandleEntry& entry);

  // The tenant's entry behind `handle`; nullptr for any other.
  const HandleEntry* Find(const std::string& tenant, const HandleId& handle) const;
  // Its array, or HandleNotFound().
  absl::StatusOr<DeviceArray> Resolve(const std::string& tenant, const HandleId& handle) const;
  // Records the name the handle's array was kept as (the handle must exist).
  void SetName(const HandleId& handle, const std::string& name);

  // Takes one handle out; nullopt if there is none (already released).
  std::optional<HandleEntry> Erase(const HandleId& handle);
  // Takes every handle of the session out (the session is closing), each
  // passed to `gone`.
  void EraseSession(const HandleId& session, absl::FunctionRef<void(HandleEntry)> gone);

  // The session's handles and their bytes (a shared buffer counts twice).
  std::pair<int64_t, int64_t> SessionTotals(const HandleId& session) const;
  // Calls fn for every handle of the tenant, in no particular order.
  void ForEachOf(const std::string& tenant,
                 absl::FunctionRef<void(const HandleId&, const HandleEntry&)> fn) const;

  int64_t size() const { return static_cast<int64_t>(entries_.size()); }
  int64_t HostBytes() const;
  void Clear();

 private:
  static int64_t EntryHeap(const HandleEntry& e);
  // Rehashes `table` to its size once it is mostly empty.
  template <typename Table>
  static void ShrinkIfSparse(Table& table);
  void CountTenant(const std::string& tenant, int64_t delta);

  const TableLimits limits_;
  absl::flat_hash_map<HandleId, HandleEntry> entries_;
  // Each session's handles; a session's set lives until the session closes.
  absl::flat_hash_map<HandleId, absl::flat_hash_set<HandleId>> by_session_;
  absl::flat_hash_map<std::string, int64_t> per_tenant_;  // handles of each tenant
  int64_t entry_heap_bytes_ = 0;                          // heap parts of entries_' values
  int64_t set_bytes_ = 0;                                 // slots of by_session_'s sets
};

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_HANDLE_TABLE_H_

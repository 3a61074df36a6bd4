// Sessions, their handles and their arrays: the facade the RPC layer uses.
//
// A session is a client's working set: arrays created in it are freed when
// it is closed or when no call has renewed it for the idle timeout. Handles
// are looked up by tenant: any session of the owning tenant may use a
// handle, and for everyone else it does not exist (NOT_FOUND, the same
// answer as for a handle that never existed or was released).
//
// Tenants hold quotas (device bytes and arrays, checked before anything is
// allocated) and named arrays: Keep names an array so that it outlives every
// session (and, with a data dir, the process); Attach gives a session a
// handle to a named array; Release by name deletes it.
//
// SessionManager coordinates parts that each do one job:
//   SessionTable   sessions, leases, session limits, busy/closed, snapshots
//   HandleTable    handle -> array, handle limits, its host-memory estimate
//   TenantLedger   per-tenant bytes and arrays, quota checks and holds
//   NamedArrays    names over the durable ArrayStore, pending keeps/deletes
//   TransferSlots, Upload, Download (transfer.h)   transfers in flight
//   RegionTable    clients' shared-memory regions (host_regions.h)
//   Reaper         the thread that closes idle sessions
//   session_device.h   every call made into the device's copy/stream API
//
// Locking, in the order locks may be taken (never the other way round):
//   1. Session::run_mu: one program at a time in a session; taken without
//      mu_, which may then be taken under it (registering the results).
//   2. mu_: the one lock over SessionTable, HandleTable, TenantLedger and
//      NamedArrays' table, which do not lock themselves. Held only for
//      table work, never across device work or disk writes; arrays dropped
//      under it are freed after it (only the destructor frees under it).
//   3. Leaves, each held only for its own bookkeeping: TransferSlots',
//      RegionTable's and Reaper's mutexes, the ArrayStore's (its disk writes run without mu_),
//      the device's memory budget.
// A QuotaHold takes mu_ when destroyed, so holds are destroyed without it.
//
//   SessionManager sessions(device, {});
//   ASSIGN_OR_RETURN(HandleId s, sessions.Open("alice"));
//   ASSIGN_OR_RETURN(auto results, sessions.Run("alice", s, program, outputs, {}));
#ifndef RESIDENT_SERVER_SESSION_SESSION_MANAGER_H_
#define RESIDENT_SERVER_SESSION_SESSION_MANAGER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/handle_id.h"
#include "server/device/device.h"
#include "server/device/device_set.h"
#include "server/program/executor.h"
#include "server/program/planner.h"
#include "server/session/array_description.h"
#include "server/session/handle_table.h"
#include "server/session/host_regions.h"
#include "server/session/named_arrays.h"
#include "server/session/quota.h"
#include "server/session/reaper.h"
#include "server/session/session_table.h"
#include "server/session/table_limits.h"
#include "server/session/tenant_ledger.h"
#include "server/session/transfer.h"

namespace resident {

// What the session and handle tables hold now.
struct TableStats {
  int64_t sessions = 0;
  int64_t handles = 0;
  int64_t named_arrays = 0;
  // Host memory of the tables (sessions, handles, tenants' accounting and
  // names): an estimate from the containers' capacities and their entries'
  // heap parts, not counting the allocator's own overhead.
  int64_t host_bytes = 0;
};

struct SessionOptions {
  absl::Duration idle_timeout = absl::Minutes(30);
  // How often idle sessions are looked for.
  absl::Duration reap_interval = absl::Seconds(1);
  ProgramLimits limits;
  QuotaConfig quotas;  // per-tenant device bytes and arrays
  TableLimits table_limits;
  // Host caches of the layers above (the RPC layer's download slices),
  // called each reap interval; returns whether it freed anything, so that
  // the heap is trimmed after it.
  std::function<bool()> trim_host_caches;
};

// Handles a program read that lived on another device than its session's,
// copied there before it ran (the plan's peer copies).
struct PeerCopyStats {
  int64_t arrays = 0;
  int64_t bytes = 0;
};

struct ProgramResult {
  ArrayDescription array;
  std::optional<std::string> data;  // when return_data was asked
};

class SessionManager {
 public:
  // Sessions are placed on the devices of `devices` (which must outlive
  // this), each program running on its session's device.
  SessionManager(DeviceSet& devices, SessionOptions options);
  // One device (the N = 1 case).
  SessionManager(Device& device, SessionOptions options);
  ~SessionManager();  // closes every session, freeing every array
  SessionManager(const SessionManager&) = delete;
  SessionManager& operator=(const SessionManager&) = delete;

  const SessionOptions& options() const { return options_; }
  // The first device (the only one of a one-device server).
  Device& device() { return devices_.at(0); }
  DeviceSet& devices() { return devices_; }

  // A new session of `tenant`, with its own stream of the device `device`
  // asks for (DeviceSet::Find: empty -> the least loaded, an index or a
  // name); `placed`, if given, gets that device. INVALID_ARGUMENT for an
  // unknown device.
  absl::StatusOr<HandleId> Open(const std::string& tenant, const std::string& device = "",
                                Device** placed = nullptr);
  // Frees the session's arrays. NOT_FOUND for an unknown session.
  absl::Status Close(const std::string& tenant, const HandleId& session);
  // Marks the session used now. NOT_FOUND for an unknown/expired session.
  absl::Status Renew(const std::string& tenant, const HandleId& session);

  // Plans and runs a program in the session; kept outputs become handles of
  // the session. Atomic: on error no handle is created or changed. If the
  // session is closed meanwhile (by an administrator), the program stops at
  // the next op boundary with CANCELLED. `executed_ops`, if given, gets the
  // number of ops the program ran (loop bodies once per iteration).
  // The program runs on the session's device; a handle it reads that lives
  // on another device (attached from a name kept elsewhere, or copied with
  // CopyTo) is copied to the session's device first, charged there like an
  // intermediate and freed when the program ends; `copies`, if given, says
  // how many and how many bytes.
  absl::StatusOr<std::vector<ProgramResult>> Run(const std::string& tenant, const HandleId& session,
                                                 std::shared_ptr<const Program> program,
                                                 std::vector<OutputSpec> outputs,
                                                 const ExecOptions& options,
                                                 int64_t* executed_ops = nullptr,
                                                 PeerCopyStats* copies = nullptr);

  // A new handle of the session for a copy of the tenant's array `handle`
  // on the device `device` names (DeviceSet::Find; empty: the session's
  // own), complete on return; the original stays. INVALID_ARGUMENT for an
  // unknown device, NOT_FOUND for the handle, RESOURCE_EXHAUSTED over the
  // quota or that device's budget.
  absl::StatusOr<ArrayDescription> CopyTo(const std::string& tenant, const HandleId& session,
                                          const HandleId& handle, const std::string& device);

  // Starts an upload of `shape` and `dtype` into the session; the device
  // memory is charged now (RESOURCE_EXHAUSTED if over the limit).
  absl::StatusOr<std::unique_ptr<Upload>> BeginUpload(const std::string& tenant,
                                                      const HandleId& session, DType dtype,
                                                      const Shape& shape);
  absl::StatusOr<std::unique_ptr<Download>> BeginDownload(const std::string& tenant,
                                                          const HandleId& session,
                                                          const HandleId& handle);

  // --- shared-memory regions (host_regions.h) ---
  // Maps `fd` (taken over, closed on error too) as a region of the
  // session, brought by the local-data connection `owner`, registered with
  // the session's device; *pinned says whether that registration took.
  // NOT_FOUND for the session, RESOURCE_EXHAUSTED naming the flag over the
  // tenant's region limits, INVALID_ARGUMENT for a bad fd (HostRegion::Map).
  absl::StatusOr<HandleId> AddRegion(const std::string& tenant, const HandleId& session,
                                     uint64_t owner, int fd, int64_t bytes, bool* pinned);
  // Unmaps a region of the session (after any transfer using it); NOT_FOUND
  // for one it does not have.
  absl::Status ReleaseRegion(const std::string& tenant, const HandleId& session,
                             const HandleId& region);
  // Unmaps every region the connection `owner` brought (it closed).
  void DropRegionsOf(uint64_t owner);
  // A new handle holding the region's bytes at `offset` as `shape`/`dtype`.
  absl::StatusOr<ArrayDescription> UploadFromRegion(const std::string& tenant,
                                                    const HandleId& session, const HandleId& region,
                                                    int64_t offset, DType dtype,
                                                    const Shape& shape);
  // The handle's bytes written into the region at `offset`.
  absl::StatusOr<ArrayDescription> DownloadToRegion(const std::string& tenant,
                                                    const HandleId& session, const HandleId& handle,
                                                    const HandleId& region, int64_t offset);
  RegionTable::Usage RegionUsage(const std::string& tenant) const {
    return regions_.TenantUsage(tenant);
  }
  RegionTable::Usage RegionTotals() const { return regions_.Total(); }

  // Releases handles of the tenant and deletes names of it (durably, with a
  // data dir); NOT_FOUND (and nothing released) if any is unknown,
  // INVALID_ARGUMENT for a malformed name.
  absl::Status Release(const std::string& tenant, const HandleId& session,
                       const std::vector<HandleId>& handles,
                       const std::vector<std::string>& names = {});

  // Names the array behind `handle` for the tenant, beyond every session
  // (written to the data dir, if there is one, before returning).
  // INVALID_ARGUMENT for a malformed name (see ValidateArrayName),
  // NOT_FOUND for the handle, ALREADY_EXISTS if the tenant already has the
  // name (names are never silently replaced: delete it first),
  // RESOURCE_EXHAUSTED over the arrays quota.
  absl::StatusOr<ArrayDescription> Keep(const std::string& tenant, const HandleId& session,
                                        const HandleId& handle, const std::string& name);
  // A new handle of the session for the tenant's named array. NOT_FOUND for
  // a name the tenant does not have (another tenant's included),
  // RESOURCE_EXHAUSTED over the arrays quota.
  absl::StatusOr<ArrayDescription> Attach(const std::string& tenant, const HandleId& session,
                                          const std::string& name);

  // Opens (creating it if needed) the data dir and loads its named arrays
  // onto the device; from then on Keep and deleting names are durable. Call
  // once, before serving.
  absl::Status EnableDataDir(const std::string& dir);

  // Bytes of the tenant's array behind `handle`, if it has one; no lease
  // renewal (for scheduling decisions).
  std::optional<int64_t> ArrayBytes(const std::string& tenant, const HandleId& handle) const;

  TenantUsage Usage(const std::string& tenant) const;
  // Every tenant the server accounts for (once it held or asked for something).
  std::vector<std::pair<std::string, TenantUsage>> AllUsage() const;

  // The tenant's arrays: its handles (with the name, if bound to one), then
  // names no listed handle is bound to (handle zero).
  absl::StatusOr<std::vector<ArrayDescription>> List(const std::string& tenant,
                                                     const HandleId& session);

  // Closes sessions idle past the timeout; returns how many. A session
  // running a program is busy, not idle.
  int ReapIdle(absl::Time now);
  // Trims the caches of devices idle since the last call, and then the
  // heap (malloc_trim): host memory goes back once the work is over.
  void TrimIdle();
  int session_count() const;
  TableStats Stats() const;

  // Every open session, for administrators (read-only; sorted by opening).
  std::vector<SessionSnapshot> Snapshot() const;
  // Closes any tenant's session (the admin's CloseSession); NOT_FOUND for
  // an unknown session.
  absl::Status AdminClose(const HandleId& session);

 private:
  // The session if it belongs to tenant, renewed; NOT_FOUND otherwise.
  absl::StatusOr<std::shared_ptr<Session>> Touch(const std::string& tenant,
                                                 const HandleId& session);
  absl::StatusOr<DeviceArray> Resolve(const std::string& tenant, const HandleId& handle);
  // Keeps `arrays` charged to `tenant` while the returned guard lives
  // (TenantLedger::AddReader), so a handle released mid-read frees no
  // quota while the buffer lives on. Takes mu_; so does the guard's end.
  std::shared_ptr<void> ChargeReaders(const std::string& tenant, std::vector<DeviceArray> arrays);
  // Registers arrays as new handles of a session (fails if it closed, or
  // over the handle limits).
  absl::StatusOr<std::vector<HandleId>> Register(const std::string& tenant, const HandleId& session,
                                                 std::vector<DeviceArray> arrays,
                                                 const std::string& name = "");
  // Takes a removed handle's array out of its tenant's accounting and into
  // `doomed`, for the caller to free once mu_ is dropped (mu_ held).
  void Drop(HandleEntry entry, std::vector<DeviceArray>& doomed);
  // Writes a pending keep's array to the data dir (mu_ not held).
  absl::Status PersistKeep(Session& session, const std::string& tenant, const std::string& name,
                           const DeviceArray& array);

  // A stream for work of `session` on `array`: the session's own when the
  // array lives on its device, else a new stream of the array's device.
  static std::shared_ptr<Stream> StreamFor(const Session& session, const DeviceArray& array,
                                           Device** device);

  std::unique_ptr<DeviceSet> own_set_;  // the one-device constructor's
  DeviceSet& devices_;
  const SessionOptions options_;
  mutable std::mutex mu_;  // guards the four tables below
  SessionTable sessions_;
  HandleTable handles_;
  TenantLedger ledger_;
  NamedArrays names_;
  TransferSlots transfers_;         // locks itself
  RegionTable regions_;             // locks itself
  std::unique_ptr<Reaper> reaper_;  // started last, stopped first
};

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_SESSION_MANAGER_H_

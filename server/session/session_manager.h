// Sessions, their handles and their arrays.
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
//   SessionManager sessions(device, {});
//   ASSIGN_OR_RETURN(HandleId s, sessions.Open("alice"));
//   ASSIGN_OR_RETURN(auto results, sessions.Run("alice", s, program, outputs, {}));
#ifndef RESIDENT_SERVER_SESSION_SESSION_MANAGER_H_
#define RESIDENT_SERVER_SESSION_SESSION_MANAGER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/handle_id.h"
#include "server/device/device.h"
#include "server/program/executor.h"
#include "server/program/planner.h"
#include "server/session/quota.h"

namespace resident {

// Server-wide bounds on the session and handle tables, so that one runaway
// script cannot fill the server's host memory (each handle costs a few
// hundred bytes that no device quota sees). Defaults a lab would not hit by
// accident; RESOURCE_EXHAUSTED names the limit that was reached.
struct TableLimits {
  int64_t max_sessions = 1024;            // open at once, every tenant
  int64_t max_sessions_per_tenant = 256;  // open at once, one tenant
  int64_t max_handles = int64_t{1} << 20;           // every session together
  int64_t max_handles_per_session = int64_t{1} << 17;
  int64_t max_names_per_tenant = int64_t{1} << 16;
  // Uploads and downloads of one tenant in flight at once: each holds up
  // to two chunks of host memory while its client reads or writes.
  int64_t max_transfers_per_tenant = 64;
};

// What the session and handle tables hold now.
struct TableStats {
  int64_t sessions = 0;
  int64_t handles = 0;
  int64_t named_arrays = 0;
  // Host memory of the tables (sessions, handles, tenants' accounting):
  // an estimate from the containers' capacities and their entries' heap
  // parts, not counting the allocator's own overhead.
  int64_t host_bytes = 0;
};

struct SessionOptions {
  absl::Duration idle_timeout = absl::Minutes(30);
  // How often idle sessions are looked for.
  absl::Duration reap_interval = absl::Seconds(1);
  ProgramLimits limits;
  QuotaConfig quotas;  // per-tenant device bytes and arrays
  TableLimits table_limits;
};

// What a tenant holds now (for quotas, listings and metrics).
struct TenantUsage {
  int64_t bytes = 0;           // distinct device buffers of its handles and names
  int64_t arrays = 0;          // handles plus names
  int64_t reserved_bytes = 0;  // set aside for programs and uploads in flight
  int64_t names = 0;
};

// What the caller learns of an array.
struct ArrayDescription {
  HandleId handle;  // zero when not kept
  DType dtype = DType::kFloat64;
  Shape shape;
  int64_t nbytes = 0;
  std::string name;  // set for a named array (or a handle attached to one)
};

struct ProgramResult {
  ArrayDescription array;
  std::optional<std::string> data;  // when return_data was asked
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

class SessionManager;
class ArrayStore;

// Bytes and arrays set aside in a tenant's quota; returned when destroyed.
class QuotaHold {
 public:
  ~QuotaHold();
  QuotaHold(const QuotaHold&) = delete;
  QuotaHold& operator=(const QuotaHold&) = delete;

 private:
  friend class SessionManager;
  QuotaHold(SessionManager* m, std::string tenant, int64_t bytes, int64_t arrays)
      : manager_(m), tenant_(std::move(tenant)), bytes_(bytes), arrays_(arrays) {}
  SessionManager* manager_;
  std::string tenant_;
  int64_t bytes_;
  int64_t arrays_;
};

// An upload in progress: bytes arrive in order; Finish registers the array.
// Destroying an unfinished upload frees its buffer.
class Upload {
 public:
  ~Upload();
  // Appends the next bytes; INVALID_ARGUMENT past the declared size.
  absl::Status Append(std::string_view bytes);
  // INVALID_ARGUMENT unless exactly the declared bytes arrived.
  absl::StatusOr<ArrayDescription> Finish();
  int64_t received() const { return received_; }

 private:
  friend class SessionManager;
  Upload() = default;
  SessionManager* manager_ = nullptr;
  std::string tenant_;
  HandleId session_;
  DeviceArray array_;
  std::shared_ptr<Stream> stream_;
  int64_t received_ = 0;
  std::unique_ptr<QuotaHold> hold_;
  std::shared_ptr<void> slot_;  // one of the tenant's transfers in flight
};

// A download: the array is held (it stays valid even if released) and read
// in pieces.
class Download {
 public:
  const ArrayDescription& description() const { return description_; }
  // Copies bytes [offset, offset + size) into dst.
  absl::Status Read(int64_t offset, int64_t size, void* dst);

 private:
  friend class SessionManager;
  Download() = default;
  Device* device_ = nullptr;
  std::shared_ptr<Stream> stream_;
  DeviceArray array_;
  ArrayDescription description_;
  std::shared_ptr<void> slot_;  // one of the tenant's transfers in flight
};

class SessionManager {
 public:
  SessionManager(Device& device, SessionOptions options);
  ~SessionManager();  // closes every session, freeing every array
  SessionManager(const SessionManager&) = delete;
  SessionManager& operator=(const SessionManager&) = delete;

  const SessionOptions& options() const { return options_; }
  Device& device() { return device_; }

  // A new session of `tenant`, with its own device stream.
  absl::StatusOr<HandleId> Open(const std::string& tenant);
  // Frees the session's arrays. NOT_FOUND for an unknown session.
  absl::Status Close(const std::string& tenant, const HandleId& session);
  // Marks the session used now. NOT_FOUND for an unknown/expired session.
  absl::Status Renew(const std::string& tenant, const HandleId& session);

  // Plans and runs a program in the session; kept outputs become handles of
  // the session. Atomic: on error no handle is created or changed. If the
  // session is closed meanwhile (by an administrator), the program stops at
  // the next op boundary with CANCELLED. `executed_ops`, if given, gets the
  // number of ops the program ran (loop bodies once per iteration).
  absl::StatusOr<std::vector<ProgramResult>> Run(
      const std::string& tenant, const HandleId& session,
      std::shared_ptr<const Program> program, std::vector<OutputSpec> outputs,
      const ExecOptions& options, int64_t* executed_ops = nullptr);

  // Starts an upload of `shape` and `dtype` into the session; the device
  // memory is charged now (RESOURCE_EXHAUSTED if over the limit).
  absl::StatusOr<std::unique_ptr<Upload>> BeginUpload(
      const std::string& tenant, const HandleId& session, DType dtype,
      const Shape& shape);
  absl::StatusOr<std::unique_ptr<Download>> BeginDownload(
      const std::string& tenant, const HandleId& session, const HandleId& handle);

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
  absl::StatusOr<ArrayDescription> Attach(const std::string& tenant,
                                          const HandleId& session, const std::string& name);

  // Opens (creating it if needed) the data dir and loads its named arrays
  // onto the device; from then on Keep and deleting names are durable. Call
  // once, before serving.
  absl::Status EnableDataDir(const std::string& dir);

  // Bytes of the tenant's array behind `handle`, if it has one; no lease
  // renewal (for scheduling decisions).
  std::optional<int64_t> ArrayBytes(const std::string& tenant, const HandleId& handle) const;

  TenantUsage Usage(const std::string& tenant) const;
  // Every tenant that holds something.
  std::vector<std::pair<std::string, TenantUsage>> AllUsage() const;

  // The tenant's arrays: its handles (with the name, if bound to one), then
  // names no listed handle is bound to (handle zero).
  absl::StatusOr<std::vector<ArrayDescription>> List(const std::string& tenant,
                                                     const HandleId& session);

  // Closes sessions idle past the timeout; returns how many. A session
  // running a program is busy, not idle.
  int ReapIdle(absl::Time now);
  int session_count() const;
  TableStats Stats() const;

  // Every open session, for administrators (read-only; sorted by opening).
  std::vector<SessionSnapshot> Snapshot() const;
  // Closes any tenant's session (the admin's CloseSession); NOT_FOUND for
  // an unknown session.
  absl::Status AdminClose(const HandleId& session);

 private:
  friend class Upload;
  friend class QuotaHold;
  struct Session {
    std::string tenant;
    std::shared_ptr<Stream> stream;
    absl::Time last_used;
    absl::Time opened;
    absl::flat_hash_set<HandleId> handles;
    std::mutex run_mu;  // one program at a time on the session's stream
    int running = 0;    // programs in it now (mu_ held); never reaped while > 0
    std::atomic<bool> closed{false};  // running programs stop at the next op
  };
  struct Entry {
    std::string tenant;
    HandleId session;
    DeviceArray array;
    std::string name;  // the name it was kept as or attached from
  };
  struct Named {
    DeviceArray array;
    bool pending = false;  // being written to the data dir or deleted
  };
  struct Tenant {
    // Buffers the tenant's handles and names hold: references, bytes.
    absl::flat_hash_map<const Buffer*, std::pair<int, int64_t>> buffers;
    TenantUsage usage;
    int64_t reserved_arrays = 0;
    absl::flat_hash_map<std::string, Named> names;
  };

  // Accounting of one more / one fewer handle or name (mu_ held).
  void AddRef(const std::string& tenant, const DeviceArray& a);
  void DropRef(const std::string& tenant, const DeviceArray& a);
  // Sets aside bytes and arrays in the tenant's quota; RESOURCE_EXHAUSTED
  // naming the quota if they do not fit (mu_ held).
  absl::StatusOr<std::unique_ptr<QuotaHold>> HoldQuota(const std::string& tenant,
                                                       int64_t bytes, int64_t arrays);
  // The same check without setting anything aside (mu_ held).
  absl::Status CheckQuota(const std::string& tenant, int64_t bytes, int64_t arrays);
  // Never called with mu_ held: QuotaHold's destructor takes it.
  void ReturnQuota(const std::string& tenant, int64_t bytes, int64_t arrays);

  // The session if it belongs to tenant, renewed; NOT_FOUND otherwise.
  absl::StatusOr<std::shared_ptr<Session>> Touch(const std::string& tenant,
                                                 const HandleId& session);
  absl::StatusOr<DeviceArray> Resolve(const std::string& tenant,
                                      const HandleId& handle);
  // One more transfer of the tenant, given back when the result is
  // destroyed; RESOURCE_EXHAUSTED over max_transfers_per_tenant.
  absl::StatusOr<std::shared_ptr<void>> TakeTransferSlot(const std::string& tenant);
  // RESOURCE_EXHAUSTED if `more` handles would not fit in the session or
  // the server (mu_ held).
  absl::Status CheckHandleLimits(const Session& session, int64_t more) const;
  // Adds / removes a handle's entry, keeping entry_heap_bytes_ (mu_ held).
  void InsertEntry(const HandleId& id, Entry entry);
  void EraseEntry(absl::flat_hash_map<HandleId, Entry>::iterator it,
                  std::vector<DeviceArray>& doomed);
  // Registers arrays as new handles of a session (fails if it closed, or
  // over the handle limits).
  absl::StatusOr<std::vector<HandleId>> Register(const std::string& tenant,
                                                 const HandleId& session,
                                                 std::vector<DeviceArray> arrays,
                                                 const std::string& name = "");
  void ReaperLoop();

  Device& device_;
  const SessionOptions options_;
  mutable std::mutex mu_;
  absl::flat_hash_map<HandleId, std::shared_ptr<Session>> sessions_;
  absl::flat_hash_map<HandleId, Entry> arrays_;
  absl::flat_hash_map<std::string, Tenant> tenants_;
  absl::flat_hash_map<std::string, int64_t> sessions_per_tenant_;
  absl::flat_hash_map<std::string, int64_t> transfers_per_tenant_;
  int64_t entry_heap_bytes_ = 0;  // heap parts of arrays_' entries
  std::unique_ptr<ArrayStore> store_;  // with a data dir
  bool stopping_ = false;
  std::condition_variable reaper_cv_;
  std::thread reaper_;
};

// NOT_FOUND message shared by unknown, released and foreign handles.
absl::Status HandleNotFound();
// NOT_FOUND message shared by unknown, deleted and foreign names.
absl::Status NameNotFound();
// OK for 1-128 characters of [A-Za-z0-9._-]; INVALID_ARGUMENT otherwise.
absl::Status ValidateArrayName(std::string_view name);

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_SESSION_MANAGER_H_

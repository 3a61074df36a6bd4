// Sessions, their handles and their arrays.
//
// A session is a client's working set: arrays created in it are freed when
// it is closed or when no call has renewed it for the idle timeout. Handles
// are looked up by tenant: any session of the owning tenant may use a
// handle, and for everyone else it does not exist (NOT_FOUND, the same
// answer as for a handle that never existed or was released).
//
//   SessionManager sessions(device, {});
//   ASSIGN_OR_RETURN(HandleId s, sessions.Open("alice"));
//   ASSIGN_OR_RETURN(auto results, sessions.Run("alice", s, program, outputs, {}));
#ifndef RESIDENT_SERVER_SESSION_SESSION_MANAGER_H_
#define RESIDENT_SERVER_SESSION_SESSION_MANAGER_H_

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
#include "server/base/handle_id.h"
#include "server/device/device.h"
#include "server/program/executor.h"
#include "server/program/planner.h"

namespace resident {

struct SessionOptions {
  absl::Duration idle_timeout = absl::Minutes(30);
  // How often idle sessions are looked for.
  absl::Duration reap_interval = absl::Seconds(1);
  ProgramLimits limits;
};

// What the caller learns of an array.
struct ArrayDescription {
  HandleId handle;  // zero when not kept
  DType dtype = DType::kFloat64;
  Shape shape;
  int64_t nbytes = 0;
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
  // the session. Atomic: on error no handle is created or changed.
  absl::StatusOr<std::vector<ProgramResult>> Run(
      const std::string& tenant, const HandleId& session,
      std::shared_ptr<const Program> program, std::vector<OutputSpec> outputs,
      const ExecOptions& options);

  // Starts an upload of `shape` and `dtype` into the session; the device
  // memory is charged now (RESOURCE_EXHAUSTED if over the limit).
  absl::StatusOr<std::unique_ptr<Upload>> BeginUpload(
      const std::string& tenant, const HandleId& session, DType dtype,
      const Shape& shape);
  absl::StatusOr<std::unique_ptr<Download>> BeginDownload(
      const std::string& tenant, const HandleId& session, const HandleId& handle);

  // Releases handles of the tenant; NOT_FOUND (and nothing released) if any
  // is unknown.
  absl::Status Release(const std::string& tenant, const HandleId& session,
                       const std::vector<HandleId>& handles);
  // The tenant's arrays.
  absl::StatusOr<std::vector<ArrayDescription>> List(const std::string& tenant,
                                                     const HandleId& session);

  // Closes sessions idle past the timeout; returns how many.
  int ReapIdle(absl::Time now);
  int session_count() const;

  // Every open session, for administrators (read-only; sorted by opening).
  std::vector<SessionSnapshot> Snapshot() const;
  // Closes any tenant's session (the admin's CloseSession); NOT_FOUND for
  // an unknown session.
  absl::Status AdminClose(const HandleId& session);

 private:
  friend class Upload;
  struct Session {
    std::string tenant;
    std::shared_ptr<Stream> stream;
    absl::Time last_used;
    absl::Time opened;
    absl::flat_hash_set<HandleId> handles;
    std::mutex run_mu;  // one program at a time on the session's stream
  };
  struct Entry {
    std::string tenant;
    HandleId session;
    DeviceArray array;
  };

  // The session if it belongs to tenant, renewed; NOT_FOUND otherwise.
  absl::StatusOr<std::shared_ptr<Session>> Touch(const std::string& tenant,
                                                 const HandleId& session);
  absl::StatusOr<DeviceArray> Resolve(const std::string& tenant,
                                      const HandleId& handle);
  // Registers arrays as new handles of a session (fails if it closed).
  absl::StatusOr<std::vector<HandleId>> Register(const std::string& tenant,
                                                 const HandleId& session,
                                                 std::vector<DeviceArray> arrays);
  void ReaperLoop();

  Device& device_;
  const SessionOptions options_;
  mutable std::mutex mu_;
  absl::flat_hash_map<HandleId, std::shared_ptr<Session>> sessions_;
  absl::flat_hash_map<HandleId, Entry> arrays_;
  bool stopping_ = false;
  std::condition_variable reaper_cv_;
  std::thread reaper_;
};

// NOT_FOUND message shared by unknown, released and foreign handles.
absl::Status HandleNotFound();

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_SESSION_MANAGER_H_

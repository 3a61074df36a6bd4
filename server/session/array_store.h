// Durable storage of named arrays under --data-dir.
//
// Layout:
//   DIR/MANIFEST             one line per named array: tenant, name, data
//                            file, file size and FNV-1a 64 checksum
//   DIR/arrays/<16 hex>.npy  the array, as NumPy's np.save writes it
//   DIR/LOCK                 flock'd by the one server using DIR
//
// Every file is written to a temporary file (".tmp"), fsync'd, renamed over
// its final name, and the directory fsync'd, so a crash leaves either the
// old or the new file, never a torn one. Put returns only after the data
// file and the manifest naming it are both durable; Remove only after the
// manifest without the entry is. At start-up Load skips (with a log line)
// any entry whose data file is missing, of the wrong size, fails its
// checksum or is not a valid .npy file, and deletes leftover temporary files
// and data files no manifest entry names (a crash between writing the data
// and the manifest: never acknowledged).
//
// Write failures: RESOURCE_EXHAUSTED for a full disk or quota (ENOSPC,
// EDQUOT, ...), UNAVAILABLE for any other (EIO, EROFS, EACCES, ...); the
// message names the path and the errno. A failed Put or Remove leaves no
// temporary file and the manifest as it was.
//
// Test-only: RESIDENT_FAULT_INJECT=FILE:STAGE makes the process SIGKILL
// itself inside a write, FILE one of keep-data, keep-manifest, rm-manifest,
// STAGE "written" (temporary file complete, not renamed) or "renamed"
// (renamed, directory not yet fsync'd). Unset, it does nothing.
//
//   ASSIGN_OR_RETURN(auto store, ArrayStore::Open("/var/lib/resident"));
//   for (auto& a : store->Load()) ... a.tenant, a.name, a.array ...
//   RETURN_IF_ERROR(store->Put("alice", "weights", dtype, shape, bytes));
#ifndef RESIDENT_SERVER_SESSION_ARRAY_STORE_H_
#define RESIDENT_SERVER_SESSION_ARRAY_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "core/npy.h"

namespace resident {

class ArrayStore {
 public:
  struct Stored {
    std::string tenant;
    std::string name;
    HostArray array;
  };

  // Creates DIR (and DIR/arrays) if missing and locks it. UNAVAILABLE (or
  // RESOURCE_EXHAUSTED) with the path if it cannot; FAILED_PRECONDITION if
  // another process holds the lock.
  static absl::StatusOr<std::unique_ptr<ArrayStore>> Open(const std::string& dir);

  // Every intact named array in the manifest; damaged ones are logged and
  // left out (and dropped from the manifest at its next write).
  std::vector<Stored> Load();

  // Writes the array durably under (tenant, name), replacing nothing: the
  // caller guarantees the name is free. On an I/O failure the code above
  // and nothing left behind.
  absl::Status Put(const std::string& tenant, const std::string& name, DType dtype,
                   const Shape& shape, absl::string_view bytes);
  // Removes names durably (one manifest write), then their data files.
  // Unknown names are ignored. Fails (changing nothing) only if the manifest
  // cannot be rewritten.
  absl::Status Remove(const std::string& tenant, const std::vector<std::string>& names);

  const std::string& dir() const { return dir_; }
  ~ArrayStore();
  ArrayStore(const ArrayStore&) = delete;
  ArrayStore& operator=(const ArrayStore&) = delete;

 private:
  struct Entry {
    std::string file;  // relative to dir_
    int64_t size = 0;
    uint64_t checksum = 0;
  };
  ArrayStore(std::string dir, int lock_fd) : dir_(std::move(dir)), lock_fd_(lock_fd) {}
  // Rewrites DIR/MANIFEST from entries_ (mu_ held); `fault` names the write
  // for the test-only RESIDENT_FAULT_INJECT hook.
  absl::Status WriteManifest(absl::string_view fault);
  // After a failed WriteManifest that still replaced the file (only the
  // directory fsync failed), rewrites it from entries_ (mu_ held).
  void RestoreManifest();

  const std::string dir_;
  const int lock_fd_;  // holds the flock on DIR/LOCK
  std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Entry> entries_;
  bool manifest_unknown_ = false;  // set by a WriteManifest that failed after its rename
};

// The code of a failed data-dir operation that set errno `err`:
// RESOURCE_EXHAUSTED for ENOSPC, EDQUOT, EFBIG, EMFILE, ENFILE, ENOMEM;
// UNAVAILABLE for every other (EIO, EROFS, EACCES, ENOENT, ...).
absl::StatusCode DataDirErrorCode(int err);

// FNV-1a, 64 bits: the checksum of data files.
uint64_t Fnv1a64(absl::string_view bytes);

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_ARRAY_STORE_H_

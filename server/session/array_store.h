// Durable storage of named arrays under --data-dir.
//
// Layout:
//   DIR/MANIFEST             one line per named array: tenant, name, data
//                            file, file size and FNV-1a 64 checksum
//   DIR/arrays/<16 hex>.npy  the array, as NumPy's np.save writes it
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
#include "absl/strings/string_view.h"
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "client/npy.h"

namespace resident {

class ArrayStore {
 public:
  struct Stored {
    std::string tenant;
    std::string name;
    HostArray array;
  };

  // Creates DIR (and DIR/arrays) if missing. The errno-derived code with
  // the path if it cannot.
  static absl::StatusOr<std::unique_ptr<ArrayStore>> Open(const std::string& dir);

  // Every intact named array in the manifest; damaged ones are logged and
  // left out (and dropped from the manifest at its next write).
  std::vector<Stored> Load();

  // Writes the array durably under (tenant, name), replacing nothing: the
  // caller guarantees the name is free. The errno-derived code on I/O
  // failure (nothing is left behind then).
  absl::Status Put(const std::string& tenant, const std::string& name, DType dtype,
                   const Shape& shape, absl::string_view bytes);
  // Removes names durably (one manifest write), then their data files.
  // Unknown names are ignored.
  absl::Status Remove(const std::string& tenant, const std::vector<std::string>& names);

  const std::string& dir() const { return dir_; }

 private:
  struct Entry {
    std::string file;  // relative to dir_
    int64_t size = 0;
    uint64_t checksum = 0;
  };
  explicit ArrayStore(std::string dir) : dir_(std::move(dir)) {}
  // Rewrites DIR/MANIFEST from entries_ (mu_ held).
  absl::Status WriteManifest();

  const std::string dir_;
  std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Entry> entries_;
};

// FNV-1a, 64 bits: the checksum of data files.
uint64_t Fnv1a64(absl::string_view bytes);

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_ARRAY_STORE_H_

// The C++ client's side of the server's local data socket (the server's
// server/rpc/local_data_socket.h): memfd regions sealed against shrinking,
// registered once, pooled, and named by RegionUpload / RegionDownload, so a
// client on the server's host moves array bytes through shared memory.
//
//   ASSIGN_OR_RETURN(auto local, LocalData::Connect(path, session, token));
//   ASSIGN_OR_RETURN(std::shared_ptr<LocalRegion> r, local->Acquire(bytes));
//   std::memcpy(r->data, src, bytes);  ... RegionUpload naming r->id ...
//   local->GiveBack(std::move(r));
#ifndef RESIDENT_CLIENT_LOCAL_DATA_H_
#define RESIDENT_CLIENT_LOCAL_DATA_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "resident/v1/resident.pb.h"

namespace resident::client {

// A region mapped here and registered with the server; unmapped here when
// the last reference goes (the server unmaps its side on Release or when
// the connection closes).
struct LocalRegion {
  LocalRegion(std::string id, char* data, int64_t bytes)
      : id(std::move(id)), data(data), bytes(bytes) {}
  ~LocalRegion();
  LocalRegion(const LocalRegion&) = delete;
  LocalRegion& operator=(const LocalRegion&) = delete;
  const std::string id;  // 16 bytes
  char* const data;
  const int64_t bytes;
};

class LocalData {
 public:
  // Connects to the socket at `path` for `session` (its requests carry
  // `token`, empty on a single-user server). UNAVAILABLE if it cannot.
  static absl::StatusOr<std::unique_ptr<LocalData>> Connect(const std::string& path,
                                                            std::string session, std::string token);
  ~LocalData();  // closes the socket: the server unmaps every region of it
  LocalData(const LocalData&) = delete;
  LocalData& operator=(const LocalData&) = delete;

  const std::string& path() const { return path_; }
  // A new region of at least `bytes` (rounded up to 2 MiB).
  absl::StatusOr<std::shared_ptr<LocalRegion>> Register(int64_t bytes);
  absl::Status Release(const std::string& region_id);
  // A free region of the pool of at least `bytes`, or a new one.
  absl::StatusOr<std::shared_ptr<LocalRegion>> Acquire(int64_t bytes);
  // Back to the pool; beyond a few free regions the oldest is released.
  void GiveBack(std::shared_ptr<LocalRegion> region);
  // One request, with a descriptor passed alongside when fd >= 0: the
  // server's answer (its code is a google.rpc code), or UNAVAILABLE when
  // the socket fails.
  absl::StatusOr<v1::LocalDataResponse> Request(v1::LocalDataRequest req, int fd = -1);

 private:
  LocalData(std::string path, int fd, std::string session, std::string token)
      : path_(std::move(path)), fd_(fd), session_(std::move(session)), token_(std::move(token)) {}
  const std::string path_;
  const int fd_;
  const std::string session_, token_;
  std::mutex mu_;       // one request on the socket at a time
  std::mutex pool_mu_;  // free_
  std::vector<std::shared_ptr<LocalRegion>> free_;
};

}  // namespace resident::client

#endif  // RESIDENT_CLIENT_LOCAL_DATA_H_

#include "client/local_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/local_frame.h"

namespace resident::client {
namespace {

constexpr int64_t kGranule = int64_t{2} << 20;
constexpr size_t kKeepFree = 4;  // free regions kept for reuse

}  // namespace

LocalRegion::~LocalRegion() { munmap(data, static_cast<size_t>(bytes)); }

absl::StatusOr<std::unique_ptr<LocalData>> LocalData::Connect(const std::string& path,
                                                              std::string session,
                                                              std::string token) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("bad local data socket path '", path, "'"));
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", strerror(errno)));
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot connect to the local data socket ", path, ": ", strerror(err)));
  }
  return std::unique_ptr<LocalData>(new LocalData(path, fd, std::move(session), std::move(token)));
}

LocalData::~LocalData() { close(fd_); }

absl::StatusOr<v1::LocalDataResponse> LocalData::Request(v1::LocalDataRequest req, int fd) {
  if (req.session().empty()) req.set_session(session_);
  if (req.token().empty() && !token_.empty()) req.set_token(token_);
  std::lock_guard<std::mutex> lock(mu_);
  if (!SendFrame(fd_, req.SerializeAsString(), fd)) {
    return absl::UnavailableError(absl::StrCat("the local data socket ", path_, " closed"));
  }
  std::string body;
  std::vector<int> fds;  // the server passes none; any that came are closed
  v1::LocalDataResponse resp;
  if (!RecvFrame(fd_, 1u << 20, &body, &fds) || !resp.ParseFromString(body)) {
    return absl::UnavailableError(
        absl::StrCat("the local data socket ", path_, " closed or answered something unreadable"));
  }
  CloseAll(fds);
  return resp;
}

absl::StatusOr<std::shared_ptr<LocalRegion>> LocalData::Register(int64_t bytes) {
  const int64_t size = std::max(kGranule, (bytes + kGranule - 1) / kGranule * kGranule);
  const int fd = memfd_create("resident-region", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("memfd_create: ", strerror(errno)));
  void* p = MAP_FAILED;
  if (ftruncate(fd, size) == 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) == 0) {
    p = mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  if (p == MAP_FAILED) {
    const int err = errno;
    close(fd);
    return absl::ResourceExhaustedError(
        absl::StrCat("a shared-memory region of ", size, " bytes: ", strerror(err)));
  }
  v1::LocalDataRequest req;
  req.set_register_bytes(size);
  absl::StatusOr<v1::LocalDataResponse> resp = Request(std::move(req), fd);
  close(fd);  // the mapping (and the server's descriptor) keep the memory
  auto region =
      std::make_shared<LocalRegion>(resp.ok() ? resp->region() : "", static_cast<char*>(p), size);
  if (!resp.ok()) return resp.status();
  if (resp->code() != 0) {
    return absl::Status(static_cast<absl::StatusCode>(resp->code()), resp->message());
  }
  return region;
}

absl::Status LocalData::Release(const std::string& region_id) {
  v1::LocalDataRequest req;
  req.set_release_region(region_id);
  absl::StatusOr<v1::LocalDataResponse> resp = Request(std::move(req));
  if (!resp.ok()) return resp.status();
  return resp->code() == 0
             ? absl::OkStatus()
             : absl::Status(static_cast<absl::StatusCode>(resp->code()), resp->message());
}

absl::StatusOr<std::shared_ptr<LocalRegion>> LocalData::Acquire(int64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if ((*it)->bytes >= bytes && (best == free_.end() || (*it)->bytes < (*best)->bytes))
        best = it;
    }
    if (best != free_.end()) {
      std::shared_ptr<LocalRegion> r = std::move(*best);
      free_.erase(best);
      return r;
    }
  }
  return Register(bytes);
}

void LocalData::GiveBack(std::shared_ptr<LocalRegion> region) {
  std::shared_ptr<LocalRegion> excess;
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    free_.push_back(std::move(region));
    if (free_.size() > kKeepFree) {
      excess = std::move(free_.front());
      free_.erase(free_.begin());
    }
  }
  if (excess != nullptr) (void)Release(excess->id);  // the connection's close would do it too
}

}  // namespace resident::client

#include "server/rpc/local_data_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/handle_id.h"
#include "core/local_frame.h"
#include "core/log.h"
#include "resident/v1/resident.pb.h"

namespace resident {
namespace {

// Requests are a few dozen bytes; anything far larger is not a client of ours.
constexpr uint32_t kMaxFrameBytes = 64 << 10;

}  // namespace

absl::StatusOr<std::unique_ptr<LocalDataSocket>> LocalDataSocket::Start(
    const LocalDataOptions& options, SessionManager& sessions, const Authenticator& auth) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (options.path.empty() || options.path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("--local-data-socket: the path '", options.path,
                                                   "' is empty or longer than ",
                                                   sizeof(addr.sun_path) - 1, " bytes"));
  }
  std::memcpy(addr.sun_path, options.path.data(), options.path.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket(AF_UNIX): ", strerror(errno)));
  struct stat st {};
  if (lstat(options.path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      close(fd);
      return absl::InvalidArgumentError(absl::StrCat(
          "--local-data-socket: ", options.path, " exists and is not a socket; not replacing it"));
    }
    // A socket someone still serves is not ours to take; a stale one is.
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
      close(fd);
      return absl::UnavailableError(
          absl::StrCat("--local-data-socket: another server serves ", options.path));
    }
    unlink(options.path.c_str());
  }
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, 64) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("--local-data-socket: cannot listen on ", options.path, ": ", strerror(err)));
  }
  if (chmod(options.path.c_str(), options.mode) != 0) {
    const int err = errno;
    close(fd);
    unlink(options.path.c_str());
    return absl::UnavailableError(
        absl::StrCat("--local-data-socket: chmod ", options.path, ": ", strerror(err)));
  }
  std::unique_ptr<LocalDataSocket> s(new LocalDataSocket(options, sessions, auth, fd));
  s->acceptor_ = std::thread([p = s.get()] { p->AcceptLoop(); });
  return s;
}

LocalDataSocket::~LocalDataSocket() {
  stopping_ = true;
  shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::unique_ptr<Connection>> conns;
  {
    std::lock_guard<std::mutex> lock(mu_);
    conns = std::move(connections_);
  }
  for (auto& c : conns) {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->fd >= 0) shutdown(c->fd, SHUT_RDWR);  // wakes its reads
  }
  for (auto& c : conns) c->thread.join();
  close(listen_fd_);
  unlink(options_.path.c_str());
}

int LocalDataSocket::connections() const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const auto& c : connections_) n += c->done ? 0 : 1;
  return n;
}

void LocalDataSocket::ReapDone() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if ((*it)->done) {
      (*it)->thread.join();
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
}

void LocalDataSocket::AcceptLoop() {
  while (!stopping_) {
    const int c = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
      if (stopping_) break;
      if (errno != EINTR && errno != ECONNABORTED) {
        // Out of descriptors or memory: let some connections end first.
        RESIDENT_LOG(kWarning, "local data socket: accept: ", strerror(errno));
        usleep(10000);
      }
      continue;
    }
    // Who connected: a stranger's connections are capped per uid until they
    // authenticate. A peer without credentials (none on Linux) counts as
    // uid -1, one stranger.
    ucred cred{};
    socklen_t cred_len = sizeof(cred);
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0) cred.uid = ~uid_t{0};
    std::lock_guard<std::mutex> lock(mu_);
    ReapDone();
    if (static_cast<int>(connections_.size()) >= options_.max_connections) {
      RESIDENT_LOG(kWarning, "local data socket: ", connections_.size(),
                   " connections already open (the limit); closing a new one");
      close(c);
      continue;
    }
    int strangers = 0;
    for (const auto& other : connections_) {
      strangers += !other->done && other->tenant.empty() && other->uid == cred.uid ? 1 : 0;
    }
    if (strangers >= options_.max_unauthenticated_connections_per_uid) {
      RESIDENT_LOG(kWarning, "local data socket: uid ", cred.uid, " already holds ", strangers,
                   " connections not yet authenticated "
                   "(--max-unauthenticated-local-data-connections-per-uid); closing a new one");
      close(c);
      continue;
    }
    auto conn = std::make_unique<Connection>();
    conn->owner = next_owner_++;
    conn->uid = cred.uid;
    conn->accepted = std::chrono::steady_clock::now();
    conn->fd = c;
    Connection* raw = conn.get();
    connections_.push_back(std::move(conn));
    raw->thread = std::thread([this, raw] { Serve(raw); });
  }
}

absl::Status LocalDataSocket::Claim(Connection* c, const std::string& tenant) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!c->tenant.empty()) {
    if (c->tenant == tenant) return absl::OkStatus();
    return absl::PermissionDeniedError(
        "this local data connection belongs to another tenant; open a connection of your own");
  }
  int held = 0;
  for (const auto& other : connections_) held += !other->done && other->tenant == tenant ? 1 : 0;
  if (held >= options_.max_connections_per_tenant) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "tenant '", tenant, "' already holds ", held,
        " local data connections (--max-local-data-connections-per-tenant); close one first"));
  }
  c->tenant = tenant;
  return absl::OkStatus();
}

namespace {
void SetSendTimeout(int fd, std::chrono::milliseconds ms) {
  const int64_t n = std::max<int64_t>(ms.count(), 0);
  timeval tv{static_cast<time_t>(n / 1000), static_cast<suseconds_t>((n % 1000) * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}
}  // namespace

void LocalDataSocket::Serve(Connection* c) {
  bool vouched = false;  // an authenticated request was answered OK
  // Until then everything (every read of every frame, and each answer's
  // send) happens before one deadline, so a peer that dribbles bytes or
  // never reads its answers is closed on time.
  const auto deadline =
      c->accepted + std::chrono::milliseconds(std::max(options_.first_request_timeout_ms, 1));
  while (!stopping_) {
    std::vector<int> fds;
    std::string payload;
    FrameLimits limits;
    limits.max_bytes = kMaxFrameBytes;
    limits.max_fds = 1;  // a register's memfd; no other request carries one
    limits.deadline = vouched ? std::chrono::steady_clock::time_point::max() : deadline;
    // Anything but a whole frame in time, within its bounds, ends the
    // connection; ReadFrame has closed every descriptor that came with it.
    const FrameStatus read = ReadFrame(c->fd, limits, &payload, &fds);
    if (read != FrameStatus::kOk) {
      if (read == FrameStatus::kTooManyFds) {
        RESIDENT_LOG(kWarning, "local data socket: a frame of uid ", c->uid,
                     " carried more than one file descriptor; closing its connection");
      } else if (read == FrameStatus::kTimedOut) {
        RESIDENT_LOG(kInfo, "local data socket: a connection of uid ", c->uid,
                     " made no authenticated request within --local-data-first-request-timeout; "
                     "closing it");
      }
      break;
    }
    v1::LocalDataResponse resp;
    auto answer = [&](const absl::Status& status) {
      resp.set_code(static_cast<int>(status.code()));
      resp.set_message(std::string(status.message()));
    };
    v1::LocalDataRequest req;
    absl::StatusOr<Identity> who = absl::InvalidArgumentError(
        "the local data request does not parse as resident.v1.LocalDataRequest");
    if (req.ParseFromString(payload)) {
      Metadata md;
      const std::string bearer = "Bearer " + req.token();
      if (!req.token().empty()) md.emplace("authorization", bearer);
      who = auth_.Authorize(md, Role::kUser);
    }
    bool claimed = true;
    if (who.ok()) {
      absl::Status claim = Claim(c, who->tenant);
      if (!claim.ok()) {
        who = claim;
        claimed = false;
      }
    }
    std::optional<HandleId> session;
    if (who.ok()) {
      session = HandleId::FromBytes(req.session());
      if (!session) who = absl::InvalidArgumentError("the request names no valid session id");
    }
    if (!who.ok()) {
      CloseAll(fds);
      answer(who.status());
    } else if (req.action_case() == v1::LocalDataRequest::kRegisterBytes) {
      if (fds.size() != 1) {
        answer(absl::InvalidArgumentError(absl::StrCat(
            "a register request carries one memfd (SCM_RIGHTS), this one carried ", fds.size())));
        CloseAll(fds);
      } else {
        bool pinned = false;
        absl::StatusOr<HandleId> id = sessions_.AddRegion(who->tenant, *session, c->owner, fds[0],
                                                          req.register_bytes(), &pinned);
        fds.clear();  // AddRegion took it
        answer(id.status());
        if (id.ok()) {
          resp.set_region(id->bytes());
          resp.set_pinned(pinned);
        }
      }
    } else if (!fds.empty()) {
      CloseAll(fds);
      answer(absl::InvalidArgumentError(
          "only a register request carries a file descriptor; nothing was done"));
    } else {
      if (req.action_case() == v1::LocalDataRequest::kReleaseRegion) {
        std::optional<HandleId> region = HandleId::FromBytes(req.release_region());
        answer(region ? sessions_.ReleaseRegion(who->tenant, *session, *region)
                      : absl::InvalidArgumentError("release_region is not a region id"));
      } else {
        answer(absl::InvalidArgumentError("the request asks for nothing (register or release)"));
      }
    }
    if (!vouched) {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      SetSendTimeout(c->fd, left);
    }
    if (!SendFrame(c->fd, resp.SerializeAsString()) || !claimed) break;
    if (!vouched && who.ok() && resp.code() == 0) {
      vouched = true;
      SetSendTimeout(c->fd, std::chrono::milliseconds(0));  // then quiet is allowed
    }
  }
  // The client is gone, broke the protocol, or the server stops: the peer
  // sees the end now, and its regions go with it.
  {
    std::lock_guard<std::mutex> lock(c->mu);
    close(c->fd);
    c->fd = -1;
  }
  sessions_.DropRegionsOf(c->owner);
  c->done = true;
}

}  // namespace resident

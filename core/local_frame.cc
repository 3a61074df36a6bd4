#include "core/local_frame.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace resident {
namespace {

// Descriptors accepted with one read; more (a truncated control message)
// fails the read.
constexpr int kMaxFds = 4;

// Waits until fd is readable or the deadline passes.
FrameStatus WaitReadable(int fd, std::chrono::steady_clock::time_point deadline) {
  if (deadline == std::chrono::steady_clock::time_point::max()) return FrameStatus::kOk;
  while (true) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return FrameStatus::kTimedOut;
    pollfd p{fd, POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    if (r > 0) return FrameStatus::kOk;  // data, the end, or an error: the read tells
    if (r < 0 && errno != EINTR) return FrameStatus::kBroken;
  }
}

// Reads exactly n bytes, collecting descriptors passed with them; fails as
// soon as *fds holds more than max_fds beyond its first `base`.
FrameStatus RecvAll(int fd, char* buf, size_t n, const FrameLimits& limits, size_t base,
                    std::vector<int>* fds) {
  size_t got = 0;
  while (got < n) {
    if (FrameStatus w = WaitReadable(fd, limits.deadline); w != FrameStatus::kOk) return w;
    iovec iov{buf + got, n - got};
    alignas(cmsghdr) char control[CMSG_SPACE(kMaxFds * sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t r = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (r < 0 && errno == EINTR) continue;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); r >= 0 && c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int passed;
        std::memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        fds->push_back(passed);
      }
    }
    if (r < 0 || (msg.msg_flags & MSG_CTRUNC) != 0) return FrameStatus::kBroken;
    if (fds->size() - base > static_cast<size_t>(std::max(limits.max_fds, 0))) {
      return FrameStatus::kTooManyFds;
    }
    if (r == 0) return FrameStatus::kEnd;
    got += static_cast<size_t>(r);
  }
  return FrameStatus::kOk;
}

}  // namespace

void CloseAll(std::vector<int>& fds) {
  for (int fd : fds) close(fd);
  fds.clear();
}

bool SendFrame(int fd, std::string_view payload, int pass_fd) {
  std::string frame(4, '\0');
  const uint32_t n = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  frame.append(payload);
  const char* p = frame.data();
  size_t left = frame.size();
  bool first = true;
  while (left > 0) {
    iovec iov{const_cast<char*>(p), left};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    if (first && pass_fd >= 0) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    const ssize_t r = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    first = false;
    p += r;
    left -= static_cast<size_t>(r);
  }
  return true;
}

FrameStatus ReadFrame(int fd, const FrameLimits& limits, std::string* payload,
                      std::vector<int>* fds) {
  const size_t base = fds->size();
  char head[4];
  FrameStatus st = RecvAll(fd, head, 4, limits, base, fds);
  if (st == FrameStatus::kOk) {
    uint32_t len = 0;
    for (int i = 0; i < 4; ++i) {
      len |= static_cast<uint32_t>(static_cast<uint8_t>(head[i])) << (8 * i);
    }
    if (len > limits.max_bytes) {
      st = FrameStatus::kTooLarge;
    } else {
      payload->assign(len, '\0');
      st = RecvAll(fd, payload->data(), len, limits, base, fds);
    }
  }
  if (st != FrameStatus::kOk) CloseAll(*fds);
  return st;
}

bool RecvFrame(int fd, uint32_t max_bytes, std::string* payload, std::vector<int>* fds) {
  FrameLimits limits;
  limits.max_bytes = max_bytes;
  return ReadFrame(fd, limits, payload, fds) == FrameStatus::kOk;
}

}  // namespace resident

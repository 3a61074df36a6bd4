#ifndef RESIDENT_CORE_LOCAL_FRAME_H_
#define RESIDENT_CORE_LOCAL_FRAME_H_

// The local data socket's framing, shared by the server and the C++ client:
// each message is a 4-byte little-endian length and that many bytes of a
// serialized resident.v1.LocalData{Request,Response}; a register request
// carries its memfd as SCM_RIGHTS ancillary data on the frame's first bytes.
//
//   SendFrame(fd, req.SerializeAsString(), memfd);
//   std::string body; std::vector<int> fds;
//   if (!RecvFrame(fd, 64 << 10, &body, &fds)) { /* peer gone or not ours */ }
//
// A server that must bound what a stranger can hold reads with ReadFrame:
// one deadline for the whole frame and a cap on its descriptors.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace resident {

// Writes one frame, passing pass_fd (when >= 0) with it. False if the peer
// closed or a send failed; never raises SIGPIPE.
bool SendFrame(int fd, std::string_view payload, int pass_fd = -1);

// Reads one frame of at most max_bytes into *payload, appending descriptors
// passed with it to *fds (close-on-exec). False at end of stream, on an error,
// a frame over max_bytes, more than a few descriptors or a truncated control
// message; the descriptors of a failed read are closed and *fds left empty.
bool RecvFrame(int fd, uint32_t max_bytes, std::string* payload, std::vector<int>* fds);

// What ReadFrame accepts of one frame.
struct FrameLimits {
  uint32_t max_bytes = 64 << 10;
  // Descriptors the whole frame may carry, counted over all its reads as
  // they arrive: one more fails the frame at once (at most 4 come per read).
  int max_fds = 4;
  // Every byte of the frame must have come by then, however the peer spaces
  // them; time_point::max(): no deadline.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

enum class FrameStatus {
  kOk,
  kEnd,         // the peer closed (or shut down) the stream
  kTimedOut,    // limits.deadline passed
  kTooLarge,    // the frame's length is over limits.max_bytes
  kTooManyFds,  // more descriptors than limits.max_fds
  kBroken,      // a read failed or a control message was truncated
};

// Reads one frame within `limits` into *payload, appending the descriptors
// passed with it to *fds (close-on-exec). On anything but kOk every
// descriptor in *fds is closed, at once, and *fds left empty.
FrameStatus ReadFrame(int fd, const FrameLimits& limits, std::string* payload,
                      std::vector<int>* fds);

// Closes every descriptor in fds and empties it.
void CloseAll(std::vector<int>& fds);

}  // namespace resident

#endif  // RESIDENT_CORE_LOCAL_FRAME_H_

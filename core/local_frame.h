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

// Closes every descriptor in fds and empties it.
void CloseAll(std::vector<int>& fds);

}  // namespace resident

#endif  // RESIDENT_CORE_LOCAL_FRAME_H_

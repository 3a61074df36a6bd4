// Loops recorded as CUDA graphs (Backend::CaptureLoop): the arena their
// buffers come from while recording, and the scope that redirects a
// thread's ops into the capture.
//
// A graph replays fixed addresses, and a conditional node's body may hold
// only kernels, memsets, memcopies and conditionals: no allocation nodes.
// So while a trip is recorded every allocation on the session's stream
// (values, and CUB's scratch through AllocateOn) is a block of one arena
// that the executor allocated beforehand and that lives with the graph; a
// block freed during the trip is reused later in it, which is safe because
// a one-stream capture is a chain: every node runs after the one before.
#ifndef RESIDENT_SERVER_DEVICE_CUDA_LOOP_GRAPH_H_
#define RESIDENT_SERVER_DEVICE_CUDA_LOOP_GRAPH_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "server/device/buffer.h"
#include "server/device/cuda/cuda_backend_internal.h"

namespace resident::cuda_internal {

// First-fit blocks of one device buffer, 256-byte aligned, neighbours
// merged when given back.
class CaptureArena : public std::enable_shared_from_this<CaptureArena> {
 public:
  explicit CaptureArena(std::shared_ptr<Buffer> memory);
  // A block of `bytes` (null for 0); RESOURCE_EXHAUSTED when none is free.
  absl::StatusOr<void*> Take(int64_t bytes);
  // Gives back a block Take returned (null is ignored).
  void Give(void* block);

 private:
  std::shared_ptr<Buffer> memory_;
  char* base_;
  std::mutex mu_;
  std::map<int64_t, int64_t> free_;              // offset -> bytes
  absl::flat_hash_map<int64_t, int64_t> taken_;  // offset -> bytes
};

// While alive, ops the calling thread queues on `state` are recorded on
// `capture` and allocate from `arena`.
class CaptureScope {
 public:
  CaptureScope(const StreamState& state, cudaStream_t capture, CaptureArena* arena);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

 private:
  ThreadCapture previous_;
};

}  // namespace resident::cuda_internal

#endif  // RESIDENT_SERVER_DEVICE_CUDA_LOOP_GRAPH_H_

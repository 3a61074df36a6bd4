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
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
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
  // The most bytes taken at once so far.
  int64_t peak() const;

 private:
  std::shared_ptr<Buffer> memory_;
  char* base_;
  mutable std::mutex mu_;
  std::map<int64_t, int64_t> free_;              // offset -> bytes
  absl::flat_hash_map<int64_t, int64_t> taken_;  // offset -> bytes
  int64_t in_use_ = 0;
  int64_t peak_ = 0;
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

// An executable loop graph and the graph it was instantiated from, which
// owns the conditional handle the executable sets (its LoopStep reads the
// handle from the loop's state, so updating the executable from a newer
// recording leaves the handle as it was).
struct CachedLoopGraph {
  uint64_t shape = 0;  // LoopGraphShape of the recording it was made from
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaGraphConditionalHandle handle = 0;
};

// Destroys both graphs (either may be null).
void DestroyLoopGraph(CachedLoopGraph& g);

// What makes two recordings of a trip likely to fit one executable graph:
// the body's nodes, their types and each kernel's function and launch
// shape, not the addresses they name. A match is only a candidate:
// cudaGraphExecUpdate decides.
uint64_t LoopGraphShape(cudaGraph_t body);

// A stream's executable loop graphs kept after their loops ended
// (CudaBackend::SetLoopGraphCache), least recently used first.
class LoopGraphCache {
 public:
  explicit LoopGraphCache(int ordinal) : ordinal_(ordinal) {}
  ~LoopGraphCache();
  LoopGraphCache(const LoopGraphCache&) = delete;
  LoopGraphCache& operator=(const LoopGraphCache&) = delete;

  // Takes out the most recent graph of `shape`, if any.
  std::optional<CachedLoopGraph> Take(uint64_t shape);
  // Keeps `g` as the most recent, destroying the least recent beyond
  // `capacity` (all of them, `g` too, for 0); `g` alone when its shape is
  // refused.
  void Put(CachedLoopGraph g, int capacity);
  // A shape whose recording an executable refused to be updated from: its
  // kept graphs are destroyed, and none is kept from then on (at most
  // kMaxRefused shapes are remembered).
  void Refuse(uint64_t shape);
  bool Refused(uint64_t shape) const;
  int64_t size() const;

 private:
  const int ordinal_;
  mutable std::mutex mu_;
  static constexpr size_t kMaxRefused = 1024;
  std::list<CachedLoopGraph> graphs_;  // least recent first
  absl::flat_hash_set<uint64_t> refused_;
};

}  // namespace resident::cuda_internal

#endif  // RESIDENT_SERVER_DEVICE_CUDA_LOOP_GRAPH_H_

// CudaBackend::CaptureLoop: a loop's trip recorded once into the body of a
// conditional WHILE node, whose last kernel (kernels/cuda/loop_graph.cu)
// counts the trip and decides on the device whether to run another. A
// round is one graph launch: the host sets how many trips it may take at
// most, launches, and reads back the count and the condition (24 bytes).
#include "server/device/cuda/loop_graph.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "core/log.h"
#include "core/status_macros.h"
#include "kernels/cuda/loop_graph.h"

namespace resident::cuda_internal {

thread_local ThreadCapture tl_capture;

namespace {

constexpr int64_t kAlign = 256;

int64_t AlignUp(int64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

class CudaLoopGraph final : public LoopGraph {
 public:
  CudaLoopGraph(std::shared_ptr<DeviceState> device, std::shared_ptr<StreamState> stream,
                std::shared_ptr<CaptureArena> arena, int64_t* state, CachedLoopGraph graph,
                bool from_cache, int keep)
      : device_(std::move(device)),
        stream_(std::move(stream)),
        arena_(std::move(arena)),
        state_(state),
        graph_(graph),
        from_cache_(from_cache),
        keep_(keep) {}
  // The executable goes back to the stream's cache unless a round may
  // still be running it.
  ~CudaLoopGraph() override {
    DeviceGuard guard(device_->ordinal);
    if (idle_ && !device_->poisoned.load()) {
      stream_->loop_graphs().Put(graph_, keep_);
    } else {
      DestroyLoopGraph(graph_);
    }
  }

  absl::StatusOr<Round> Run(int64_t until) override {
    if (device_->poisoned.load()) return PoisonedStatus();
    DeviceGuard guard(device_->ordinal);
    const cudaStream_t stream = stream_->home_stream();
    const int64_t limit = until;
    idle_ = false;
    // From pageable memory: returns once `limit` is staged.
    RETURN_IF_ERROR(device_->Check(cudaMemcpyAsync(state_ + cuda_kernels::kLoopUntil, &limit,
                                                   sizeof limit, cudaMemcpyHostToDevice, stream),
                                   "cudaMemcpyAsync(loop round)"));
    RETURN_IF_ERROR(device_->Check(cudaGraphLaunch(graph_.exec, stream), "cudaGraphLaunch"));
    int64_t host[3] = {0, 0, 0};
    RETURN_IF_ERROR(
        device_->Check(cudaMemcpyAsync(host, state_, sizeof host, cudaMemcpyDeviceToHost, stream),
                       "cudaMemcpyAsync(loop state)"));
    RETURN_IF_ERROR(device_->Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize"));
    idle_ = true;
    return Round{host[cuda_kernels::kLoopTrips], host[cuda_kernels::kLoopHolds] != 0};
  }

  bool from_cache() const override { return from_cache_; }
  int64_t arena_peak_bytes() const override { return arena_->peak(); }

 private:
  std::shared_ptr<DeviceState> device_;
  std::shared_ptr<StreamState> stream_;
  std::shared_ptr<CaptureArena> arena_;  // every address the graph names
  int64_t* state_;                       // in the arena
  CachedLoopGraph graph_;
  const bool from_cache_;
  const int keep_;    // the stream's cache capacity
  bool idle_ = true;  // no round of ours in flight
};

// Owns a graph until released.
struct GraphDeleter {
  void operator()(CUgraph_st* g) const { (void)cudaGraphDestroy(g); }
};
using GraphOwner = std::unique_ptr<CUgraph_st, GraphDeleter>;

}  // namespace

CaptureArena::CaptureArena(std::shared_ptr<Buffer> memory)
    : memory_(std::move(memory)), base_(static_cast<char*>(memory_->data())) {
  // The whole block, less what alignment of its start would waste.
  const int64_t skew = static_cast<int64_t>(reinterpret_cast<uintptr_t>(base_) % kAlign);
  const int64_t start = skew == 0 ? 0 : kAlign - skew;
  const int64_t usable = (memory_->size() - start) / kAlign * kAlign;
  if (usable > 0) free_[start] = usable;
}

absl::StatusOr<void*> CaptureArena::Take(int64_t bytes) {
  if (bytes == 0) return nullptr;
  const int64_t want = AlignUp(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < want) continue;
    const int64_t offset = it->first;
    const int64_t rest = it->second - want;
    free_.erase(it);
    if (rest > 0) free_[offset + want] = rest;
    taken_[offset] = want;
    in_use_ += want;
    peak_ = std::max(peak_, in_use_);
    return static_cast<void*>(base_ + offset);
  }
  return absl::ResourceExhaustedError(absl::StrCat("a loop graph's arena of ", memory_->size(),
                                                   " bytes has no free block of ", bytes));
}

void CaptureArena::Give(void* block) {
  if (block == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto t = taken_.find(static_cast<char*>(block) - base_);
  if (t == taken_.end()) return;
  int64_t offset = t->first, bytes = t->second;
  taken_.erase(t);
  in_use_ -= bytes;
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && next->first == offset + bytes) {
    bytes += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      prev->second += bytes;
      return;
    }
  }
  free_[offset] = bytes;
}

int64_t CaptureArena::peak() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_;
}

CaptureScope::CaptureScope(const StreamState& state, cudaStream_t capture, CaptureArena* arena)
    : previous_(tl_capture) {
  tl_capture = ThreadCapture{&state, capture, arena};
}

CaptureScope::~CaptureScope() { tl_capture = previous_; }

void DestroyLoopGraph(CachedLoopGraph& g) {
  if (g.exec != nullptr) (void)cudaGraphExecDestroy(g.exec);
  if (g.graph != nullptr) (void)cudaGraphDestroy(g.graph);
  g = CachedLoopGraph();
}

uint64_t LoopGraphShape(cudaGraph_t body) {
  size_t count = 0;
  if (cudaGraphGetNodes(body, nullptr, &count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  std::vector<cudaGraphNode_t> nodes(count);
  if (count > 0 && cudaGraphGetNodes(body, nodes.data(), &count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  uint64_t shape = absl::HashOf(count);
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    if (cudaGraphNodeGetType(node, &type) != cudaSuccess) (void)cudaGetLastError();
    shape = absl::HashOf(shape, static_cast<int>(type));
    if (type != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams p{};
    if (cudaGraphKernelNodeGetParams(node, &p) != cudaSuccess) {
      (void)cudaGetLastError();  // e.g. a driver-API kernel: its type alone
      continue;
    }
    shape = absl::HashOf(shape, reinterpret_cast<uintptr_t>(p.func), p.gridDim.x, p.gridDim.y,
                         p.gridDim.z, p.blockDim.x, p.blockDim.y, p.blockDim.z, p.sharedMemBytes);
  }
  return shape;
}

LoopGraphCache::~LoopGraphCache() {
  DeviceGuard guard(ordinal_);
  for (CachedLoopGraph& g : graphs_) DestroyLoopGraph(g);
}

std::optional<CachedLoopGraph> LoopGraphCache::Take(uint64_t shape) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = graphs_.rbegin(); it != graphs_.rend(); ++it) {
    if (it->shape != shape) continue;
    CachedLoopGraph g = *it;
    graphs_.erase(std::next(it).base());
    return g;
  }
  return std::nullopt;
}

void LoopGraphCache::Refuse(uint64_t shape) {
  std::list<CachedLoopGraph> dropped;  // kept ones of the shape: never taken again
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (refused_.size() < kMaxRefused) refused_.insert(shape);
    for (auto it = graphs_.begin(); it != graphs_.end();) {
      auto next = std::next(it);
      if (it->shape == shape) dropped.splice(dropped.end(), graphs_, it);
      it = next;
    }
  }
  for (CachedLoopGraph& d : dropped) DestroyLoopGraph(d);
}

bool LoopGraphCache::Refused(uint64_t shape) const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_.contains(shape);
}

void LoopGraphCache::Put(CachedLoopGraph g, int capacity) {
  std::list<CachedLoopGraph> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    (refused_.contains(g.shape) ? dropped : graphs_).push_back(g);
    while (static_cast<int64_t>(graphs_.size()) > std::max(capacity, 0)) {
      dropped.splice(dropped.end(), graphs_, graphs_.begin());
    }
  }
  for (CachedLoopGraph& d : dropped) DestroyLoopGraph(d);
}

int64_t LoopGraphCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(graphs_.size());
}

bool CudaBackend::CapturesLoops() const {
  // Conditional nodes set from a kernel: CUDA 12.4 in the driver too. Asked
  // once per process: every program's planning asks.
  static const bool supported = [] {
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return driver >= 12040;
  }();
  return supported;
}

absl::StatusOr<std::unique_ptr<LoopGraph>> CudaBackend::CaptureLoop(Stream& stream,
                                                                    const LoopCaptureSpec& spec) {
  ASSIGN_OR_RETURN(StreamRef s, Resolve(stream));
  if (!CapturesLoops()) {
    return absl::UnimplementedError("this CUDA driver has no conditional graph nodes (12.4+)");
  }
  if (spec.arena == nullptr || !spec.body) {
    return absl::InvalidArgumentError("CaptureLoop: no arena or no body");
  }
  RETURN_IF_ERROR(CheckDeviceBuffer(*device_, *spec.arena, s, "loop graph arena"));
  DeviceGuard guard(device_->ordinal);
  ASSIGN_OR_RETURN(const cudaStream_t capture, s->CaptureStream());
  auto arena = std::make_shared<CaptureArena>(spec.arena);
  constexpr int64_t kStateBytes = cuda_kernels::kLoopStateWords * sizeof(int64_t);
  ASSIGN_OR_RETURN(void* state_block, arena->Take(kStateBytes));
  auto* state = static_cast<int64_t*>(state_block);
  RETURN_IF_ERROR(Check(cudaMemsetAsync(state, 0, kStateBytes, s->home_stream()),
                        "cudaMemsetAsync(loop state)"));
  cudaGraph_t made = nullptr;
  RETURN_IF_ERROR(Check(cudaGraphCreate(&made, 0), "cudaGraphCreate"));
  GraphOwner fresh(made);
  // Launched, the node runs its body once (the handle's default), then
  // again while LoopStep sets the handle: the caller launches a round only
  // when the condition held.
  cudaGraphConditionalHandle handle = 0;
  RETURN_IF_ERROR(
      Check(cudaGraphConditionalHandleCreate(&handle, made, 1, cudaGraphCondAssignDefault),
            "cudaGraphConditionalHandleCreate"));
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = cudaGraphCondTypeWhile;
  params.conditional.size = 1;
  cudaGraphNode_t node = nullptr;
  RETURN_IF_ERROR(Check(cudaGraphAddNode(&node, made, nullptr, nullptr, 0, &params),
                        "cudaGraphAddNode(while)"));
  cudaGraph_t body = params.conditional.phGraph_out[0];

  absl::Status recorded;
  {
    CaptureScope scope(*s, capture, arena.get());
    RETURN_IF_ERROR(Check(cudaStreamBeginCaptureToGraph(capture, body, nullptr, nullptr, 0,
                                                        cudaStreamCaptureModeThreadLocal),
                          "cudaStreamBeginCaptureToGraph"));
    recorded = spec.body();
    DeviceArray test;
    if (recorded.ok() && spec.cond) {
      absl::StatusOr<DeviceArray> t = spec.cond();
      if (t.ok()) {
        test = *std::move(t);
      } else {
        recorded = t.status();
      }
    }
    if (recorded.ok()) {
      recorded = Check(cuda_kernels::LoopStep(capture, test.data(), state), "loop step");
    }
    test = DeviceArray();  // back to the arena; the graph keeps the address
    // Always leave capture mode, whatever failed.
    cudaGraph_t ended = nullptr;
    const cudaError_t e = cudaStreamEndCapture(capture, &ended);
    if (recorded.ok()) {
      recorded = Check(e, "cudaStreamEndCapture");
    } else if (e != cudaSuccess) {
      (void)cudaGetLastError();
    }
  }
  RETURN_IF_ERROR(recorded);

  // An executable of an earlier loop of this shape on this stream, updated
  // with this recording's addresses, else a new one.
  const int keep = loop_graph_cache_.load();
  const uint64_t shape = LoopGraphShape(body);
  std::optional<CachedLoopGraph> ready;
  if (keep > 0 && !s->loop_graphs().Refused(shape)) ready = s->loop_graphs().Take(shape);
  bool updated = false;
  if (ready.has_value()) {
    cudaGraphExecUpdateResultInfo info{};
    const cudaError_t e = cudaGraphExecUpdate(ready->exec, made, &info);
    updated = e == cudaSuccess;
    if (!updated) {
      // Not updatable after all: instantiate, and stop trying for this
      // shape on this stream, so such loops do not pay a refused update
      // each time.
      (void)cudaGetLastError();
      RESIDENT_LOG(kDebug, "loop graph update refused (", cudaGetErrorString(e), ", result ",
                   static_cast<int>(info.result), "); this shape is no longer kept");
      s->loop_graphs().Refuse(shape);
      DestroyLoopGraph(*ready);
      ready.reset();
    }
  }
  if (!ready.has_value()) {
    cudaGraphExec_t exec = nullptr;
    RETURN_IF_ERROR(Check(cudaGraphInstantiate(&exec, made, 0), "cudaGraphInstantiate"));
    ready = CachedLoopGraph{shape, fresh.release(), exec, handle};
  }
  // The handle LoopStep sets: the one the executable was made with.
  // From pageable memory: returns once staged.
  const int64_t word = static_cast<int64_t>(ready->handle);
  absl::Status set = Check(cudaMemcpyAsync(state + cuda_kernels::kLoopHandle, &word, sizeof word,
                                           cudaMemcpyHostToDevice, s->home_stream()),
                           "cudaMemcpyAsync(loop handle)");
  if (!set.ok()) {
    DestroyLoopGraph(*ready);
    return set;
  }
  return std::unique_ptr<LoopGraph>(
      std::make_unique<CudaLoopGraph>(device_, s, std::move(arena), state, *ready, updated, keep));
}

}  // namespace resident::cuda_internal

// CudaBackend::CaptureLoop: a loop's trip recorded once into the body of a
// conditional WHILE node, whose last kernel (kernels/cuda/loop_graph.cu)
// counts the trip and decides on the device whether to run another. A
// round is one graph launch: the host sets how many trips it may take at
// most, launches, and reads back the count and the condition (24 bytes).
#include "server/device/cuda/loop_graph.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "absl/strings/str_cat.h"
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
                std::shared_ptr<CaptureArena> arena, int64_t* state)
      : device_(std::move(device)),
        stream_(std::move(stream)),
        arena_(std::move(arena)),
        state_(state) {}
  ~CudaLoopGraph() override {
    DeviceGuard guard(device_->ordinal);
    if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
    if (graph_ != nullptr) (void)cudaGraphDestroy(graph_);
  }

  absl::StatusOr<Round> Run(int64_t until) override {
    if (device_->poisoned.load()) return PoisonedStatus();
    DeviceGuard guard(device_->ordinal);
    const cudaStream_t stream = stream_->home_stream();
    const int64_t limit = until;
    // From pageable memory: returns once `limit` is staged.
    RETURN_IF_ERROR(device_->Check(cudaMemcpyAsync(state_ + cuda_kernels::kLoopUntil, &limit,
                                                   sizeof limit, cudaMemcpyHostToDevice, stream),
                                   "cudaMemcpyAsync(loop round)"));
    RETURN_IF_ERROR(device_->Check(cudaGraphLaunch(exec_, stream), "cudaGraphLaunch"));
    int64_t host[3] = {0, 0, 0};
    RETURN_IF_ERROR(
        device_->Check(cudaMemcpyAsync(host, state_, sizeof host, cudaMemcpyDeviceToHost, stream),
                       "cudaMemcpyAsync(loop state)"));
    RETURN_IF_ERROR(device_->Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize"));
    return Round{host[cuda_kernels::kLoopTrips], host[cuda_kernels::kLoopHolds] != 0};
  }

  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;

 private:
  std::shared_ptr<DeviceState> device_;
  std::shared_ptr<StreamState> stream_;
  std::shared_ptr<CaptureArena> arena_;  // every address the graph names
  int64_t* state_;                       // in the arena
};

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

CaptureScope::CaptureScope(const StreamState& state, cudaStream_t capture, CaptureArena* arena)
    : previous_(tl_capture) {
  tl_capture = ThreadCapture{&state, capture, arena};
}

CaptureScope::~CaptureScope() { tl_capture = previous_; }

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
  ASSIGN_OR_RETURN(void* state_block, arena->Take(3 * sizeof(int64_t)));
  auto* state = static_cast<int64_t*>(state_block);
  RETURN_IF_ERROR(Check(cudaMemsetAsync(state, 0, 3 * sizeof(int64_t), s->home_stream()),
                        "cudaMemsetAsync(loop state)"));
  auto graph = std::make_unique<CudaLoopGraph>(device_, s, arena, state);
  RETURN_IF_ERROR(Check(cudaGraphCreate(&graph->graph_, 0), "cudaGraphCreate"));
  // Launched, the node runs its body once (the handle's default), then
  // again while LoopStep sets the handle: the caller launches a round only
  // when the condition held.
  cudaGraphConditionalHandle handle = 0;
  RETURN_IF_ERROR(
      Check(cudaGraphConditionalHandleCreate(&handle, graph->graph_, 1, cudaGraphCondAssignDefault),
            "cudaGraphConditionalHandleCreate"));
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = cudaGraphCondTypeWhile;
  params.conditional.size = 1;
  cudaGraphNode_t node = nullptr;
  RETURN_IF_ERROR(Check(cudaGraphAddNode(&node, graph->graph_, nullptr, nullptr, 0, &params),
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
      recorded = Check(cuda_kernels::LoopStep(capture, test.data(), state, handle), "loop step");
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
  RETURN_IF_ERROR(
      Check(cudaGraphInstantiate(&graph->exec_, graph->graph_, 0), "cudaGraphInstantiate"));
  return std::unique_ptr<LoopGraph>(std::move(graph));
}

}  // namespace resident::cuda_internal

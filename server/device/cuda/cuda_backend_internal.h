// The CUDA backend's classes, shared by cuda_backend.cc (device, memory,
// streams, copies), cuda_ops.cc (Run and the ops) and fused_loop.cc.
// Internal to this folder.
//
// Lifetimes. Buffers and streams can outlive the Backend object and each
// other (a named array outlives the session whose stream allocated it), so:
//  - DeviceState (ordinal, pool, counters, the poisoned flag) is shared by
//    the backend, every stream and every buffer;
//  - StreamState owns the cudaStream_t (and its cuBLAS handle) and is shared
//    by the Stream object and by every buffer allocated on it; the CUDA
//    stream is destroyed when the last of them goes;
//  - a CudaBuffer frees with cudaFreeAsync on the stream it was allocated
//    on. Work on any other stream that used it (recorded by NoteUse, as
//    PyTorch's recordStream does) is waited for first: an event is recorded
//    on each such stream and the home stream waits on it before the free.
//
// cuBLAS: each stream gets its own handle and workspace, created on its
// first float matmul and bound to that stream (to its capture stream while
// a loop graph is recorded, loop_graph.h). One handle shared across
// streams would share its workspace between kernels that may run at the same
// time; a handle per stream needs no lock on the hot path.
#ifndef RESIDENT_SERVER_DEVICE_CUDA_CUDA_BACKEND_INTERNAL_H_
#define RESIDENT_SERVER_DEVICE_CUDA_CUDA_BACKEND_INTERNAL_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/cuda/kernels.h"
#include "server/device/backend.h"
#include "server/device/cuda/cuda_status.h"
#include "server/device/cuda/fft_plans.h"
#include "server/device/cuda/fused_loop.h"
#include "server/device/cuda/staging.h"

namespace resident::cuda_internal {

// Makes `ordinal` the calling thread's current device for a scope, and puts
// the previous one back.
class DeviceGuard {
 public:
  explicit DeviceGuard(int ordinal);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  bool changed_ = false;
};

struct DeviceState {
  int ordinal = 0;
  int sm_count = 1;
  int cc_major = 0, cc_minor = 0;  // compute capability
  cudaMemPool_t pool = nullptr;
  std::atomic<bool> poisoned{false};
  std::atomic<int64_t> in_use{0};  // bytes of live buffers

  absl::Status Check(cudaError_t e, absl::string_view where) {
    return CudaStatus(e, where, &poisoned);
  }
};

class StreamState;
class CaptureArena;    // loop_graph.h
class LoopGraphCache;  // loop_graph.h

// The capture the calling thread is recording (CaptureScope, loop_graph.h):
// while set, ops this thread queues on `state` go to `stream`, a private
// stream in capture mode, and their allocations come from `arena`. Other
// threads (a handle released meanwhile, whose buffer frees on the session's
// stream) see the session's own stream, which is never in capture mode.
struct ThreadCapture {
  const StreamState* state = nullptr;
  cudaStream_t stream = nullptr;
  CaptureArena* arena = nullptr;
};
extern thread_local ThreadCapture tl_capture;

class StreamState {
 public:
  StreamState(std::shared_ptr<DeviceState> device, cudaStream_t stream)
      : device_(std::move(device)), stream_(stream) {}
  ~StreamState();
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;

  // Where ops queue: the session's stream, or the capture stream while this
  // thread records a loop graph on this stream.
  cudaStream_t stream() const { return tl_capture.state == this ? tl_capture.stream : stream_; }
  // The session's stream itself: frees, events and graph launches.
  cudaStream_t home_stream() const { return stream_; }
  // The arena of the capture this thread records on this stream, or null.
  CaptureArena* capture_arena() const {
    return tl_capture.state == this ? tl_capture.arena : nullptr;
  }
  DeviceState& device() const { return *device_; }
  // This stream's cuBLAS handle (default math: true fp32, no TF32), created
  // on first use, bound to stream() (rebound when a capture begins or ends)
  // with a workspace of its own: cuBLAS then allocates nothing while a
  // graph is recorded, and picks the same kernels in and out of graphs.
  absl::StatusOr<cublasHandle_t> Cublas();
  // A private stream that loop graphs are recorded on, made on first use
  // and kept for this stream's life (cuBLAS may still name it).
  absl::StatusOr<cudaStream_t> CaptureStream();
  // The executable loop graphs this stream keeps, made on first use.
  LoopGraphCache& loop_graphs();
  // Pinned staging for large host copies on this stream, made on first use.
  Staging& staging();
  // This stream's cuFFT plans, made on first use.
  FftPlans& fft_plans();
  // This stream's cuSOLVER handle and its (default) parameters, made on
  // first use and bound to this stream, as the cuBLAS handle.
  struct Solver {
    cusolverDnHandle_t handle = nullptr;
    cusolverDnParams_t params = nullptr;
  };
  absl::StatusOr<Solver> Cusolver();

 private:
  std::shared_ptr<DeviceState> device_;
  cudaStream_t stream_;
  std::mutex mu_;
  cublasHandle_t cublas_ = nullptr;
  cudaStream_t cublas_stream_ = nullptr;  // the stream cublas_ is bound to
  cudaStream_t capture_stream_ = nullptr;
  std::shared_ptr<LoopGraphCache> loop_graphs_;  // shared: the type is incomplete here
  void* cublas_workspace_ = nullptr;
  size_t cublas_workspace_bytes_ = 0;
  std::unique_ptr<Staging> staging_;
  std::unique_ptr<FftPlans> fft_plans_;
  Solver solver_;
};

// A session's stream: the copies and Synchronize run on its cudaStream_t.
// `state` is null when the CUDA stream could not be created; everything on
// such a stream is INVALID_ARGUMENT.
class CudaStream final : public Stream {
 public:
  CudaStream(std::shared_ptr<DeviceState> device, std::shared_ptr<StreamState> state)
      : device_(std::move(device)), state_(std::move(state)) {}
  const std::shared_ptr<StreamState>& state() const { return state_; }

  absl::Status CopyToDevice(const void* src, Buffer& dst, int64_t offset, int64_t bytes) override;
  absl::Status CopyToHost(const Buffer& src, int64_t offset, void* dst, int64_t bytes) override;
  absl::Status CopyFromPeer(const Buffer& src, Buffer& dst, int64_t bytes) override;
  absl::Status Synchronize() override;

 private:
  // OK while the device works and this stream has a CUDA stream.
  absl::Status Live() const;
  // What every copy checks: Live, `buffer` is memory of this device (its use
  // here noted), the range lies inside it, `host` is not null.
  absl::Status CheckCopyOf(absl::string_view what, const Buffer& buffer, int64_t offset,
                           int64_t bytes, const void* host) const;

  std::shared_ptr<DeviceState> device_;
  std::shared_ptr<StreamState> state_;
};

class CudaBuffer final : public Buffer {
 public:
  CudaBuffer(std::shared_ptr<DeviceState> device, std::shared_ptr<StreamState> home, void* ptr,
             int64_t size)
      : device_(std::move(device)), home_(std::move(home)), ptr_(ptr), size_(size) {}
  // A block of a capture's arena, given back to it when destroyed.
  CudaBuffer(std::shared_ptr<DeviceState> device, std::shared_ptr<StreamState> home, void* ptr,
             int64_t size, std::shared_ptr<CaptureArena> arena)
      : device_(std::move(device)),
        home_(std::move(home)),
        ptr_(ptr),
        size_(size),
        arena_(std::move(arena)) {}
  ~CudaBuffer() override;
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;

  void* data() const override { return ptr_; }
  int64_t size() const override { return size_; }
  int ordinal() const { return device_->ordinal; }
  // Records that work on `stream` uses this buffer, so the free waits for it.
  void NoteUse(const std::shared_ptr<StreamState>& stream) const;

 private:
  std::shared_ptr<DeviceState> device_;
  std::shared_ptr<StreamState> home_;
  void* ptr_;
  int64_t size_;
  std::shared_ptr<CaptureArena> arena_;  // null: a block of the device's pool
  mutable std::mutex mu_;
  mutable std::vector<std::shared_ptr<StreamState>> other_streams_;
};

// OK when `buffer` is memory of `device`, and notes its use on `stream` (so
// its free waits for that stream); INVALID_ARGUMENT naming `what` otherwise.
absl::Status CheckDeviceBuffer(const DeviceState& device, const Buffer& buffer,
                               const std::shared_ptr<StreamState>& stream, absl::string_view what);

class CudaBackend final : public Backend {
 public:
  CudaBackend(std::shared_ptr<DeviceState> device, std::string description);

  std::string name() const override;
  std::string description() const override { return description_; }
  MemoryInfo memory() const override;
  bool poisoned() const override { return device_->poisoned.load(); }
  bool Supports(DeviceOpKind kind, DType dtype) const override;
  // 256 MiB: about 60 us of HBM traffic on an H100/H200, under the ~50 us
  // the scheduler hop and the cross-thread reply cost there (eager ops on
  // large arrays then skip both; resident_run_phase_seconds{phase="queued"}).
  int64_t inline_program_bytes() const override { return int64_t{1} << 28; }
  // 2^34 element-ops: about 1 ms of float64 adds fused on an H200, or a
  // 1024-op chain on 64 MiB arrays (the seed loop) fused; op by op such a
  // program takes tens of milliseconds, still short for a blocked thread.
  int64_t inline_program_work() const override { return int64_t{1} << 34; }
  // 2^34 element-steps: about 1 ms on an H200 (the seed loop in one round).
  int64_t fused_round_work() const override { return int64_t{1} << 34; }
  // 2^16 elements: a region's NVRTC compile (tens of milliseconds, once per
  // distinct region) outweighs the launches it saves on arrays smaller than
  // this unless the same program runs thousands of times; from here on each
  // pass over memory it saves is worth more than a launch.
  int64_t fused_region_min_elements() const override { return int64_t{1} << 16; }
  bool FusesSpec(const FusedLoopSpec& spec) const override { return fused_kernels_->Admits(spec); }
  std::unique_ptr<Stream> NewStream() override;
  absl::StatusOr<std::shared_ptr<Buffer>> Allocate(int64_t bytes, Stream& stream) override;
  void Trim() override;
  absl::StatusOr<std::shared_ptr<void>> RegisterHost(void* data, int64_t bytes) override;
  // cuda_ops.cc: the stream and every operand checked once, then one Do()
  // per op struct.
  absl::Status Run(Stream& stream, const DeviceOp& op) override;
  // loop_graph.cc.
  bool CapturesLoops() const override;
  absl::StatusOr<std::unique_ptr<LoopGraph>> CaptureLoop(Stream& stream,
                                                         const LoopCaptureSpec& spec) override;
  void SetLoopGraphCache(int entries) override { loop_graph_cache_.store(entries); }

 private:
  using StreamRef = std::shared_ptr<StreamState>;
  // cuda_ops.cc; each runs with the device current and its operands checked.
  absl::Status Do(const StreamRef& s, const FillOp& op);
  absl::Status Do(const StreamRef& s, const ArangeOp& op);
  absl::Status Do(const StreamRef& s, const ElementwiseOp& op);
  absl::Status Do(const StreamRef& s, const CastOp& op);
  absl::Status Do(const StreamRef& s, const MatmulOp& op);
  absl::Status Do(const StreamRef& s, const ReduceOp& op);
  absl::Status Do(const StreamRef& s, const TransposeOp& op);
  absl::Status Do(const StreamRef& s, const FusedLoopOp& op);   // fused_loop.cc
  absl::Status Do(const StreamRef& s, const ReduceAxesOp& op);  // cuda_shape_ops.cc
  absl::Status Do(const StreamRef& s, const SliceOp& op);       // cuda_shape_ops.cc
  absl::Status Do(const StreamRef& s, const ConcatOp& op);      // cuda_shape_ops.cc
  absl::Status Do(const StreamRef& s, const ArgsortOp& op);     // cuda_sort_ops.cc
  // Do(ArgsortOp) of a complex array (cuda_sort_ops.cc).
  absl::Status ComplexArgsort(const StreamRef& s, const ArgsortOp& op);
  absl::Status Do(const StreamRef& s, const TakeAlongAxisOp& op);  // cuda_sort_ops.cc
  absl::Status Do(const StreamRef& s, const ScanOp& op);           // cuda_sort_ops.cc
  absl::Status Do(const StreamRef& s, const ExtractOp& op);        // cuda_sort_ops.cc
  absl::Status Do(const StreamRef& s, const FftOp& op);            // cuda_fft_ops.cc
  absl::Status Do(const StreamRef& s, const LinalgOp& op);         // cuda_linalg_ops.cc
  absl::Status Do(const StreamRef& s, const RandomOp& op);         // cuda_random_ops.cc
  // qr, svd, eigh, slogdet (cuda_decompose.cc), for Do(LinalgOp).
  absl::Status Decompose(const StreamRef& s, const LinalgOp& op);
  // A stack of small matrices (BatchesSmallMatrices) in one batched call
  // (cuda_linalg_batched.cc): `base` holds the column-major working copies,
  // `info` one int each; det and slogdet get 64-bit `pivots`; solve with
  // several right-hand sides uses `rhs` (op.b's bytes) as scratch.
  absl::Status LinalgBatched(const StreamRef& s, const LinalgOp& op, void* base, int* info,
                             int64_t* pivots, void* rhs);
  // Copies the `batch` infos back (synchronising the stream) and maps each
  // positive one through `error` (OK accepts it); a negative info, an
  // argument cuSOLVER refused, is INTERNAL (cuda_linalg_ops.cc).
  absl::Status ReadBackInfos(const StreamRef& s, const int* info, int64_t batch,
                             const std::function<absl::Status(int)>& error);
  // NumPy's LinAlgError (`what`, its message) if an element of a's matrices
  // that an iterative routine reads (all of them, or with lower_only the
  // lower triangles) is NaN or infinite: checked on the device and read
  // back (synchronising) before cuSOLVER runs, which on such input fails or
  // may never end (cuda_linalg_ops.cc).
  absl::Status RefuseNonFinite(const StreamRef& s, const DeviceArray& a, bool lower_only,
                               const char* what);
  absl::Status Binary(const StreamRef& s, ElementwiseKind kind, const DeviceArray& a,
                      const DeviceArray& b, const DeviceArray& out);
  absl::Status Negative(const StreamRef& s, const DeviceArray& a, const DeviceArray& out);
  absl::Status Sum(const StreamRef& s, const DeviceArray& a, std::optional<int> axis,
                   const DeviceArray& out);
  absl::Status MatmulFloat(const StreamRef& s, const MatmulShape& shape, const DeviceArray& a,
                           const DeviceArray& b, const DeviceArray& out);

  // The stream's state, INVALID_ARGUMENT for a stream of another backend or
  // device, UNAVAILABLE once poisoned.
  absl::StatusOr<StreamRef> Resolve(Stream& stream) const;
  // Checks that `array` (already CheckHeld) lives on this device and has a
  // rank the kernels take, and notes its use on `stream`.
  absl::Status CheckOnDevice(const DeviceArray& array, const StreamRef& stream,
                             absl::string_view op, absl::string_view role) const;
  // A stream-ordered block on `stream` (trim and retry once on OOM).
  absl::StatusOr<std::shared_ptr<CudaBuffer>> AllocateOn(const std::shared_ptr<StreamState>& stream,
                                                         int64_t bytes);
  cuda_kernels::LaunchContext Launch(const StreamState& s) const {
    return {s.stream(), device_->sm_count};
  }
  absl::Status Check(cudaError_t e, absl::string_view where) const {
    return device_->Check(e, where);
  }
  std::shared_ptr<DeviceState> device_;
  std::string description_;
  std::unique_ptr<FusedKernelCache> fused_kernels_;
  // Executable loop graphs each stream keeps (SetLoopGraphCache).
  std::atomic<int> loop_graph_cache_{16};
};

}  // namespace resident::cuda_internal

#endif  // RESIDENT_SERVER_DEVICE_CUDA_CUDA_BACKEND_INTERNAL_H_

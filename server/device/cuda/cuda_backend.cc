// The CUDA backend's device, memory, streams and copies; the ops are in
// cuda_ops.cc. cuda_backend_internal.h explains the object lifetimes.
#include "server/device/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/log.h"
#include "core/shape.h"
#include "core/status_macros.h"
#include "server/device/cuda/cuda_backend_internal.h"
#include "server/device/cuda/cuda_status.h"
#include "server/device/cuda/loop_graph.h"

namespace resident {

using cuda_internal::CudaBackend;
using cuda_internal::CudaBuffer;
using cuda_internal::CudaStream;
using cuda_internal::DeviceGuard;
using cuda_internal::DeviceState;
using cuda_internal::StreamState;

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver or no device: not an error here
    return 0;
  }
  return count;
}

absl::StatusOr<std::unique_ptr<Backend>> NewCudaBackend(int ordinal) {
  const int count = CudaDeviceCount();
  if (ordinal < 0 || ordinal >= count) {
    return absl::UnavailableError(
        absl::StrCat("cuda:", ordinal, " cannot be opened: ", count, " CUDA device(s) visible"));
  }
  auto device = std::make_shared<DeviceState>();
  device->ordinal = ordinal;
  DeviceGuard guard(ordinal);
  auto fail = [&](cudaError_t e, absl::string_view where) {
    return absl::UnavailableError(absl::StrCat(
        "cuda:", ordinal,
        " cannot be opened: ", cuda_internal::CudaStatus(e, where, nullptr).message()));
  };
  // Creates the primary context now rather than inside the first op.
  if (cudaError_t e = cudaFree(nullptr); e != cudaSuccess) return fail(e, "cudaFree(0)");
  cudaDeviceProp props{};
  if (cudaError_t e = cudaGetDeviceProperties(&props, ordinal); e != cudaSuccess) {
    return fail(e, "cudaGetDeviceProperties");
  }
  int pools_supported = 0;
  if (cudaError_t e =
          cudaDeviceGetAttribute(&pools_supported, cudaDevAttrMemoryPoolsSupported, ordinal);
      e != cudaSuccess || !pools_supported) {
    return absl::UnavailableError(
        absl::StrCat("cuda:", ordinal, " does not support stream-ordered memory pools"));
  }
  if (cudaError_t e = cudaDeviceGetDefaultMemPool(&device->pool, ordinal); e != cudaSuccess) {
    return fail(e, "cudaDeviceGetDefaultMemPool");
  }
  // Keep freed blocks cached in the pool instead of returning them to the
  // driver at every synchronisation; Trim() and the OOM path release them.
  uint64_t threshold = std::numeric_limits<uint64_t>::max();
  if (cudaError_t e =
          cudaMemPoolSetAttribute(device->pool, cudaMemPoolAttrReleaseThreshold, &threshold);
      e != cudaSuccess) {
    return fail(e, "cudaMemPoolSetAttribute(ReleaseThreshold)");
  }
  device->sm_count = props.multiProcessorCount;
  device->cc_major = props.major;
  device->cc_minor = props.minor;
  std::string description = absl::StrCat(props.name, " (sm_", props.major, props.minor, ", ",
                                         props.multiProcessorCount, " SMs)");
  RESIDENT_LOG(kInfo, "cuda:", ordinal, ": ", description, ", ", props.totalGlobalMem >> 20,
               " MiB");
  return std::unique_ptr<Backend>(new CudaBackend(std::move(device), std::move(description)));
}

namespace cuda_internal {

DeviceGuard::DeviceGuard(int ordinal) {
  if (cudaGetDevice(&previous_) != cudaSuccess) {
    (void)cudaGetLastError();
    previous_ = -1;
  }
  if (previous_ != ordinal) {
    changed_ = cudaSetDevice(ordinal) == cudaSuccess;
    if (!changed_) (void)cudaGetLastError();
  }
}

DeviceGuard::~DeviceGuard() {
  if (changed_ && previous_ >= 0) (void)cudaSetDevice(previous_);
}

StreamState::~StreamState() {
  DeviceGuard guard(device_->ordinal);
  staging_.reset();
  fft_plans_.reset();
  if (solver_.params != nullptr) (void)cusolverDnDestroyParams(solver_.params);
  if (solver_.handle != nullptr) (void)cusolverDnDestroy(solver_.handle);
  if (cublas_ != nullptr) (void)cublasDestroy(cublas_);
  if (cublas_workspace_ != nullptr) (void)cudaFreeAsync(cublas_workspace_, stream_);
  loop_graphs_.reset();
  if (capture_stream_ != nullptr) (void)cudaStreamDestroy(capture_stream_);
  // Returns at once; the stream's pending work still completes.
  (void)cudaStreamDestroy(stream_);
}

absl::StatusOr<cudaStream_t> StreamState::CaptureStream() {
  std::lock_guard<std::mutex> lock(mu_);
  if (capture_stream_ == nullptr) {
    cudaStream_t made = nullptr;
    RETURN_IF_ERROR(device_->Check(cudaStreamCreateWithFlags(&made, cudaStreamNonBlocking),
                                   "cudaStreamCreateWithFlags"));
    capture_stream_ = made;
  }
  return capture_stream_;
}

LoopGraphCache& StreamState::loop_graphs() {
  std::lock_guard<std::mutex> lock(mu_);
  if (loop_graphs_ == nullptr) loop_graphs_ = std::make_shared<LoopGraphCache>(device_->ordinal);
  return *loop_graphs_;
}

Staging& StreamState::staging() {
  std::lock_guard<std::mutex> lock(mu_);
  if (staging_ == nullptr) staging_ = std::make_unique<Staging>(*device_);
  return *staging_;
}

FftPlans& StreamState::fft_plans() {
  std::lock_guard<std::mutex> lock(mu_);
  if (fft_plans_ == nullptr) fft_plans_ = std::make_unique<FftPlans>(stream_);
  return *fft_plans_;
}

absl::StatusOr<StreamState::Solver> StreamState::Cusolver() {
  std::lock_guard<std::mutex> lock(mu_);
  if (solver_.handle != nullptr) return solver_;
  Solver s;
  if (cusolverDnCreate(&s.handle) != CUSOLVER_STATUS_SUCCESS) {
    return absl::InternalError("cusolverDnCreate failed");
  }
  if (cusolverDnSetStream(s.handle, stream_) != CUSOLVER_STATUS_SUCCESS ||
      cusolverDnCreateParams(&s.params) != CUSOLVER_STATUS_SUCCESS) {
    if (s.params != nullptr) (void)cusolverDnDestroyParams(s.params);
    (void)cusolverDnDestroy(s.handle);
    return absl::InternalError("cusolverDnSetStream/CreateParams failed");
  }
  solver_ = s;
  return solver_;
}

absl::StatusOr<cublasHandle_t> StreamState::Cublas() {
  std::lock_guard<std::mutex> lock(mu_);
  const cudaStream_t want = stream();
  if (cublas_ != nullptr && cublas_stream_ == want) return cublas_;
  if (cublas_ != nullptr) {
    // A capture began or ended: bind to its stream. cublasSetStream also
    // drops the workspace, so it is set again.
    RETURN_IF_ERROR(
        CublasStatus(cublasSetStream(cublas_, want), "cublasSetStream", &device_->poisoned));
    RETURN_IF_ERROR(
        CublasStatus(cublasSetWorkspace(cublas_, cublas_workspace_, cublas_workspace_bytes_),
                     "cublasSetWorkspace", &device_->poisoned));
    cublas_stream_ = want;
    return cublas_;
  }
  // cuBLAS's recommended workspace: 32 MiB from Hopper on, 4 MiB before.
  const size_t workspace_bytes = device_->cc_major >= 9 ? size_t{32} << 20 : size_t{4} << 20;
  void* workspace = nullptr;
  RETURN_IF_ERROR(
      device_->Check(cudaMallocFromPoolAsync(&workspace, workspace_bytes, device_->pool, stream_),
                     "cudaMallocFromPoolAsync(cuBLAS workspace)"));
  cublasHandle_t handle = nullptr;
  absl::Status s = CublasStatus(cublasCreate(&handle), "cublasCreate", &device_->poisoned);
  if (!s.ok()) {
    (void)cudaFreeAsync(workspace, stream_);
    return s;
  }
  s = CublasStatus(cublasSetStream(handle, want), "cublasSetStream", &device_->poisoned);
  if (s.ok()) {
    s = CublasStatus(cublasSetWorkspace(handle, workspace, workspace_bytes), "cublasSetWorkspace",
                     &device_->poisoned);
  }
  // Default math: float32 in true fp32 (TF32 only if the process sets
  // NVIDIA_TF32_OVERRIDE=1, which a deployment must not).
  if (s.ok()) {
    s = CublasStatus(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode",
                     &device_->poisoned);
  }
  if (s.ok()) {
    s = CublasStatus(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode",
                     &device_->poisoned);
  }
  if (!s.ok()) {
    (void)cublasDestroy(handle);
    (void)cudaFreeAsync(workspace, stream_);
    return s;
  }
  cublas_ = handle;
  cublas_stream_ = want;
  cublas_workspace_ = workspace;
  cublas_workspace_bytes_ = workspace_bytes;
  return cublas_;
}

void CudaBuffer::NoteUse(const std::shared_ptr<StreamState>& stream) const {
  if (stream == home_) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& s : other_streams_) {
    if (s == stream) return;
  }
  other_streams_.push_back(stream);
}

CudaBuffer::~CudaBuffer() {
  if (arena_ != nullptr) {
    // The arena's memory stays with the graph that was recorded using it.
    arena_->Give(ptr_);
    return;
  }
  if (ptr_ == nullptr) return;
  DeviceGuard guard(device_->ordinal);
  if (!device_->poisoned.load()) {
    for (const auto& other : other_streams_) {
      cudaEvent_t event;
      if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess) {
        // No event: fall back to waiting for that stream on the host.
        (void)cudaGetLastError();
        (void)cudaStreamSynchronize(other->home_stream());
        continue;
      }
      (void)cudaEventRecord(event, other->home_stream());
      (void)cudaStreamWaitEvent(home_->home_stream(), event, 0);
      (void)cudaEventDestroy(event);
    }
    const cudaError_t e = cudaFreeAsync(ptr_, home_->home_stream());
    if (e != cudaSuccess) {
      RESIDENT_LOG(kWarning, "cudaFreeAsync: ", cudaGetErrorString(e));
      (void)CudaStatus(e, "cudaFreeAsync", &device_->poisoned);
    }
  }
  device_->in_use.fetch_sub(size_);
}

CudaBackend::CudaBackend(std::shared_ptr<DeviceState> device, std::string description)
    : device_(std::move(device)),
      description_(std::move(description)),
      fused_kernels_(std::make_unique<FusedKernelCache>(device_->cc_major, device_->cc_minor)) {}

std::string CudaBackend::name() const { return absl::StrCat("cuda:", device_->ordinal); }

MemoryInfo CudaBackend::memory() const {
  MemoryInfo info;
  DeviceGuard guard(device_->ordinal);
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) == cudaSuccess) {
    info.free = static_cast<int64_t>(free);
    info.total = static_cast<int64_t>(total);
  } else {
    (void)cudaGetLastError();
  }
  info.in_use = device_->in_use.load();
  uint64_t reserved = 0, used = 0;
  if (cudaMemPoolGetAttribute(device_->pool, cudaMemPoolAttrReservedMemCurrent, &reserved) ==
          cudaSuccess &&
      cudaMemPoolGetAttribute(device_->pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess) {
    info.cached = reserved > used ? static_cast<int64_t>(reserved - used) : 0;
  } else {
    (void)cudaGetLastError();
  }
  return info;
}

std::unique_ptr<Stream> CudaBackend::NewStream() {
  DeviceGuard guard(device_->ordinal);
  cudaStream_t stream = nullptr;
  const cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    // The interface has no error path here; ops on this stream then fail
    // (Resolve rejects a stream without a CUDA stream).
    RESIDENT_LOG(kError, "cudaStreamCreateWithFlags: ", cudaGetErrorString(e));
    (void)Check(e, "cudaStreamCreateWithFlags");
    return std::make_unique<CudaStream>(device_, nullptr);
  }
  return std::make_unique<CudaStream>(device_, std::make_shared<StreamState>(device_, stream));
}

bool CudaBackend::Supports(DeviceOpKind kind, DType dtype) const {
  // Every op, fused loops included (NVRTC-compiled, one pass: fused_loop.cc).
  return DefinedFor(kind, dtype);
}

absl::StatusOr<std::shared_ptr<StreamState>> CudaBackend::Resolve(Stream& stream) const {
  if (device_->poisoned.load()) return cuda_internal::PoisonedStatus();
  auto* cuda_stream = dynamic_cast<CudaStream*>(&stream);
  if (cuda_stream == nullptr || cuda_stream->state() == nullptr ||
      &cuda_stream->state()->device() != device_.get()) {
    return absl::InvalidArgumentError(absl::StrCat("stream does not belong to ", name()));
  }
  return cuda_stream->state();
}

absl::StatusOr<std::shared_ptr<CudaBuffer>> CudaBackend::AllocateOn(
    const std::shared_ptr<StreamState>& stream, int64_t bytes) {
  if (bytes < 0) return absl::InvalidArgumentError("negative allocation size");
  if (CaptureArena* arena = stream->capture_arena(); arena != nullptr) {
    ASSIGN_OR_RETURN(void* block, arena->Take(bytes));
    return std::make_shared<CudaBuffer>(device_, stream, block, bytes, arena->shared_from_this());
  }
  void* ptr = nullptr;
  if (bytes > 0) {
    cudaError_t e =
        cudaMallocFromPoolAsync(&ptr, static_cast<size_t>(bytes), device_->pool, stream->stream());
    if (e == cudaErrorMemoryAllocation) {
      // Give every cached block back to the driver (after all pending
      // stream-ordered frees have happened) and try once more.
      (void)cudaGetLastError();
      RESIDENT_LOG(kInfo, name(), ": out of memory for ", bytes,
                   " bytes; trimming the pool and retrying");
      RETURN_IF_ERROR(Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
      RETURN_IF_ERROR(Check(cudaMemPoolTrimTo(device_->pool, 0), "cudaMemPoolTrimTo"));
      e = cudaMallocFromPoolAsync(&ptr, static_cast<size_t>(bytes), device_->pool,
                                  stream->stream());
    }
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      const MemoryInfo m = memory();
      return absl::ResourceExhaustedError(absl::StrCat(name(), ": out of device memory allocating ",
                                                       bytes, " bytes (", m.in_use, " in use, ",
                                                       m.free, " free of ", m.total, ")"));
    }
    RETURN_IF_ERROR(Check(e, "cudaMallocFromPoolAsync"));
  }
  device_->in_use.fetch_add(bytes);
  return std::make_shared<CudaBuffer>(device_, stream, ptr, bytes);
}

absl::StatusOr<std::shared_ptr<Buffer>> CudaBackend::Allocate(int64_t bytes, Stream& stream) {
  ASSIGN_OR_RETURN(auto s, Resolve(stream));
  DeviceGuard guard(device_->ordinal);
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> buffer, AllocateOn(s, bytes));
  return std::shared_ptr<Buffer>(std::move(buffer));
}

void CudaBackend::Trim() {
  // Releases what is free now; blocks whose stream-ordered free is still
  // pending stay (syncing every session's stream here would stall them all).
  DeviceGuard guard(device_->ordinal);
  (void)Check(cudaMemPoolTrimTo(device_->pool, 0), "cudaMemPoolTrimTo");
}

absl::StatusOr<std::shared_ptr<void>> CudaBackend::RegisterHost(void* data, int64_t bytes) {
  if (data == nullptr || bytes <= 0) {
    return absl::InvalidArgumentError("RegisterHost: no memory to register");
  }
  DeviceGuard guard(device_->ordinal);
  // Portable: the region may be copied to and from any device of the server.
  const cudaError_t e =
      cudaHostRegister(data, static_cast<size_t>(bytes), cudaHostRegisterPortable);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: clear it
    return absl::ResourceExhaustedError(
        absl::StrCat("cudaHostRegister of ", bytes, " bytes failed: ", cudaGetErrorString(e)));
  }
  const int ordinal = device_->ordinal;
  return std::shared_ptr<void>(data, [ordinal](void* p) {
    DeviceGuard g(ordinal);
    (void)cudaHostUnregister(p);
  });
}

namespace {
// Whether p is page-locked host memory (cudaHostAlloc'd or registered):
// copies of it need no staging (a region's range is checked by its owner).
bool IsPinnedHost(const void* p) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}
}  // namespace

absl::Status CheckDeviceBuffer(const DeviceState& device, const Buffer& buffer,
                               const std::shared_ptr<StreamState>& stream, absl::string_view what) {
  const auto* cuda_buffer = dynamic_cast<const CudaBuffer*>(buffer.backing());
  if (cuda_buffer == nullptr || cuda_buffer->ordinal() != device.ordinal) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": buffer is not memory of cuda:", device.ordinal));
  }
  cuda_buffer->NoteUse(stream);
  return absl::OkStatus();
}

absl::Status CudaBackend::CheckOnDevice(const DeviceArray& array, const StreamRef& stream,
                                        absl::string_view op, absl::string_view role) const {
  if (array.shape.size() > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(absl::StrCat(op, " ", role, ": too many dimensions"));
  }
  // A null buffer passed CheckHeld only for an array of no bytes.
  if (array.buffer == nullptr) return absl::OkStatus();
  return CheckDeviceBuffer(*device_, *array.buffer, stream, absl::StrCat(op, " ", role));
}

// --- CudaStream ----------------------------------------------------------------

// Copies of pageable host memory this large go through pinned staging:
// pageable DMA runs at a fraction of pinned speed.
constexpr int64_t kStageAbove = int64_t{256} << 10;

absl::Status CudaStream::Live() const {
  if (device_->poisoned.load()) return PoisonedStatus();
  if (state_ == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("this stream of cuda:", device_->ordinal,
                                                   " has no CUDA stream (its creation failed)"));
  }
  return absl::OkStatus();
}

absl::Status CudaStream::CheckCopyOf(absl::string_view what, const Buffer& buffer, int64_t offset,
                                     int64_t bytes, const void* host) const {
  RETURN_IF_ERROR(Live());
  RETURN_IF_ERROR(CheckDeviceBuffer(*device_, buffer, state_, what));
  return CheckCopy(what, buffer, offset, bytes, host);
}

absl::Status CudaStream::CopyToDevice(const void* src, Buffer& dst, int64_t offset, int64_t bytes) {
  RETURN_IF_ERROR(CheckCopyOf("CopyToDevice", dst, offset, bytes, src));
  if (bytes == 0) return absl::OkStatus();
  DeviceGuard guard(device_->ordinal);
  if (bytes >= kStageAbove && !IsPinnedHost(src)) {
    return state_->staging().ToDevice(state_->stream(), static_cast<const char*>(src),
                                      static_cast<char*>(dst.data()) + offset, bytes);
  }
  return device_->Check(
      cudaMemcpyAsync(static_cast<char*>(dst.data()) + offset, src, static_cast<size_t>(bytes),
                      cudaMemcpyHostToDevice, state_->stream()),
      "cudaMemcpyAsync(HostToDevice)");
}

absl::Status CudaStream::CopyToHost(const Buffer& src, int64_t offset, void* dst, int64_t bytes) {
  RETURN_IF_ERROR(CheckCopyOf("CopyToHost", src, offset, bytes, dst));
  if (bytes == 0) return absl::OkStatus();
  DeviceGuard guard(device_->ordinal);
  if (bytes >= kStageAbove && !IsPinnedHost(dst)) {
    return state_->staging().ToHost(state_->stream(), static_cast<const char*>(src.data()) + offset,
                                    static_cast<char*>(dst), bytes);
  }
  RETURN_IF_ERROR(device_->Check(
      cudaMemcpyAsync(dst, static_cast<const char*>(src.data()) + offset,
                      static_cast<size_t>(bytes), cudaMemcpyDeviceToHost, state_->stream()),
      "cudaMemcpyAsync(DeviceToHost)"));
  return device_->Check(cudaStreamSynchronize(state_->stream()), "cudaStreamSynchronize");
}

absl::Status CudaStream::CopyFromPeer(const Buffer& src, Buffer& dst, int64_t bytes) {
  RETURN_IF_ERROR(CheckCopyOf("CopyFromPeer destination", dst, 0, bytes, src.data()));
  // The source may be memory of any GPU (or of another Device instance of
  // this one, as --device cuda:0,cuda:0 makes).
  const auto* from = dynamic_cast<const CudaBuffer*>(src.backing());
  if (from == nullptr) {
    return absl::InvalidArgumentError("CopyFromPeer source: buffer is not CUDA memory");
  }
  RETURN_IF_ERROR(CheckCopy("CopyFromPeer source", src, 0, bytes, dst.data()));
  if (bytes == 0) return absl::OkStatus();
  DeviceGuard guard(device_->ordinal);
  RETURN_IF_ERROR(
      device_->Check(cudaMemcpyPeerAsync(dst.data(), device_->ordinal, src.data(), from->ordinal(),
                                         static_cast<size_t>(bytes), state_->stream()),
                     "cudaMemcpyPeerAsync"));
  // Complete on return: the source's free is ordered on its own device's
  // stream, which knows nothing of this one.
  return device_->Check(cudaStreamSynchronize(state_->stream()), "cudaStreamSynchronize");
}

absl::Status CudaStream::Synchronize() {
  RETURN_IF_ERROR(Live());
  DeviceGuard guard(device_->ordinal);
  return device_->Check(cudaStreamSynchronize(state_->stream()), "cudaStreamSynchronize");
}

}  // namespace cuda_internal
}  // namespace resident

// The CUDA backend's classes, shared by cuda_backend.cc (device, memory,
// streams, copies) and cuda_ops.cc (the ops). Internal to this folder.
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
// cuBLAS: each stream gets its own handle, created on its first float
// matmul and bound to that stream for life. One handle shared across
// streams would share its workspace between kernels that may run at the same
// time; a handle per stream needs no lock on the hot path.
#ifndef RESIDENT_SERVER_DEVICE_CUDA_CUDA_BACKEND_INTERNAL_H_
#define RESIDENT_SERVER_DEVICE_CUDA_CUDA_BACKEND_INTERNAL_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "kernels/cuda/kernels.h"
#include "server/device/backend.h"
#include "server/device/cuda/cuda_status.h"
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

class StreamState {
 public:
  StreamState(std::shared_ptr<DeviceState> device, cudaStream_t stream)
      : device_(std::move(device)), stream_(stream) {}
  ~StreamState();
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;

  cudaStream_t stream() const { return stream_; }
  DeviceState& device() const { return *device_; }
  // This stream's cuBLAS handle (default math: true fp32, no TF32), created
  // on first use.
  absl::StatusOr<cublasHandle_t> Cublas();
  // Pinned staging for large host copies on this stream, made on first use.
  Staging& staging();

 private:
  std::shared_ptr<DeviceState> device_;
  cudaStream_t stream_;
  std::mutex mu_;
  cublasHandle_t cublas_ = nullptr;
  std::unique_ptr<Staging> staging_;
};

class CudaStream final : public Stream {
 public:
  explicit CudaStream(std::shared_ptr<StreamState> state)
      : state_(std::move(state)) {}
  const std::shared_ptr<StreamState>& state() const { return state_; }

 private:
  std::shared_ptr<StreamState> state_;
};

class CudaBuffer final : public Buffer {
 public:
  CudaBuffer(std::shared_ptr<DeviceState> device,
             std::shared_ptr<StreamState> home, void* ptr, int64_t size)
      : device_(std::move(device)), home_(std::move(home)), ptr_(ptr),
        size_(size) {}
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
  mutable std::mutex mu_;
  mutable std::vector<std::shared_ptr<StreamState>> other_streams_;
};

class CudaBackend final : public Backend {
 public:
  CudaBackend(std::shared_ptr<DeviceState> device, std::string description);

  std::string name() const override;
  std::string description() const override { return description_; }
  MemoryInfo memory() const override;
  std::unique_ptr<Stream> NewStream() override;
  absl::Status Synchronize(Stream& stream) override;
  bool poisoned() const override { return device_->poisoned.load(); }
  absl::StatusOr<std::shared_ptr<Buffer>> Allocate(int64_t bytes,
                                                   Stream& stream) override;
  void Trim() override;
  absl::Status CopyToDevice(Stream& stream, const void* src, Buffer& dst,
                            int64_t offset, int64_t bytes) override;
  absl::Status CopyToHost(Stream& stream, const Buffer& src, int64_t offset,
                          void* dst, int64_t bytes) override;

  // cuda_ops.cc
  absl::Status Fill(Stream& stream, const Scalar& value,
                    DeviceArray& out) override;
  absl::Status Arange(Stream& stream, const Scalar& start, const Scalar& delta,
                      DeviceArray& out) override;
  absl::Status Binary(Stream& stream, BinaryOp op, const DeviceArray& a,
                      const DeviceArray& b, DeviceArray& out) override;
  absl::Status Negative(Stream& stream, const DeviceArray& a,
                        DeviceArray& out) override;
  absl::Status Cast(Stream& stream, const DeviceArray& a,
                    DeviceArray& out) override;
  absl::Status Matmul(Stream& stream, const MatmulShape& shape,
                      const DeviceArray& a, const DeviceArray& b,
                      DeviceArray& out) override;
  absl::Status Sum(Stream& stream, const DeviceArray& a,
                   std::optional<int> axis, DeviceArray& out) override;
  absl::Status Transpose(Stream& stream, const DeviceArray& a,
                         absl::Span<const int> perm,
                         DeviceArray& out) override;

  // fused_loop.cc
  bool SupportsFusedLoop() const override { return true; }
  absl::Status FusedLoop(Stream& stream, const FusedLoopSpec& spec,
                         const std::vector<DeviceArray>& params,
                         std::vector<DeviceArray>& outs) override;

 private:
  // The stream's state, INVALID_ARGUMENT for a stream of another backend or
  // device, UNAVAILABLE once poisoned.
  absl::StatusOr<std::shared_ptr<StreamState>> Resolve(Stream& stream) const;
  // Checks that `array` lives on this device, that its shape is valid and
  // its buffer holds it, and notes its use on `stream`.
  absl::Status CheckArray(const DeviceArray& array,
                          const std::shared_ptr<StreamState>& stream,
                          absl::string_view what) const;
  absl::Status CheckBuffer(const Buffer& buffer,
                           const std::shared_ptr<StreamState>& stream,
                           absl::string_view what) const;
  // A stream-ordered block on `stream` (trim and retry once on OOM).
  absl::StatusOr<std::shared_ptr<CudaBuffer>> AllocateOn(
      const std::shared_ptr<StreamState>& stream, int64_t bytes);
  cuda_kernels::LaunchContext Launch(const StreamState& s) const {
    return {s.stream(), device_->sm_count};
  }
  absl::Status Check(cudaError_t e, absl::string_view where) const {
    return device_->Check(e, where);
  }
  absl::Status MatmulFloat(const std::shared_ptr<StreamState>& s, const MatmulShape& shape,
                           const DeviceArray& a, const DeviceArray& b,
                           DeviceArray& out);

  std::shared_ptr<DeviceState> device_;
  std::string description_;
  std::unique_ptr<FusedKernelCache> fused_kernels_;
};

// resident::DType -> the kernels' ElemType.
cuda_kernels::ElemType ToElemType(DType d);

}  // namespace resident::cuda_internal

#endif  // RESIDENT_SERVER_DEVICE_CUDA_CUDA_BACKEND_INTERNAL_H_

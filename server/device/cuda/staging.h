// Host<->device copies staged through two pinned buffers, so a transfer of
// pageable host memory runs at pinned speed and the host memcpy of one
// piece overlaps the DMA of the next. One Staging per stream.
#ifndef RESIDENT_SERVER_DEVICE_CUDA_STAGING_H_
#define RESIDENT_SERVER_DEVICE_CUDA_STAGING_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>

#include "absl/status/status.h"
#include "server/device/cuda/pinned_host.h"

namespace resident::cuda_internal {

struct DeviceState;

class Staging {
 public:
  static constexpr int64_t kPiece = int64_t{8} << 20;

  explicit Staging(DeviceState& device) : device_(device) {}
  ~Staging();  // waits for pending copies before unpinning
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  // Device -> host; complete on return.
  absl::Status ToHost(cudaStream_t stream, const char* src, char* dst, int64_t bytes);
  // Host -> device; `src` may be reused on return (it was copied to pinned
  // memory), the device copy completes in stream order.
  absl::Status ToDevice(cudaStream_t stream, const char* src, char* dst, int64_t bytes);

 private:
  absl::Status Init();
  absl::Status Wait(int k);  // the copy last queued from/to buffer k is done

  DeviceState& device_;
  std::mutex mu_;  // uploads and downloads of one session may overlap
  PinnedHostPtr pinned_[2];
  cudaEvent_t done_[2] = {nullptr, nullptr};
  bool pending_[2] = {false, false};
};

}  // namespace resident::cuda_internal

#endif  // RESIDENT_SERVER_DEVICE_CUDA_STAGING_H_

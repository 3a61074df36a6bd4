#include "server/device/cuda/staging.h"

#include <algorithm>
#include <cstring>

#include "core/status_macros.h"
#include "server/device/cuda/cuda_backend_internal.h"

namespace resident::cuda_internal {

Staging::~Staging() {
  for (int k = 0; k < 2; ++k) {
    if (done_[k] != nullptr) {
      (void)cudaEventSynchronize(done_[k]);
      (void)cudaEventDestroy(done_[k]);
    }
  }
}

absl::Status Staging::Init() {
  if (done_[0] != nullptr) return absl::OkStatus();
  for (int k = 0; k < 2; ++k) {
    ASSIGN_OR_RETURN(pinned_[k], AllocatePinnedHost(kPiece));
    RETURN_IF_ERROR(device_.Check(cudaEventCreateWithFlags(&done_[k], cudaEventDisableTiming),
                                  "cudaEventCreate"));
  }
  return absl::OkStatus();
}

absl::Status Staging::Wait(int k) {
  if (!pending_[k]) return absl::OkStatus();
  pending_[k] = false;
  return device_.Check(cudaEventSynchronize(done_[k]), "cudaEventSynchronize(staging)");
}

absl::Status Staging::ToHost(cudaStream_t stream, const char* src, char* dst, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(Init());
  const int64_t pieces = (bytes + kPiece - 1) / kPiece;
  auto piece_size = [&](int64_t i) { return std::min(kPiece, bytes - i * kPiece); };
  for (int64_t i = 0; i <= pieces; ++i) {
    if (i < pieces) {  // queue piece i into buffer i % 2
      const int k = static_cast<int>(i % 2);
      RETURN_IF_ERROR(Wait(k));
      RETURN_IF_ERROR(device_.Check(
          cudaMemcpyAsync(pinned_[k].get(), src + i * kPiece, static_cast<size_t>(piece_size(i)),
                          cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync(DeviceToHost, staged)"));
      RETURN_IF_ERROR(device_.Check(cudaEventRecord(done_[k], stream), "cudaEventRecord"));
      pending_[k] = true;
    }
    if (i > 0) {  // while it copies, hand piece i - 1 to the caller
      const int k = static_cast<int>((i - 1) % 2);
      RETURN_IF_ERROR(Wait(k));
      std::memcpy(dst + (i - 1) * kPiece, pinned_[k].get(), static_cast<size_t>(piece_size(i - 1)));
    }
  }
  return absl::OkStatus();
}

absl::Status Staging::ToDevice(cudaStream_t stream, const char* src, char* dst, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(Init());
  for (int64_t off = 0, i = 0; off < bytes; off += kPiece, ++i) {
    const int k = static_cast<int>(i % 2);
    const int64_t n = std::min(kPiece, bytes - off);
    RETURN_IF_ERROR(Wait(k));  // its previous piece has left the buffer
    std::memcpy(pinned_[k].get(), src + off, static_cast<size_t>(n));
    RETURN_IF_ERROR(
        device_.Check(cudaMemcpyAsync(dst + off, pinned_[k].get(), static_cast<size_t>(n),
                                      cudaMemcpyHostToDevice, stream),
                      "cudaMemcpyAsync(HostToDevice, staged)"));
    RETURN_IF_ERROR(device_.Check(cudaEventRecord(done_[k], stream), "cudaEventRecord"));
    pending_[k] = true;
  }
  return absl::OkStatus();
}

}  // namespace resident::cuda_internal

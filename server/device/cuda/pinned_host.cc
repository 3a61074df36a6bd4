#include "server/device/cuda/pinned_host.h"

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace resident {

void PinnedHostDeleter::operator()(void* p) const {
  if (p != nullptr) (void)cudaFreeHost(p);
}

absl::StatusOr<PinnedHostPtr> AllocatePinnedHost(int64_t bytes) {
  if (bytes < 0) return absl::InvalidArgumentError("negative size");
  if (bytes == 0) return PinnedHostPtr(nullptr);
  void* p = nullptr;
  const cudaError_t e = cudaHostAlloc(&p, static_cast<size_t>(bytes), cudaHostAllocPortable);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return absl::ResourceExhaustedError(
        absl::StrCat("cudaHostAlloc(", bytes, " bytes): ", cudaGetErrorString(e)));
  }
  return PinnedHostPtr(p);
}

}  // namespace resident

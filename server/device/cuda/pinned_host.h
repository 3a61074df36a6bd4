// Page-locked (pinned) host memory, for staging transfers: copies from it
// run at full PCIe/NVLink speed and truly asynchronously. Not used by the
// backend itself; the RPC layer may stage uploads and downloads through it.
#ifndef RESIDENT_SERVER_DEVICE_CUDA_PINNED_HOST_H_
#define RESIDENT_SERVER_DEVICE_CUDA_PINNED_HOST_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"

namespace resident {

struct PinnedHostDeleter {
  void operator()(void* p) const;
};
using PinnedHostPtr = std::unique_ptr<void, PinnedHostDeleter>;

// `bytes` of pinned host memory (cudaHostAlloc, portable to all devices).
// RESOURCE_EXHAUSTED when the host cannot pin that much; a null pointer for
// 0 bytes.
absl::StatusOr<PinnedHostPtr> AllocatePinnedHost(int64_t bytes);

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_CUDA_PINNED_HOST_H_

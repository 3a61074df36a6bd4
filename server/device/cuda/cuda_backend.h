// The CUDA backend: arrays resident in GPU memory, stream-ordered pools, a
// stream per session, cuBLAS for dot/matmul, CUB for reductions, NVRTC for
// fused loops. Ops are queued on the stream; Synchronize waits for them.
//
//   if (CudaDeviceCount() > 0) {
//     ASSIGN_OR_RETURN(std::unique_ptr<Backend> gpu, NewCudaBackend(0));
//   }
#ifndef RESIDENT_SERVER_DEVICE_CUDA_CUDA_BACKEND_H_
#define RESIDENT_SERVER_DEVICE_CUDA_CUDA_BACKEND_H_

#include <memory>

#include "absl/status/statusor.h"
#include "server/device/backend.h"

namespace resident {

// Number of CUDA devices visible (0 when there is no driver or device).
int CudaDeviceCount();

// The backend for device `ordinal`; UNAVAILABLE when it cannot be opened.
absl::StatusOr<std::unique_ptr<Backend>> NewCudaBackend(int ordinal);

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_CUDA_CUDA_BACKEND_H_

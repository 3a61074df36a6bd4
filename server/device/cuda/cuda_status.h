// CUDA and cuBLAS errors as absl::Status, and the device's health.
//
// Codes: out of memory is RESOURCE_EXHAUSTED (recoverable); a sticky error
// (illegal address, launch failure, ECC, ... : the context is unusable) is
// UNAVAILABLE and marks the device poisoned, after which the process must
// exit and be restarted; anything else is INTERNAL. Messages name the call
// site and cudaGetErrorString's text.
#ifndef RESIDENT_SERVER_DEVICE_CUDA_CUDA_STATUS_H_
#define RESIDENT_SERVER_DEVICE_CUDA_CUDA_STATUS_H_

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace resident::cuda_internal {

// True for the errors after which the CUDA context cannot be used again.
bool IsStickyError(cudaError_t e);

// OK for cudaSuccess; otherwise the status for `e` at `where`. A sticky
// error sets *poisoned; any other error is also cleared from the thread's
// last-error slot so a later launch check does not report it again.
absl::Status CudaStatus(cudaError_t e, absl::string_view where, std::atomic<bool>* poisoned);

// OK for CUBLAS_STATUS_SUCCESS; ALLOC_FAILED is RESOURCE_EXHAUSTED; an
// execution failure looks at the runtime's error for a sticky one.
absl::Status CublasStatus(cublasStatus_t s, absl::string_view where, std::atomic<bool>* poisoned);

// The status every call gets once the device is poisoned.
absl::Status PoisonedStatus();

}  // namespace resident::cuda_internal

#endif  // RESIDENT_SERVER_DEVICE_CUDA_CUDA_STATUS_H_

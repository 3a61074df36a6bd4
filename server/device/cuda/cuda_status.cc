#include "server/device/cuda/cuda_status.h"

#include <cublas_v2.h>

#include "absl/strings/str_cat.h"
#include "core/log.h"

namespace resident::cuda_internal {

bool IsStickyError(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorHardwareStackError:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorExternalDevice:
      return true;
    default:
      return false;
  }
}

absl::Status PoisonedStatus() {
  return absl::UnavailableError(
      "CUDA device hit an unrecoverable error earlier; the server must be "
      "restarted");
}

absl::Status CudaStatus(cudaError_t e, absl::string_view where, std::atomic<bool>* poisoned) {
  if (e == cudaSuccess) return absl::OkStatus();
  const std::string message =
      absl::StrCat(where, ": ", cudaGetErrorName(e), ": ", cudaGetErrorString(e));
  if (IsStickyError(e)) {
    if (poisoned != nullptr && !poisoned->exchange(true)) {
      RESIDENT_LOG(kError, "CUDA device poisoned: ", message);
    }
    return absl::UnavailableError(message);
  }
  (void)cudaGetLastError();  // not sticky: clear it
  if (e == cudaErrorMemoryAllocation) {
    return absl::ResourceExhaustedError(message);
  }
  return absl::InternalError(message);
}

absl::Status CublasStatus(cublasStatus_t s, absl::string_view where, std::atomic<bool>* poisoned) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message =
      absl::StrCat(where, ": ", cublasGetStatusName(s), ": ", cublasGetStatusString(s));
  if (s == CUBLAS_STATUS_ALLOC_FAILED) {
    return absl::ResourceExhaustedError(message);
  }
  if (s == CUBLAS_STATUS_EXECUTION_FAILED) {
    const cudaError_t e = cudaPeekAtLastError();
    if (IsStickyError(e)) return CudaStatus(e, message, poisoned);
  }
  return absl::InternalError(message);
}

}  // namespace resident::cuda_internal

// The CUDA backend's random fills: kernels/cuda/random.h's RandomFill on
// the stream, its rejection scratch from the budgeted allocator.
#include <cstdint>
#include <memory>

#include "core/status_macros.h"
#include "kernels/cuda/random.h"
#include "server/device/cuda/cuda_backend_internal.h"
#include "server/device/random_params.h"

namespace resident::cuda_internal {

absl::Status CudaBackend::Do(const StreamRef& s, const RandomOp& op) {
  RETURN_IF_ERROR(CheckRandomOp(op));
  const RandomParams p = RandomParamsOf(op);
  const int64_t n = op.out->num_elements();
  const size_t temp_bytes = cuda_kernels::RandomTempBytes(p, n);
  std::shared_ptr<CudaBuffer> temp;
  if (temp_bytes > 0) {
    ASSIGN_OR_RETURN(temp, AllocateOn(s, static_cast<int64_t>(temp_bytes)));
  }
  return Check(
      cuda_kernels::RandomFill(Launch(*s), p, static_cast<const uint64_t*>(op.state->data()),
                               static_cast<uint64_t*>(op.next_state->data()), op.out->data(), n,
                               temp ? temp->data() : nullptr, temp_bytes),
      "random");
}

}  // namespace resident::cuda_internal

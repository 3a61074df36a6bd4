// cuFFT plans of one stream, kept for reuse: making a plan costs far more
// than running it. Like the cuBLAS handle, each stream has its own (a plan
// is bound to its stream), so the hot path takes no lock shared between
// streams. Plans are made without cuFFT's own work area; each run passes
// one from the stream's budgeted allocator. At most kCapacity plans stay,
// the least recently used going first.
#ifndef RESIDENT_SERVER_DEVICE_CUDA_FFT_PLANS_H_
#define RESIDENT_SERVER_DEVICE_CUDA_FFT_PLANS_H_

#include <cuda_runtime_api.h>
#include <cufft.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/device/device_op.h"

namespace resident::cuda_internal {

class FftPlans {
 public:
  static constexpr size_t kCapacity = 16;

  struct Plan {
    cufftHandle handle = 0;
    size_t work_bytes = 0;
  };

  explicit FftPlans(cudaStream_t stream) : stream_(stream) {}
  ~FftPlans();
  FftPlans(const FftPlans&) = delete;
  FftPlans& operator=(const FftPlans&) = delete;

  // Calls run(plan) with the plan for `rows` transforms of the logical
  // dimensions `dims` (1 to 3, FftOp's), made on first use, holding this
  // stream's plans while it sets the plan's work area and launches. Errors
  // are cuFFT's, as INVALID_ARGUMENT (sizes it refuses), RESOURCE_EXHAUSTED
  // or INTERNAL.
  absl::Status Run(FftKind kind, bool f32, absl::Span<const int64_t> dims, int64_t rows,
                   const std::function<absl::Status(const Plan&)>& run);

 private:
  using Dims = std::vector<int64_t>;
  absl::StatusOr<Plan> Get(FftKind kind, bool f32, absl::Span<const int64_t> dims, int64_t rows);
  // Waits for the stream's work, then destroys the plan (its kernels may
  // still be running, reading its tables).
  void Destroy(cufftHandle handle);

  struct Entry {
    FftKind kind;
    bool f32;
    Dims dims;
    int64_t rows;
    Plan plan;
  };
  cudaStream_t stream_;
  std::mutex mu_;
  std::list<Entry> lru_;  // most recent first
};

// cuFFT's result as a Status naming `what`.
absl::Status CufftStatus(cufftResult r, const char* what);

}  // namespace resident::cuda_internal

#endif  // RESIDENT_SERVER_DEVICE_CUDA_FFT_PLANS_H_

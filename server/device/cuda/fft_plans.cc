#include "server/device/cuda/fft_plans.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace resident::cuda_internal {

absl::Status CufftStatus(cufftResult r, const char* what) {
  switch (r) {
    case CUFFT_SUCCESS:
      return absl::OkStatus();
    case CUFFT_INVALID_SIZE:
    case CUFFT_INVALID_VALUE:
    case CUFFT_INVALID_TYPE:
      return absl::InvalidArgumentError(
          absl::StrCat("fft: cuFFT refused the transform's sizes (", what, ": ", r, ")"));
    case CUFFT_ALLOC_FAILED:
      return absl::ResourceExhaustedError(absl::StrCat("fft: ", what, " ran out of memory"));
    default:
      return absl::InternalError(absl::StrCat("fft: ", what, " failed (cufftResult ", r, ")"));
  }
}

FftPlans::~FftPlans() {
  for (Entry& e : lru_) Destroy(e.plan.handle);
}

void FftPlans::Destroy(cufftHandle handle) {
  (void)cudaStreamSynchronize(stream_);
  (void)cufftDestroy(handle);
}

absl::Status FftPlans::Run(FftKind kind, bool f32, absl::Span<const int64_t> dims, int64_t rows,
                           const std::function<absl::Status(const Plan&)>& run) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<Plan> plan = Get(kind, f32, dims, rows);
  if (!plan.ok()) return plan.status();
  return run(*plan);
}

absl::StatusOr<FftPlans::Plan> FftPlans::Get(FftKind kind, bool f32, absl::Span<const int64_t> dims,
                                             int64_t rows) {
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    if (it->kind == kind && it->f32 == f32 && absl::MakeConstSpan(it->dims) == dims &&
        it->rows == rows) {
      lru_.splice(lru_.begin(), lru_, it);
      return lru_.front().plan;
    }
  }
  cufftType type = f32 ? CUFFT_C2C : CUFFT_Z2Z;
  switch (kind) {
    case FftKind::kForward:
    case FftKind::kInverse:
      type = f32 ? CUFFT_C2C : CUFFT_Z2Z;
      break;
    case FftKind::kRealForward:
      type = f32 ? CUFFT_R2C : CUFFT_D2Z;
      break;
    case FftKind::kRealInverse:
      type = f32 ? CUFFT_C2R : CUFFT_Z2D;
      break;
  }
  Plan plan;
  if (absl::Status s = CufftStatus(cufftCreate(&plan.handle), "cufftCreate"); !s.ok()) return s;
  long long lens[3] = {1, 1, 1};  // NOLINT(runtime/int): cuFFT's type
  for (size_t d = 0; d < dims.size() && d < 3; ++d) lens[d] = dims[d];
  absl::Status s = CufftStatus(cufftSetAutoAllocation(plan.handle, 0), "cufftSetAutoAllocation");
  if (s.ok()) {
    // Null embeds: the transforms lie back to back, the complex side of a
    // real one n/2 + 1 in the last dimension (numpy.fft.rfftn's layout).
    s = CufftStatus(cufftMakePlanMany64(plan.handle, static_cast<int>(dims.size()), lens, nullptr,
                                        1, 0, nullptr, 1, 0, type, rows, &plan.work_bytes),
                    "cufftMakePlanMany64");
  }
  if (s.ok()) s = CufftStatus(cufftSetStream(plan.handle, stream_), "cufftSetStream");
  if (!s.ok()) {
    (void)cufftDestroy(plan.handle);
    return s;
  }
  if (lru_.size() >= kCapacity) {
    Destroy(lru_.back().plan.handle);
    lru_.pop_back();
  }
  lru_.push_front(Entry{kind, f32, Dims(dims.begin(), dims.end()), rows, plan});
  return plan;
}

}  // namespace resident::cuda_internal

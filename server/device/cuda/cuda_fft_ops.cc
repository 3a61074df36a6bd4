// The CUDA backend's FFTs over 1 to 3 trailing axes: cuFFT plans of the
// stream (fft_plans.h), a work area from the stream's budgeted allocator
// each run, and for complex to real transforms a copy of the input first
// (cuFFT may overwrite it).
#include <cuda_runtime_api.h>
#include <cufft.h>

#include <cstdint>
#include <memory>

#include "core/status_macros.h"
#include "server/device/cuda/cuda_backend_internal.h"

namespace resident::cuda_internal {

absl::Status CudaBackend::Do(const StreamRef& s, const FftOp& op) {
  RETURN_IF_ERROR(CheckFftOp(op));
  const DeviceArray &in = *op.in, &out = *op.out;
  const bool f32 = in.dtype == DType::kComplex64 || in.dtype == DType::kFloat32;
  // The transformed dimensions, the real side's.
  const Shape& logical = op.kind == FftKind::kRealInverse ? out.shape : in.shape;
  const absl::Span<const int64_t> dims =
      absl::MakeConstSpan(logical).subspan(logical.size() - op.axes);
  int64_t points = 1;
  for (int64_t d : dims) points *= d;
  const int64_t rows = NumElements(logical) / points;
  if (rows == 0) return absl::OkStatus();
  void* src = in.data();
  std::shared_ptr<CudaBuffer> copy;
  if (op.kind == FftKind::kRealInverse) {
    ASSIGN_OR_RETURN(copy, AllocateOn(s, in.nbytes()));
    RETURN_IF_ERROR(Check(cudaMemcpyAsync(copy->data(), src, static_cast<size_t>(in.nbytes()),
                                          cudaMemcpyDeviceToDevice, s->stream()),
                          "cudaMemcpyAsync"));
    src = copy->data();
  }
  void* dst = out.data();
  return s->fft_plans().Run(op.kind, f32, dims, rows, [&](const FftPlans::Plan& plan) {
    std::shared_ptr<CudaBuffer> work;
    if (plan.work_bytes > 0) {
      ASSIGN_OR_RETURN(work, AllocateOn(s, static_cast<int64_t>(plan.work_bytes)));
      RETURN_IF_ERROR(CufftStatus(cufftSetWorkArea(plan.handle, work->data()), "cufftSetWorkArea"));
    }
    // `work` and `copy` are freed stream-ordered, after the transform.
    switch (op.kind) {
      case FftKind::kForward:
      case FftKind::kInverse: {
        const int dir = op.kind == FftKind::kForward ? CUFFT_FORWARD : CUFFT_INVERSE;
        return f32 ? CufftStatus(cufftExecC2C(plan.handle, static_cast<cufftComplex*>(src),
                                              static_cast<cufftComplex*>(dst), dir),
                                 "cufftExecC2C")
                   : CufftStatus(cufftExecZ2Z(plan.handle, static_cast<cufftDoubleComplex*>(src),
                                              static_cast<cufftDoubleComplex*>(dst), dir),
                                 "cufftExecZ2Z");
      }
      case FftKind::kRealForward:
        return f32 ? CufftStatus(cufftExecR2C(plan.handle, static_cast<cufftReal*>(src),
                                              static_cast<cufftComplex*>(dst)),
                                 "cufftExecR2C")
                   : CufftStatus(cufftExecD2Z(plan.handle, static_cast<cufftDoubleReal*>(src),
                                              static_cast<cufftDoubleComplex*>(dst)),
                                 "cufftExecD2Z");
      case FftKind::kRealInverse:
        return f32 ? CufftStatus(cufftExecC2R(plan.handle, static_cast<cufftComplex*>(src),
                                              static_cast<cufftReal*>(dst)),
                                 "cufftExecC2R")
                   : CufftStatus(cufftExecZ2D(plan.handle, static_cast<cufftDoubleComplex*>(src),
                                              static_cast<cufftDoubleReal*>(dst)),
                                 "cufftExecZ2D");
    }
    return absl::InternalError("fft: unknown kind");
  });
}

}  // namespace resident::cuda_internal

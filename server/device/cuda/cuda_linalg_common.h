// What the CUDA backend's linear algebra files share (cuda_linalg_ops.cc,
// cuda_decompose.cc, cuda_linalg_batched.cc): cuSOLVER's status as ours, our
// dtypes as CUDA's, and cuBLAS's geam as a transpose.
#ifndef RESIDENT_SERVER_DEVICE_CUDA_CUDA_LINALG_COMMON_H_
#define RESIDENT_SERVER_DEVICE_CUDA_CUDA_LINALG_COMMON_H_

#include <cublas_v2.h>
#include <cusolverDn.h>
#include <library_types.h>

#include <cstdint>

#include "absl/status/status.h"
#include "core/dtype.h"
#include "server/device/device_op.h"

namespace resident::cuda_internal {

// OK, RESOURCE_EXHAUSTED for cuSOLVER's allocation failure, else INTERNAL
// naming `what`.
absl::Status SolverStatus(cusolverStatus_t s, const char* what);

// float32, float64, complex64, complex128 as CUDA's data types.
cudaDataType CudaType(DType t);

// out (cols x rows, column-major) = in (rows x cols, column-major)
// transposed, or conjugate-transposed, in any of the four dtypes. A
// column-major matrix read row-major is its transpose, so this also turns
// column-major results into row-major ones.
absl::Status Transpose(cublasHandle_t h, DType t, const void* in, int64_t rows, int64_t cols,
                       void* out, bool conjugate);

// Whether CudaBackend::LinalgBatched takes `kind` on `batch` n x n
// matrices (solve, inv, det, slogdet, cholesky of n <= 128, two or more).
bool BatchesSmallMatrices(LinalgKind kind, int64_t batch, int64_t n);

}  // namespace resident::cuda_internal

#endif  // RESIDENT_SERVER_DEVICE_CUDA_CUDA_LINALG_COMMON_H_

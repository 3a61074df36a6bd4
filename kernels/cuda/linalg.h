// The small kernels around cuSOLVER's factorisations (the CUDA backend's
// linalg ops, server/device/cuda/cuda_linalg_ops.cc), behind plain C++
// launch functions (kernels.h's conventions).
#ifndef RESIDENT_KERNELS_CUDA_LINALG_H_
#define RESIDENT_KERNELS_CUDA_LINALG_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/dtype.h"
#include "kernels/cuda/kernels.h"

namespace resident::cuda_kernels {

// Zeros the strictly upper triangle of each of `batch` row-major n x n
// matrices of dtype t (float32, float64, complex64, complex128).
cudaError_t ZeroAboveDiagonal(const LaunchContext& ctx, DType t, void* a, int64_t batch, int64_t n);

// Each of `batch` n x n matrices of a = the identity.
cudaError_t IdentityMatrices(const LaunchContext& ctx, DType t, void* a, int64_t batch, int64_t n);

// out[b] = the determinant from matrix b's LU factors (getrf's: the
// diagonal of U, and 1-based pivots ipiv of n each): the diagonal's product,
// negated once per row swap. A 0 x 0 matrix's is 1.
cudaError_t DetFromLu(const LaunchContext& ctx, DType t, const void* lu, const int64_t* ipiv,
                      int64_t batch, int64_t n, void* out);

}  // namespace resident::cuda_kernels

#endif  // RESIDENT_KERNELS_CUDA_LINALG_H_

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

// slogdet from each matrix's LU factors (as DetFromLu's): sign[b] (t; of
// modulus 1 for complex t, 0 when a pivot is exactly 0) and logabs[b] (t's
// real type; -inf when singular), NumPy's: the product of the pivots'
// signs, negated once per row swap, and the sum of log|pivot|.
cudaError_t SlogdetFromLu(const LaunchContext& ctx, DType t, const void* lu, const int64_t* ipiv,
                          int64_t batch, int64_t n, void* sign, void* logabs);

// R of a QR factorisation: for each of `batch` column-major m x n factors
// (geqrf's output, leading dimension m), out (rows x n, row-major) = its
// upper triangle, zeros below the diagonal; rows <= m.
cudaError_t UpperTriangleToRowMajor(const LaunchContext& ctx, DType t, const void* factor,
                                    int64_t batch, int64_t m, int64_t n, int64_t rows, void* out);

// out[b] = base + b * stride_bytes: the pointer arrays of cuBLAS's and
// cuSOLVER's batched routines.
cudaError_t MatrixPointers(const LaunchContext& ctx, void* base, int64_t stride_bytes,
                           int64_t batch, void** out);

// out[i] = in[i]: cuBLAS's 32-bit pivots as the 64-bit ones of DetFromLu.
cudaError_t WidenPivots(const LaunchContext& ctx, const int* in, int64_t count, int64_t* out);

// Each of `batch` row-major rows x cols matrices of `in`, transposed into
// out (cols x rows each); t is any of the four linalg dtypes.
cudaError_t TransposeMatrices(const LaunchContext& ctx, DType t, const void* in, int64_t batch,
                              int64_t rows, int64_t cols, void* out);

// *flag (device memory) = 1 if an element of `batch` row-major rows x cols
// matrices of a (dtype t) is NaN or infinite, else 0; with lower_only only
// each matrix's lower triangle and diagonal are read (square matrices).
// The check before an iterative cuSOLVER routine, which on such input
// fails or may never end.
cudaError_t AnyNonFinite(const LaunchContext& ctx, DType t, const void* a, int64_t batch,
                         int64_t rows, int64_t cols, bool lower_only, int* flag);

}  // namespace resident::cuda_kernels

#endif  // RESIDENT_KERNELS_CUDA_LINALG_H_

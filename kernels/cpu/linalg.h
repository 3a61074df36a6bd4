// Dense linear algebra for the CPU backend through LAPACK (LAPACKE, on
// OpenBLAS's LAPACK): Cholesky, solve, inverse, determinant, the
// eigenvalues of a Hermitian matrix and the singular values, over stacks of
// C-contiguous matrices, in float32, float64, complex64 and complex128.
// Matrices of a stack run in parallel.
#ifndef RESIDENT_KERNELS_CPU_LINALG_H_
#define RESIDENT_KERNELS_CPU_LINALG_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

enum class LinalgRoutine : uint8_t {
  kCholesky,
  kSolve,
  kInv,
  kDet,
  kEigvalsh,
  kSvdvals,
  kQr,
  kSvd,
  kEigh,
  kSlogdet,
};

// out = the routine of each matrix of a (..., m, n) (square but for
// svdvals), with b (..., n, k) for kSolve; the caller has checked the
// shapes and dtypes (server/device/device_op.h's LinalgOp). NumPy's
// results: Cholesky's lower factor (the upper triangle zero), det of a
// 0 x 0 matrix 1, eigenvalues ascending (from the lower triangle),
// singular values descending. A matrix LAPACK cannot factor is
// INVALID_ARGUMENT naming NumPy's LinAlgError ("Singular matrix", "Matrix is
// not positive definite", "... did not converge"); out is then undefined.
// The iterative routines (eigvalsh, svdvals, and Decompose's svd and eigh)
// refuse a matrix holding NaN or infinity in what they read with that
// LinAlgError before LAPACK runs (on such input it fails or never ends);
// the others give NaN as NumPy does.
// `stop`, when set, is polled before each matrix of a stack (from any of
// the pool's threads); once it returns true the call fails with CANCELLED.
// One LAPACK call is not interrupted: it is bounded (finite input).
absl::Status Linalg(ThreadPool* pool, LinalgRoutine routine, const ConstView& a, const ConstView* b,
                    const MutView& out, const std::function<bool()>& stop = {});

// The routines of several results (decompose.cc), NumPy's: kQr (geqrf,
// orgqr/ungqr) writes Q, R; kSvd (gesdd) U, S, Vh; kEigh (syevd/heevd of
// the lower triangle) the eigenvalues, ascending, and the eigenvectors as
// columns; kSlogdet (getrf) the sign and log|det|. `full`: qr's
// mode='complete', svd's full_matrices. Shapes as LinalgOp's
// (server/device/device_op.h), checked by the caller.
absl::Status Decompose(ThreadPool* pool, LinalgRoutine routine, bool full, const ConstView& a,
                       absl::Span<const MutView> outs, const std::function<bool()>& stop = {});

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_LINALG_H_

// Stacks of small matrices in one library call each, where a cuSOLVER call
// per matrix would spend ~90 us of launches and synchronisation on a 32^2
// system: cuBLAS's getrfBatched/getrsBatched (LU, as CuPy's batched solve
// uses) and cuSOLVER's potrfBatched. The layout tricks are those of
// cuda_linalg_ops.cc: a row-major A is the column-major A^T.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <climits>
#include <cstdint>
#include <memory>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "kernels/cuda/linalg.h"
#include "server/device/cuda/cuda_backend_internal.h"
#include "server/device/cuda/cuda_linalg_common.h"

namespace resident::cuda_internal {
namespace {

namespace k = cuda_kernels;

// Past this order one cuSOLVER call per matrix is as fast (its blocked
// algorithms pay off) and the batched kernels' shared-memory tiles stop
// fitting.
constexpr int64_t kMaxBatchedOrder = 128;

absl::Status BlasStatus(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  if (s == CUBLAS_STATUS_ALLOC_FAILED) {
    return absl::ResourceExhaustedError(absl::StrCat("linalg: ", what, " ran out of memory"));
  }
  return absl::InternalError(absl::StrCat("linalg: ", what, " failed (cublasStatus ", s, ")"));
}

cublasStatus_t GetrfBatched(cublasHandle_t h, DType t, int n, void** a, int* piv, int* info,
                            int batch) {
  switch (t) {
    case DType::kFloat32:
      return cublasSgetrfBatched(h, n, reinterpret_cast<float**>(a), n, piv, info, batch);
    case DType::kFloat64:
      return cublasDgetrfBatched(h, n, reinterpret_cast<double**>(a), n, piv, info, batch);
    case DType::kComplex64:
      return cublasCgetrfBatched(h, n, reinterpret_cast<cuComplex**>(a), n, piv, info, batch);
    default:
      return cublasZgetrfBatched(h, n, reinterpret_cast<cuDoubleComplex**>(a), n, piv, info, batch);
  }
}

cublasStatus_t GetrsBatched(cublasHandle_t h, DType t, cublasOperation_t trans, int n, int nrhs,
                            void** a, const int* piv, void** b, int* info, int batch) {
  switch (t) {
    case DType::kFloat32:
      return cublasSgetrsBatched(h, trans, n, nrhs, reinterpret_cast<float**>(a), n, piv,
                                 reinterpret_cast<float**>(b), n, info, batch);
    case DType::kFloat64:
      return cublasDgetrsBatched(h, trans, n, nrhs, reinterpret_cast<double**>(a), n, piv,
                                 reinterpret_cast<double**>(b), n, info, batch);
    case DType::kComplex64:
      return cublasCgetrsBatched(h, trans, n, nrhs, reinterpret_cast<cuComplex**>(a), n, piv,
                                 reinterpret_cast<cuComplex**>(b), n, info, batch);
    default:
      return cublasZgetrsBatched(h, trans, n, nrhs, reinterpret_cast<cuDoubleComplex**>(a), n, piv,
                                 reinterpret_cast<cuDoubleComplex**>(b), n, info, batch);
  }
}

cusolverStatus_t PotrfBatched(cusolverDnHandle_t h, DType t, int n, void** a, int* info,
                              int batch) {
  const cublasFillMode_t upper = CUBLAS_FILL_MODE_UPPER;
  switch (t) {
    case DType::kFloat32:
      return cusolverDnSpotrfBatched(h, upper, n, reinterpret_cast<float**>(a), n, info, batch);
    case DType::kFloat64:
      return cusolverDnDpotrfBatched(h, upper, n, reinterpret_cast<double**>(a), n, info, batch);
    case DType::kComplex64:
      return cusolverDnCpotrfBatched(h, upper, n, reinterpret_cast<cuComplex**>(a), n, info, batch);
    default:
      return cusolverDnZpotrfBatched(h, upper, n, reinterpret_cast<cuDoubleComplex**>(a), n, info,
                                     batch);
  }
}

}  // namespace

bool BatchesSmallMatrices(LinalgKind kind, int64_t batch, int64_t n) {
  switch (kind) {
    case LinalgKind::kSolve:
    case LinalgKind::kInv:
    case LinalgKind::kDet:
    case LinalgKind::kSlogdet:
    case LinalgKind::kCholesky:
      return batch > 1 && batch <= INT_MAX && n >= 1 && n <= kMaxBatchedOrder;
    default:
      return false;
  }
}

absl::Status CudaBackend::LinalgBatched(const StreamRef& s, const LinalgOp& op, void* base,
                                        int* info, int64_t* pivots, void* rhs) {
  const DType t = op.a->dtype;
  const int64_t n = op.a->shape.back(), item = ItemSize(t);
  const int64_t batch = op.a->num_elements() / (n * n);
  const int nb = static_cast<int>(batch), ni = static_cast<int>(n);
  const k::LaunchContext ctx = Launch(*s);
  // The matrices' pointers, then the right-hand sides'.
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> pointer_block, AllocateOn(s, batch * 16));
  auto** a_ptrs = static_cast<void**>(pointer_block->data());
  void** b_ptrs = a_ptrs + batch;
  RETURN_IF_ERROR(Check(k::MatrixPointers(ctx, base, n * n * item, batch, a_ptrs), "linalg"));
  if (op.kind == LinalgKind::kCholesky) {
    ASSIGN_OR_RETURN(StreamState::Solver solver, s->Cusolver());
    return SolverStatus(PotrfBatched(solver.handle, t, ni, a_ptrs, info, nb), "potrfBatched");
  }
  ASSIGN_OR_RETURN(cublasHandle_t blas, s->Cublas());
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> pivots32, AllocateOn(s, batch * n * 4));
  auto* piv = static_cast<int*>(pivots32->data());
  RETURN_IF_ERROR(BlasStatus(GetrfBatched(blas, t, ni, a_ptrs, piv, info, nb), "getrfBatched"));
  if (op.kind == LinalgKind::kDet || op.kind == LinalgKind::kSlogdet) {
    return Check(k::WidenPivots(ctx, piv, batch * n, pivots), "linalg");
  }
  // inv: A^T Y = I on the identity already in out; solve: (A^T)^T X = B on
  // a column-major B (B itself for one right-hand side).
  const bool inv = op.kind == LinalgKind::kInv;
  const int64_t nrhs = inv ? n : op.b->shape.back();
  if (nrhs == 0) return absl::OkStatus();
  void* x = op.out->data();
  if (!inv) {
    if (nrhs == 1) {
      RETURN_IF_ERROR(Check(cudaMemcpyAsync(x, op.b->data(), static_cast<size_t>(op.b->nbytes()),
                                            cudaMemcpyDeviceToDevice, s->stream()),
                            "cudaMemcpyAsync"));
    } else {
      x = rhs;
      RETURN_IF_ERROR(
          Check(k::TransposeMatrices(ctx, t, op.b->data(), batch, n, nrhs, x), "linalg"));
    }
  }
  RETURN_IF_ERROR(Check(k::MatrixPointers(ctx, x, n * nrhs * item, batch, b_ptrs), "linalg"));
  int arg_info = 0;  // getrsBatched checks its arguments on the host
  RETURN_IF_ERROR(
      BlasStatus(GetrsBatched(blas, t, inv ? CUBLAS_OP_N : CUBLAS_OP_T, ni, static_cast<int>(nrhs),
                              a_ptrs, piv, b_ptrs, &arg_info, nb),
                 "getrsBatched"));
  if (arg_info != 0) {
    return absl::InternalError(absl::StrCat("linalg: getrsBatched refused argument ", -arg_info));
  }
  if (!inv && nrhs > 1) {
    RETURN_IF_ERROR(
        Check(k::TransposeMatrices(ctx, t, x, batch, nrhs, n, op.out->data()), "linalg"));
  }
  return absl::OkStatus();
}

}  // namespace resident::cuda_internal

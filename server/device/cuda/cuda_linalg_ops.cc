// The CUDA backend's linear algebra: cuSOLVER's 64-bit generic API (one
// code path for the four dtypes) on the stream's handle, a matrix at a time
// over the stack, each routine's workspaces from the budgeted allocator
// (host ones in a vector), and every matrix's info read back at the end (so
// the call synchronises) to report NumPy's LinAlgError.
//
// cuSOLVER is column-major and our matrices row-major: a row-major A is
// the column-major A^T, so Cholesky factors A^T's upper triangle (its
// transpose, read row-major, is A's lower factor), the inverse solves
// A^T Y = I (Y read row-major is A^-1), solve uses LU(A^T) transposed
// (trans = T) on a column-major copy of B, eigvalsh reads A^T's upper
// triangle (A's lower), and det and the singular values are those of A^T.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "kernels/cuda/linalg.h"
#include "server/device/cuda/cuda_backend_internal.h"
#include "server/device/cuda/cuda_linalg_common.h"

namespace resident::cuda_internal {
namespace {

namespace k = cuda_kernels;

}  // namespace

absl::Status SolverStatus(cusolverStatus_t s, const char* what) {
  if (s == CUSOLVER_STATUS_SUCCESS) return absl::OkStatus();
  if (s == CUSOLVER_STATUS_ALLOC_FAILED) {
    return absl::ResourceExhaustedError(absl::StrCat("linalg: ", what, " ran out of memory"));
  }
  return absl::InternalError(absl::StrCat("linalg: ", what, " failed (cusolverStatus ", s, ")"));
}

cudaDataType CudaType(DType t) {
  switch (t) {
    case DType::kFloat32:
      return CUDA_R_32F;
    case DType::kComplex64:
      return CUDA_C_32F;
    case DType::kComplex128:
      return CUDA_C_64F;
    default:
      return CUDA_R_64F;
  }
}

absl::Status Transpose(cublasHandle_t h, DType t, const void* in, int64_t rows, int64_t cols,
                       void* out, bool conjugate) {
  const cublasOperation_t op = conjugate ? CUBLAS_OP_C : CUBLAS_OP_T;
  const int m = static_cast<int>(cols), n = static_cast<int>(rows);
  const int lda = static_cast<int>(rows), ldc = static_cast<int>(cols);
  cublasStatus_t s;
  switch (t) {
    case DType::kFloat32: {
      const float one = 1, zero = 0;
      s = cublasSgeam(h, op, CUBLAS_OP_N, m, n, &one, static_cast<const float*>(in), lda, &zero,
                      static_cast<const float*>(out), ldc, static_cast<float*>(out), ldc);
      break;
    }
    case DType::kFloat64: {
      const double one = 1, zero = 0;
      s = cublasDgeam(h, op, CUBLAS_OP_N, m, n, &one, static_cast<const double*>(in), lda, &zero,
                      static_cast<const double*>(out), ldc, static_cast<double*>(out), ldc);
      break;
    }
    case DType::kComplex64: {
      const cuComplex one{1, 0}, zero{0, 0};
      s = cublasCgeam(h, op, CUBLAS_OP_N, m, n, &one, static_cast<const cuComplex*>(in), lda, &zero,
                      static_cast<const cuComplex*>(out), ldc, static_cast<cuComplex*>(out), ldc);
      break;
    }
    default: {
      const cuDoubleComplex one{1, 0}, zero{0, 0};
      s = cublasZgeam(h, op, CUBLAS_OP_N, m, n, &one, static_cast<const cuDoubleComplex*>(in), lda,
                      &zero, static_cast<const cuDoubleComplex*>(out), ldc,
                      static_cast<cuDoubleComplex*>(out), ldc);
      break;
    }
  }
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("linalg: cublas geam failed (", s, ")"));
}

absl::Status CudaBackend::Do(const StreamRef& s, const LinalgOp& op) {
  RETURN_IF_ERROR(CheckLinalgOp(op));
  // The iterative routines never see NaN or infinity (NumPy's LinAlgError).
  if (op.kind == LinalgKind::kSvdvals || op.kind == LinalgKind::kSvd) {
    RETURN_IF_ERROR(RefuseNonFinite(s, *op.a, /*lower_only=*/false, "SVD did not converge"));
  } else if (op.kind == LinalgKind::kEigvalsh || op.kind == LinalgKind::kEigh) {
    RETURN_IF_ERROR(RefuseNonFinite(s, *op.a, /*lower_only=*/true, "Eigenvalues did not converge"));
  }
  if (LinalgResults(op.kind) > 1) return Decompose(s, op);
  const DeviceArray &a = *op.a, &out = *op.out;
  const size_t rank = a.shape.size();
  const int64_t m = a.shape[rank - 2], n = a.shape[rank - 1];
  const int64_t batch = NumElements(Shape(a.shape.begin(), a.shape.end() - 2));
  if (batch == 0) return absl::OkStatus();
  const int64_t item = ItemSize(a.dtype);
  const cudaDataType type = CudaType(a.dtype);
  const DType real = IsComplex(a.dtype) ? ComplexComponent(a.dtype) : a.dtype;
  const cudaDataType real_type = CudaType(real);
  const k::LaunchContext ctx = Launch(*s);
  cudaStream_t stream = s->stream();
  if (m == 0 || n == 0) {
    // Empty matrices: det 1, everything else empty.
    if (op.kind == LinalgKind::kDet) {
      ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> none, AllocateOn(s, 8));
      return Check(k::DetFromLu(ctx, a.dtype, a.data(), static_cast<const int64_t*>(none->data()),
                                batch, 0, out.data()),
                   "linalg");
    }
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(StreamState::Solver solver, s->Cusolver());
  ASSIGN_OR_RETURN(cublasHandle_t blas, s->Cublas());
  // The factorisation's working copy of each matrix (all of them at once
  // for Cholesky and the inverse, whose output is the copy), pivots, infos.
  const bool in_out = op.kind == LinalgKind::kCholesky;
  std::shared_ptr<CudaBuffer> work_a;
  void* base = out.data();
  if (!in_out) {
    ASSIGN_OR_RETURN(work_a, AllocateOn(s, a.nbytes()));
    base = work_a->data();
  }
  RETURN_IF_ERROR(Check(cudaMemcpyAsync(base, a.data(), static_cast<size_t>(a.nbytes()),
                                        cudaMemcpyDeviceToDevice, stream),
                        "cudaMemcpyAsync"));
  // Each matrix's factorisation info, then one more for getrs (which would
  // overwrite getrf's "singular" with its own argument check).
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> infos, AllocateOn(s, (batch + 1) * 4));
  RETURN_IF_ERROR(
      Check(cudaMemsetAsync(infos->data(), 0, (batch + 1) * 4, stream), "cudaMemsetAsync"));
  auto* info = static_cast<int*>(infos->data());
  int* solve_info = info + batch;
  std::shared_ptr<CudaBuffer> pivots;
  if (op.kind == LinalgKind::kSolve || op.kind == LinalgKind::kInv || op.kind == LinalgKind::kDet) {
    ASSIGN_OR_RETURN(pivots, AllocateOn(s, batch * n * 8));
  }
  // Right-hand sides, column-major: the identity for the inverse (out
  // itself), B transposed for solve.
  const int64_t nrhs = op.kind == LinalgKind::kSolve ? op.b->shape.back() : n;
  std::shared_ptr<CudaBuffer> rhs;
  if (op.kind == LinalgKind::kInv) {
    RETURN_IF_ERROR(Check(k::IdentityMatrices(ctx, a.dtype, out.data(), batch, n), "linalg"));
  }
  if (op.kind == LinalgKind::kSolve) {
    ASSIGN_OR_RETURN(rhs, AllocateOn(s, op.b->nbytes()));
  }
  void* host_work = nullptr;
  std::vector<char> host_buffer;
  std::shared_ptr<CudaBuffer> dev_work;
  size_t dev_bytes = 0, host_bytes = 0;
  auto workspaces = [&](size_t d, size_t h) -> absl::Status {
    if (d > dev_bytes) {
      ASSIGN_OR_RETURN(dev_work, AllocateOn(s, static_cast<int64_t>(d)));
      dev_bytes = d;
    }
    if (h > host_bytes) {
      host_buffer.resize(h);
      host_bytes = h;
    }
    host_work = host_buffer.empty() ? nullptr : host_buffer.data();
    return absl::OkStatus();
  };
  std::shared_ptr<CudaBuffer> svd_copy;  // A (m x n column-major) when m > n
  const bool batched = BatchesSmallMatrices(op.kind, batch, n);
  if (batched) {
    RETURN_IF_ERROR(LinalgBatched(s, op, base, info,
                                  pivots ? static_cast<int64_t*>(pivots->data()) : nullptr,
                                  rhs ? rhs->data() : nullptr));
  }
  for (int64_t b = 0; !batched && b < batch; ++b) {
    char* am = static_cast<char*>(base) + b * m * n * item;
    int* inf = info + b;
    size_t d = 0, h = 0;
    switch (op.kind) {
      case LinalgKind::kCholesky: {
        RETURN_IF_ERROR(SolverStatus(
            cusolverDnXpotrf_bufferSize(solver.handle, solver.params, CUBLAS_FILL_MODE_UPPER, n,
                                        type, am, n, type, &d, &h),
            "potrf"));
        RETURN_IF_ERROR(workspaces(d, h));
        RETURN_IF_ERROR(
            SolverStatus(cusolverDnXpotrf(solver.handle, solver.params, CUBLAS_FILL_MODE_UPPER, n,
                                          type, am, n, type, dev_work ? dev_work->data() : nullptr,
                                          dev_bytes, host_work, host_bytes, inf),
                         "potrf"));
        break;
      }
      case LinalgKind::kSolve:
      case LinalgKind::kInv:
      case LinalgKind::kDet: {
        auto* ipiv = static_cast<int64_t*>(pivots->data()) + b * n;
        RETURN_IF_ERROR(SolverStatus(cusolverDnXgetrf_bufferSize(solver.handle, solver.params, n, n,
                                                                 type, am, n, type, &d, &h),
                                     "getrf"));
        RETURN_IF_ERROR(workspaces(d, h));
        RETURN_IF_ERROR(
            SolverStatus(cusolverDnXgetrf(solver.handle, solver.params, n, n, type, am, n, ipiv,
                                          type, dev_work ? dev_work->data() : nullptr, dev_bytes,
                                          host_work, host_bytes, inf),
                         "getrf"));
        if (op.kind == LinalgKind::kDet) break;
        char* xb = op.kind == LinalgKind::kInv
                       ? static_cast<char*>(out.data()) + b * n * n * item
                       : static_cast<char*>(rhs->data()) + b * n * nrhs * item;
        if (op.kind == LinalgKind::kSolve) {
          const char* bb = static_cast<const char*>(op.b->data()) + b * n * nrhs * item;
          if (nrhs == 1) {
            RETURN_IF_ERROR(Check(cudaMemcpyAsync(xb, bb, static_cast<size_t>(n * item),
                                                  cudaMemcpyDeviceToDevice, stream),
                                  "cudaMemcpyAsync"));
          } else {
            // Row-major B (n x nrhs) is the column-major B^T (nrhs x n).
            RETURN_IF_ERROR(Transpose(blas, a.dtype, bb, nrhs, n, xb, false));
          }
        }
        // inv: A^T Y = I; solve: (A^T)^T X = A X = B.
        RETURN_IF_ERROR(
            SolverStatus(cusolverDnXgetrs(solver.handle, solver.params,
                                          op.kind == LinalgKind::kInv ? CUBLAS_OP_N : CUBLAS_OP_T,
                                          n, nrhs, type, am, n, ipiv, type, xb, n, solve_info),
                         "getrs"));
        if (op.kind == LinalgKind::kSolve) {
          char* ob = static_cast<char*>(out.data()) + b * n * nrhs * item;
          if (nrhs == 1) {
            RETURN_IF_ERROR(Check(cudaMemcpyAsync(ob, xb, static_cast<size_t>(n * item),
                                                  cudaMemcpyDeviceToDevice, stream),
                                  "cudaMemcpyAsync"));
          } else {
            RETURN_IF_ERROR(Transpose(blas, a.dtype, xb, n, nrhs, ob, false));
          }
        }
        break;
      }
      case LinalgKind::kEigvalsh: {
        void* w = static_cast<char*>(out.data()) + b * n * ItemSize(real);
        RETURN_IF_ERROR(SolverStatus(
            cusolverDnXsyevd_bufferSize(solver.handle, solver.params, CUSOLVER_EIG_MODE_NOVECTOR,
                                        CUBLAS_FILL_MODE_UPPER, n, type, am, n, real_type, w, type,
                                        &d, &h),
            "syevd"));
        RETURN_IF_ERROR(workspaces(d, h));
        RETURN_IF_ERROR(
            SolverStatus(cusolverDnXsyevd(solver.handle, solver.params, CUSOLVER_EIG_MODE_NOVECTOR,
                                          CUBLAS_FILL_MODE_UPPER, n, type, am, n, real_type, w,
                                          type, dev_work ? dev_work->data() : nullptr, dev_bytes,
                                          host_work, host_bytes, inf),
                         "syevd"));
        break;
      }
      case LinalgKind::kSvdvals: {
        // The column-major view is n x m; gesvd needs rows >= columns, so
        // when m > n it takes A itself (the view transposed).
        int64_t rows = n, cols = m;
        void* mat = am;
        if (m > n) {
          if (!svd_copy) {
            ASSIGN_OR_RETURN(svd_copy, AllocateOn(s, m * n * item));
          }
          RETURN_IF_ERROR(Transpose(blas, a.dtype, am, n, m, svd_copy->data(), false));
          mat = svd_copy->data();
          rows = m;
          cols = n;
        }
        void* sv = static_cast<char*>(out.data()) + b * std::min(m, n) * ItemSize(real);
        RETURN_IF_ERROR(
            SolverStatus(cusolverDnXgesvd_bufferSize(solver.handle, solver.params, 'N', 'N', rows,
                                                     cols, type, mat, rows, real_type, sv, type,
                                                     nullptr, 1, type, nullptr, 1, type, &d, &h),
                         "gesvd"));
        RETURN_IF_ERROR(workspaces(d, h));
        RETURN_IF_ERROR(
            SolverStatus(cusolverDnXgesvd(solver.handle, solver.params, 'N', 'N', rows, cols, type,
                                          mat, rows, real_type, sv, type, nullptr, 1, type, nullptr,
                                          1, type, dev_work ? dev_work->data() : nullptr, dev_bytes,
                                          host_work, host_bytes, inf),
                         "gesvd"));
        break;
      }
      default:
        return absl::InternalError("linalg: a routine of several results");
    }
  }
  if (op.kind == LinalgKind::kCholesky) {
    RETURN_IF_ERROR(Check(k::ZeroAboveDiagonal(ctx, a.dtype, out.data(), batch, n), "linalg"));
  } else if (op.kind == LinalgKind::kDet) {
    RETURN_IF_ERROR(
        Check(k::DetFromLu(ctx, a.dtype, base, static_cast<const int64_t*>(pivots->data()), batch,
                           n, out.data()),
              "linalg"));
  }
  return ReadBackInfos(s, info, batch, [&](int) -> absl::Status {
    switch (op.kind) {
      case LinalgKind::kDet:
        return absl::OkStatus();  // a zero pivot: det 0
      case LinalgKind::kCholesky:
        return absl::InvalidArgumentError("LinAlgError: Matrix is not positive definite");
      case LinalgKind::kSolve:
      case LinalgKind::kInv:
        return absl::InvalidArgumentError("LinAlgError: Singular matrix");
      case LinalgKind::kEigvalsh:
        return absl::InvalidArgumentError("LinAlgError: Eigenvalues did not converge");
      default:
        return absl::InvalidArgumentError("LinAlgError: SVD did not converge");
    }
  });
}

absl::Status CudaBackend::RefuseNonFinite(const StreamRef& s, const DeviceArray& a, bool lower_only,
                                          const char* what) {
  const size_t rank = a.shape.size();
  const int64_t rows = a.shape[rank - 2], cols = a.shape[rank - 1];
  const int64_t batch = NumElements(Shape(a.shape.begin(), a.shape.end() - 2));
  if (batch == 0 || rows == 0 || cols == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> flag, AllocateOn(s, sizeof(int)));
  RETURN_IF_ERROR(Check(k::AnyNonFinite(Launch(*s), a.dtype, a.data(), batch, rows, cols,
                                        lower_only, static_cast<int*>(flag->data())),
                        "linalg"));
  int found = 0;
  RETURN_IF_ERROR(
      Check(cudaMemcpyAsync(&found, flag->data(), sizeof(int), cudaMemcpyDeviceToHost, s->stream()),
            "cudaMemcpyAsync"));
  RETURN_IF_ERROR(Check(cudaStreamSynchronize(s->stream()), "cudaStreamSynchronize"));
  if (found == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("LinAlgError: ", what, " (the matrix holds NaN or infinity)"));
}

absl::Status CudaBackend::ReadBackInfos(const StreamRef& s, const int* info, int64_t batch,
                                        const std::function<absl::Status(int)>& error) {
  std::vector<int> host_info(static_cast<size_t>(batch));
  RETURN_IF_ERROR(
      Check(cudaMemcpyAsync(host_info.data(), info, batch * 4, cudaMemcpyDeviceToHost, s->stream()),
            "cudaMemcpyAsync"));
  RETURN_IF_ERROR(Check(cudaStreamSynchronize(s->stream()), "cudaStreamSynchronize"));
  for (int v : host_info) {
    if (v < 0) return absl::InternalError(absl::StrCat("linalg: cuSOLVER refused argument ", -v));
    if (v > 0) RETURN_IF_ERROR(error(v));
  }
  return absl::OkStatus();
}

}  // namespace resident::cuda_internal

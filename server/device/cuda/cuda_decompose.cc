// The CUDA backend's linear algebra of several results: qr (geqrf, then
// orgqr/ungqr), svd (gesvd), eigh (syevd) and slogdet (getrf), a matrix at
// a time on the stream's cuSOLVER handle, workspaces from the budgeted
// allocator, infos read back at the end (so the call synchronises).
//
// cuSOLVER is column-major and our matrices row-major; a row-major matrix
// is the column-major transpose. qr factors a column-major copy of A and
// transposes Q and R back. svd of a wide or square A takes A^T (n x m,
// rows >= columns as gesvd needs): A^T = U' S V'^T gives A = V' S U'^T,
// and V'^T and U' read row-major are exactly A's U and Vh; a tall A is
// copied column-major and its U and Vh transposed back. eigh takes A^T,
// which is A conjugated (Hermitian), whose eigenvectors are A's
// conjugated: one conjugate transpose makes them row-major. slogdet is
// that of A^T, from its LU factors.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <algorithm>
#include <climits>
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

// orgqr / ungqr (no generic 64-bit form): Q (m x n column-major, lda m)
// from k reflectors.
cusolverStatus_t OrgqrBufferSize(cusolverDnHandle_t h, DType t, int m, int n, int kr, void* a,
                                 const void* tau, int* lwork) {
  switch (t) {
    case DType::kFloat32:
      return cusolverDnSorgqr_bufferSize(h, m, n, kr, static_cast<float*>(a), m,
                                         static_cast<const float*>(tau), lwork);
    case DType::kFloat64:
      return cusolverDnDorgqr_bufferSize(h, m, n, kr, static_cast<double*>(a), m,
                                         static_cast<const double*>(tau), lwork);
    case DType::kComplex64:
      return cusolverDnCungqr_bufferSize(h, m, n, kr, static_cast<cuComplex*>(a), m,
                                         static_cast<const cuComplex*>(tau), lwork);
    default:
      return cusolverDnZungqr_bufferSize(h, m, n, kr, static_cast<cuDoubleComplex*>(a), m,
                                         static_cast<const cuDoubleComplex*>(tau), lwork);
  }
}

cusolverStatus_t Orgqr(cusolverDnHandle_t h, DType t, int m, int n, int kr, void* a,
                       const void* tau, void* work, int lwork, int* info) {
  switch (t) {
    case DType::kFloat32:
      return cusolverDnSorgqr(h, m, n, kr, static_cast<float*>(a), m,
                              static_cast<const float*>(tau), static_cast<float*>(work), lwork,
                              info);
    case DType::kFloat64:
      return cusolverDnDorgqr(h, m, n, kr, static_cast<double*>(a), m,
                              static_cast<const double*>(tau), static_cast<double*>(work), lwork,
                              info);
    case DType::kComplex64:
      return cusolverDnCungqr(h, m, n, kr, static_cast<cuComplex*>(a), m,
                              static_cast<const cuComplex*>(tau), static_cast<cuComplex*>(work),
                              lwork, info);
    default:
      return cusolverDnZungqr(h, m, n, kr, static_cast<cuDoubleComplex*>(a), m,
                              static_cast<const cuDoubleComplex*>(tau),
                              static_cast<cuDoubleComplex*>(work), lwork, info);
  }
}

}  // namespace

absl::Status CudaBackend::Decompose(const StreamRef& s, const LinalgOp& op) {
  const DeviceArray& a = *op.a;
  const size_t rank = a.shape.size();
  const int64_t m = a.shape[rank - 2], n = a.shape[rank - 1], kmin = std::min(m, n);
  const int64_t batch = NumElements(Shape(a.shape.begin(), a.shape.end() - 2));
  if (batch == 0) return absl::OkStatus();
  const DType t = a.dtype;
  const int64_t item = ItemSize(t);
  const cudaDataType type = CudaType(t);
  const DType real = IsComplex(t) ? ComplexComponent(t) : t;
  const cudaDataType real_type = CudaType(real);
  const k::LaunchContext ctx = Launch(*s);
  cudaStream_t stream = s->stream();
  const bool full = op.full;
  if (kmin == 0) {
    // Empty matrices: full bases are the identity, slogdet of 0 x 0 is
    // (1, 0), everything else is empty.
    switch (op.kind) {
      case LinalgKind::kQr:
        if (full)
          RETURN_IF_ERROR(Check(k::IdentityMatrices(ctx, t, op.out->data(), batch, m), "qr"));
        break;
      case LinalgKind::kSvd:
        if (full) {
          RETURN_IF_ERROR(Check(k::IdentityMatrices(ctx, t, op.out->data(), batch, m), "svd"));
          RETURN_IF_ERROR(Check(k::IdentityMatrices(ctx, t, op.out3->data(), batch, n), "svd"));
        }
        break;
      case LinalgKind::kSlogdet:
        return Check(
            k::SlogdetFromLu(ctx, t, nullptr, nullptr, batch, 0, op.out->data(), op.out2->data()),
            "slogdet");
      default:
        break;
    }
    return absl::OkStatus();
  }
  if (op.kind == LinalgKind::kQr && (m > INT_MAX || n > INT_MAX || m * m > INT_MAX)) {
    return absl::InvalidArgumentError("linalg.qr: matrices over 2^31 elements are not supported");
  }
  ASSIGN_OR_RETURN(StreamState::Solver solver, s->Cusolver());
  ASSIGN_OR_RETURN(cublasHandle_t blas, s->Cublas());
  // Every matrix's working copy (column-major as each routine needs), one
  // info each.
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> work_a, AllocateOn(s, a.nbytes()));
  ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> infos, AllocateOn(s, batch * 4));
  RETURN_IF_ERROR(Check(cudaMemsetAsync(infos->data(), 0, batch * 4, stream), "cudaMemsetAsync"));
  auto* info = static_cast<int*>(infos->data());
  std::shared_ptr<CudaBuffer> dev_work;
  std::vector<char> host_buffer;
  size_t dev_bytes = 0;
  auto workspaces = [&](size_t d, size_t h) -> absl::Status {
    if (d > dev_bytes) {
      ASSIGN_OR_RETURN(dev_work, AllocateOn(s, static_cast<int64_t>(d)));
      dev_bytes = d;
    }
    if (h > host_buffer.size()) host_buffer.resize(h);
    return absl::OkStatus();
  };
  auto dwork = [&] { return dev_work ? dev_work->data() : nullptr; };
  auto hwork = [&] { return host_buffer.empty() ? nullptr : host_buffer.data(); };
  // A column-major copy of each matrix, for the routines that need A
  // itself rather than A^T.
  auto column_major = [&](int64_t b, void* to) {
    const char* from = static_cast<const char*>(a.data()) + b * m * n * item;
    return Transpose(blas, t, from, n, m, to, false);
  };
  const bool tall_svd = op.kind == LinalgKind::kSvd && m > n;
  if (op.kind != LinalgKind::kQr && !tall_svd) {
    RETURN_IF_ERROR(Check(
        cudaMemcpyAsync(work_a->data(), a.data(), a.nbytes(), cudaMemcpyDeviceToDevice, stream),
        "cudaMemcpyAsync"));
  }
  switch (op.kind) {
    case LinalgKind::kQr: {
      const int64_t qc = full ? m : kmin;
      ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> tau, AllocateOn(s, kmin * item));
      ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> q, AllocateOn(s, m * qc * item));
      for (int64_t b = 0; b < batch; ++b) {
        char* f = static_cast<char*>(work_a->data()) + b * m * n * item;
        RETURN_IF_ERROR(column_major(b, f));
        size_t d = 0, h = 0;
        RETURN_IF_ERROR(
            SolverStatus(cusolverDnXgeqrf_bufferSize(solver.handle, solver.params, m, n, type, f, m,
                                                     type, tau->data(), type, &d, &h),
                         "geqrf"));
        RETURN_IF_ERROR(workspaces(d, h));
        RETURN_IF_ERROR(SolverStatus(
            cusolverDnXgeqrf(solver.handle, solver.params, m, n, type, f, m, type, tau->data(),
                             type, dwork(), dev_bytes, hwork(), host_buffer.size(), info + b),
            "geqrf"));
        // Q from the reflectors in the factor's first kmin columns.
        RETURN_IF_ERROR(
            Check(cudaMemcpyAsync(q->data(), f, kmin * m * item, cudaMemcpyDeviceToDevice, stream),
                  "cudaMemcpyAsync"));
        int lwork = 0;
        RETURN_IF_ERROR(SolverStatus(
            OrgqrBufferSize(solver.handle, t, static_cast<int>(m), static_cast<int>(qc),
                            static_cast<int>(kmin), q->data(), tau->data(), &lwork),
            "orgqr"));
        RETURN_IF_ERROR(workspaces(static_cast<size_t>(lwork) * item, 0));
        RETURN_IF_ERROR(SolverStatus(
            Orgqr(solver.handle, t, static_cast<int>(m), static_cast<int>(qc),
                  static_cast<int>(kmin), q->data(), tau->data(), dwork(), lwork, info + b),
            "orgqr"));
        char* qb = static_cast<char*>(op.out->data()) + b * m * qc * item;
        RETURN_IF_ERROR(Transpose(blas, t, q->data(), m, qc, qb, false));
      }
      RETURN_IF_ERROR(Check(k::UpperTriangleToRowMajor(ctx, t, work_a->data(), batch, m, n,
                                                       full ? m : kmin, op.out2->data()),
                            "qr"));
      break;
    }
    case LinalgKind::kSvd: {
      const char job = full ? 'A' : 'S';
      // Wide or square: A^T (n x m); tall: A column-major (m x n).
      const int64_t rows = tall_svd ? m : n, cols = tall_svd ? n : m;
      const int64_t ucols = full ? rows : cols;  // U's columns; VT is cols x cols
      std::shared_ptr<CudaBuffer> u_tmp, vt_tmp;
      if (tall_svd) {
        ASSIGN_OR_RETURN(u_tmp, AllocateOn(s, rows * ucols * item));
        ASSIGN_OR_RETURN(vt_tmp, AllocateOn(s, cols * cols * item));
      }
      for (int64_t b = 0; b < batch; ++b) {
        char* mat = static_cast<char*>(work_a->data()) + b * m * n * item;
        if (tall_svd) RETURN_IF_ERROR(column_major(b, mat));
        void* sv = static_cast<char*>(op.out2->data()) + b * kmin * ItemSize(real);
        // Wide: U' becomes Vh and VT' becomes U, in place.
        void* u = tall_svd ? u_tmp->data()
                           : static_cast<char*>(op.out3->data()) + b * rows * ucols * item;
        void* vt =
            tall_svd ? vt_tmp->data() : static_cast<char*>(op.out->data()) + b * cols * cols * item;
        size_t d = 0, h = 0;
        RETURN_IF_ERROR(
            SolverStatus(cusolverDnXgesvd_bufferSize(solver.handle, solver.params, job, job, rows,
                                                     cols, type, mat, rows, real_type, sv, type, u,
                                                     rows, type, vt, cols, type, &d, &h),
                         "gesvd"));
        RETURN_IF_ERROR(workspaces(d, h));
        RETURN_IF_ERROR(SolverStatus(
            cusolverDnXgesvd(solver.handle, solver.params, job, job, rows, cols, type, mat, rows,
                             real_type, sv, type, u, rows, type, vt, cols, type, dwork(), dev_bytes,
                             hwork(), host_buffer.size(), info + b),
            "gesvd"));
        if (tall_svd) {
          char* ub = static_cast<char*>(op.out->data()) + b * m * ucols * item;
          char* vb = static_cast<char*>(op.out3->data()) + b * n * n * item;
          RETURN_IF_ERROR(Transpose(blas, t, u_tmp->data(), m, ucols, ub, false));
          RETURN_IF_ERROR(Transpose(blas, t, vt_tmp->data(), n, n, vb, false));
        }
      }
      break;
    }
    case LinalgKind::kEigh: {
      for (int64_t b = 0; b < batch; ++b) {
        char* mat = static_cast<char*>(work_a->data()) + b * n * n * item;
        void* w = static_cast<char*>(op.out->data()) + b * n * ItemSize(real);
        size_t d = 0, h = 0;
        RETURN_IF_ERROR(SolverStatus(
            cusolverDnXsyevd_bufferSize(solver.handle, solver.params, CUSOLVER_EIG_MODE_VECTOR,
                                        CUBLAS_FILL_MODE_UPPER, n, type, mat, n, real_type, w, type,
                                        &d, &h),
            "syevd"));
        RETURN_IF_ERROR(workspaces(d, h));
        RETURN_IF_ERROR(SolverStatus(
            cusolverDnXsyevd(solver.handle, solver.params, CUSOLVER_EIG_MODE_VECTOR,
                             CUBLAS_FILL_MODE_UPPER, n, type, mat, n, real_type, w, type, dwork(),
                             dev_bytes, hwork(), host_buffer.size(), info + b),
            "syevd"));
        char* vb = static_cast<char*>(op.out2->data()) + b * n * n * item;
        RETURN_IF_ERROR(Transpose(blas, t, mat, n, n, vb, true));
      }
      break;
    }
    case LinalgKind::kSlogdet: {
      ASSIGN_OR_RETURN(std::shared_ptr<CudaBuffer> pivots, AllocateOn(s, batch * n * 8));
      const bool batched = BatchesSmallMatrices(op.kind, batch, n);
      if (batched) {
        RETURN_IF_ERROR(LinalgBatched(s, op, work_a->data(), info,
                                      static_cast<int64_t*>(pivots->data()), nullptr));
      }
      for (int64_t b = 0; !batched && b < batch; ++b) {
        char* mat = static_cast<char*>(work_a->data()) + b * n * n * item;
        auto* ipiv = static_cast<int64_t*>(pivots->data()) + b * n;
        size_t d = 0, h = 0;
        RETURN_IF_ERROR(SolverStatus(cusolverDnXgetrf_bufferSize(solver.handle, solver.params, n, n,
                                                                 type, mat, n, type, &d, &h),
                                     "getrf"));
        RETURN_IF_ERROR(workspaces(d, h));
        RETURN_IF_ERROR(SolverStatus(
            cusolverDnXgetrf(solver.handle, solver.params, n, n, type, mat, n, ipiv, type, dwork(),
                             dev_bytes, hwork(), host_buffer.size(), info + b),
            "getrf"));
      }
      RETURN_IF_ERROR(Check(
          k::SlogdetFromLu(ctx, t, work_a->data(), static_cast<const int64_t*>(pivots->data()),
                           batch, n, op.out->data(), op.out2->data()),
          "slogdet"));
      break;
    }
    default:
      return absl::InternalError("linalg: a routine of one result");
  }
  // slogdet's singular matrices and qr's infos are no error.
  return ReadBackInfos(s, info, batch, [&](int) -> absl::Status {
    if (op.kind == LinalgKind::kSlogdet || op.kind == LinalgKind::kQr) return absl::OkStatus();
    return absl::InvalidArgumentError(op.kind == LinalgKind::kEigh
                                          ? "LinAlgError: Eigenvalues did not converge"
                                          : "LinAlgError: SVD did not converge");
  });
}

}  // namespace resident::cuda_internal

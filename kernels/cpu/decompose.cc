// The CPU backend's routines of several results (linalg.h's Decompose):
// QR, the SVD, the Hermitian eigendecomposition and slogdet, a matrix at a
// time over the stack, matrices in parallel, as numpy.linalg computes them
// (the same LAPACK routines).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/lapack_routines.h"
#include "kernels/cpu/linalg.h"

namespace resident::cpu {
namespace {

using lapack::C128;
using lapack::C64;
using lapack::Lapack;
using lapack::LinAlgError;

template <typename T>
void Identity(T* a, int64_t rows, int64_t cols) {
  std::fill(a, a + rows * cols, T(0));
  for (int64_t i = 0; i < std::min(rows, cols); ++i) a[i * cols + i] = T(1);
}

// |x| and x / |x| for the sign of a pivot; real pivots keep their sign.
template <typename T>
struct PivotParts {
  static void Split(T x, T& sign, typename Lapack<T>::Real& magnitude) {
    sign = x < 0 ? T(-1) : T(1);
    magnitude = std::abs(x);
  }
};
template <typename R>
struct PivotParts<std::complex<R>> {
  static void Split(std::complex<R> x, std::complex<R>& sign, R& magnitude) {
    magnitude = std::abs(x);
    sign = x / magnitude;
  }
};

// One matrix (m x n at a); outs[r] points at this matrix's part of result r.
template <typename T>
absl::Status OneMatrix(LinalgRoutine routine, bool full, const T* a, int64_t m, int64_t n,
                       std::vector<T>& scratch, std::vector<lapack_int>& ipiv, void* const* outs) {
  using L = Lapack<T>;
  using R = typename L::Real;
  const int64_t k = std::min(m, n);
  const lapack_int lm = static_cast<lapack_int>(m), ln = static_cast<lapack_int>(n),
                   lk = static_cast<lapack_int>(k);
  lapack_int info = 0;
  switch (routine) {
    case LinalgRoutine::kQr: {
      T* q = static_cast<T*>(outs[0]);
      T* r = static_cast<T*>(outs[1]);
      const int64_t qc = full ? m : k;  // Q's columns, R's rows
      scratch.assign(a, a + m * n);
      std::vector<T> tau(static_cast<size_t>(std::max<int64_t>(k, 1)));
      if (k > 0) info = L::Geqrf(lm, ln, scratch.data(), tau.data());
      if (info == 0) {
        for (int64_t i = 0; i < qc; ++i) {
          for (int64_t j = 0; j < n; ++j) r[i * n + j] = j >= i ? scratch[i * n + j] : T(0);
        }
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < qc; ++j) q[i * qc + j] = j < k ? scratch[i * n + j] : T(0);
        }
        if (m > 0 && qc > 0) {
          info = L::Orgqr(lm, static_cast<lapack_int>(qc), lk, q, tau.data());
        }
      }
      break;
    }
    case LinalgRoutine::kSvd: {
      T* u = static_cast<T*>(outs[0]);
      R* s = static_cast<R*>(outs[1]);
      T* vt = static_cast<T*>(outs[2]);
      const int64_t uc = full ? m : k, vr = full ? n : k;
      if (k == 0) {  // no singular values: full bases are the identity
        Identity(u, m, uc);
        Identity(vt, vr, n);
        break;
      }
      if (!lapack::AllFinite(a, m, n, /*lower_only=*/false)) {
        return lapack::NonFiniteError("SVD did not converge");
      }
      scratch.assign(a, a + m * n);
      info = L::Gesdd(full ? 'A' : 'S', lm, ln, scratch.data(), s, u, static_cast<lapack_int>(uc),
                      vt, ln);
      if (info > 0) return LinAlgError("SVD did not converge");
      break;
    }
    case LinalgRoutine::kEigh: {
      R* w = static_cast<R*>(outs[0]);
      T* v = static_cast<T*>(outs[1]);
      if (!lapack::AllFinite(a, n, n, /*lower_only=*/true)) {
        return lapack::NonFiniteError("Eigenvalues did not converge");
      }
      std::copy(a, a + n * n, v);
      if (n > 0) info = L::Syevd('V', ln, v, w);
      if (info > 0) return LinAlgError("Eigenvalues did not converge");
      break;
    }
    case LinalgRoutine::kSlogdet: {
      T sign = T(1);
      R logdet = 0;
      if (n > 0) {
        scratch.assign(a, a + n * n);
        ipiv.resize(static_cast<size_t>(n));
        info = L::Getrf(ln, scratch.data(), ipiv.data());
        if (info > 0) {  // an exact zero pivot: NumPy's sign 0, log|det| -inf
          sign = T(0);
          logdet = -std::numeric_limits<R>::infinity();
          info = 0;
        } else if (info == 0) {
          for (int64_t i = 0; i < n; ++i) {
            T part;
            R magnitude;
            PivotParts<T>::Split(scratch[i * n + i], part, magnitude);
            sign *= part;
            logdet += std::log(magnitude);
            if (ipiv[i] != static_cast<lapack_int>(i + 1)) sign = -sign;
          }
        }
      }
      *static_cast<T*>(outs[0]) = sign;
      *static_cast<R*>(outs[1]) = logdet;
      break;
    }
    default:
      return absl::InternalError("linalg: a routine of one result (Linalg's)");
  }
  if (info < 0) {
    return absl::InternalError(absl::StrCat("linalg: LAPACK refused argument ", -info));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Run(ThreadPool* pool, LinalgRoutine routine, bool full, const ConstView& a,
                 absl::Span<const MutView> outs, const std::function<bool()>& stop) {
  lapack::UseLapackOnNan();
  const size_t rank = a.shape.size();
  const int64_t m = a.shape[rank - 2], n = a.shape[rank - 1];
  const int64_t batch = NumElements(a.shape.subspan(0, rank - 2));
  std::vector<int64_t> out_bytes(outs.size());  // per matrix
  for (size_t r = 0; r < outs.size(); ++r) {
    out_bytes[r] = batch == 0 ? 0 : outs[r].size() / batch * ItemSize(outs[r].dtype);
  }
  const auto* src = static_cast<const T*>(a.data);
  return lapack::ForEachMatrix<T>(
      pool, batch, stop, [&](int64_t i, std::vector<T>& scratch, std::vector<lapack_int>& ipiv) {
        void* parts[3] = {nullptr, nullptr, nullptr};
        for (size_t r = 0; r < outs.size(); ++r) {
          parts[r] = static_cast<char*>(outs[r].data) + i * out_bytes[r];
        }
        return OneMatrix<T>(routine, full, src + i * m * n, m, n, scratch, ipiv, parts);
      });
}

}  // namespace

absl::Status Decompose(ThreadPool* pool, LinalgRoutine routine, bool full, const ConstView& a,
                       absl::Span<const MutView> outs, const std::function<bool()>& stop) {
  if (a.shape.size() < 2 || outs.size() > 3) {
    return absl::InvalidArgumentError("linalg: needs a stack of matrices and at most 3 results");
  }
  if (lapack::SingleWithNonFinite(a)) {  // in double precision (lapack_routines.h)
    std::vector<double> wide_a;
    const ConstView a2 = lapack::Widen(a, wide_a);
    std::vector<std::vector<double>> wide(outs.size());
    std::vector<MutView> outs2;
    for (size_t r = 0; r < outs.size(); ++r) outs2.push_back(lapack::WideOutput(outs[r], wide[r]));
    absl::Status s = Decompose(pool, routine, full, a2, outs2, stop);
    if (s.ok()) {
      for (size_t r = 0; r < outs.size(); ++r) lapack::Narrow(wide[r], outs[r]);
    }
    return s;
  }
  switch (a.dtype) {
    case DType::kFloat32:
      return Run<float>(pool, routine, full, a, outs, stop);
    case DType::kFloat64:
      return Run<double>(pool, routine, full, a, outs, stop);
    case DType::kComplex64:
      return Run<C64>(pool, routine, full, a, outs, stop);
    case DType::kComplex128:
      return Run<C128>(pool, routine, full, a, outs, stop);
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "linalg of ", DTypeName(a.dtype), ": float32, float64, complex64 or complex128 only"));
  }
}

}  // namespace resident::cpu

#include "kernels/cpu/linalg.h"

#include <algorithm>
#include <complex>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/lapack_routines.h"

namespace resident::cpu {
namespace {

using lapack::C128;
using lapack::C64;
using lapack::Lapack;
using lapack::LinAlgError;

// One matrix's routine; `scratch` holds an n x n (m x n) copy.
template <typename T>
absl::Status OneMatrix(LinalgRoutine routine, const T* a, const T* b, int64_t m, int64_t n,
                       int64_t k, std::vector<T>& scratch, std::vector<lapack_int>& ipiv,
                       void* out) {
  using L = Lapack<T>;
  using R = typename L::Real;
  const lapack_int ln = static_cast<lapack_int>(n), lm = static_cast<lapack_int>(m);
  scratch.assign(a, a + m * n);
  ipiv.resize(static_cast<size_t>(std::max<int64_t>(n, 1)));
  lapack_int info = 0;
  switch (routine) {
    case LinalgRoutine::kCholesky: {
      T* o = static_cast<T*>(out);
      std::copy(scratch.begin(), scratch.end(), o);
      if (n > 0) info = L::Potrf(ln, o);
      if (info > 0) return LinAlgError("Matrix is not positive definite");
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = i + 1; j < n; ++j) o[i * n + j] = T(0);
      }
      break;
    }
    case LinalgRoutine::kSolve:
    case LinalgRoutine::kInv: {
      T* o = static_cast<T*>(out);
      if (routine == LinalgRoutine::kSolve) {
        std::copy(b, b + n * k, o);
      } else {
        k = n;
        std::fill(o, o + n * n, T(0));
        for (int64_t i = 0; i < n; ++i) o[i * n + i] = T(1);
      }
      if (n > 0 && k > 0)
        info = L::Gesv(ln, static_cast<lapack_int>(k), scratch.data(), ipiv.data(), o);
      if (info > 0) return LinAlgError("Singular matrix");
      break;
    }
    case LinalgRoutine::kDet: {
      T det = T(1);
      if (n > 0) {
        info = L::Getrf(ln, scratch.data(), ipiv.data());
        // info > 0: an exact zero pivot, so the determinant is 0 (NumPy's too).
        for (int64_t i = 0; i < n; ++i) {
          det *= scratch[i * n + i];
          if (ipiv[i] != static_cast<lapack_int>(i + 1)) det = -det;
        }
        if (info > 0) {  // 0, as NumPy's, even if another pivot is inf or NaN
          det = T(0);
          info = 0;
        }
      }
      *static_cast<T*>(out) = det;
      break;
    }
    case LinalgRoutine::kEigvalsh:
      if (!lapack::AllFinite(scratch.data(), n, n, /*lower_only=*/true)) {
        return lapack::NonFiniteError("Eigenvalues did not converge");
      }
      if (n > 0) info = L::Syevd('N', ln, scratch.data(), static_cast<R*>(out));
      if (info > 0) return LinAlgError("Eigenvalues did not converge");
      break;
    case LinalgRoutine::kSvdvals:
      if (!lapack::AllFinite(scratch.data(), m, n, /*lower_only=*/false)) {
        return lapack::NonFiniteError("SVD did not converge");
      }
      if (m > 0 && n > 0)
        info =
            L::Gesdd('N', lm, ln, scratch.data(), static_cast<R*>(out), nullptr, lm, nullptr, ln);
      if (info > 0) return LinAlgError("SVD did not converge");
      break;
    default:
      return absl::InternalError("linalg: a routine of several results (Decompose's)");
  }
  if (info < 0) {
    return absl::InternalError(absl::StrCat("linalg: LAPACK refused argument ", -info));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Run(ThreadPool* pool, LinalgRoutine routine, const ConstView& a, const ConstView* b,
                 const MutView& out, const std::function<bool()>& stop) {
  lapack::UseLapackOnNan();
  const size_t rank = a.shape.size();
  const int64_t m = a.shape[rank - 2], n = a.shape[rank - 1];
  const int64_t batch =
      m * n == 0 ? NumElements(a.shape.subspan(0, rank - 2)) : NumElements(a.shape) / (m * n);
  const int64_t k = b != nullptr ? b->shape.back() : 0;
  // Elements of out per matrix.
  const int64_t out_each = batch == 0 ? 0 : NumElements(out.shape) / batch;
  const auto* src = static_cast<const T*>(a.data);
  const auto* rhs = b != nullptr ? static_cast<const T*>(b->data) : nullptr;
  const size_t out_item = ItemSize(out.dtype);
  return lapack::ForEachMatrix<T>(
      pool, batch, stop, [&](int64_t i, std::vector<T>& scratch, std::vector<lapack_int>& ipiv) {
        return OneMatrix<T>(routine, src + i * m * n, rhs != nullptr ? rhs + i * n * k : nullptr, m,
                            n, k, scratch, ipiv,
                            static_cast<char*>(out.data) + i * out_each * out_item);
      });
}

}  // namespace

absl::Status Linalg(ThreadPool* pool, LinalgRoutine routine, const ConstView& a, const ConstView* b,
                    const MutView& out, const std::function<bool()>& stop) {
  if (a.shape.size() < 2) return absl::InvalidArgumentError("linalg: needs a stack of matrices");
  if (lapack::SingleWithNonFinite(a) || (b != nullptr && lapack::SingleWithNonFinite(*b))) {
    std::vector<double> wide_a, wide_b, wide_out;
    const ConstView a2 = lapack::Widen(a, wide_a);
    ConstView b2;
    if (b != nullptr) b2 = lapack::Widen(*b, wide_b);
    const MutView out2 = lapack::WideOutput(out, wide_out);
    absl::Status s = Linalg(pool, routine, a2, b != nullptr ? &b2 : nullptr, out2, stop);
    if (s.ok()) lapack::Narrow(wide_out, out);
    return s;
  }
  switch (a.dtype) {
    case DType::kFloat32:
      return Run<float>(pool, routine, a, b, out, stop);
    case DType::kFloat64:
      return Run<double>(pool, routine, a, b, out, stop);
    case DType::kComplex64:
      return Run<C64>(pool, routine, a, b, out, stop);
    case DType::kComplex128:
      return Run<C128>(pool, routine, a, b, out, stop);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("linalg of ", DTypeName(a.dtype),
                       ": float32, float64, complex64 or "
                       "complex128 only (the program layer converts)"));
  }
}

}  // namespace resident::cpu

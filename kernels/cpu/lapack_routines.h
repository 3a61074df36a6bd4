// LAPACKE's routines of each precision as one template, Lapack<T>, for the
// CPU backend's linear algebra (linalg.cc, decompose.cc): row-major,
// the lower triangle where a routine reads one, std::complex for the
// complex types (lapack.h's own option).
#ifndef RESIDENT_KERNELS_CPU_LAPACK_ROUTINES_H_
#define RESIDENT_KERNELS_CPU_LAPACK_ROUTINES_H_

#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/blas_core.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu::lapack {

using C64 = std::complex<float>;
using C128 = std::complex<double>;

template <typename T>
struct Lapack;

// p: the precision's letter; orgqr: orgqr or ungqr; syevd: syevd or heevd.
#define RESIDENT_LAPACK_ROUTINES(T, R, p, orgqr, syevd)                                            \
  using Real = R;                                                                                  \
  static lapack_int Potrf(lapack_int n, T* a) {                                                    \
    return LAPACKE_##p##potrf(LAPACK_ROW_MAJOR, 'L', n, a, n);                                     \
  }                                                                                                \
  static lapack_int Gesv(lapack_int n, lapack_int k, T* a, lapack_int* ipiv, T* b) {               \
    return LAPACKE_##p##gesv(LAPACK_ROW_MAJOR, n, k, a, n, ipiv, b, k);                            \
  }                                                                                                \
  static lapack_int Getrf(lapack_int n, T* a, lapack_int* ipiv) {                                  \
    return LAPACKE_##p##getrf(LAPACK_ROW_MAJOR, n, n, a, n, ipiv);                                 \
  }                                                                                                \
  /* jobz 'N': values only; 'S': U (m x k), Vt (k x n); 'A': U (m x m), Vt (n x n). */             \
  static lapack_int Gesdd(char jobz, lapack_int m, lapack_int n, T* a, R* s, T* u, lapack_int ldu, \
                          T* vt, lapack_int ldvt) {                                                \
    return LAPACKE_##p##gesdd(LAPACK_ROW_MAJOR, jobz, m, n, a, n, s, u, ldu, vt, ldvt);            \
  }                                                                                                \
  static lapack_int Geqrf(lapack_int m, lapack_int n, T* a, T* tau) {                              \
    return LAPACKE_##p##geqrf(LAPACK_ROW_MAJOR, m, n, a, n, tau);                                  \
  }                                                                                                \
  /* Q (m x n, n <= m, row-major) from k reflectors of geqrf. */                                   \
  static lapack_int Orgqr(lapack_int m, lapack_int n, lapack_int k, T* q, const T* tau) {          \
    return LAPACKE_##p##orgqr(LAPACK_ROW_MAJOR, m, n, k, q, n, tau);                               \
  }                                                                                                \
  /* jobz 'N': eigenvalues; 'V': and the eigenvectors, in a's columns. */                          \
  static lapack_int Syevd(char jobz, lapack_int n, T* a, R* w) {                                   \
    return LAPACKE_##p##syevd(LAPACK_ROW_MAJOR, jobz, 'L', n, a, n, w);                            \
  }

template <>
struct Lapack<float> {
  RESIDENT_LAPACK_ROUTINES(float, float, s, orgqr, syevd)
};
template <>
struct Lapack<double> {
  RESIDENT_LAPACK_ROUTINES(double, double, d, orgqr, syevd)
};
template <>
struct Lapack<C64> {
  RESIDENT_LAPACK_ROUTINES(C64, float, c, ungqr, heevd)
};
template <>
struct Lapack<C128> {
  RESIDENT_LAPACK_ROUTINES(C128, double, z, ungqr, heevd)
};
#undef RESIDENT_LAPACK_ROUTINES

// LAPACKE checks its inputs for NaN and refuses them (info -k); NumPy calls
// LAPACK itself, which factors them (singular, not converged or NaN
// results). Turned off once, before the first routine, so ours agree.
inline void UseLapackOnNan() {
  static const bool done = (LAPACKE_set_nancheck(0), true);
  (void)done;
}

// Whether every element of a row-major rows x cols matrix that LAPACK
// reads is finite: all of them, or with `lower_only` the lower triangle and
// the diagonal (what syevd/heevd read for NumPy's UPLO='L'). The iterative
// routines (gesdd, syevd) are refused NaN and infinity before they run: on
// NaN they fail (gesdd refuses it as an argument), and on some matrices
// holding infinity gesdd's iteration never ends (NumPy's svd hangs there).
template <typename T>
bool AllFinite(const T* a, int64_t rows, int64_t cols, bool lower_only) {
  for (int64_t i = 0; i < rows; ++i) {
    const T* row = a + i * cols;
    const int64_t end = lower_only ? std::min(i + 1, cols) : cols;
    for (int64_t j = 0; j < end; ++j) {
      if (!std::isfinite(std::real(row[j])) || !std::isfinite(std::imag(row[j]))) return false;
    }
  }
  return true;
}

// Debian 12's OpenBLAS (0.3.21) loses NaN and infinity in some
// single-precision paths where its double-precision ones keep them, as
// NumPy's OpenBLAS does: float32 qr of eye(3) with NaN below the diagonal
// gave a finite Q, inv of eye(3) with inf above it a finite row, where
// NumPy's are NaN. So a float32 or complex64 stack holding NaN or infinity
// is computed in double precision and rounded back (linalg.cc, decompose.cc):
// NaN where NumPy's answer is NaN. Finite stacks are untouched.
inline bool SingleWithNonFinite(const ConstView& v) {
  if (v.dtype != DType::kFloat32 && v.dtype != DType::kComplex64) return false;
  const auto* p = static_cast<const float*>(v.data);
  const int64_t count = v.size() * (v.dtype == DType::kComplex64 ? 2 : 1);
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(p[i])) return true;
  }
  return false;
}

// float32 -> float64, complex64 -> complex128.
inline DType Wider(DType d) {
  return d == DType::kFloat32 ? DType::kFloat64 : d == DType::kComplex64 ? DType::kComplex128 : d;
}

// v's float components in double precision, held by `values`.
inline ConstView Widen(const ConstView& v, std::vector<double>& values) {
  const auto* p = static_cast<const float*>(v.data);
  values.assign(p, p + v.size() * (v.dtype == DType::kComplex64 ? 2 : 1));
  return {values.data(), Wider(v.dtype), v.shape};
}

// A double-precision stand-in for out (held by `values`), and out = it
// rounded back.
inline MutView WideOutput(const MutView& out, std::vector<double>& values) {
  values.assign(static_cast<size_t>(out.size() * (IsComplex(out.dtype) ? 2 : 1)), 0.0);
  return {values.data(), Wider(out.dtype), out.shape};
}
inline void Narrow(const std::vector<double>& values, const MutView& out) {
  auto* p = static_cast<float*>(out.data);
  for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<float>(values[i]);
}

// Runs matrix(i, scratch, ipiv) for i in [0, batch), matrices in parallel
// over the pool, each thread with its own scratch and pivots; stops at the
// first error and returns it (OK if none), or with CANCELLED once `stop`
// (polled before each matrix, when set) says so. A stack runs OpenBLAS on
// one thread per matrix; one matrix gets OpenBLAS's threads.
template <typename T, typename F>
absl::Status ForEachMatrix(ThreadPool* pool, int64_t batch, const std::function<bool()>& stop,
                           F&& matrix) {
  SingleThreadedBlas one_thread_each(batch > 1);
  std::atomic<bool> failed{false};
  absl::Status first;
  std::mutex mu;
  ParallelFor(pool, batch, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> scratch;
    std::vector<lapack_int> ipiv;
    for (int64_t i = begin; i < end && !failed.load(std::memory_order_relaxed); ++i) {
      absl::Status s = stop && stop() ? absl::CancelledError("stopped between matrices")
                                      : matrix(i, scratch, ipiv);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failed.exchange(true)) first = s;
      }
    }
  });
  return failed.load() ? first : absl::OkStatus();
}

// NumPy's LinAlgError, as the program layer reports it.
inline absl::Status LinAlgError(const char* what) {
  return absl::InvalidArgumentError(absl::StrCat("LinAlgError: ", what));
}

// NumPy's LinAlgError for an iterative routine given NaN or infinity
// (AllFinite), without running it: `what` is NumPy's message for NaN ("SVD
// did not converge", "Eigenvalues did not converge").
inline absl::Status NonFiniteError(const char* what) {
  return absl::InvalidArgumentError(
      absl::StrCat("LinAlgError: ", what, " (the matrix holds NaN or infinity)"));
}

}  // namespace resident::cpu::lapack

#endif  // RESIDENT_KERNELS_CPU_LAPACK_ROUTINES_H_

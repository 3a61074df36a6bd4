#include "kernels/cpu/fft.h"

#include <fftw3.h>

#include <algorithm>
#include <climits>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

namespace resident::cpu {
namespace {

std::mutex& PlannerMutex() {
  static std::mutex mu;
  return mu;
}

// Threads FFTW may use inside one transform: one long row has no rows to
// share, so FFTW's own threads split it.
int TransformThreads(ThreadPool* pool, int64_t parts, int64_t n) {
  if (pool == nullptr || parts > 1 || n < (int64_t{1} << 16)) return 1;
  return std::max(1, pool->num_threads());
}

// FFTW's two precisions behind one interface.
template <bool kF32>
struct Fftw;
template <>
struct Fftw<true> {
  using Real = float;
  using Complex = fftwf_complex;
  using Plan = fftwf_plan;
  static void Threads(int k) {
    static const bool ready = fftwf_init_threads() != 0;
    if (ready) fftwf_plan_with_nthreads(k);
  }
  // `rank` dimensions `dims` (the real side's for r2c and c2r), `howmany`
  // of them back to back.
  static Plan Many(int rank, const int* dims, int howmany, FftDirection dir, void* in, void* out) {
    const unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED | FFTW_PRESERVE_INPUT;
    int n = 1;
    for (int d = 0; d < rank; ++d) n *= dims[d];
    const int c = n / dims[rank - 1] * (dims[rank - 1] / 2 + 1);
    switch (dir) {
      case FftDirection::kForward:
      case FftDirection::kInverse:
        return fftwf_plan_many_dft(rank, dims, howmany, static_cast<Complex*>(in), nullptr, 1, n,
                                   static_cast<Complex*>(out), nullptr, 1, n,
                                   dir == FftDirection::kForward ? FFTW_FORWARD : FFTW_BACKWARD,
                                   flags);
      case FftDirection::kRealForward:
        return fftwf_plan_many_dft_r2c(rank, dims, howmany, static_cast<Real*>(in), nullptr, 1, n,
                                       static_cast<Complex*>(out), nullptr, 1, c, flags);
      case FftDirection::kRealInverse:
        return fftwf_plan_many_dft_c2r(rank, dims, howmany, static_cast<Complex*>(in), nullptr, 1,
                                       c, static_cast<Real*>(out), nullptr, 1, n, flags);
    }
    return nullptr;
  }
  static void Execute(Plan p, FftDirection dir, void* in, void* out) {
    switch (dir) {
      case FftDirection::kForward:
      case FftDirection::kInverse:
        return fftwf_execute_dft(p, static_cast<Complex*>(in), static_cast<Complex*>(out));
      case FftDirection::kRealForward:
        return fftwf_execute_dft_r2c(p, static_cast<Real*>(in), static_cast<Complex*>(out));
      case FftDirection::kRealInverse:
        return fftwf_execute_dft_c2r(p, static_cast<Complex*>(in), static_cast<Real*>(out));
    }
  }
  static void Destroy(Plan p) { fftwf_destroy_plan(p); }
};
template <>
struct Fftw<false> {
  using Real = double;
  using Complex = fftw_complex;
  using Plan = fftw_plan;
  static void Threads(int k) {
    static const bool ready = fftw_init_threads() != 0;
    if (ready) fftw_plan_with_nthreads(k);
  }
  // `rank` dimensions `dims` (the real side's for r2c and c2r), `howmany`
  // of them back to back.
  static Plan Many(int rank, const int* dims, int howmany, FftDirection dir, void* in, void* out) {
    const unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED | FFTW_PRESERVE_INPUT;
    int n = 1;
    for (int d = 0; d < rank; ++d) n *= dims[d];
    const int c = n / dims[rank - 1] * (dims[rank - 1] / 2 + 1);
    switch (dir) {
      case FftDirection::kForward:
      case FftDirection::kInverse:
        return fftw_plan_many_dft(rank, dims, howmany, static_cast<Complex*>(in), nullptr, 1, n,
                                  static_cast<Complex*>(out), nullptr, 1, n,
                                  dir == FftDirection::kForward ? FFTW_FORWARD : FFTW_BACKWARD,
                                  flags);
      case FftDirection::kRealForward:
        return fftw_plan_many_dft_r2c(rank, dims, howmany, static_cast<Real*>(in), nullptr, 1, n,
                                      static_cast<Complex*>(out), nullptr, 1, c, flags);
      case FftDirection::kRealInverse:
        return fftw_plan_many_dft_c2r(rank, dims, howmany, static_cast<Complex*>(in), nullptr, 1, c,
                                      static_cast<Real*>(out), nullptr, 1, n, flags);
    }
    return nullptr;
  }
  static void Execute(Plan p, FftDirection dir, void* in, void* out) {
    switch (dir) {
      case FftDirection::kForward:
      case FftDirection::kInverse:
        return fftw_execute_dft(p, static_cast<Complex*>(in), static_cast<Complex*>(out));
      case FftDirection::kRealForward:
        return fftw_execute_dft_r2c(p, static_cast<Real*>(in), static_cast<Complex*>(out));
      case FftDirection::kRealInverse:
        return fftw_execute_dft_c2r(p, static_cast<Complex*>(in), static_cast<Real*>(out));
    }
  }
  static void Destroy(Plan p) { fftw_destroy_plan(p); }
};

template <bool kF32>
absl::Status Run(ThreadPool* pool, FftDirection dir, const void* in, void* out, int64_t rows,
                 absl::Span<const int64_t> dims) {
  using F = Fftw<kF32>;
  using R = typename F::Real;
  // FFTW's sizes are ints: each dimension and a transform's elements.
  int64_t n = 1;
  int idims[3];
  const int rank = static_cast<int>(dims.size());
  if (rank < 1 || rank > 3) return absl::InvalidArgumentError("fft: 1 to 3 dimensions");
  for (int d = 0; d < rank; ++d) {
    if (dims[d] <= 0 || dims[d] > INT_MAX) {
      return absl::InvalidArgumentError(absl::StrCat("fft: length ", dims[d]));
    }
    idims[d] = static_cast<int>(dims[d]);
    n *= dims[d];
    if (n > INT_MAX) return absl::InvalidArgumentError(absl::StrCat("fft: ", n, " points"));
  }
  // Elements a transform on each side, in R units.
  const int64_t c = n / dims.back() * (dims.back() / 2 + 1);
  const int64_t in_row = dir == FftDirection::kRealForward   ? n
                         : dir == FftDirection::kRealInverse ? 2 * c
                                                             : 2 * n;
  const int64_t out_row = dir == FftDirection::kRealForward   ? 2 * c
                          : dir == FftDirection::kRealInverse ? n
                                                              : 2 * n;
  // Parts of at most INT_MAX rows (FFTW's howmany is an int); two or more
  // parts when there are rows to share among threads.
  const int64_t parts =
      std::max<int64_t>(rows >= 2 && rows * n >= (1 << 15) ? 2 : 1, (rows + INT_MAX - 1) / INT_MAX);
  const int64_t per = (rows + parts - 1) / parts;
  auto* src = const_cast<R*>(static_cast<const R*>(in));  // FFTW_PRESERVE_INPUT: only read
  auto* dst = static_cast<R*>(out);
  typename F::Plan full = nullptr, tail = nullptr;
  const int64_t tail_rows = rows - per * (parts - 1);
  {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    F::Threads(TransformThreads(pool, parts, n));
    full = F::Many(rank, idims, static_cast<int>(per), dir, src, dst);
    if (tail_rows != per) {
      tail = F::Many(rank, idims, static_cast<int>(tail_rows), dir, src, dst);
    }
  }
  if (full == nullptr || (tail_rows != per && tail == nullptr)) {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    if (full != nullptr) F::Destroy(full);
    if (tail != nullptr) F::Destroy(tail);
    return absl::InternalError("fft: FFTW could not plan the transform");
  }
  ParallelFor(pool, parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t r0 = p * per;
      F::Execute(p == parts - 1 && tail != nullptr ? tail : full, dir, src + r0 * in_row,
                 dst + r0 * out_row);
    }
  });
  std::lock_guard<std::mutex> lock(PlannerMutex());
  F::Destroy(full);
  if (tail != nullptr) F::Destroy(tail);
  return absl::OkStatus();
}

}  // namespace

absl::Status Fft(ThreadPool* pool, FftDirection dir, bool f32, const void* in, void* out,
                 int64_t rows, absl::Span<const int64_t> dims) {
  if (rows <= 0) return absl::OkStatus();
  return f32 ? Run<true>(pool, dir, in, out, rows, dims)
             : Run<false>(pool, dir, in, out, rows, dims);
}

}  // namespace resident::cpu

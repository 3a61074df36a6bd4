// Discrete Fourier transforms over the last 1 to 3 axes for the CPU backend,
// through FFTW 3 (Debian's libfftw3, GPL-2+): complex to complex, real to
// complex and complex to real, unnormalised, in float32 or float64
// precision. Rows split over the pool's threads, each part one batched
// FFTW plan (planned with FFTW_ESTIMATE: no timing runs, so planning is
// cheap enough per call; FFTW's planner is not thread-safe, so planning is
// serialised, execution is not).
#ifndef RESIDENT_KERNELS_CPU_FFT_H_
#define RESIDENT_KERNELS_CPU_FFT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

enum class FftDirection : uint8_t { kForward, kInverse, kRealForward, kRealInverse };

// rows transforms of the 1 to 3 dimensions `dims` (logical lengths: the
// real side has them all, the complex side of a real transform n/2 + 1 in
// the last; kRealInverse takes one dimension). in and out are interleaved
// complex or real arrays of `f32` ? float : double, transforms back to
// back; they do not overlap. kRealInverse leaves `in` as it was.
absl::Status Fft(ThreadPool* pool, FftDirection dir, bool f32, const void* in, void* out,
                 int64_t rows, absl::Span<const int64_t> dims);

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_FFT_H_

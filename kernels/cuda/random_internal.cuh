// What kernels/cuda/random.cu and random_ziggurat.cu share: launch shapes,
// the units a launch covers, jumps to a block's draws.
#ifndef RESIDENT_KERNELS_CUDA_RANDOM_INTERNAL_CUH_
#define RESIDENT_KERNELS_CUDA_RANDOM_INTERNAL_CUH_

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/cuda/kernels.h"
#include "kernels/pcg64.h"

namespace resident::cuda_kernels::random_internal {

constexpr int kBlockThreads = 256;
// Blocks per multiprocessor: one resident wave of 256-thread blocks.
constexpr int kBlocksPerSm = 8;
// A round's draws are fewer than 2^kJumpBits (block B's first draw is B *
// chunk from the round's first), and its blocks at most kMaxRoundBlocks.
constexpr int kJumpBits = 44;
constexpr int kMaxRoundBlocks = 1 << 14;

// The units [u0, u0 + count) of a fill a launch covers. With has_uint32 b
// the first 32 / bits units come from uinteger (bits < 64) and draws
// [r_lo[b], r_end[b]) hold the rest; element u - u0 of the launch's output
// is unit u.
struct UnitSpan {
  uint64_t u0;
  int64_t count;
  uint64_t r_lo[2], r_end[2];
};

inline UnitSpan SpanFor(int bits, uint64_t u0, int64_t count) {
  UnitSpan s{u0, count, {0, 0}, {0, 0}};
  const uint64_t per = static_cast<uint64_t>(64 / bits);
  for (int b = 0; b < 2; ++b) {
    const uint64_t prefix = bits < 64 && b == 1 ? static_cast<uint64_t>(32 / bits) : 0;
    const uint64_t first = std::max(u0, prefix), last = u0 + static_cast<uint64_t>(count);
    if (last > first) {
      s.r_lo[b] = (first - prefix) / per;
      s.r_end[b] = (last - prefix + per - 1) / per;
    }
  }
  return s;
}

// The generator state after draw r0 + delta (delta < 2^kJumpBits) of a
// launch whose jump to draw r0 is `start`: delta's bits through pow2.
__device__ __forceinline__ Pcg128 StateAt(const Pcg64& g, const Pcg64Jump& start,
                                          const Pcg64Jump* pow2, int bits, uint64_t delta) {
  Pcg128 s = Pcg128Add(Pcg128Mul(start.mult, g.state), Pcg128Mul(start.gsum, g.inc));
#pragma unroll
  for (int i = 0; i < bits; ++i) {
    if ((delta >> i) & 1) {
      s = Pcg128Add(Pcg128Mul(pow2[i].mult, s), Pcg128Mul(pow2[i].gsum, g.inc));
    }
  }
  return s;
}

// A round's jumps: each block takes `chunk` consecutive draws, thread t of
// it draws t, t + 256, ... of them.
struct RoundJumps {
  Pcg64Jump start[2];  // to the round's first draw, by has_uint32
  Pcg64Jump tile;      // kBlockThreads draws
  Pcg64Jump pow2[kJumpBits];
};

inline size_t Align(size_t b) { return (b + 255) & ~size_t{255}; }

// The ziggurat fills (random_ziggurat.cu: normal and exponential draws):
// their scratch for n values, and the fill itself; *units = the units it
// read.
size_t ZigguratTempBytes(int64_t n);
cudaError_t ZigguratFill(const LaunchContext& ctx, const uint64_t* state_in, const RandomParams& p,
                         void* out, int64_t n, void* temp, size_t temp_bytes, uint64_t* units);

}  // namespace resident::cuda_kernels::random_internal

#endif  // RESIDENT_KERNELS_CUDA_RANDOM_INTERNAL_CUH_

#include "kernels/cuda/random.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/random_internal.cuh"

namespace resident::cuda_kernels {
namespace {

using namespace random_internal;  // NOLINT: this file's own internals

// Threads of a launch are at most 2^kThreadBits (a thread jumps to its
// first draw through the jumps of 2^i draws, i < kThreadBits).
constexpr int kThreadBits = 22;

// A launch's jumps, made on the host (they do not depend on the state).
struct Jumps {
  Pcg64Jump start[2];  // to the launch's first draw, by has_uint32 (0 / 1)
  Pcg64Jump stride;    // G draws, G the threads of the launch
  Pcg64Jump pow2[kThreadBits];
};

// --- element ops: unit -> value, and whether it is accepted -----------------

struct UniformOp {
  double low, range;
  __device__ __forceinline__ bool operator()(uint64_t u, double* v) const {
    *v = Pcg64Uniform(low, range, Pcg64ToDouble(u));
    return true;
  }
};

struct FloatOp {
  __device__ __forceinline__ bool operator()(uint64_t u, float* v) const {
    *v = Pcg64ToFloat(static_cast<uint32_t>(u));
    return true;
  }
};

template <typename T>
struct OffsetOp {
  T off;
  __device__ __forceinline__ bool operator()(uint64_t u, T* v) const {
    *v = static_cast<T>(off + static_cast<T>(u));
    return true;
  }
};

template <int kBits, typename T>
struct LemireOp {
  Pcg64Bounds bounds;
  T off;
  __device__ __forceinline__ bool operator()(uint64_t u, T* v) const {
    uint64_t w;
    const bool ok = Pcg64Lemire<kBits>(u, bounds, &w);
    *v = static_cast<T>(off + static_cast<T>(w));
    return ok;
  }
};

// --- stores ----------------------------------------------------------------------

// out[e + k] = v[k] for the k with 0 <= e + k < count: as wide stores when
// the whole group is in range and aligned (a warp's groups are adjacent,
// so these coalesce), else one element at a time.
template <typename T, int K>
__device__ __forceinline__ void StoreGroup(T* out, int64_t e, int64_t count, const T (&v)[K]) {
  constexpr int kBytes = static_cast<int>(sizeof(T)) * K;
  if constexpr (K > 1) {
    if (e >= 0 && e + K <= count) {
      char* p = reinterpret_cast<char*>(out + e);
      const uintptr_t a = reinterpret_cast<uintptr_t>(p);
      if constexpr (kBytes % 16 == 0) {
        if ((a & 15) == 0) {
#pragma unroll
          for (int i = 0; i < kBytes / 16; ++i) {
            uint4 w;
            memcpy(&w, reinterpret_cast<const char*>(v) + 16 * i, 16);
            reinterpret_cast<uint4*>(p)[i] = w;
          }
          return;
        }
      }
      if constexpr (kBytes % 8 == 0) {
        if ((a & 7) == 0) {
#pragma unroll
          for (int i = 0; i < kBytes / 8; ++i) {
            uint2 w;
            memcpy(&w, reinterpret_cast<const char*>(v) + 8 * i, 8);
            reinterpret_cast<uint2*>(p)[i] = w;
          }
          return;
        }
      }
      if constexpr (kBytes % 4 == 0 && sizeof(T) <= 4) {
        if ((a & 3) == 0) {
#pragma unroll
          for (int i = 0; i < kBytes / 4; ++i) {
            uint32_t w;
            memcpy(&w, reinterpret_cast<const char*>(v) + 4 * i, 4);
            reinterpret_cast<uint32_t*>(p)[i] = w;
          }
          return;
        }
      }
    }
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (e + k >= 0 && e + k < count) out[e + k] = v[k];
  }
}

// Four bits to four 0/1 bytes, low bit first: bit i lands on bit 8i
// (the partial products i + 7j never meet for i, j < 4).
__device__ __forceinline__ uint32_t SpreadNibble(uint32_t x) {
  return (x * 0x00204081u) & 0x01010101u;
}

// --- the draw kernel -----------------------------------------------------------------

// The units of one 64-bit draw x: units e, e + 1, ... of the launch's
// output, through op.
template <int kBits, typename T, typename Op>
__device__ __forceinline__ void EmitDraw(uint64_t x, int64_t e, int64_t count, const Op& op,
                                         T* out) {
  if constexpr (kBits == 1) {
    // Bool: 64 bytes of 0/1, sixteen words.
    uint8_t v[64];
#pragma unroll
    for (int w = 0; w < 16; ++w) {
      const uint32_t word = SpreadNibble(static_cast<uint32_t>(x >> (4 * w)) & 0xFu);
      memcpy(v + 4 * w, &word, 4);
    }
    StoreGroup(reinterpret_cast<uint8_t*>(out), e, count, v);
  } else {
    constexpr int kPer = 64 / kBits;
    constexpr uint64_t kMask = kBits == 64 ? ~0ull : (1ull << kBits) - 1;
    T v[kPer];
#pragma unroll
    for (int k = 0; k < kPer; ++k) op((x >> (k * kBits)) & kMask, &v[k]);
    StoreGroup(out, e, count, v);
  }
}

// Units [span.u0, span.u0 + span.count) of a fill that never rejects, from
// state_in: thread t takes draws r_lo + t, r_lo + t + G, ...; the buffered
// uinteger's units (has_uint32, narrow units) are thread 0's.
template <int kBits, typename T, typename Op>
__global__ void __launch_bounds__(kBlockThreads)
    DrawKernel(const uint64_t* state_in, const __grid_constant__ Jumps jumps, UnitSpan span, Op op,
               T* out) {
  const Pcg64 g = Pcg64::FromWords(state_in);
  const int b = kBits < 64 && g.has_uint32 ? 1 : 0;
  const uint64_t prefix = b == 1 ? static_cast<uint64_t>(32 / kBits) : 0;
  const uint64_t tid = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if constexpr (kBits < 64) {
    if (tid == 0) {
      constexpr uint64_t kMask = (1ull << kBits) - 1;
      for (uint64_t u = span.u0; u < prefix && u < span.u0 + span.count; ++u) {
        const uint64_t unit = (static_cast<uint64_t>(g.uinteger) >> (u * kBits)) & kMask;
        if constexpr (kBits == 1) {
          reinterpret_cast<uint8_t*>(out)[u - span.u0] = static_cast<uint8_t>(unit);
        } else {
          op(unit, &out[u - span.u0]);
        }
      }
    }
  }
  // (Selects, not indexing by b, which would copy the structs to local memory.)
  uint64_t r = (b == 1 ? span.r_lo[1] : span.r_lo[0]) + tid;
  const uint64_t r_end = b == 1 ? span.r_end[1] : span.r_end[0];
  if (r >= r_end) return;
  Pcg128 s = StateAt(g, b == 1 ? jumps.start[1] : jumps.start[0], jumps.pow2, kThreadBits, tid);
  const Pcg128 mult = jumps.stride.mult;
  const Pcg128 inc = Pcg128Mul(jumps.stride.gsum, g.inc);
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  constexpr uint64_t kPer = 64 / kBits;
  for (; r < r_end; r += stride) {
    const int64_t e = static_cast<int64_t>(prefix + r * kPer - span.u0);
    EmitDraw<kBits>(Pcg64Output(s), e, span.count, op, out);
    s = Pcg128Add(Pcg128Mul(mult, s), inc);
  }
}

// --- Lemire rounds: count, scan, write ----------------------------------------------

// What a round's kernels share: the units, the draws of block B
// ([r_lo + B * chunk, + chunk) clipped to r_end) and the op.
template <int kBits, typename T>
struct Round {
  UnitSpan span;
  uint64_t chunk;
  LemireOp<kBits, T> op;
};

// Block B's draws and the generator state at this thread's first one.
template <int kBits, typename T>
struct RoundCursor {
  uint64_t prefix;  // units from uinteger
  uint64_t r, stop;
  Pcg128 s, mult, inc;

  __device__ __forceinline__ RoundCursor(const Pcg64& g, const RoundJumps& j,
                                         const Round<kBits, T>& rd) {
    const int b = kBits < 64 && g.has_uint32 ? 1 : 0;
    prefix = b == 1 ? static_cast<uint64_t>(32 / kBits) : 0;
    const uint64_t r_lo = b == 1 ? rd.span.r_lo[1] : rd.span.r_lo[0];
    const uint64_t r_end = b == 1 ? rd.span.r_end[1] : rd.span.r_end[0];
    const uint64_t first = r_lo + blockIdx.x * rd.chunk;
    stop = first < r_end ? (r_end - first < rd.chunk ? r_end : first + rd.chunk) : first;
    r = first + threadIdx.x;
    mult = j.tile.mult;
    inc = Pcg128Mul(j.tile.gsum, g.inc);
    if (r < stop) {
      s = StateAt(g, b == 1 ? j.start[1] : j.start[0], j.pow2, kJumpBits,
                  blockIdx.x * rd.chunk + threadIdx.x);
    }
  }

  // Draw r's units (this thread's current draw) into v; returns the mask of
  // those accepted and inside the round's span (static indices only, so v
  // stays in registers).
  __device__ __forceinline__ uint32_t Take(const Round<kBits, T>& rd, T (&v)[64 / kBits]) {
    constexpr int kPer = 64 / kBits;
    constexpr uint64_t kMask = kBits == 64 ? ~0ull : (1ull << kBits) - 1;
    const uint64_t x = Pcg64Output(s);
    s = Pcg128Add(Pcg128Mul(mult, s), inc);
    uint32_t mask = 0;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const uint64_t u = prefix + r * kPer + k;
      const bool ok = rd.op((x >> (k * kBits)) & kMask, &v[k]);
      if (ok && u >= rd.span.u0 && u < rd.span.u0 + rd.span.count) mask |= 1u << k;
    }
    r += kBlockThreads;
    return mask;
  }
};

// The units of uinteger (has_uint32: the first 32 / kBits) inside the
// round's span into v; returns the mask of those accepted.
template <int kBits, typename T>
__device__ __forceinline__ uint32_t TakePrefix(const Pcg64& g, uint64_t prefix,
                                               const Round<kBits, T>& rd, T (&v)[4]) {
  uint32_t mask = 0;
  if constexpr (kBits < 64) {
    constexpr uint64_t kMask = (1ull << kBits) - 1;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint64_t u = static_cast<uint64_t>(k);
      if (u < prefix && u >= rd.span.u0 && u < rd.span.u0 + rd.span.count &&
          rd.op((static_cast<uint64_t>(g.uinteger) >> (k * kBits)) & kMask, &v[k])) {
        mask |= 1u << k;
      }
    }
  }
  return mask;
}

// Writes v[k] for the k in mask to out[0], out[1], ...
template <int K, typename T>
__device__ __forceinline__ void WriteMasked(uint32_t mask, const T (&v)[K], T* out) {
  int at = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if ((mask >> k) & 1) out[at++] = v[k];
  }
}

// counts[B] = the units block B accepts.
template <int kBits, typename T>
__global__ void __launch_bounds__(kBlockThreads)
    CountKernel(const uint64_t* state_in, const __grid_constant__ RoundJumps jumps,
                Round<kBits, T> rd, int64_t* counts) {
  const Pcg64 g = Pcg64::FromWords(state_in);
  RoundCursor<kBits, T> cur(g, jumps, rd);
  T v[64 / kBits];
  int64_t c = 0;
  while (cur.r < cur.stop) c += __popc(cur.Take(rd, v));
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    T p[4];
    c += __popc(TakePrefix(g, cur.prefix, rd, p));
  }
  using Reduce = cub::BlockReduce<int64_t, kBlockThreads>;
  __shared__ typename Reduce::TempStorage temp;
  const int64_t total = Reduce(temp).Sum(c);
  if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

// Block B's accepted values to out[ends[B - 1], ends[B]), in unit order:
// tile by tile, each thread's count scanned over the block.
template <int kBits, typename T>
__global__ void __launch_bounds__(kBlockThreads)
    WriteKernel(const uint64_t* state_in, const __grid_constant__ RoundJumps jumps,
                Round<kBits, T> rd, const int64_t* ends, T* out) {
  const Pcg64 g = Pcg64::FromWords(state_in);
  RoundCursor<kBits, T> cur(g, jumps, rd);
  int64_t base = blockIdx.x == 0 ? 0 : ends[blockIdx.x - 1];
  if (blockIdx.x == 0) {
    T p[4];
    const uint32_t mask = TakePrefix(g, cur.prefix, rd, p);
    if (threadIdx.x == 0) WriteMasked(mask, p, out);
    base += __popc(mask);
  }
  using Scan = cub::BlockScan<int, kBlockThreads>;
  __shared__ typename Scan::TempStorage temp;
  // Every thread walks the block's tiles (the scan is collective).
  const uint64_t first = cur.r - threadIdx.x;
  for (uint64_t tile = first; tile < cur.stop; tile += kBlockThreads) {
    T v[64 / kBits];
    const uint32_t mask = cur.r < cur.stop ? cur.Take(rd, v) : 0u;
    int offset, total;
    Scan(temp).ExclusiveSum(__popc(mask), offset, total);
    WriteMasked(mask, v, out + base + offset);
    base += total;
    __syncthreads();  // temp is reused by the next tile's scan
  }
}

template <typename T>
__global__ void ConstantKernel(T* out, int64_t n, T value) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = value;
  }
}

// state_out = the state after `units` units of `bits` (may alias state_in:
// all of it is read first).
__global__ void FinalStateKernel(const uint64_t* state_in, uint64_t* state_out, int bits,
                                 uint64_t units) {
  const Pcg64 g = Pcg64AfterUnits(Pcg64::FromWords(state_in), bits, units);
  g.ToWords(state_out);
}

// --- launches --------------------------------------------------------------------------

template <int kBits, typename T, typename Op>
cudaError_t LaunchDraws(const LaunchContext& ctx, const uint64_t* state_in, const UnitSpan& span,
                        const Op& op, T* out) {
  const uint64_t draws = std::max(span.r_end[0] - span.r_lo[0], span.r_end[1] - span.r_lo[1]);
  unsigned blocks =
      GridFor(ctx, static_cast<int64_t>(std::max<uint64_t>(draws, 1)), kBlockThreads, kBlocksPerSm);
  blocks = std::min(blocks, static_cast<unsigned>((1u << kThreadBits) / kBlockThreads));
  Jumps j;
  for (int b = 0; b < 2; ++b) j.start[b] = Pcg64JumpFor(span.r_lo[b] + 1);
  j.stride = Pcg64JumpFor(static_cast<uint64_t>(blocks) * kBlockThreads);
  j.pow2[0] = Pcg64JumpFor(uint64_t{1});
  for (int i = 1; i < kThreadBits; ++i) j.pow2[i] = Pcg64Compose(j.pow2[i - 1], j.pow2[i - 1]);
  DrawKernel<kBits><<<blocks, kBlockThreads, 0, ctx.stream>>>(state_in, j, span, op, out);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchConstant(const LaunchContext& ctx, void* out, int64_t n, T value) {
  ConstantKernel<<<GridFor(ctx, n, kBlockThreads), kBlockThreads, 0, ctx.stream>>>(
      static_cast<T*>(out), n, value);
  return cudaGetLastError();
}

// Scratch of the rounds: each block's count, their running sums, CUB's.
constexpr size_t kCountsBytes = kMaxRoundBlocks * sizeof(int64_t);
constexpr size_t kFixedBytes = 2 * kCountsBytes;

size_t ScanBytes() {
  size_t bytes = 0;
  cub::DeviceScan::InclusiveSum(nullptr, bytes, static_cast<const int64_t*>(nullptr),
                                static_cast<int64_t*>(nullptr), kMaxRoundBlocks);
  return bytes;
}

// A Lemire fill in rounds (random.h); *units = the units it read.
template <int kBits, typename T>
cudaError_t LemireRounds(const LaunchContext& ctx, const uint64_t* state_in, const RandomParams& p,
                         T* out, int64_t n, void* temp, size_t temp_bytes, uint64_t* units) {
  if (temp == nullptr || temp_bytes < 2 * kCountsBytes) return cudaErrorInvalidValue;
  char* base = static_cast<char*>(temp);
  int64_t* counts = reinterpret_cast<int64_t*>(base);
  int64_t* ends = reinterpret_cast<int64_t*>(base + kCountsBytes);
  void* scan_temp = base + 2 * kCountsBytes;
  Round<kBits, T> rd{};
  rd.op = LemireOp<kBits, T>{Pcg64BoundsFor(kBits, p.rng), static_cast<T>(p.off)};
  RoundJumps j;
  j.tile = Pcg64JumpFor(uint64_t{kBlockThreads});
  j.pow2[0] = Pcg64JumpFor(uint64_t{1});
  for (int i = 1; i < kJumpBits; ++i) j.pow2[i] = Pcg64Compose(j.pow2[i - 1], j.pow2[i - 1]);
  int64_t placed = 0;
  uint64_t u = 0;
  while (placed < n) {
    const int64_t need = n - placed;
    rd.span = SpanFor(kBits, u, need);
    const uint64_t draws = std::max<uint64_t>(
        {rd.span.r_end[0] - rd.span.r_lo[0], rd.span.r_end[1] - rd.span.r_lo[1], 1});
    if (draws >= (uint64_t{1} << kJumpBits)) return cudaErrorInvalidValue;
    unsigned blocks = std::min<unsigned>(
        GridFor(ctx, static_cast<int64_t>(draws), kBlockThreads, kBlocksPerSm), kMaxRoundBlocks);
    rd.chunk = (draws + blocks - 1) / blocks;
    rd.chunk = (rd.chunk + kBlockThreads - 1) / kBlockThreads * kBlockThreads;
    blocks = static_cast<unsigned>((draws + rd.chunk - 1) / rd.chunk);
    for (int b = 0; b < 2; ++b) j.start[b] = Pcg64JumpFor(rd.span.r_lo[b] + 1);
    CountKernel<<<blocks, kBlockThreads, 0, ctx.stream>>>(state_in, j, rd, counts);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    size_t scan_bytes = temp_bytes - 2 * kCountsBytes;
    e = cub::DeviceScan::InclusiveSum(scan_temp, scan_bytes, static_cast<const int64_t*>(counts),
                                      ends, static_cast<int64_t>(blocks), ctx.stream);
    if (e != cudaSuccess) return e;
    WriteKernel<<<blocks, kBlockThreads, 0, ctx.stream>>>(state_in, j, rd, ends, out + placed);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    int64_t got = 0;
    e = cudaMemcpyAsync(&got, ends + blocks - 1, sizeof(got), cudaMemcpyDeviceToHost, ctx.stream);
    if (e != cudaSuccess) return e;
    if ((e = cudaStreamSynchronize(ctx.stream)) != cudaSuccess) return e;
    if (got < 0 || got > need) return cudaErrorUnknown;
    placed += got;
    u += static_cast<uint64_t>(need);
  }
  *units = u;
  return cudaSuccess;
}

// A bounded fill of T (the element's unsigned type) with units of kBits.
template <int kBits, typename T>
cudaError_t Bounded(const LaunchContext& ctx, const uint64_t* state_in, const RandomParams& p,
                    const Pcg64Plan& plan, void* out, int64_t n, void* temp, size_t temp_bytes,
                    uint64_t* units) {
  T* o = static_cast<T*>(out);
  if (plan.constant) return LaunchConstant<T>(ctx, out, n, static_cast<T>(p.off));
  if (!plan.rejects) {
    *units = static_cast<uint64_t>(n);
    return LaunchDraws<kBits>(ctx, state_in, SpanFor(kBits, 0, n),
                              OffsetOp<T>{static_cast<T>(p.off)}, o);
  }
  return LemireRounds<kBits, T>(ctx, state_in, p, o, n, temp, temp_bytes, units);
}

}  // namespace

size_t RandomTempBytes(const RandomParams& p, int64_t n) {
  if (n <= 0) return 0;
  if (IsZigguratDraw(p.draw)) return random_internal::ZigguratTempBytes(n);
  if (!Pcg64PlanFor(p).rejects) return 0;
  return kFixedBytes + Align(ScanBytes());
}

cudaError_t RandomFill(const LaunchContext& ctx, const RandomParams& p, const uint64_t* state_in,
                       uint64_t* state_out, void* out, int64_t n, void* temp, size_t temp_bytes) {
  const Pcg64Plan plan = Pcg64PlanFor(p);
  uint64_t units = 0;  // units read, for the state after
  cudaError_t e = cudaSuccess;
  if (n > 0) {
    switch (p.draw) {
      case RandomDraw::kDouble:
        units = static_cast<uint64_t>(n);
        e = LaunchDraws<64>(ctx, state_in, SpanFor(64, 0, n), UniformOp{p.low, p.range},
                            static_cast<double*>(out));
        break;
      case RandomDraw::kFloat:
        units = static_cast<uint64_t>(n);
        e = LaunchDraws<32>(ctx, state_in, SpanFor(32, 0, n), FloatOp{}, static_cast<float*>(out));
        break;
      case RandomDraw::kBounded64:
        e = plan.unit_bits == 32
                ? Bounded<32, uint64_t>(ctx, state_in, p, plan, out, n, temp, temp_bytes, &units)
                : Bounded<64, uint64_t>(ctx, state_in, p, plan, out, n, temp, temp_bytes, &units);
        break;
      case RandomDraw::kBounded32:
        e = Bounded<32, uint32_t>(ctx, state_in, p, plan, out, n, temp, temp_bytes, &units);
        break;
      case RandomDraw::kBounded16:
        e = Bounded<16, uint16_t>(ctx, state_in, p, plan, out, n, temp, temp_bytes, &units);
        break;
      case RandomDraw::kBounded8:
        e = Bounded<8, uint8_t>(ctx, state_in, p, plan, out, n, temp, temp_bytes, &units);
        break;
      case RandomDraw::kNormalDouble:
      case RandomDraw::kNormalFloat:
      case RandomDraw::kExponentialDouble:
      case RandomDraw::kExponentialFloat:
        e = random_internal::ZigguratFill(ctx, state_in, p, out, n, temp, temp_bytes, &units);
        break;
      case RandomDraw::kBool:
        if (plan.constant) {
          e = LaunchConstant<uint8_t>(ctx, out, n, p.off != 0 ? 1 : 0);
        } else {
          units = static_cast<uint64_t>(n);
          e = LaunchDraws<1>(ctx, state_in, SpanFor(1, 0, n), OffsetOp<uint8_t>{0},
                             static_cast<uint8_t*>(out));
        }
        break;
    }
    if (e != cudaSuccess) return e;
  }
  FinalStateKernel<<<1, 1, 0, ctx.stream>>>(state_in, state_out, plan.unit_bits, units);
  return cudaGetLastError();
}

}  // namespace resident::cuda_kernels

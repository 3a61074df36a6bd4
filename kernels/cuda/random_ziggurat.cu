// The ziggurat fills of kernels/cuda/random.h (kernels/ziggurat.h's normal
// and exponential draws).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <vector>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/random_internal.cuh"
#include "kernels/ziggurat.h"

namespace resident::cuda_kernels::random_internal {
namespace {

// --- ziggurat draws (kernels/ziggurat.h): runs of positions ------------------------
//
// The fill's draws start at units s_0 = 0, s_{k+1} = s_k + units(s_k), and
// about 99 % of draws read one unit. A round over units [u0, u0 + W) finds the
// others: Classify lists the units whose first-unit test fails
// (exceptions, unordered), a sort orders them, Simulate runs each as a
// whole draw from there (its value and units), and a scan of their reaches
// (unit + units) over the list says which of them start a draw: one that
// no earlier exception reaches certainly does, and it resolves the few
// after it that an earlier one reaches (Resolve). A unit that is not an
// exception starts a draw unless a starting exception reaches past it; a
// start's output index is its offset in the round less the units that the
// starting exceptions before it skipped (inclusive sums). Write draws the
// units again and places the starts; the one that places the last value
// wanted records where the fill's units end. The window holds a margin of
// units for the skipped ones, so one round almost always suffices; if not,
// the next starts where this one's draws ended.

// A device copy of one distribution's tables at one width (a kernel
// parameter, copied to shared memory by each block: lookups are random).
template <typename T, typename K>
struct ZigguratCopy {
  K k[256];
  T w[256];
  T f[256];
  T r, inv_r;
};

template <Ziggurat Z, typename T, typename K>
ZigguratCopy<T, K> ZigguratCopyOf() {
  const ZigguratView<T, K> v = ZigguratViewOf<Z, T>(NumpyZigguratTables());
  ZigguratCopy<T, K> c;
  std::memcpy(c.k, v.k, sizeof(c.k));
  std::memcpy(c.w, v.w, sizeof(c.w));
  std::memcpy(c.f, v.f, sizeof(c.f));
  c.r = v.r;
  c.inv_r = v.inv_r;
  return c;
}

// The block's shared copy of the tables, as a view.
template <typename T, typename K>
__device__ __forceinline__ ZigguratView<T, K> SharedTables(const ZigguratCopy<T, K>& param,
                                                           ZigguratCopy<T, K>& shared) {
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    shared.k[i] = param.k[i];
    shared.w[i] = param.w[i];
    shared.f[i] = param.f[i];
  }
  if (threadIdx.x == 0) {
    shared.r = param.r;
    shared.inv_r = param.inv_r;
  }
  __syncthreads();
  return ZigguratView<T, K>{shared.k, shared.w, shared.f, shared.r, shared.inv_r};
}

// A round's walk: block B takes `chunk` consecutive draws of the span,
// thread t draws t, t + 256, ... of them; f(unit index, unit value) for
// each unit of the window [span.u0, span.u0 + span.count), the buffered
// uinteger's units included (block 0, thread 0).
template <int kBits, typename F>
__device__ __forceinline__ void WalkUnits(const Pcg64& g, const RoundJumps& j, const UnitSpan& span,
                                          uint64_t chunk, F&& f) {
  constexpr int kPer = 64 / kBits;
  constexpr uint64_t kMask = kBits == 64 ? ~0ull : (1ull << kBits) - 1;
  const int b = kBits < 64 && g.has_uint32 ? 1 : 0;
  const uint64_t prefix = b == 1 ? 1 : 0;  // 32-bit units only
  const uint64_t u_end = span.u0 + static_cast<uint64_t>(span.count);
  if (b == 1 && blockIdx.x == 0 && threadIdx.x == 0 && span.u0 == 0 && span.count > 0) {
    f(uint64_t{0}, static_cast<uint64_t>(g.uinteger));
  }
  const uint64_t r_lo = b == 1 ? span.r_lo[1] : span.r_lo[0];
  const uint64_t r_end = b == 1 ? span.r_end[1] : span.r_end[0];
  const uint64_t first = r_lo + blockIdx.x * chunk;
  const uint64_t stop = first < r_end ? (r_end - first < chunk ? r_end : first + chunk) : first;
  uint64_t r = first + threadIdx.x;
  if (r >= stop) return;
  Pcg128 s = StateAt(g, b == 1 ? j.start[1] : j.start[0], j.pow2, kJumpBits,
                     blockIdx.x * chunk + threadIdx.x);
  const Pcg128 inc = Pcg128Mul(j.tile.gsum, g.inc);
  for (; r < stop; r += kBlockThreads) {
    const uint64_t x = Pcg64Output(s);
    s = Pcg128Add(Pcg128Mul(j.tile.mult, s), inc);
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const uint64_t u = prefix + r * kPer + k;
      if (u >= span.u0 && u < u_end) f(u, (x >> (k * kBits)) & kMask);
    }
  }
}

template <Ziggurat Z, int kBits, typename T, typename K>
__global__ void __launch_bounds__(kBlockThreads)
    ClassifyKernel(const uint64_t* state_in, const __grid_constant__ RoundJumps jumps,
                   UnitSpan span, uint64_t chunk, const __grid_constant__ ZigguratCopy<T, K> zc,
                   uint64_t* exceptions, unsigned long long* count, uint64_t cap) {
  __shared__ ZigguratCopy<T, K> shared;
  const ZigguratView<T, K> t = SharedTables(zc, shared);
  const Pcg64 g = Pcg64::FromWords(state_in);
  WalkUnits<kBits>(g, jumps, span, chunk, [&](uint64_t u, uint64_t unit) {
    T v;
    const bool exception = !ZigguratFast<Z>(unit, t, &v);
    // One atomic per warp: a single counter for the whole grid.
    const unsigned mask = __ballot_sync(__activemask(), exception);
    if (!exception) return;
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int leader = __ffs(static_cast<int>(mask)) - 1;
    unsigned long long base = 0;
    if (lane == leader) base = atomicAdd(count, static_cast<unsigned long long>(__popc(mask)));
    base = __shfl_sync(mask, base, leader);
    const unsigned long long at = base + __popc(mask & ((1u << lane) - 1u));
    if (at < cap) exceptions[at] = u;
  });
}

// A draw the host finishes (ZigguratHostWork), by its exception's index.
struct HostItem {
  uint64_t unit;      // kTail: the unit of log1p's uniform
  uint64_t position;  // the draw's first unit
  uint32_t index;
  uint8_t kind;
  uint8_t negative;
};
// The host's answer for one: the value (as the draw's type) and its units.
struct HostPatch {
  double value;
  uint32_t index;
  uint32_t units;
};

// Each exception drawn whole from its unit: its value and units, and its
// reach (the unit after it); what only the host's libm decides exactly
// goes to `items`.
template <Ziggurat Z, int kBits, typename T, typename K>
__global__ void __launch_bounds__(kBlockThreads)
    SimulateKernel(const uint64_t* state_in, const __grid_constant__ ZigguratCopy<T, K> zc,
                   double low, double range, const uint64_t* exceptions, int64_t count, T* values,
                   uint32_t* units, uint64_t* reach, HostItem* items,
                   unsigned long long* item_count, uint64_t item_cap) {
  __shared__ ZigguratCopy<T, K> shared;
  const ZigguratView<T, K> t = SharedTables(zc, shared);
  const Pcg64 g = Pcg64::FromWords(state_in);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    Pcg64UnitStream<kBits> s(g, exceptions[i]);
    uint32_t used = 0;
    ZigguratHostWork work;
    const T z = ZigguratDraw<Z>(
        s.Next(), [&s] { return s.Next(); }, t, &used, &work);
    if (work.kind != ZigguratHostWork::kNone) {
      const unsigned long long at = atomicAdd(item_count, 1ull);
      if (at < item_cap) {
        items[at] =
            HostItem{work.unit, exceptions[i], static_cast<uint32_t>(i),
                     static_cast<uint8_t>(work.kind), static_cast<uint8_t>(work.negative ? 1 : 0)};
      }
    }
    if constexpr (kBits == 64) {
      values[i] = Pcg64Uniform(low, range, z);
    } else {
      values[i] = z;
    }
    units[i] = used;
    reach[i] = exceptions[i] + used;
  }
}

// The host's answers into the exceptions' values, units and reaches.
template <typename T>
__global__ void PatchKernel(const HostPatch* patches, int64_t count, const uint64_t* exceptions,
                            T* values, uint32_t* units, uint64_t* reach) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const HostPatch p = patches[i];
    values[p.index] = static_cast<T>(p.value);
    if (p.units != 0) {  // a whole draw redone: its units may differ
      units[p.index] = p.units;
      reach[p.index] = exceptions[p.index] + p.units;
    }
  }
}

struct MaxOp {
  __device__ __forceinline__ uint64_t operator()(uint64_t a, uint64_t b) const {
    return a > b ? a : b;
  }
};

// Which exceptions start a draw, from `before` (the largest reach of the
// exceptions before each): one that nothing before reaches starts one
// and walks the exceptions after it that something before reaches. Then
// each one's skipped units (a start's units but its first) and its reach
// if it starts (else 0), for the scans.
__global__ void ResolveKernel(const uint64_t* exceptions, const uint32_t* units,
                              const uint64_t* before, int64_t count, uint8_t* starts) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    if (before[i] > exceptions[i]) continue;  // its cluster's head decides it
    starts[i] = 1;
    uint64_t covered = exceptions[i] + units[i];
    for (int64_t k = i + 1; k < count && before[k] > exceptions[k]; ++k) {
      const bool start = exceptions[k] >= covered;
      starts[k] = start ? 1 : 0;
      if (start) covered = exceptions[k] + units[k];
    }
  }
}

__global__ void SkipsKernel(const uint64_t* exceptions, const uint32_t* units,
                            const uint8_t* starts, int64_t count, uint64_t* skipped,
                            uint64_t* start_reach) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    skipped[i] = starts[i] ? units[i] - 1 : 0;
    start_reach[i] = starts[i] ? exceptions[i] + units[i] : 0;
  }
}

// The exceptions before unit u: their count (lower bound in the sorted list).
__device__ __forceinline__ int64_t ExceptionsBefore(const uint64_t* e, int64_t lo, int64_t hi,
                                                    uint64_t u) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (e[mid] < u) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// What a round's Write needs besides the walk.
template <typename T>
struct ZigguratRound {
  const uint64_t* exceptions;  // sorted
  int64_t count;
  const T* values;
  const uint32_t* units;
  const uint8_t* starts;
  const uint64_t* skipped_through;  // inclusive sums of the skipped units
  const uint64_t* reach_through;    // inclusive maxima of the starts' reaches
  double low, range;
  int64_t want;             // values still missing
  unsigned long long* end;  // the unit after the want-th value's draw
};

template <Ziggurat Z, int kBits, typename T, typename K>
__global__ void __launch_bounds__(kBlockThreads)
    ZigguratWriteKernel(const uint64_t* state_in, const __grid_constant__ RoundJumps jumps,
                        UnitSpan span, uint64_t chunk,
                        const __grid_constant__ ZigguratCopy<T, K> zc, ZigguratRound<T> nr,
                        T* out) {
  __shared__ ZigguratCopy<T, K> shared;
  const ZigguratView<T, K> t = SharedTables(zc, shared);
  const Pcg64 g = Pcg64::FromWords(state_in);
  // This block's exceptions: those from its first unit to its last (a
  // range of the sorted list; the walk's units only grow per thread).
  constexpr uint64_t kPer = 64 / kBits;
  const int b = kBits < 64 && g.has_uint32 ? 1 : 0;
  const uint64_t prefix = b == 1 ? 1 : 0;
  const uint64_t r_lo = b == 1 ? span.r_lo[1] : span.r_lo[0];
  const uint64_t block_u = blockIdx.x == 0 ? 0 : prefix + (r_lo + blockIdx.x * chunk) * kPer;
  const uint64_t block_end = prefix + (r_lo + (blockIdx.x + 1) * chunk) * kPer;
  __shared__ int64_t range[2];
  if (threadIdx.x == 0) {
    range[0] = ExceptionsBefore(nr.exceptions, 0, nr.count, block_u);
    range[1] = ExceptionsBefore(nr.exceptions, range[0], nr.count, block_end);
  }
  __syncthreads();
  const int64_t lo = range[0], hi = range[1];
  int64_t i = lo;  // this thread's units only grow, so the count of exceptions before them does
  WalkUnits<kBits>(g, jumps, span, chunk, [&](uint64_t u, uint64_t unit) {
    while (i < hi && nr.exceptions[i] < u) ++i;
    T v;
    uint32_t used = 1;
    if (i < hi && nr.exceptions[i] == u) {
      if (!nr.starts[i]) return;
      v = nr.values[i];
      used = nr.units[i];
    } else {
      if (i > 0 && nr.reach_through[i - 1] > u) return;  // inside a start's draw
      ZigguratFast<Z>(unit, t, &v);
      if constexpr (kBits == 64) v = Pcg64Uniform(nr.low, nr.range, v);
    }
    const uint64_t skipped = i > 0 ? nr.skipped_through[i - 1] : 0;
    const int64_t at = static_cast<int64_t>(u - span.u0 - skipped);
    if (at < nr.want) out[at] = v;
    if (at == nr.want - 1) *nr.end = u + used;
  });
}

// Round bookkeeping on the device: the values this round placed and the
// unit after its last draw, from the scans' last entries, unless Write
// found the want-th value (then `end` says where the fill ends).
__global__ void RoundEndKernel(const uint64_t* skipped_through, const uint64_t* reach_through,
                               int64_t count, UnitSpan span, int64_t want,
                               const unsigned long long* end, int64_t* result) {
  const uint64_t u_end = span.u0 + static_cast<uint64_t>(span.count);
  if (*end != ~0ull) {
    result[0] = want;
    result[1] = static_cast<int64_t>(*end);
    return;
  }
  uint64_t skipped = 0, reach = 0;
  if (count > 0) {
    skipped = skipped_through[count - 1];
    reach = reach_through[count - 1];
  }
  const uint64_t overhang = reach > u_end ? reach - u_end : 0;
  result[0] = span.count - static_cast<int64_t>(skipped - overhang);
  result[1] = static_cast<int64_t>(reach > u_end ? reach : u_end);
}

// Exceptions a round of `window` units may hold: 2.2x the expected 0.7 %.
int64_t ExceptionCap(int64_t window) { return window / 64 + 4096; }
int64_t WindowFor(int64_t want) { return want + want / 32 + 4096; }

// The scratch of a round of `window` units, carved in this order.
struct ZigguratScratch {
  uint64_t* exceptions[2];
  uint64_t* reach;
  uint64_t* before;  // exclusive maxima of reach
  uint64_t* skipped;
  uint64_t* skipped_through;  // inclusive sums of skipped
  uint64_t* start_reach;
  uint64_t* reach_through;  // inclusive maxima of start_reach
  uint32_t* units;
  uint8_t* starts;
  void* values;
  HostItem* items;  // the draws the host finishes
  HostPatch* patches;
  unsigned long long* count;
  unsigned long long* item_count;
  unsigned long long* end;
  int64_t* result;
  void* cub;
  size_t cub_bytes;
};

// Draws a round's exceptions leave to the host: the tails (about 4 % of
// the normal's exceptions) with a wide margin.
int64_t ItemCap(int64_t cap) { return cap / 8 + 1024; }

size_t ZigguratCubBytes(int64_t cap) {
  size_t sort = 0, max_scan = 0, sum_scan = 0;
  cub::DoubleBuffer<uint64_t> keys(nullptr, nullptr);
  cub::DeviceRadixSort::SortKeys(nullptr, sort, keys, static_cast<int>(cap));
  cub::DeviceScan::ExclusiveScan(nullptr, max_scan, static_cast<const uint64_t*>(nullptr),
                                 static_cast<uint64_t*>(nullptr), MaxOp{}, uint64_t{0}, cap);
  cub::DeviceScan::InclusiveSum(nullptr, sum_scan, static_cast<const uint64_t*>(nullptr),
                                static_cast<uint64_t*>(nullptr), cap);
  size_t max_incl = 0;
  cub::DeviceScan::InclusiveScan(nullptr, max_incl, static_cast<const uint64_t*>(nullptr),
                                 static_cast<uint64_t*>(nullptr), MaxOp{}, cap);
  sum_scan = std::max(sum_scan, max_incl);
  return std::max({sort, max_scan, sum_scan});
}

}  // namespace

size_t ZigguratTempBytes(int64_t n) {
  const size_t cap = static_cast<size_t>(ExceptionCap(WindowFor(n)));
  const size_t items = static_cast<size_t>(ItemCap(static_cast<int64_t>(cap)));
  return 8 * Align(cap * 8) + Align(cap * 4) + Align(cap) + Align(cap * 8) +
         Align(items * sizeof(HostItem)) + Align(items * sizeof(HostPatch)) + 256 +
         Align(ZigguratCubBytes(static_cast<int64_t>(cap)));
}

namespace {

ZigguratScratch CarveZiggurat(void* temp, int64_t cap) {
  char* p = static_cast<char*>(temp);
  auto take = [&p](size_t bytes) {
    char* at = p;
    p += Align(bytes);
    return at;
  };
  const size_t c = static_cast<size_t>(cap);
  ZigguratScratch s;
  s.exceptions[0] = reinterpret_cast<uint64_t*>(take(c * 8));
  s.exceptions[1] = reinterpret_cast<uint64_t*>(take(c * 8));
  s.reach = reinterpret_cast<uint64_t*>(take(c * 8));
  s.before = reinterpret_cast<uint64_t*>(take(c * 8));
  s.skipped = reinterpret_cast<uint64_t*>(take(c * 8));
  s.skipped_through = reinterpret_cast<uint64_t*>(take(c * 8));
  s.start_reach = reinterpret_cast<uint64_t*>(take(c * 8));
  s.reach_through = reinterpret_cast<uint64_t*>(take(c * 8));
  s.units = reinterpret_cast<uint32_t*>(take(c * 4));
  s.starts = reinterpret_cast<uint8_t*>(take(c));
  s.values = take(c * 8);
  const size_t items = static_cast<size_t>(ItemCap(cap));
  s.items = reinterpret_cast<HostItem*>(take(items * sizeof(HostItem)));
  s.patches = reinterpret_cast<HostPatch*>(take(items * sizeof(HostPatch)));
  char* words = take(256);
  s.count = reinterpret_cast<unsigned long long*>(words);
  s.end = reinterpret_cast<unsigned long long*>(words + 8);
  s.item_count = reinterpret_cast<unsigned long long*>(words + 16);
  s.result = reinterpret_cast<int64_t*>(words + 32);
  s.cub = p;
  s.cub_bytes = ZigguratCubBytes(cap);
  return s;
}

// The draws SimulateKernel left to the host (ZigguratHostWork), finished
// with the host's libm, which is NumPy's, and patched into the round's
// arrays: the tails' log1p, and whole draws whose comparisons came near a
// tie. About one normal draw in 3,900 is a tail; the rest never reach
// here. One synchronisation and two small copies a round.
template <Ziggurat Z, int kBits, typename T, typename K>
cudaError_t FinishOnHost(const LaunchContext& ctx, const uint64_t* state_in, const RandomParams& p,
                         const ZigguratScratch& s, const uint64_t* exc, int64_t cap) {
  unsigned long long listed = 0;
  cudaError_t e = cudaMemcpyAsync(&listed, s.item_count, 8, cudaMemcpyDeviceToHost, ctx.stream);
  if (e != cudaSuccess || (e = cudaStreamSynchronize(ctx.stream)) != cudaSuccess) return e;
  if (listed == 0) return cudaSuccess;
  if (listed > static_cast<unsigned long long>(ItemCap(cap))) return cudaErrorUnknown;
  const size_t count = static_cast<size_t>(listed);
  std::vector<HostItem> items(count);
  uint64_t words[kPcg64StateWords];
  e = cudaMemcpyAsync(items.data(), s.items, count * sizeof(HostItem), cudaMemcpyDeviceToHost,
                      ctx.stream);
  if (e != cudaSuccess) return e;
  e = cudaMemcpyAsync(words, state_in, sizeof(words), cudaMemcpyDeviceToHost, ctx.stream);
  if (e != cudaSuccess || (e = cudaStreamSynchronize(ctx.stream)) != cudaSuccess) return e;
  const Pcg64 g = Pcg64::FromWords(words);
  const auto t = ZigguratViewOf<Z, T>(NumpyZigguratTables());
  std::vector<HostPatch> patches(count);
  for (size_t i = 0; i < count; ++i) {
    const HostItem& item = items[i];
    T z;
    uint32_t used;
    if (item.kind == ZigguratHostWork::kTail) {
      z = ZigguratTail<Z>(item.unit, item.negative != 0, t);
      used = 0;  // unchanged: the device counted the same units
    } else {
      Pcg64UnitStream<kBits> stream(g, item.position);
      z = ZigguratDraw<Z>(
          stream.Next(), [&stream] { return stream.Next(); }, t, &used);
    }
    const T value = kBits == 64 ? static_cast<T>(Pcg64Uniform(p.low, p.range, z)) : z;
    patches[i] = HostPatch{static_cast<double>(value), item.index, used};
  }
  e = cudaMemcpyAsync(s.patches, patches.data(), count * sizeof(HostPatch), cudaMemcpyHostToDevice,
                      ctx.stream);
  if (e != cudaSuccess) return e;
  PatchKernel<<<GridFor(ctx, static_cast<int64_t>(count), kBlockThreads), kBlockThreads, 0,
                ctx.stream>>>(s.patches, static_cast<int64_t>(count), exc,
                              static_cast<T*>(s.values), s.units, s.reach);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  // `patches` is pageable host memory: the copy has read it once this returns.
  return cudaStreamSynchronize(ctx.stream);
}

// A ziggurat fill in rounds; *units = the units it read.
template <Ziggurat Z, int kBits, typename T, typename K>
cudaError_t ZigguratRounds(const LaunchContext& ctx, const uint64_t* state_in,
                           const RandomParams& p, T* out, int64_t n, void* temp, size_t temp_bytes,
                           uint64_t* units) {
  if (temp == nullptr || temp_bytes < ZigguratTempBytes(n)) return cudaErrorInvalidValue;
  const ZigguratCopy<T, K> zc = ZigguratCopyOf<Z, T, K>();
  RoundJumps j;
  j.tile = Pcg64JumpFor(uint64_t{kBlockThreads});
  j.pow2[0] = Pcg64JumpFor(uint64_t{1});
  for (int i = 1; i < kJumpBits; ++i) j.pow2[i] = Pcg64Compose(j.pow2[i - 1], j.pow2[i - 1]);
  const ZigguratScratch s = CarveZiggurat(temp, ExceptionCap(WindowFor(n)));
  const unsigned small_grid = GridFor(ctx, 1 << 20, kBlockThreads);
  int64_t placed = 0;
  uint64_t u = 0;
  cudaError_t e = cudaSuccess;
  while (placed < n) {
    const int64_t want = n - placed;
    const int64_t window = WindowFor(want);
    const int64_t cap = ExceptionCap(window);
    const UnitSpan span = SpanFor(kBits, u, window);
    const uint64_t draws =
        std::max<uint64_t>({span.r_end[0] - span.r_lo[0], span.r_end[1] - span.r_lo[1], 1});
    if (draws >= (uint64_t{1} << kJumpBits)) return cudaErrorInvalidValue;
    unsigned blocks = std::min<unsigned>(
        GridFor(ctx, static_cast<int64_t>(draws), kBlockThreads, kBlocksPerSm), kMaxRoundBlocks);
    uint64_t chunk = (draws + blocks - 1) / blocks;
    chunk = (chunk + kBlockThreads - 1) / kBlockThreads * kBlockThreads;
    blocks = static_cast<unsigned>((draws + chunk - 1) / chunk);
    for (int b = 0; b < 2; ++b) j.start[b] = Pcg64JumpFor(span.r_lo[b] + 1);
    if ((e = cudaMemsetAsync(s.count, 0, 8, ctx.stream)) != cudaSuccess) return e;
    if ((e = cudaMemsetAsync(s.end, 0xff, 8, ctx.stream)) != cudaSuccess) return e;
    ClassifyKernel<Z, kBits, T, K><<<blocks, kBlockThreads, 0, ctx.stream>>>(
        state_in, j, span, chunk, zc, s.exceptions[0], s.count, static_cast<uint64_t>(cap));
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    unsigned long long found = 0;
    e = cudaMemcpyAsync(&found, s.count, 8, cudaMemcpyDeviceToHost, ctx.stream);
    if (e != cudaSuccess || (e = cudaStreamSynchronize(ctx.stream)) != cudaSuccess) return e;
    // More than 2.2x the expected rejections in a window of thousands of
    // draws does not happen; refuse rather than overrun the scratch.
    if (found > static_cast<unsigned long long>(cap)) return cudaErrorUnknown;
    const int64_t count = static_cast<int64_t>(found);
    cub::DoubleBuffer<uint64_t> keys(s.exceptions[0], s.exceptions[1]);
    int end_bit = 1;
    while (end_bit < 64 && ((u + static_cast<uint64_t>(window)) >> end_bit) != 0) ++end_bit;
    if (count > 0) {
      size_t bytes = s.cub_bytes;
      e = cub::DeviceRadixSort::SortKeys(s.cub, bytes, keys, static_cast<int>(count), 0, end_bit,
                                         ctx.stream);
      if (e != cudaSuccess) return e;
      const uint64_t* exc = keys.Current();
      T* values = static_cast<T*>(s.values);
      if ((e = cudaMemsetAsync(s.item_count, 0, 8, ctx.stream)) != cudaSuccess) return e;
      SimulateKernel<Z, kBits, T, K><<<small_grid, kBlockThreads, 0, ctx.stream>>>(
          state_in, zc, p.low, p.range, exc, count, values, s.units, s.reach, s.items, s.item_count,
          static_cast<uint64_t>(ItemCap(cap)));
      if ((e = cudaGetLastError()) != cudaSuccess) return e;
      if ((e = FinishOnHost<Z, kBits, T, K>(ctx, state_in, p, s, exc, cap)) != cudaSuccess) {
        return e;
      }
      bytes = s.cub_bytes;
      e = cub::DeviceScan::ExclusiveScan(s.cub, bytes, s.reach, s.before, MaxOp{}, uint64_t{0},
                                         count, ctx.stream);
      if (e != cudaSuccess) return e;
      ResolveKernel<<<small_grid, kBlockThreads, 0, ctx.stream>>>(exc, s.units, s.before, count,
                                                                  s.starts);
      SkipsKernel<<<small_grid, kBlockThreads, 0, ctx.stream>>>(exc, s.units, s.starts, count,
                                                                s.skipped, s.start_reach);
      if ((e = cudaGetLastError()) != cudaSuccess) return e;
      bytes = s.cub_bytes;
      e = cub::DeviceScan::InclusiveSum(s.cub, bytes, s.skipped, s.skipped_through, count,
                                        ctx.stream);
      if (e != cudaSuccess) return e;
      bytes = s.cub_bytes;
      e = cub::DeviceScan::InclusiveScan(s.cub, bytes, s.start_reach, s.reach_through, MaxOp{},
                                         count, ctx.stream);
      if (e != cudaSuccess) return e;
    }
    const ZigguratRound<T> nr{keys.Current(),
                              count,
                              static_cast<const T*>(s.values),
                              s.units,
                              s.starts,
                              s.skipped_through,
                              s.reach_through,
                              p.low,
                              p.range,
                              want,
                              s.end};
    ZigguratWriteKernel<Z, kBits, T, K>
        <<<blocks, kBlockThreads, 0, ctx.stream>>>(state_in, j, span, chunk, zc, nr, out + placed);
    RoundEndKernel<<<1, 1, 0, ctx.stream>>>(s.skipped_through, s.reach_through, count, span, want,
                                            s.end, s.result);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    int64_t result[2] = {0, 0};
    e = cudaMemcpyAsync(result, s.result, sizeof(result), cudaMemcpyDeviceToHost, ctx.stream);
    if (e != cudaSuccess || (e = cudaStreamSynchronize(ctx.stream)) != cudaSuccess) return e;
    if (result[0] <= 0 || result[0] > want) return cudaErrorUnknown;
    placed += result[0];
    u = static_cast<uint64_t>(result[1]);
  }
  *units = u;
  return cudaSuccess;
}

}  // namespace

cudaError_t ZigguratFill(const LaunchContext& ctx, const uint64_t* state_in, const RandomParams& p,
                         void* out, int64_t n, void* temp, size_t temp_bytes, uint64_t* units) {
  using Z = Ziggurat;
  switch (p.draw) {
    case RandomDraw::kNormalFloat:
      return ZigguratRounds<Z::kNormal, 32, float, uint32_t>(
          ctx, state_in, p, static_cast<float*>(out), n, temp, temp_bytes, units);
    case RandomDraw::kExponentialDouble:
      return ZigguratRounds<Z::kExponential, 64, double, uint64_t>(
          ctx, state_in, p, static_cast<double*>(out), n, temp, temp_bytes, units);
    case RandomDraw::kExponentialFloat:
      return ZigguratRounds<Z::kExponential, 32, float, uint32_t>(
          ctx, state_in, p, static_cast<float*>(out), n, temp, temp_bytes, units);
    default:
      return ZigguratRounds<Z::kNormal, 64, double, uint64_t>(
          ctx, state_in, p, static_cast<double*>(out), n, temp, temp_bytes, units);
  }
}

}  // namespace resident::cuda_kernels::random_internal

#include "kernels/cuda/sort.h"

#include <algorithm>
#include <cstdint>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "kernels/cuda/common.cuh"

namespace resident::cuda_kernels {
namespace {

// The bits an element's key takes: its item size (bool: one byte).
template <typename T>
constexpr int KeyBits() {
  return static_cast<int>(sizeof(T)) * 8;
}

template <typename U>
__device__ __forceinline__ uint64_t FloatKey(U bits, bool is_nan, bool is_zero) {
  constexpr int kBits = static_cast<int>(sizeof(U)) * 8;
  constexpr uint64_t kSign = uint64_t{1} << (kBits - 1);
  constexpr uint64_t kMask = kBits == 64 ? ~uint64_t{0} : (uint64_t{1} << kBits) - 1;
  if (is_nan) return kMask;   // every NaN after every number
  if (is_zero) return kSign;  // -0.0 sorts as +0.0
  const uint64_t b = static_cast<uint64_t>(bits);
  return (b & kSign) ? (~b & kMask) : (b | kSign);
}

// The unsigned key of x whose order is NumPy's sort order.
template <typename T>
__device__ __forceinline__ uint64_t OrderedKey(T x) {
  if constexpr (kIsBoolStorage<T>) {
    return x != 0 ? 1 : 0;
  } else if constexpr (kIsHalfStorage<T>) {
    const float f = resident_load(x);
    return FloatKey(x.bits, f != f, f == 0.0f);
  } else if constexpr (std::is_same_v<T, float>) {
    return FloatKey(__float_as_uint(x), x != x, x == 0.0f);
  } else if constexpr (std::is_same_v<T, double>) {
    return FloatKey(static_cast<unsigned long long>(__double_as_longlong(x)), x != x, x == 0.0);
  } else if constexpr (std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    constexpr uint64_t kSign = uint64_t{1} << (KeyBits<T>() - 1);
    return static_cast<uint64_t>(static_cast<U>(x)) ^ kSign;
  } else {
    return static_cast<uint64_t>(x);
  }
}

// keys[i] = (row << key_bits) | key(in[i]) (row 0 when row_bits is 0),
// inverted within key_bits for a descending sort; vals[i] = i. K and V are
// the narrowest that hold them (32-bit keys and indices halve the radix
// sort's traffic).
// With kValues, vals[i] holds in[i]'s own bits instead (V of its size).
template <typename T, typename K, typename V, bool kValues = false>
__global__ void MakeKeys(const T* in, int64_t total, int64_t n, int key_bits, bool with_row,
                         bool descending, K* keys, V* vals) {
  const uint64_t mask = key_bits == 64 ? ~uint64_t{0} : (uint64_t{1} << key_bits) - 1;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const T x = in[i];
    uint64_t k = OrderedKey(x);
    if (descending) k = ~k & mask;
    if (with_row) k |= static_cast<uint64_t>(i / n) << key_bits;
    keys[i] = static_cast<K>(k);
    if constexpr (kValues) {
      static_assert(sizeof(V) == sizeof(T));
      V bits;
      memcpy(&bits, &x, sizeof(V));
      vals[i] = bits;
    } else {
      vals[i] = static_cast<V>(i);
    }
  }
}

// keys[i] = the row of flat index vals[i] (the second pass of 64-bit keys).
template <typename V>
__global__ void RowKeys(const V* vals, int64_t total, int64_t n, uint64_t* keys) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    keys[i] = static_cast<uint64_t>(static_cast<int64_t>(vals[i]) / n);
  }
}

// out[i] = the position of flat index vals[i] within its row.
template <typename V>
__global__ void WithinRow(const V* vals, int64_t total, int64_t n, int64_t* out) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = static_cast<int64_t>(vals[i]) % n;
  }
}

int BitsFor(uint64_t v) {  // bits to hold 0..v
  int b = 0;
  while (b < 64 && (v >> b) != 0) ++b;
  return b;
}

size_t Align(size_t b) { return (b + 255) & ~size_t{255}; }

template <typename K, typename V>
size_t CubTempBytes(int64_t total) {
  size_t bytes = 0;
  cub::DoubleBuffer<K> k(nullptr, nullptr);
  cub::DoubleBuffer<V> v(nullptr, nullptr);
  cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, v, total, 0, static_cast<int>(sizeof(K)) * 8);
  return bytes;
}

// The largest scratch any key and index (or element) width takes.
size_t MaxCubTempBytes(int64_t total) {
  size_t b = 0;
  for (size_t v : {CubTempBytes<uint64_t, int64_t>(total), CubTempBytes<uint64_t, uint8_t>(total),
                   CubTempBytes<uint64_t, uint16_t>(total), CubTempBytes<uint64_t, uint32_t>(total),
                   CubTempBytes<uint32_t, uint8_t>(total), CubTempBytes<uint32_t, uint16_t>(total),
                   CubTempBytes<uint32_t, uint32_t>(total)}) {
    b = std::max(b, v);
  }
  if (total <= INT32_MAX) {
    b = std::max(
        {b, CubTempBytes<uint32_t, int32_t>(total), CubTempBytes<uint64_t, int32_t>(total)});
  }
  return b;
}

// SortRows with keys of K and elements moved as V (their size): one pass.
template <typename K, typename V>
cudaError_t SortValuesAs(const LaunchContext& ctx, DType t, const void* in, int64_t total,
                         int64_t n, int key_bits, int row_bits, bool descending, void* out,
                         char* base, size_t temp_bytes) {
  const size_t each = Align(static_cast<size_t>(total) * 8);
  auto* k0 = reinterpret_cast<K*>(base);
  auto* k1 = reinterpret_cast<K*>(base + each);
  auto* v0 = reinterpret_cast<V*>(base + 2 * each);
  auto* v1 = reinterpret_cast<V*>(base + 3 * each);
  void* cub_temp = base + 4 * each;
  size_t cub_bytes = temp_bytes - 4 * each;
  if (key_bits + row_bits > static_cast<int>(sizeof(K)) * 8) return cudaErrorInvalidValue;
  const unsigned grid = GridFor(ctx, total, kThreads);
  cudaError_t e = DispatchType(t, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    if constexpr (sizeof(T) != sizeof(V)) {
      return cudaErrorInvalidValue;
    } else {
      MakeKeys<T, K, V, true><<<grid, kThreads, 0, ctx.stream>>>(
          static_cast<const T*>(in), total, n, key_bits, row_bits > 0, descending, k0, v0);
      return cudaGetLastError();
    }
  });
  if (e != cudaSuccess) return e;
  cub::DoubleBuffer<K> keys(k0, k1);
  cub::DoubleBuffer<V> vals(v0, v1);
  e = cub::DeviceRadixSort::SortPairs(cub_temp, cub_bytes, keys, vals, total, 0,
                                      key_bits + row_bits, ctx.stream);
  if (e != cudaSuccess) return e;
  return cudaMemcpyAsync(out, vals.Current(), static_cast<size_t>(total) * sizeof(V),
                         cudaMemcpyDeviceToDevice, ctx.stream);
}

// ArgsortRows with keys of K and flat indices of V: one stable radix sort
// of (row, key) pairs, or, when row and key do not fit 64 bits, a sort by
// key then a stable one by row.
template <typename K, typename V>
cudaError_t ArgsortAs(const LaunchContext& ctx, DType t, const void* in, int64_t total, int64_t n,
                      int key_bits, int row_bits, bool descending, int64_t* out, char* base,
                      size_t temp_bytes) {
  const size_t each = Align(static_cast<size_t>(total) * 8);
  auto* k0 = reinterpret_cast<K*>(base);
  auto* k1 = reinterpret_cast<K*>(base + each);
  auto* v0 = reinterpret_cast<V*>(base + 2 * each);
  auto* v1 = reinterpret_cast<V*>(base + 3 * each);
  void* cub_temp = base + 4 * each;
  size_t cub_bytes = temp_bytes - 4 * each;
  const bool one_pass = key_bits + row_bits <= static_cast<int>(sizeof(K)) * 8;
  const unsigned grid = GridFor(ctx, total, kThreads);
  cudaError_t e = DispatchType(t, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    MakeKeys<T, K, V><<<grid, kThreads, 0, ctx.stream>>>(static_cast<const T*>(in), total, n,
                                                         key_bits, one_pass && row_bits > 0,
                                                         descending, k0, v0);
    return cudaGetLastError();
  });
  if (e != cudaSuccess) return e;
  cub::DoubleBuffer<K> keys(k0, k1);
  cub::DoubleBuffer<V> vals(v0, v1);
  e = cub::DeviceRadixSort::SortPairs(cub_temp, cub_bytes, keys, vals, total, 0,
                                      one_pass ? key_bits + row_bits : key_bits, ctx.stream);
  if (e != cudaSuccess) return e;
  if (!one_pass && row_bits > 0) {
    if constexpr (std::is_same_v<K, uint64_t>) {
      RowKeys<V><<<grid, kThreads, 0, ctx.stream>>>(vals.Current(), total, n, keys.Current());
      if ((e = cudaGetLastError()) != cudaSuccess) return e;
      e = cub::DeviceRadixSort::SortPairs(cub_temp, cub_bytes, keys, vals, total, 0, row_bits,
                                          ctx.stream);
      if (e != cudaSuccess) return e;
    } else {
      return cudaErrorInvalidValue;  // 32-bit keys are chosen only when one pass fits
    }
  }
  WithinRow<V><<<grid, kThreads, 0, ctx.stream>>>(vals.Current(), total, n, out);
  return cudaGetLastError();
}

// out[k] = in[row(k) * n + idx[k]] (negative indices from the end); the
// first out-of-range k goes to *bad. One row (kOneRow) skips the division.
// Each thread takes kUnroll positions a grid stride apart per step, their
// index loads, then their gathers, issued together: a random gather is
// latency bound, and one load in flight per thread leaves bandwidth idle.
constexpr int kUnroll = 4;
template <typename T, bool kOneRow>
__global__ void Gather(const T* __restrict__ in, int64_t n, const int64_t* __restrict__ idx,
                       int64_t total, int64_t m, T* __restrict__ out, unsigned long long* bad) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t k0 = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k0 < total;
       k0 += kUnroll * stride) {
    int64_t src[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t k = k0 + u * stride;
      src[u] = k < total ? idx[k] : 0;
    }
    T v[kUnroll]{};
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t k = k0 + u * stride;
      int64_t j = src[u];
      if (j < 0) j += n;
      src[u] = -1;
      if (k >= total) continue;
      if (j < 0 || j >= n) {
        atomicMin(bad, static_cast<unsigned long long>(k));
        continue;
      }
      src[u] = kOneRow ? j : (k / m) * n + j;
      v[u] = in[src[u]];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t k = k0 + u * stride;
      if (src[u] >= 0) out[k] = v[u];
    }
  }
}

// The running value of a scan in T's compute type; halves round on store.
template <typename T, bool kProd>
struct ScanOp {
  using C = ComputeType<T>;
  __device__ __forceinline__ C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      return kProd ? a * b : a + b;
    } else if constexpr (kIsComplexStorage<C>) {
      return kProd ? resident_cx_mul(a, b) : resident_cx_add(a, b);
    } else {
      return kProd ? resident_ew_multiply(a, b) : resident_ew_add(a, b);
    }
  }
};

// The scan's padding value: 1 for products, 0 for sums.
template <typename C, bool kProd>
__device__ __forceinline__ C ScanIdentity() {
  if constexpr (kIsComplexStorage<C>) {
    return resident_cx_make<C>(kProd ? 1 : 0, 0);
  } else {
    return static_cast<C>(kProd ? 1 : 0);
  }
}

constexpr int kScanThreads = 256;
// Rows at least this long, too few to fill the GPU a block each, are split
// into chunks of kScanChunk scanned in parallel, then offset by the scan of
// the chunks' totals.
constexpr int64_t kScanChunk = 8192;

// Block b scans chunk b % chunks of row b / chunks (chunks of `chunk`
// elements; with chunks == 1, whole rows) in pieces of kScanThreads with
// BlockScan, offsetting each piece by the running total before it; the
// chunk's total goes to totals[b] when totals is given. Grid-stride over
// blocks.
template <typename T, bool kProd>
__global__ void ScanChunksKernel(const T* in, int64_t rows, int64_t n, int64_t chunk,
                                 int64_t chunks, T* out, T* totals) {
  using C = ComputeType<T>;
  using BlockScan = cub::BlockScan<C, kScanThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  __shared__ C carry;
  const ScanOp<T, kProd> op;
  for (int64_t b = blockIdx.x; b < rows * chunks; b += gridDim.x) {
    const int64_t r = b / chunks, lo = (b % chunks) * chunk;
    const int64_t hi = lo + chunk < n ? lo + chunk : n;
    const T* x = in + r * n;
    T* y = out + r * n;
    for (int64_t base = lo; base < hi; base += kScanThreads) {
      const int64_t j = base + threadIdx.x;
      C v = j < hi ? static_cast<C>(resident_load(x[j])) : ScanIdentity<C, kProd>();
      C total;
      BlockScan(temp).InclusiveScan(v, v, op, total);
      if (base > lo) v = op(carry, v);
      if (j < hi) {
        if constexpr (kIsHalfStorage<T>) {
          y[j] = resident_store<T>(v);
        } else {
          y[j] = v;
        }
      }
      __syncthreads();
      if (threadIdx.x == 0) carry = base > lo ? op(carry, total) : total;
      __syncthreads();
    }
    if (totals != nullptr && threadIdx.x == 0) {
      if constexpr (kIsHalfStorage<T>) {
        totals[b] = resident_store<T>(carry);
      } else {
        totals[b] = carry;
      }
    }
    __syncthreads();
  }
}

// y[r, j] = op(prefix[r, c - 1], y[r, j]) for j in chunk c > 0: the scan of
// the chunks' totals (inclusive) before each chunk.
template <typename T, bool kProd>
__global__ void OffsetChunks(const T* prefix, int64_t rows, int64_t n, int64_t chunk,
                             int64_t chunks, T* out) {
  using C = ComputeType<T>;
  const ScanOp<T, kProd> op;
  const int64_t total = rows * n;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / n, c = (i % n) / chunk;
    if (c == 0) continue;
    const C v = op(static_cast<C>(resident_load(prefix[r * chunks + c - 1])),
                   static_cast<C>(resident_load(out[i])));
    if constexpr (kIsHalfStorage<T>) {
      out[i] = resident_store<T>(v);
    } else {
      out[i] = v;
    }
  }
}

// Chunks per row of n, or 1 when whole rows already fill the GPU.
int64_t ChunksFor(const LaunchContext& ctx, int64_t rows, int64_t n) {
  if (n < 2 * kScanChunk || rows >= 4 * static_cast<int64_t>(ctx.sm_count)) return 1;
  return (n + kScanChunk - 1) / kScanChunk;
}

// One long row of a type that is its own compute type: cub::DeviceScan's
// single pass (decoupled look-back), as CuPy's cumsum. The halves keep the
// chunked scan, which computes in float and rounds each stored value.
template <typename T>
constexpr bool kCubScans = !kIsHalfStorage<T> && !kIsBoolStorage<T>;

// Sums go through InclusiveSum, whose tuning CUB specialises for plus
// (integers wrap alike; float sums are the same additions).
template <typename T, bool kProd>
cudaError_t CubScan(void* temp, size_t& bytes, const T* in, T* out, int64_t n,
                    cudaStream_t stream) {
  if constexpr (kProd || kIsComplexStorage<T>) {  // complex has no operator+
    return cub::DeviceScan::InclusiveScan(temp, bytes, in, out, ScanOp<T, kProd>{}, n, stream);
  } else {
    return cub::DeviceScan::InclusiveSum(temp, bytes, in, out, n, stream);
  }
}

template <typename T, bool kProd>
size_t CubScanBytes(int64_t n) {
  size_t bytes = 0;
  CubScan<T, kProd>(nullptr, bytes, static_cast<const T*>(nullptr), static_cast<T*>(nullptr), n,
                    nullptr);
  return bytes;
}

template <typename T, bool kProd>
cudaError_t ScanTyped(const LaunchContext& ctx, const T* in, int64_t rows, int64_t n, T* out,
                      char* temp) {
  const int64_t chunks = ChunksFor(ctx, rows, n);
  if constexpr (kCubScans<T>) {
    if (rows == 1 && chunks > 1) {
      size_t bytes = CubScanBytes<T, kProd>(n);
      return CubScan<T, kProd>(temp, bytes, in, out, n, ctx.stream);
    }
  }
  if (chunks == 1) {
    ScanChunksKernel<T, kProd><<<GridFor(ctx, rows, 1, 32), kScanThreads, 0, ctx.stream>>>(
        in, rows, n, n, 1, out, nullptr);
    return cudaGetLastError();
  }
  T* totals = reinterpret_cast<T*>(temp);
  char* rest = temp + ((rows * chunks * static_cast<int64_t>(sizeof(T)) + 255) & ~int64_t{255});
  ScanChunksKernel<T, kProd><<<GridFor(ctx, rows * chunks, 1, 32), kScanThreads, 0, ctx.stream>>>(
      in, rows, n, kScanChunk, chunks, out, totals);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  // The totals' own scan, in place (a block per row of totals, or chunked again).
  if (cudaError_t e = ScanTyped<T, kProd>(ctx, totals, rows, chunks, totals, rest);
      e != cudaSuccess) {
    return e;
  }
  OffsetChunks<T, kProd><<<GridFor(ctx, rows * n, kThreads), kThreads, 0, ctx.stream>>>(
      totals, rows, n, kScanChunk, chunks, out);
  return cudaGetLastError();
}

// The dtypes one row of which CUB sorts as plain keys, the elements
// themselves, in NumPy's order: integers (their order is their value's,
// and equal keys are equal bits), and floats whose NaNs, if any, are all
// of one positive bit pattern (CUB orders NaNs by their bits, and by the
// sign bit first; -0.0 it ranks as +0.0 and keeps stable, as NumPy).
template <typename T>
constexpr bool kKeysOnly = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                           (std::is_integral_v<T> && !kIsBoolStorage<T>);

// nan_bits[0] = min, nan_bits[1] = max of the NaNs' bits (as unsigned; the
// caller sets ~0 and 0 first).
template <typename T>
__global__ void NaNBitRange(const T* in, int64_t n, unsigned long long* nan_bits) {
  unsigned long long lo = ~0ULL, hi = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const T x = in[i];
    if (x != x) {
      unsigned long long b = 0;
      memcpy(&b, &x, sizeof(T));
      lo = b < lo ? b : lo;
      hi = b > hi ? b : hi;
    }
  }
  for (int d = 16; d > 0; d /= 2) {
    const unsigned long long l = __shfl_down_sync(0xffffffffu, lo, d);
    const unsigned long long h = __shfl_down_sync(0xffffffffu, hi, d);
    lo = l < lo ? l : lo;
    hi = h > hi ? h : hi;
  }
  if ((threadIdx.x & 31) == 0 && hi != 0) {
    atomicMin(&nan_bits[0], lo);
    atomicMax(&nan_bits[1], hi);
  }
}

template <typename T>
size_t KeysOnlyBytes(int64_t n) {
  size_t bytes = 0;
  cub::DeviceRadixSort::SortKeys(nullptr, bytes, static_cast<const T*>(nullptr),
                                 static_cast<T*>(nullptr), n);
  return bytes;
}

// NumPy's complex order as three keys (see sort.h's ComplexSortKeys).
template <typename C>
__global__ void ComplexKeys(const C* in, int64_t count, decltype(C{}.re) * cls,
                            decltype(C{}.re) * k1, decltype(C{}.re) * k2) {
  using F = decltype(C{}.re);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const ResidentCxSortKeys<C> k = resident_cx_sort_keys(in[i]);
    cls[i] = k.cls;
    k1[i] = k.k1;
    k2[i] = k.k2;
  }
}

}  // namespace

bool SortKeysOnlyFits(DType t, int64_t rows) {
  if (rows != 1) return false;
  return VisitDType(
      t, [](auto zero) { return kKeysOnly<decltype(zero)>; }, [] { return false; });
}

bool SortKeysOnlyNeedsNaNCheck(DType t) { return t == DType::kFloat32 || t == DType::kFloat64; }

cudaError_t NaNBits(const LaunchContext& ctx, DType t, const void* in, int64_t n,
                    unsigned long long* nan_bits) {
  unsigned long long init[2] = {~0ULL, 0};
  cudaError_t e = cudaMemcpyAsync(nan_bits, init, sizeof init, cudaMemcpyHostToDevice, ctx.stream);
  if (e != cudaSuccess || n == 0) return e;
  const unsigned grid = GridFor(ctx, n, kThreads);
  if (t == DType::kFloat32) {
    NaNBitRange<float>
        <<<grid, kThreads, 0, ctx.stream>>>(static_cast<const float*>(in), n, nan_bits);
  } else if (t == DType::kFloat64) {
    NaNBitRange<double>
        <<<grid, kThreads, 0, ctx.stream>>>(static_cast<const double*>(in), n, nan_bits);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

bool KeysOnlyExact(DType t, const unsigned long long nan_bits[2]) {
  if (nan_bits[1] == 0) return true;  // no NaN
  const unsigned long long sign = t == DType::kFloat32 ? 1ULL << 31 : 1ULL << 63;
  return nan_bits[0] == nan_bits[1] && (nan_bits[0] & sign) == 0;
}

size_t SortKeysOnlyTempBytes(DType t, int64_t n) {
  return VisitDType(
      t,
      [&](auto zero) -> size_t {
        using T = decltype(zero);
        if constexpr (kKeysOnly<T>) {
          return KeysOnlyBytes<T>(n);
        } else {
          return 0;
        }
      },
      [] { return size_t{0}; });
}

cudaError_t SortKeysOnly(const LaunchContext& ctx, DType t, const void* in, int64_t n,
                         bool descending, void* out, void* temp, size_t temp_bytes) {
  if (n == 0) return cudaSuccess;
  return DispatchType(t, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    if constexpr (kKeysOnly<T>) {
      const T* i = static_cast<const T*>(in);
      T* o = static_cast<T*>(out);
      size_t bytes = temp_bytes;
      return descending ? cub::DeviceRadixSort::SortKeysDescending(
                              temp, bytes, i, o, n, 0, static_cast<int>(sizeof(T)) * 8, ctx.stream)
                        : cub::DeviceRadixSort::SortKeys(
                              temp, bytes, i, o, n, 0, static_cast<int>(sizeof(T)) * 8, ctx.stream);
    } else {
      return cudaErrorInvalidValue;
    }
  });
}

size_t ArgsortTempBytes(int64_t rows, int64_t n) {
  const int64_t total = rows * n;
  if (total == 0) return 0;
  const size_t each = Align(static_cast<size_t>(total) * 8);
  return 4 * each + Align(MaxCubTempBytes(total));
}

cudaError_t ArgsortRows(const LaunchContext& ctx, DType t, const void* in, int64_t rows, int64_t n,
                        bool descending, void* out, void* temp, size_t temp_bytes) {
  const int64_t total = rows * n;
  if (total == 0) return cudaSuccess;
  char* base = static_cast<char*>(temp);
  auto* o = static_cast<int64_t*>(out);
  const int key_bits = static_cast<int>(ItemSize(t)) * 8;
  const int row_bits = BitsFor(static_cast<uint64_t>(rows - 1));
  const bool small_index = total <= INT32_MAX;
  if (key_bits + row_bits <= 32 && small_index) {
    return ArgsortAs<uint32_t, int32_t>(ctx, t, in, total, n, key_bits, row_bits, descending, o,
                                        base, temp_bytes);
  }
  if (small_index) {
    return ArgsortAs<uint64_t, int32_t>(ctx, t, in, total, n, key_bits, row_bits, descending, o,
                                        base, temp_bytes);
  }
  return ArgsortAs<uint64_t, int64_t>(ctx, t, in, total, n, key_bits, row_bits, descending, o, base,
                                      temp_bytes);
}

bool SortRowsFits(DType t, int64_t rows) {
  return static_cast<int>(ItemSize(t)) * 8 + BitsFor(static_cast<uint64_t>(rows - 1)) <= 64;
}

cudaError_t SortRows(const LaunchContext& ctx, DType t, const void* in, int64_t rows, int64_t n,
                     bool descending, void* out, void* temp, size_t temp_bytes) {
  const int64_t total = rows * n;
  if (total == 0) return cudaSuccess;
  char* base = static_cast<char*>(temp);
  const int key_bits = static_cast<int>(ItemSize(t)) * 8;
  const int row_bits = BitsFor(static_cast<uint64_t>(rows - 1));
  auto as = [&](auto key, auto value) {
    using K = decltype(key);
    using V = decltype(value);
    return SortValuesAs<K, V>(ctx, t, in, total, n, key_bits, row_bits, descending, out, base,
                              temp_bytes);
  };
  const bool narrow = key_bits + row_bits <= 32;
  switch (ItemSize(t)) {
    case 1:
      return narrow ? as(uint32_t{}, uint8_t{}) : as(uint64_t{}, uint8_t{});
    case 2:
      return narrow ? as(uint32_t{}, uint16_t{}) : as(uint64_t{}, uint16_t{});
    case 4:
      return narrow ? as(uint32_t{}, uint32_t{}) : as(uint64_t{}, uint32_t{});
    case 8:
      return as(uint64_t{}, uint64_t{});
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t TakeAlongRows(const LaunchContext& ctx, DType t, const void* in, int64_t n,
                          const int64_t* idx, int64_t rows, int64_t m, void* out,
                          unsigned long long* bad) {
  const int64_t total = rows * m;
  if (total == 0) return cudaSuccess;
  const unsigned grid = GridFor(ctx, total, kThreads);
  auto launch = [&](auto zero) {
    using W = decltype(zero);  // moved by item size
    if (rows == 1) {
      Gather<W, true><<<grid, kThreads, 0, ctx.stream>>>(static_cast<const W*>(in), n, idx, total,
                                                         m, static_cast<W*>(out), bad);
    } else {
      Gather<W, false><<<grid, kThreads, 0, ctx.stream>>>(static_cast<const W*>(in), n, idx, total,
                                                          m, static_cast<W*>(out), bad);
    }
    return cudaGetLastError();
  };
  switch (ItemSize(t)) {
    case 1:
      return launch(uint8_t{});
    case 2:
      return launch(uint16_t{});
    case 4:
      return launch(uint32_t{});
    case 8:
      return launch(uint64_t{});
    case 16:
      return launch(ResidentComplex128{});
    default:
      return cudaErrorInvalidValue;
  }
}

size_t ScanTempBytes(const LaunchContext& ctx, DType t, int64_t rows, int64_t n) {
  if (rows == 1 && ChunksFor(ctx, rows, n) > 1) {
    const size_t cub = VisitAnyDType(
        t,
        [&](auto zero) -> size_t {
          using T = decltype(zero);
          if constexpr (kCubScans<T>) {
            return std::max(CubScanBytes<T, false>(n), CubScanBytes<T, true>(n));
          } else {
            return 0;
          }
        },
        [] { return size_t{0}; });
    if (cub > 0) return cub;
  }
  size_t bytes = 0;
  int64_t len = n;
  for (int64_t chunks = ChunksFor(ctx, rows, len); chunks > 1;
       len = chunks, chunks = ChunksFor(ctx, rows, len)) {
    bytes += static_cast<size_t>((rows * chunks * ItemSize(t) + 255) & ~int64_t{255});
  }
  return bytes;
}

cudaError_t ScanRows(const LaunchContext& ctx, ReduceKind kind, DType t, const void* in,
                     int64_t rows, int64_t n, void* out, void* temp) {
  if (rows == 0 || n == 0) return cudaSuccess;
  if (kind != ReduceKind::kSum && kind != ReduceKind::kProd) return cudaErrorInvalidValue;
  return DispatchAnyType(t, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    if constexpr (kIsBoolStorage<T>) {
      return cudaErrorInvalidValue;  // the caller scans bool as int64, NumPy's dtype
    } else if (kind == ReduceKind::kProd) {
      return ScanTyped<T, true>(ctx, static_cast<const T*>(in), rows, n, static_cast<T*>(out),
                                static_cast<char*>(temp));
    } else {
      return ScanTyped<T, false>(ctx, static_cast<const T*>(in), rows, n, static_cast<T*>(out),
                                 static_cast<char*>(temp));
    }
  });
}

cudaError_t ComplexSortKeys(const LaunchContext& ctx, DType t, const void* in, int64_t count,
                            void* cls, void* k1, void* k2) {
  if (count == 0) return cudaSuccess;
  const unsigned grid = GridFor(ctx, count, kThreads);
  if (t == DType::kComplex64) {
    ComplexKeys<<<grid, kThreads, 0, ctx.stream>>>(
        static_cast<const ResidentComplex64*>(in), count, static_cast<float*>(cls),
        static_cast<float*>(k1), static_cast<float*>(k2));
  } else if (t == DType::kComplex128) {
    ComplexKeys<<<grid, kThreads, 0, ctx.stream>>>(
        static_cast<const ResidentComplex128*>(in), count, static_cast<double*>(cls),
        static_cast<double*>(k1), static_cast<double*>(k2));
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace resident::cuda_kernels

// Sums. All elements: cub::DeviceReduce. One axis of a [outer, len, inner]
// view: our own kernels (a warp or a block per row when inner == 1, a
// 32-column tile per block otherwise), split along the axis into two passes
// when the output alone would leave the GPU idle.
//
// Accumulators: integers and bool in wrapping uint64 (the int64 result of
// NumPy's sum, bool/int32 promoted), floats in double (float32 is rounded
// once at the end: better than NumPy's pairwise float32 sum).
#include <cub/device/device_reduce.cuh>

#include <cstdint>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/kernels.h"

namespace resident::cuda_kernels {
namespace {

// float16 / bfloat16 accumulate in double too, rounded once into T.
template <typename T>
struct SumTraits {
  static constexpr bool kFloat = std::is_floating_point_v<T> || kIsHalfStorage<T>;
  using Acc = std::conditional_t<kFloat, double, uint64_t>;
  using Out = std::conditional_t<kFloat, T, int64_t>;
};

template <typename Acc>
struct AddOp {
  __device__ __forceinline__ Acc operator()(Acc x, Acc y) const { return x + y; }
};

template <typename Out, typename Acc>
__device__ __forceinline__ Out FromAcc(Acc x) {
  if constexpr (kIsHalfStorage<Out>) {
    return resident_store_double<Out>(x);  // one rounding to nearest even
  } else {
    return static_cast<Out>(x);  // uint64 -> int64 wraps (C++20); double rounds
  }
}

// A split of the axis into `chunks` pieces of `chunk` elements (the last may
// be shorter). Without a split, chunks == 1 and chunk == len.
struct AxisSplit {
  int64_t outer, len, inner, chunks, chunk;
};

// inner == 1: each row [len] of in (at o * len) is reduced by kWidth threads
// (a warp, or a whole block when kWidth == kThreads); kThreads / kWidth rows
// per block. Output index o * chunks + c.
template <typename In, typename Acc, typename Out, int kWidth>
__global__ void __launch_bounds__(kThreads)
    SumRowsKernel(const In* in, Out* out, const AxisSplit s) {
  constexpr int kRowsPerBlock = kThreads / kWidth;
  const int lane = threadIdx.x % kWidth;
  const int slot = threadIdx.x / kWidth;
  const int64_t work = s.outer * s.chunks;
  __shared__ Acc partial[kThreads / 32];
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock; base < work;
       base += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const int64_t w = base + slot;
    Acc acc = Acc(0);
    if (w < work) {
      const int64_t o = w / s.chunks, c = w % s.chunks;
      const int64_t begin = c * s.chunk;
      const int64_t end = begin + s.chunk < s.len ? begin + s.chunk : s.len;
      const In* row = in + o * s.len;
      for (int64_t l = begin + lane; l < end; l += kWidth) acc += Widen<Acc>(row[l]);
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      acc += __shfl_down_sync(0xffffffffu, acc, offset);
    }
    if constexpr (kWidth == kThreads) {
      if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = acc;
      __syncthreads();
      if (threadIdx.x == 0) {
        Acc total = Acc(0);
#pragma unroll
        for (int i = 0; i < kThreads / 32; ++i) total += partial[i];
        if (w < work) out[w] = FromAcc<Out>(total);
      }
      __syncthreads();  // partial is reused by the next row
    } else {
      static_assert(kWidth == 32);
      if (lane == 0 && w < work) out[w] = FromAcc<Out>(acc);
    }
  }
}

// inner > 1 (or short rows): a block is 32 columns x 8 lanes along the axis;
// each thread strides the axis by 8, then the 8 partials meet in shared
// memory. Reads are coalesced along inner. Output [outer, chunks, inner].
constexpr int kColTile = 32, kColLanes = kThreads / kColTile;

template <typename In, typename Acc, typename Out>
__global__ void __launch_bounds__(kThreads)
    SumColumnsKernel(const In* in, Out* out, const AxisSplit s) {
  __shared__ Acc partial[kColLanes][kColTile + 1];
  const int tx = threadIdx.x % kColTile, ty = threadIdx.x / kColTile;
  const int64_t tiles = (s.inner + kColTile - 1) / kColTile;
  const int64_t work = s.outer * s.chunks * tiles;
  for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
    const int64_t tile = w % tiles;
    const int64_t oc = w / tiles;
    const int64_t o = oc / s.chunks, c = oc % s.chunks;
    const int64_t i = tile * kColTile + tx;
    const int64_t begin = c * s.chunk;
    const int64_t end = begin + s.chunk < s.len ? begin + s.chunk : s.len;
    Acc acc = Acc(0);
    if (i < s.inner) {
      const In* col = in + o * s.len * s.inner + i;
      for (int64_t l = begin + ty; l < end; l += kColLanes) {
        acc += Widen<Acc>(col[l * s.inner]);
      }
    }
    partial[ty][tx] = acc;
    __syncthreads();
    if (ty == 0 && i < s.inner) {
      Acc total = Acc(0);
#pragma unroll
      for (int k = 0; k < kColLanes; ++k) total += partial[k][tx];
      out[oc * s.inner + i] = FromAcc<Out>(total);
    }
    __syncthreads();
  }
}

// One pass over [outer, len, inner] with the given split.
template <typename In, typename Acc, typename Out>
cudaError_t LaunchPass(const LaunchContext& ctx, const In* in, Out* out, const AxisSplit& s) {
  if (s.inner == 1 && s.chunk >= 32) {
    const int64_t rows = s.outer * s.chunks;
    if (s.chunk > 4096) {
      SumRowsKernel<In, Acc, Out, kThreads>
          <<<GridFor(ctx, rows, 1, 32), kThreads, 0, ctx.stream>>>(in, out, s);
    } else {
      SumRowsKernel<In, Acc, Out, 32>
          <<<GridFor(ctx, rows, kThreads / 32, 32), kThreads, 0, ctx.stream>>>(in, out, s);
    }
  } else {
    const int64_t tiles = (s.inner + kColTile - 1) / kColTile;
    SumColumnsKernel<In, Acc, Out>
        <<<GridFor(ctx, s.outer * s.chunks * tiles, 1, 32), kThreads, 0, ctx.stream>>>(in, out, s);
  }
  return cudaGetLastError();
}

// How many blocks a pass over this view would run without a split.
int64_t BlocksWithoutSplit(int64_t outer, int64_t len, int64_t inner) {
  if (inner == 1 && len >= 32) {
    return len > 4096 ? outer : (outer + kThreads / 32 - 1) / (kThreads / 32);
  }
  return outer * ((inner + kColTile - 1) / kColTile);
}

// The number of chunks to split the axis into (1: no split).
int64_t ChunksFor(const LaunchContext& ctx, int64_t outer, int64_t len, int64_t inner) {
  constexpr int64_t kMinChunk = 2048;  // axis elements per block, at least
  const int64_t blocks = BlocksWithoutSplit(outer, len, inner);
  const int64_t target = static_cast<int64_t>(ctx.sm_count) * 8;
  if (blocks >= target || len < 2 * kMinChunk) return 1;
  int64_t chunks = (target + blocks - 1) / blocks;
  const int64_t max_chunks = len / kMinChunk;
  if (chunks > max_chunks) chunks = max_chunks;
  return chunks < 1 ? 1 : chunks;
}

// Scratch bytes of a sum; with `run`, also launches it.
template <typename T>
cudaError_t SumAxisTyped(const LaunchContext& ctx, const T* in, int64_t outer, int64_t len,
                         int64_t inner, void* out_v, void* temp, size_t* temp_bytes, bool run) {
  using Acc = typename SumTraits<T>::Acc;
  using Out = typename SumTraits<T>::Out;
  Out* out = static_cast<Out*>(out_v);
  if constexpr (!kIsHalfStorage<T>) {
    // All elements: CUB's device-wide reduction (a null temp is its query).
    // Halves, which CUB cannot add, take the split-axis passes below.
    if (outer == 1 && inner == 1 && len > 0) {
      if (!run) temp = nullptr;
      return cub::DeviceReduce::Reduce(temp, *temp_bytes, in, out, len, AddOp<Acc>{}, Acc(0),
                                       ctx.stream);
    }
  }
  const int64_t chunks = ChunksFor(ctx, outer, len, inner);
  if (chunks == 1) {
    *temp_bytes = 0;
    if (!run || outer * inner == 0) return cudaSuccess;
    return LaunchPass<T, Acc, Out>(ctx, in, out, {outer, len, inner, 1, len});
  }
  const size_t need = static_cast<size_t>(outer * chunks * inner) * sizeof(Acc);
  if (!run) {
    *temp_bytes = need;
    return cudaSuccess;
  }
  if (temp == nullptr || *temp_bytes < need) return cudaErrorInvalidValue;
  const int64_t chunk = (len + chunks - 1) / chunks;
  Acc* partial = static_cast<Acc*>(temp);
  if (cudaError_t e = LaunchPass<T, Acc, Acc>(ctx, in, partial, {outer, len, inner, chunks, chunk});
      e != cudaSuccess) {
    return e;
  }
  return LaunchPass<Acc, Acc, Out>(ctx, partial, out, {outer, chunks, inner, 1, chunks});
}

cudaError_t Dispatch(const LaunchContext& ctx, DType t, const void* in, int64_t outer, int64_t len,
                     int64_t inner, void* out, void* temp, size_t* temp_bytes, bool run) {
  return DispatchType(t, [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    return SumAxisTyped<T>(ctx, static_cast<const T*>(in), outer, len, inner, out, temp, temp_bytes,
                           run);
  });
}

}  // namespace

size_t SumAxisTempBytes(const LaunchContext& ctx, DType t, int64_t outer, int64_t len,
                        int64_t inner) {
  size_t bytes = 0;
  if (Dispatch(ctx, t, nullptr, outer, len, inner, nullptr, nullptr, &bytes,
               /*run=*/false) != cudaSuccess) {
    return 0;
  }
  return bytes;
}

cudaError_t SumAxis(const LaunchContext& ctx, DType t, const void* in, int64_t outer, int64_t len,
                    int64_t inner, void* out, void* temp, size_t temp_bytes) {
  if (outer * inner == 0) return cudaSuccess;
  return Dispatch(ctx, t, in, outer, len, inner, out, temp, &temp_bytes,
                  /*run=*/true);
}

size_t SumAllTempBytes(const LaunchContext& ctx, DType t, int64_t n) {
  return SumAxisTempBytes(ctx, t, 1, n, 1);
}

cudaError_t SumAll(const LaunchContext& ctx, DType t, const void* in, int64_t n, void* out,
                   void* temp, size_t temp_bytes) {
  return SumAxis(ctx, t, in, 1, n, 1, out, temp, temp_bytes);
}

}  // namespace resident::cuda_kernels

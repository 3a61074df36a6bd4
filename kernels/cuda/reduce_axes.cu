// Reductions over axis sets: see reduce_axes.h for the paths and the
// accumulators. One traits struct per kind says how an element enters the
// accumulator (Load), how two combine (operator(), associative and
// commutative so CUB may use any order) and what is written (Finalize).
#include "kernels/cuda/reduce_axes.h"

#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <limits>
#include <type_traits>

#include "kernels/cuda/common.cuh"

namespace resident::cuda_kernels {
namespace {

template <typename T>
__host__ __device__ __forceinline__ bool IsNan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x != x;
  } else {
    return false;
  }
}

// Floats, float16 and bfloat16 included (they reduce in float, CT).
template <typename T>
inline constexpr bool kFloat = std::is_floating_point_v<T> || kIsHalfStorage<T>;
template <typename T>
using CT = ComputeType<T>;

// An element as its value: a bool byte reads as 0 or 1 (nonzero is true);
// a float16 / bfloat16 one as its float.
template <typename T>
__host__ __device__ __forceinline__ CT<T> Value(T x) {
  if constexpr (kIsBool<T>) {
    return static_cast<T>(x != 0);
  } else {
    return resident_load(x);
  }
}

// An accumulator into the output type: halves round once to nearest even.
template <typename Out, typename A>
__device__ __forceinline__ Out ToOut(A a) {
  if constexpr (kIsHalfStorage<Out> && std::is_same_v<A, double>) {
    return resident_store_double<Out>(a);
  } else if constexpr (kIsHalfStorage<Out>) {
    return resident_store<Out>(a);
  } else {
    return static_cast<Out>(a);
  }
}

template <ReduceKind K, typename T>
struct Traits;

template <typename T>
struct Traits<ReduceKind::kSum, T> {
  using Acc = std::conditional_t<kFloat<T>, double, uint64_t>;
  using Out = std::conditional_t<kFloat<T>, T, int64_t>;
  static __host__ __device__ Acc Identity() { return Acc(0); }
  static __host__ __device__ Acc Load(T x, int64_t) { return Widen<Acc>(x); }
  __host__ __device__ Acc operator()(Acc a, Acc b) const { return a + b; }
  static __device__ Out Finalize(Acc a, int64_t) { return ToOut<Out>(a); }
};

template <typename T>
struct Traits<ReduceKind::kProd, T> {
  using Acc = std::conditional_t<kFloat<T>, CT<T>, uint64_t>;
  using Out = std::conditional_t<kFloat<T>, T, int64_t>;
  static __host__ __device__ Acc Identity() { return Acc(1); }
  static __host__ __device__ Acc Load(T x, int64_t) { return Widen<Acc>(x); }
  __host__ __device__ Acc operator()(Acc a, Acc b) const { return a * b; }
  static __device__ Out Finalize(Acc a, int64_t) { return ToOut<Out>(a); }
};

template <typename T>
struct Traits<ReduceKind::kMean, T> {
  using Acc = double;
  using Out = std::conditional_t<kFloat<T>, T, double>;
  static __host__ __device__ Acc Identity() { return 0.0; }
  static __host__ __device__ Acc Load(T x, int64_t) { return Widen<Acc>(x); }
  __host__ __device__ Acc operator()(Acc a, Acc b) const { return a + b; }
  // m == 0: 0 / 0 is NaN, NumPy's mean of nothing.
  static __device__ Out Finalize(Acc a, int64_t m) {
    return ToOut<Out>(a / static_cast<double>(m));
  }
};

// max/min: NaN absorbs (NumPy propagates it).
template <typename T, bool kMax>
struct Extreme {
  using Acc = CT<T>;
  using Out = T;
  static __host__ __device__ Acc Identity() {
    if constexpr (kFloat<T>) {
      return kMax ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
    } else if constexpr (kIsBool<T>) {
      return kMax ? T(0) : T(1);
    } else {
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
  }
  static __host__ __device__ Acc Load(T x, int64_t) { return Value(x); }
  __host__ __device__ Acc operator()(Acc a, Acc b) const {
    if (IsNan(a)) return a;
    if (IsNan(b)) return b;
    if constexpr (kMax) {
      return a > b ? a : b;
    } else {
      return a < b ? a : b;
    }
  }
  static __device__ Out Finalize(Acc a, int64_t) { return ToOut<Out>(a); }  // exact
};
template <typename T>
struct Traits<ReduceKind::kMax, T> : Extreme<T, true> {};
template <typename T>
struct Traits<ReduceKind::kMin, T> : Extreme<T, false> {};

// A value and its position in the reduced order; i < 0 holds nothing.
template <typename T>
struct ArgPair {
  T v;
  int64_t i;
};

// argmax/argmin: the first NaN, else the first extreme (ties keep the lower
// position, so the order CUB combines in does not matter).
template <typename T, bool kMax>
struct ArgExtreme {
  using Acc = ArgPair<CT<T>>;
  using Out = int64_t;
  static __host__ __device__ Acc Identity() { return {CT<T>(0), -1}; }
  static __host__ __device__ Acc Load(T x, int64_t r) { return {Value(x), r}; }
  __host__ __device__ Acc operator()(Acc a, Acc b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool an = IsNan(a.v), bn = IsNan(b.v);
    if (an || bn) {
      if (an && bn) return a.i < b.i ? a : b;
      return an ? a : b;
    }
    const bool a_wins = kMax ? a.v > b.v : a.v < b.v;
    const bool b_wins = kMax ? b.v > a.v : b.v < a.v;
    if (a_wins) return a;
    if (b_wins) return b;
    return a.i < b.i ? a : b;
  }
  static __device__ Out Finalize(Acc a, int64_t) { return a.i; }
};
template <typename T>
struct Traits<ReduceKind::kArgmax, T> : ArgExtreme<T, true> {};
template <typename T>
struct Traits<ReduceKind::kArgmin, T> : ArgExtreme<T, false> {};

// any/all: x != 0 (NaN is true), as NumPy's truth value.
template <typename T, bool kAnyOf>
struct Truth {
  using Acc = uint32_t;
  using Out = StorageType<DType::kBool>;
  static __host__ __device__ Acc Identity() { return kAnyOf ? 0u : 1u; }
  static __host__ __device__ Acc Load(T x, int64_t) {
    return resident_load(x) != CT<T>(0) ? 1u : 0u;
  }
  __host__ __device__ Acc operator()(Acc a, Acc b) const { return kAnyOf ? (a | b) : (a & b); }
  static __device__ Out Finalize(Acc a, int64_t) { return static_cast<Out>(a); }
};
template <typename T>
struct Traits<ReduceKind::kAny, T> : Truth<T, true> {};
template <typename T>
struct Traits<ReduceKind::kAll, T> : Truth<T, false> {};

// Element r (row-major over the reduced dimensions) of output o, loaded into
// Acc: Base(o) once per output, then At(base, r) per element.
template <typename T, typename Tr>
struct Gather {
  const T* in;
  ReduceLayout l;
  __device__ int64_t Base(int64_t o) const {
    int64_t off = 0;
    for (int d = l.kept_rank - 1; d >= 0; --d) {
      const int64_t next = o / l.kept_shape[d];
      off += (o - next * l.kept_shape[d]) * l.kept_stride[d];
      o = next;
    }
    return off;
  }
  __device__ typename Tr::Acc At(int64_t base, int64_t r) const {
    if (l.reduced_rank == 1) return Tr::Load(in[base + r * l.reduced_stride[0]], r);
    const int64_t pos = r;
    int64_t off = base;
    for (int d = l.reduced_rank - 1; d >= 0; --d) {
      const int64_t next = r / l.reduced_shape[d];
      off += (r - next * l.reduced_shape[d]) * l.reduced_stride[d];
      r = next;
    }
    return Tr::Load(in[off], pos);
  }
};

template <typename T, typename Tr>
__global__ void __launch_bounds__(kThreads)
    PerOutputKernel(const Gather<T, Tr> gather, typename Tr::Out* out, int64_t n_out, int64_t m) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const Tr op{};
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < n_out;
       o += step) {
    const int64_t base = gather.Base(o);
    typename Tr::Acc acc = Tr::Identity();
    for (int64_t r = 0; r < m; ++r) acc = op(acc, gather.At(base, r));
    out[o] = Tr::Finalize(acc, m);
  }
}

// Work item w = o * chunks + c reduces elements [c * chunk, (c+1) * chunk)
// of output o with a whole block (cub::BlockReduce) into partial[w].
template <typename T, typename Tr>
__global__ void __launch_bounds__(kThreads)
    BlockChunksKernel(const Gather<T, Tr> gather, typename Tr::Acc* partial, int64_t n_out,
                      int64_t m, int64_t chunks, int64_t chunk) {
  using Acc = typename Tr::Acc;
  using BlockReduce = cub::BlockReduce<Acc, kThreads>;
  __shared__ typename BlockReduce::TempStorage storage;
  const Tr op{};
  const int64_t work = n_out * chunks;
  for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
    const int64_t o = w / chunks, c = w - (w / chunks) * chunks;
    const int64_t begin = c * chunk;
    const int64_t end = begin + chunk < m ? begin + chunk : m;
    const int64_t base = gather.Base(o);
    Acc acc = Tr::Identity();
    for (int64_t r = begin + threadIdx.x; r < end; r += blockDim.x) {
      acc = op(acc, gather.At(base, r));
    }
    const Acc total = BlockReduce(storage).Reduce(acc, op);
    if (threadIdx.x == 0) partial[w] = total;
    __syncthreads();  // storage is reused by the next work item
  }
}

// out[o] = Finalize(the chunks partials of o, combined in order).
template <typename Tr>
__global__ void __launch_bounds__(kThreads)
    FinalizeKernel(const typename Tr::Acc* partial, typename Tr::Out* out, int64_t n_out, int64_t m,
                   int64_t chunks) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const Tr op{};
  using Acc = typename Tr::Acc;
  // Loads in batches ahead of the combines, which stay in order: one
  // thread's dependent loads one at a time cost an L2 round trip each (a
  // whole-array max over 256 chunks took 25 us on an H100, three times the
  // first pass).
  constexpr int kBatch = 16;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < n_out;
       o += step) {
    const Acc* p = partial + o * chunks;
    Acc acc = Tr::Identity();
    int64_t c = 0;
    for (; c + kBatch <= chunks; c += kBatch) {
      Acc v[kBatch];
#pragma unroll
      for (int k = 0; k < kBatch; ++k) v[k] = p[c + k];
#pragma unroll
      for (int k = 0; k < kBatch; ++k) acc = op(acc, v[k]);
    }
    for (; c < chunks; ++c) acc = op(acc, p[c]);
    out[o] = Tr::Finalize(acc, m);
  }
}

constexpr int64_t kPerOutputMax = 64;  // reduced elements one thread takes on
constexpr int64_t kMinChunk = 4096;    // elements per block, at least, when splitting

// Chunks per output: enough blocks to fill the GPU (8 per SM), none shorter
// than kMinChunk.
int64_t ChunksFor(const LaunchContext& ctx, int64_t n_out, int64_t m) {
  const int64_t target = static_cast<int64_t>(ctx.sm_count > 0 ? ctx.sm_count : 1) * 8;
  if (n_out >= target || m < 2 * kMinChunk) return 1;
  int64_t chunks = (target + n_out - 1) / n_out;
  const int64_t most = m / kMinChunk;
  if (chunks > most) chunks = most;
  return chunks < 1 ? 1 : chunks;
}

// With `run` false only sets *temp_bytes; with it, launches.
template <ReduceKind K, typename T>
cudaError_t ReduceTyped(const LaunchContext& ctx, const T* in, const ReduceLayout& l, void* out_v,
                        void* temp, size_t* temp_bytes, bool run) {
  using Tr = Traits<K, T>;
  using Acc = typename Tr::Acc;
  using Out = typename Tr::Out;
  Out* out = static_cast<Out*>(out_v);
  const int64_t n_out = l.n_out, m = l.m;
  const Gather<T, Tr> gather{in, l};
  if (n_out == 0 || m <= kPerOutputMax) {
    *temp_bytes = 0;
    if (!run || n_out == 0) return cudaSuccess;
    PerOutputKernel<T, Tr>
        <<<GridFor(ctx, n_out, kThreads), kThreads, 0, ctx.stream>>>(gather, out, n_out, m);
    return cudaGetLastError();
  }
  const int64_t chunks = ChunksFor(ctx, n_out, m);
  const int64_t chunk = (m + chunks - 1) / chunks;
  const size_t need = static_cast<size_t>(n_out * chunks) * sizeof(Acc);
  if (!run) {
    *temp_bytes = need;
    return cudaSuccess;
  }
  if (temp == nullptr || *temp_bytes < need) return cudaErrorInvalidValue;
  Acc* partial = static_cast<Acc*>(temp);
  BlockChunksKernel<T, Tr><<<GridFor(ctx, n_out * chunks, 1, 32), kThreads, 0, ctx.stream>>>(
      gather, partial, n_out, m, chunks, chunk);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  FinalizeKernel<Tr>
      <<<GridFor(ctx, n_out, kThreads), kThreads, 0, ctx.stream>>>(partial, out, n_out, m, chunks);
  return cudaGetLastError();
}

template <typename T>
cudaError_t ForKind(const LaunchContext& ctx, ReduceKind kind, const T* in, const ReduceLayout& l,
                    void* out, void* temp, size_t* temp_bytes, bool run) {
  switch (kind) {
    case ReduceKind::kSum:
      return ReduceTyped<ReduceKind::kSum, T>(ctx, in, l, out, temp, temp_bytes, run);
    case ReduceKind::kProd:
      return ReduceTyped<ReduceKind::kProd, T>(ctx, in, l, out, temp, temp_bytes, run);
    case ReduceKind::kMean:
      return ReduceTyped<ReduceKind::kMean, T>(ctx, in, l, out, temp, temp_bytes, run);
    case ReduceKind::kMax:
      return ReduceTyped<ReduceKind::kMax, T>(ctx, in, l, out, temp, temp_bytes, run);
    case ReduceKind::kMin:
      return ReduceTyped<ReduceKind::kMin, T>(ctx, in, l, out, temp, temp_bytes, run);
    case ReduceKind::kArgmax:
      return ReduceTyped<ReduceKind::kArgmax, T>(ctx, in, l, out, temp, temp_bytes, run);
    case ReduceKind::kArgmin:
      return ReduceTyped<ReduceKind::kArgmin, T>(ctx, in, l, out, temp, temp_bytes, run);
    case ReduceKind::kAny:
      return ReduceTyped<ReduceKind::kAny, T>(ctx, in, l, out, temp, temp_bytes, run);
    case ReduceKind::kAll:
      return ReduceTyped<ReduceKind::kAll, T>(ctx, in, l, out, temp, temp_bytes, run);
  }
  return cudaErrorInvalidValue;
}

cudaError_t Dispatch(const LaunchContext& ctx, ReduceKind kind, DType t, const void* in,
                     const ReduceLayout& l, void* out, void* temp, size_t* temp_bytes, bool run) {
  return DispatchType(t, [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    return ForKind<T>(ctx, kind, static_cast<const T*>(in), l, out, temp, temp_bytes, run);
  });
}

}  // namespace

size_t ReduceAxesTempBytes(const LaunchContext& ctx, ReduceKind kind, DType t,
                           const ReduceLayout& layout) {
  size_t bytes = 0;
  if (Dispatch(ctx, kind, t, nullptr, layout, nullptr, nullptr, &bytes, /*run=*/false) !=
      cudaSuccess) {
    return 0;
  }
  return bytes;
}

cudaError_t ReduceAxes(const LaunchContext& ctx, ReduceKind kind, DType t, const void* in,
                       const ReduceLayout& layout, void* out, void* temp, size_t temp_bytes) {
  return Dispatch(ctx, kind, t, in, layout, out, temp, &temp_bytes, /*run=*/true);
}

}  // namespace resident::cuda_kernels

#include "kernels/cuda/select.h"

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <algorithm>
#include <cstdint>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>

#include "kernels/cuda/common.cuh"

namespace resident::cuda_kernels {
namespace {

struct IsTrue {
  __host__ __device__ int64_t operator()(uint8_t b) const { return b != 0 ? 1 : 0; }
};

// Element i's flag: cond[i], once the count has been checked (*ok).
struct CheckedFlag {
  const uint8_t* cond;
  const int* ok;
  __host__ __device__ bool operator()(int64_t i) const { return *ok != 0 && cond[i] != 0; }
};

__global__ void CheckCount(const int64_t* true_count, int64_t count, int* ok) {
  *ok = *true_count == count ? 1 : 0;
}

// An element moved by its bytes (complex128 is 16).
struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};

using Counting = thrust::counting_iterator<int64_t>;
using Flags = thrust::transform_iterator<CheckedFlag, Counting>;
using Truth = thrust::transform_iterator<IsTrue, const uint8_t*>;

size_t Align(size_t b) { return (b + 255) & ~size_t{255}; }

template <typename In, typename Out>
size_t SelectBytes(int64_t n) {
  size_t bytes = 0;
  cub::DeviceSelect::Flagged(nullptr, bytes, In{}, Flags(Counting(0), CheckedFlag{}), Out{},
                             static_cast<int64_t*>(nullptr), n);
  return bytes;
}

}  // namespace

size_t ExtractTempBytes(int64_t n) {
  size_t reduce = 0;
  cub::DeviceReduce::Sum(nullptr, reduce, Truth(nullptr, IsTrue{}), static_cast<int64_t*>(nullptr),
                         n);
  const size_t select = std::max(
      {SelectBytes<Counting, int64_t*>(n), SelectBytes<const uint8_t*, uint8_t*>(n),
       SelectBytes<const uint16_t*, uint16_t*>(n), SelectBytes<const uint32_t*, uint32_t*>(n),
       SelectBytes<const uint64_t*, uint64_t*>(n), SelectBytes<const Bytes16*, Bytes16*>(n)});
  // ok flag and selected count, then CUB's scratch.
  return 256 + Align(std::max(reduce, select));
}

cudaError_t Extract(const LaunchContext& ctx, const uint8_t* cond, const void* values,
                    int item_size, int64_t n, int64_t count, void* out, int64_t* true_count,
                    void* temp, size_t temp_bytes) {
  if (temp_bytes < 256) return cudaErrorInvalidValue;
  char* base = static_cast<char*>(temp);
  int* ok = reinterpret_cast<int*>(base);
  int64_t* selected = reinterpret_cast<int64_t*>(base + 8);
  void* cub_temp = base + 256;
  size_t cub_bytes = temp_bytes - 256;
  cudaError_t e =
      cub::DeviceReduce::Sum(cub_temp, cub_bytes, Truth(cond, IsTrue{}), true_count, n, ctx.stream);
  if (e != cudaSuccess) return e;
  CheckCount<<<1, 1, 0, ctx.stream>>>(true_count, count, ok);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  const Flags flags(Counting(0), CheckedFlag{cond, ok});
  cub_bytes = temp_bytes - 256;
  auto select = [&](auto in, auto* o) {
    return cub::DeviceSelect::Flagged(cub_temp, cub_bytes, in, flags, o, selected, n, ctx.stream);
  };
  if (values == nullptr) return select(Counting(0), static_cast<int64_t*>(out));
  switch (item_size) {
    case 1:
      return select(static_cast<const uint8_t*>(values), static_cast<uint8_t*>(out));
    case 2:
      return select(static_cast<const uint16_t*>(values), static_cast<uint16_t*>(out));
    case 4:
      return select(static_cast<const uint32_t*>(values), static_cast<uint32_t*>(out));
    case 8:
      return select(static_cast<const uint64_t*>(values), static_cast<uint64_t*>(out));
    case 16:
      return select(static_cast<const Bytes16*>(values), static_cast<Bytes16*>(out));
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace resident::cuda_kernels

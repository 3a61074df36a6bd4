// The elementwise launches of kernels/cuda/kernels.h, compiled in
// kElementwiseShards translation units (elementwise_shard<S>.cu, each the
// kinds with ElementwiseShard(kind) == S): one file instantiating every
// (kind, dtype) kernel was the build's longest compile.
#ifndef RESIDENT_KERNELS_CUDA_ELEMENTWISE_SHARD_H_
#define RESIDENT_KERNELS_CUDA_ELEMENTWISE_SHARD_H_

#include <cstdint>

#include "kernels/cuda/kernels.h"

namespace resident::cuda_kernels::elementwise_internal {

// BinaryContiguous, BinaryScalar and BinaryStrided for the kinds of shard S.
template <int S>
cudaError_t BinaryContiguousShard(const LaunchContext& ctx, DType t, ElementwiseKind op,
                                  const void* a, const void* b, void* out, int64_t n);
template <int S>
cudaError_t BinaryScalarShard(const LaunchContext& ctx, DType t, ElementwiseKind op, const void* a,
                              const void* scalar, bool scalar_on_left, void* out, int64_t n);
template <int S>
cudaError_t BinaryStridedShard(const LaunchContext& ctx, DType t, ElementwiseKind op, const void* a,
                               const void* b, void* out, const StridedLayout& layout);

}  // namespace resident::cuda_kernels::elementwise_internal

#endif  // RESIDENT_KERNELS_CUDA_ELEMENTWISE_SHARD_H_

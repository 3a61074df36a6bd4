// Host-side layout planning for the strided kernels: broadcast strides and
// dimension collapsing, so most broadcasts and transposes reach the kernels
// as 1-3 dimensions.
#ifndef RESIDENT_SERVER_DEVICE_CUDA_STRIDED_LAYOUT_H_
#define RESIDENT_SERVER_DEVICE_CUDA_STRIDED_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "kernels/cuda/kernels.h"

namespace resident::cuda_internal {

// Strides in elements of a C-contiguous array of shape `in`, broadcast to
// `out` (right-aligned, NumPy rules): one per dimension of out, 0 where `in`
// has no such dimension or extent 1. The caller has checked that `in`
// broadcasts to `out`.
std::vector<int64_t> BroadcastStrides(absl::Span<const int64_t> in, absl::Span<const int64_t> out);

// True when `in` broadcasts to `out` under NumPy's rules.
bool BroadcastsTo(absl::Span<const int64_t> in, absl::Span<const int64_t> out);

// The layout of a contiguous output of `shape` reading up to two inputs with
// the given per-dimension strides: extent-1 dimensions dropped, neighbours
// merged where every input is contiguous across them. rank <= 64 in, so the
// result always fits StridedLayout.
cuda_kernels::StridedLayout CollapseLayout(absl::Span<const int64_t> shape,
                                           absl::Span<const std::vector<int64_t>> strides);

}  // namespace resident::cuda_internal

#endif  // RESIDENT_SERVER_DEVICE_CUDA_STRIDED_LAYOUT_H_

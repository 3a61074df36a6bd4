// Reductions over any set of axes (sum, prod, mean, max, min, argmax,
// argmin, any, all) for the CUDA backend, behind plain C++ launch functions
// (see kernels.h for the conventions: the caller has validated everything).
//
// An input is described by a ReduceLayout: output o (row-major over the kept
// dimensions) reduces the m elements base(o) + off(r), r in [0, m) row-major
// over the reduced dimensions. Each reduction is one of:
//   m <= 64:      one thread per output (coalesced when the kept dimensions
//                 are innermost, as in a reduction over axis 0);
//   otherwise:    a block per (output, chunk) with cub::BlockReduce, the
//                 reduced run split into chunks (of 4096 or more) when there
//                 are too few outputs to fill the GPU (a full reduction of a
//                 large array), then one thread per output combining its
//                 chunks' partials in order;
// each gathering element (o, r) from the layout, so no copy of the input is
// made. (Device-wide cub::DeviceReduce/DeviceSegmentedReduce over 9 kinds x
// 5 dtypes took ptxas over ten minutes; BlockReduce gives the same tree.) Accumulators: sums and
// means in double (floats) or wrapping uint64 (integers, bool; means of integers in double, as
// NumPy's float64 accumulation); products in the float's own type or wrapping uint64; max/min in
// the element type, NaN-propagating; argmax/argmin as (value, position) pairs, the first NaN or the
// first extreme winning.
#ifndef RESIDENT_KERNELS_CUDA_REDUCE_AXES_H_
#define RESIDENT_KERNELS_CUDA_REDUCE_AXES_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"
#include "core/reduce_kind.h"
#include "kernels/cuda/kernels.h"

namespace resident::cuda_kernels {

// Dimensions after collapsing (the backend merges neighbours contiguous in
// the input); more than this is refused by the backend.
inline constexpr int kMaxReduceRank = 16;

struct ReduceLayout {
  int32_t kept_rank = 0, reduced_rank = 0;
  int64_t kept_shape[kMaxReduceRank] = {}, kept_stride[kMaxReduceRank] = {};
  int64_t reduced_shape[kMaxReduceRank] = {}, reduced_stride[kMaxReduceRank] = {};
  int64_t n_out = 1, m = 1;  // outputs; reduced elements per output
};

// Device scratch bytes ReduceAxes needs (0: none; pass nullptr).
size_t ReduceAxesTempBytes(const LaunchContext& ctx, ReduceKind kind, DType t,
                           const ReduceLayout& layout);
// out[o] = reduce(in, o) for o < n_out, out of the kind's result dtype
// (NumPy's). m == 0 gives the identity (sum 0, prod 1, mean NaN, any false,
// all true); max/min/argmax/argmin need m > 0. `temp` must stay allocated
// until the work is done (a stream-ordered free after the launch does that).
cudaError_t ReduceAxes(const LaunchContext& ctx, ReduceKind kind, DType t, const void* in,
                       const ReduceLayout& layout, void* out, void* temp, size_t temp_bytes);

}  // namespace resident::cuda_kernels

#endif  // RESIDENT_KERNELS_CUDA_REDUCE_AXES_H_

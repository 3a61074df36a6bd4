// Reductions over any set of axes with keepdims, as NumPy's a.sum(axis=...,
// keepdims=...) and friends. Result dtypes follow NumPy (ReduceResultType).
// Float sums and means accumulate each output's elements in row-major order
// with NumPy's pairwise summation over the gathered run, so they match NumPy
// bit for bit when the reduced axes are the innermost ones and otherwise
// differ by at most NumPy's own pairwise bound (O(log n) ulps); integer and
// bool results are exact (integers wrap as in NumPy).
#ifndef RESIDENT_KERNELS_CPU_REDUCE_AXES_H_
#define RESIDENT_KERNELS_CPU_REDUCE_AXES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/reduce_kind.h"
#include "core/shape.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

// The reduced axes of a rank-`rank` array, sorted and non-negative: nullopt
// is every axis; negative axes count from the end; a repeated or
// out-of-range axis is INVALID_ARGUMENT (NumPy's AxisError/ValueError).
// argmax/argmin take one axis or none, as NumPy.
absl::StatusOr<std::vector<int>> NormalizeAxes(ReduceKind kind, int rank,
                                               const std::optional<std::vector<int>>& axes);

// The result shape: reduced axes dropped, or kept as 1 with keepdims.
Shape ReducedShape(absl::Span<const int64_t> shape, absl::Span<const int> sorted_axes,
                   bool keepdims);

// out = reduce(a, axes, keepdims). out.dtype must be ReduceResultType and
// out.shape ReducedShape. max/min/argmax/argmin of an empty reduction is
// INVALID_ARGUMENT (NumPy raises ValueError); NaN propagates through max/min
// and argmax/argmin return the first NaN, as NumPy. Empty sums are 0, empty
// products 1, empty means NaN, any() false, all() true.
absl::Status ReduceAxes(ThreadPool* pool, ReduceKind kind, const ConstView& a,
                        const std::optional<std::vector<int>>& axes, bool keepdims,
                        const MutView& out);

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_REDUCE_AXES_H_

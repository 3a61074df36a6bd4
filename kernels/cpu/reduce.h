// Sum over all elements or one axis. Floats use NumPy's pairwise summation
// (accumulating in the input type), so float32 sums stay close to NumPy's;
// bool and int32 sum into int64, integers wrap.
#ifndef RESIDENT_KERNELS_CPU_REDUCE_H_
#define RESIDENT_KERNELS_CPU_REDUCE_H_

#include <optional>

#include "absl/status/status.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

// out = a.sum(axis) (axis removed from the shape) or a.sum() (out is 0-d).
// out.dtype must be SumResultType(a.dtype) and out.shape the reduced shape;
// a negative axis counts from the end as in NumPy. Empty sums are 0. The
// result does not depend on the number of threads.
absl::Status Sum(ThreadPool* pool, const ConstView& a, std::optional<int> axis, const MutView& out);

// NumPy's pairwise sum of p[0, n), accumulating in the element type (the
// bits of np.add.reduce over a contiguous run).
float PairwiseSumFloat(const float* p, int64_t n);
double PairwiseSumDouble(const double* p, int64_t n);

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_REDUCE_H_

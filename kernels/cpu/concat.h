// np.concatenate and np.stack of arrays of one dtype (the program layer casts
// to the promoted dtype first): a copy into a new array.
#ifndef RESIDENT_KERNELS_CPU_CONCAT_H_
#define RESIDENT_KERNELS_CPU_CONCAT_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

// The shape of np.concatenate(shapes, axis): every shape of one rank >= 1,
// equal except along axis (negative counts from the end); the summed length
// must fit in int64, and so must the result's element count. NumPy's errors
// become INVALID_ARGUMENT.
absl::StatusOr<Shape> ConcatShape(absl::Span<const Shape> shapes, int axis);

// The shape of np.stack(shapes, axis): equal shapes, a new axis of length
// shapes.size() at axis (in [-rank-1, rank]).
absl::StatusOr<Shape> StackShape(absl::Span<const Shape> shapes, int axis);

// out = np.concatenate(ins, axis); out.shape must be ConcatShape's and every
// dtype the same. stack is this with each input's shape given a 1 at axis.
absl::Status Concatenate(ThreadPool* pool, absl::Span<const ConstView> ins, int axis,
                         const MutView& out);

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_CONCAT_H_

// Axis permutation of a C-contiguous array into a new C-contiguous one.
#ifndef RESIDENT_KERNELS_CPU_TRANSPOSE_H_
#define RESIDENT_KERNELS_CPU_TRANSPOSE_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

// out = a.transpose(perm): out.shape[i] == a.shape[perm[i]]. INVALID_ARGUMENT
// for a perm that is not a permutation of a's axes or a mismatched out.
// out must not overlap a.
absl::Status Transpose(ThreadPool* pool, const ConstView& a, absl::Span<const int> perm,
                       const MutView& out);

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_TRANSPOSE_H_

// Elementwise arithmetic with NumPy broadcasting: add, subtract, multiply,
// divide, negative. Float results are bit-identical to NumPy's (plain IEEE
// operations, no FMA contraction); integer arithmetic wraps; bool add and
// multiply are logical or / and.
#ifndef RESIDENT_KERNELS_CPU_ELEMENTWISE_H_
#define RESIDENT_KERNELS_CPU_ELEMENTWISE_H_

#include "absl/status/status.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

enum class ArithOp { kAdd, kSubtract, kMultiply, kDivide };

// out = a op b, a and b broadcast to out.shape. All three share one dtype.
// Subtract on bool and divide on bool or integers are INVALID_ARGUMENT.
// out may be the very memory of a or b (same start) when that input has
// out's shape; any other overlap is the caller's problem.
absl::Status Binary(ThreadPool* pool, ArithOp op, const ConstView& a,
                    const ConstView& b, const MutView& out);

// out = -a, a broadcast to out.shape; integers wrap; bool is refused.
absl::Status Negative(ThreadPool* pool, const ConstView& a, const MutView& out);

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_ELEMENTWISE_H_

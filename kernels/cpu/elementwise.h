// Elementwise ops with NumPy broadcasting: every ElementwiseKind of the op
// table (core/elementwise_kind.h). Float arithmetic is bit-identical to
// NumPy's (plain IEEE operations, no FMA contraction), transcendentals go
// through glibc's libm; integer arithmetic wraps; bool add and multiply are
// logical or / and; bool-valued kinds (comparisons, isnan) write 0/1 of the
// compute dtype.
#ifndef RESIDENT_KERNELS_CPU_ELEMENTWISE_H_
#define RESIDENT_KERNELS_CPU_ELEMENTWISE_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/chain_runs.h"
#include "core/elementwise_kind.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

// out = kind(in[0], in[1]) for binary kinds, kind(in[0]) for unary ones,
// every input broadcast to out.shape. in.size() must be Arity(kind), and all
// share out's dtype, which ElementwiseAccepts(kind, dtype) must allow;
// INVALID_ARGUMENT otherwise (and for shapes that do not broadcast). out may
// be the very memory of an input (same start) of out's shape; any other
// overlap is the caller's problem.
//
//   const ConstView in[] = {a, b};
//   RETURN_IF_ERROR(Elementwise(pool, ElementwiseKind::kAdd, in, out));
absl::Status Elementwise(ThreadPool* pool, ElementwiseKind kind, absl::Span<const ConstView> in,
                         const MutView& out);

// One contiguous tile for fused kernels: out[k] = kind(a[k], b[k]) for k < n,
// all of `dtype`, where a one-element operand (a_one / b_one) is read at [0].
// The same per-kind arithmetic as Elementwise, with no shape checks: the
// caller (a fused loop) has planned them. b is ignored for unary kinds.
// INVALID_ARGUMENT when ElementwiseAccepts(kind, dtype) is false.
absl::Status ElementwiseTile(ElementwiseKind kind, DType dtype, const void* a, bool a_one,
                             const void* b, bool b_one, void* out, int64_t n);

// A whole one-op loop: out[k] = x[k] after `trips` times x = kind(x, c)
// (side kFirst), kind(c, x) (kSecond) or kind(x, x) (kBoth; c unused), c
// one element when c_one. Each element's chain stays in registers, so this
// is one pass over memory however many trips. Binary kinds only; out may be
// x itself. The same arithmetic as Elementwise applied `trips` times.
absl::Status ElementwiseChain(ThreadPool* pool, ElementwiseKind kind, DType dtype, ChainSide side,
                              const void* x, const void* c, bool c_one, void* out, int64_t n,
                              int64_t trips);

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_ELEMENTWISE_H_

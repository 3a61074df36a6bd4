// The elementwise kernels' dispatch, compiled in kElementwiseShards
// translation units (elementwise_shard<S>.cc, each the kinds with
// ElementwiseShard(kind) == S): one file instantiating every (kind, dtype)
// loop was the build's longest compile. elementwise.cc checks operands and
// routes each call to its kind's shard.
#ifndef RESIDENT_KERNELS_CPU_ELEMENTWISE_SHARD_H_
#define RESIDENT_KERNELS_CPU_ELEMENTWISE_SHARD_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/chain_runs.h"
#include "core/elementwise_kind.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu::elementwise_internal {

// Why `kind` cannot run in `dtype` (ElementwiseAccepts said no).
absl::Status Refused(ElementwiseKind kind, DType dtype);

// Elementwise, ElementwiseTile and ElementwiseChain (elementwise.h) for the
// kinds of shard S, after elementwise.cc's checks (real dtypes only).
template <int S>
absl::Status RunShard(ThreadPool* pool, ElementwiseKind kind, absl::Span<const ConstView> in,
                      const MutView& out);
template <int S>
absl::Status TileShard(ElementwiseKind kind, DType dtype, const void* a, bool a_one, const void* b,
                       bool b_one, void* out, int64_t n);
template <int S>
absl::Status ChainShard(ThreadPool* pool, ElementwiseKind kind, DType dtype, ChainSide side,
                        const void* x, const void* c, bool c_one, void* out, int64_t n,
                        int64_t trips);

}  // namespace resident::cpu::elementwise_internal

#endif  // RESIDENT_KERNELS_CPU_ELEMENTWISE_SHARD_H_

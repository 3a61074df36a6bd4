// The CPU backend's fused loop: the body runs op by op with the ordinary
// kernels, but on one cache-sized block of elements at a time for all
// iterations, so the data stays in cache instead of crossing memory once
// per op. Same kernels, same order of operations: bit-identical results. A
// body of one binary op on the carried value (a folded chain) runs as
// ElementwiseChain instead: each element's chain in registers.
#ifndef RESIDENT_SERVER_DEVICE_CPU_FUSED_LOOP_H_
#define RESIDENT_SERVER_DEVICE_CPU_FUSED_LOOP_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/cpu/thread_pool.h"
#include "server/device/device_op.h"

namespace resident::cpu {

// Runs FusedLoopOp's contract (device_op.h) for arrays the backend has
// checked; INVALID_ARGUMENT when params or outs do not match the spec, or
// for a step the kernels refuse.
absl::Status RunFusedLoop(ThreadPool* pool, const FusedLoopOp& op);

}  // namespace resident::cpu

#endif  // RESIDENT_SERVER_DEVICE_CPU_FUSED_LOOP_H_

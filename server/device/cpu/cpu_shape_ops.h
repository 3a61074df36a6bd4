// The CPU backend's reductions over axis sets, slices and concatenation:
// adapters from the device ops to kernels/cpu's ReduceAxes, Slice and
// Concatenate (each tested against NumPy in tests/unit).
#ifndef RESIDENT_SERVER_DEVICE_CPU_CPU_SHAPE_OPS_H_
#define RESIDENT_SERVER_DEVICE_CPU_CPU_SHAPE_OPS_H_

#include "absl/status/status.h"
#include "kernels/cpu/thread_pool.h"
#include "server/device/device_op.h"

namespace resident {

// Each refuses an output that overlaps an input (INVALID_ARGUMENT); the
// program layer always gives these ops a fresh output.
absl::Status RunReduceAxes(cpu::ThreadPool* pool, const ReduceAxesOp& op);
absl::Status RunSlice(cpu::ThreadPool* pool, const SliceOp& op);
absl::Status RunConcat(cpu::ThreadPool* pool, const ConcatOp& op);

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_CPU_CPU_SHAPE_OPS_H_

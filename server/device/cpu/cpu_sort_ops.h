// The CPU backend's argsort, take_along_axis, extract and scans: adapters from the
// device ops to kernels/cpu/sort.h, over rows of the last dimension.
#ifndef RESIDENT_SERVER_DEVICE_CPU_CPU_SORT_OPS_H_
#define RESIDENT_SERVER_DEVICE_CPU_CPU_SORT_OPS_H_

#include "absl/status/status.h"
#include "kernels/cpu/thread_pool.h"
#include "server/device/device_op.h"

namespace resident {

// Each refuses an output that overlaps an input, and shapes or dtypes the
// op does not define (INVALID_ARGUMENT).
absl::Status RunArgsort(cpu::ThreadPool* pool, const ArgsortOp& op);
absl::Status RunTakeAlongAxis(cpu::ThreadPool* pool, const TakeAlongAxisOp& op);
absl::Status RunExtract(cpu::ThreadPool* pool, const ExtractOp& op);
absl::Status RunScan(cpu::ThreadPool* pool, const ScanOp& op);

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_CPU_CPU_SORT_OPS_H_

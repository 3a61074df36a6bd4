// The CPU backend's fused loop: the body runs op by op with the ordinary
// kernels, but on one cache-sized block of elements at a time for all
// iterations, so the data stays in cache instead of crossing memory once
// per op. Same kernels, same order of operations: bit-identical results.
#ifndef RESIDENT_SERVER_DEVICE_CPU_FUSED_LOOP_H_
#define RESIDENT_SERVER_DEVICE_CPU_FUSED_LOOP_H_

#include <vector>

#include "absl/status/status.h"
#include "kernels/cpu/thread_pool.h"
#include "server/device/backend.h"

namespace resident::cpu {

absl::Status RunFusedLoop(ThreadPool* pool, const FusedLoopSpec& spec,
                          const std::vector<DeviceArray>& params,
                          std::vector<DeviceArray>& outs);

}  // namespace resident::cpu

#endif  // RESIDENT_SERVER_DEVICE_CPU_FUSED_LOOP_H_

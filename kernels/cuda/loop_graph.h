// The one kernel of a loop recorded as a CUDA graph (server/device/cuda/
// loop_graph.cc): it ends each trip by counting it and deciding, on the
// device, whether the graph's conditional WHILE node runs another.
//
// Plain C++, as kernels.h: cudaGraphConditionalHandle is a host type.
#ifndef RESIDENT_KERNELS_CUDA_LOOP_GRAPH_H_
#define RESIDENT_KERNELS_CUDA_LOOP_GRAPH_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace resident::cuda_kernels {

// The loop's device state, kLoopStateWords int64 words.
inline constexpr int kLoopTrips = 0;   // trips taken (counted by LoopStep)
inline constexpr int kLoopUntil = 1;   // the round ends at this many trips
inline constexpr int kLoopHolds = 2;   // whether the condition held after the last trip
inline constexpr int kLoopHandle = 3;  // the conditional handle LoopStep sets
inline constexpr int kLoopStateWords = 4;

// Queues one thread that counts a trip in state[kLoopTrips], stores
// whether `test` (a bool byte, or null for "always": a fixed-trip loop) is
// true in state[kLoopHolds], and sets the conditional handle in
// state[kLoopHandle] to run the body again only while the test holds and
// fewer than state[kLoopUntil] trips are done. The handle is read from
// memory, not passed: an executable graph updated from a new recording
// (cudaGraphExecUpdate) keeps the handle it was instantiated with.
cudaError_t LoopStep(cudaStream_t stream, const void* test, int64_t* state);

}  // namespace resident::cuda_kernels

#endif  // RESIDENT_KERNELS_CUDA_LOOP_GRAPH_H_

#include "kernels/cuda/loop_graph.h"

namespace resident::cuda_kernels {
namespace {

__global__ void LoopStepKernel(const unsigned char* test, long long* state) {
  const long long trips = state[kLoopTrips] + 1;
  state[kLoopTrips] = trips;
  const bool holds = test == nullptr || *test != 0;
  state[kLoopHolds] = holds ? 1 : 0;
  const auto handle = static_cast<cudaGraphConditionalHandle>(state[kLoopHandle]);
  cudaGraphSetConditional(handle, holds && trips < state[kLoopUntil] ? 1u : 0u);
}

}  // namespace

cudaError_t LoopStep(cudaStream_t stream, const void* test, int64_t* state) {
  LoopStepKernel<<<1, 1, 0, stream>>>(static_cast<const unsigned char*>(test),
                                      reinterpret_cast<long long*>(state));
  return cudaGetLastError();
}

}  // namespace resident::cuda_kernels

// Shard 1 of the elementwise kernels (kernels/cuda/elementwise_shard.h).
#include "kernels/cuda/elementwise_shard.cuh"

RESIDENT_CUDA_ELEMENTWISE_SHARD(1)

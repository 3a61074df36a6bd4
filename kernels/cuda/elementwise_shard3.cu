// Shard 3 of the elementwise kernels (kernels/cuda/elementwise_shard.h).
#include "kernels/cuda/elementwise_shard.cuh"

RESIDENT_CUDA_ELEMENTWISE_SHARD(3)

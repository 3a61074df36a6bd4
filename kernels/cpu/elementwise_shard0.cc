// Shard 0 of the elementwise loops (kernels/cpu/elementwise_shard.h).
#include "kernels/cpu/elementwise_shard_impl.h"

RESIDENT_CPU_ELEMENTWISE_SHARD(0)

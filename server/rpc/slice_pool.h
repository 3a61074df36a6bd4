// Memory for the data slices Download sends, recycled: a fresh 4 MiB
// malloc per chunk is mapped and zeroed by the kernel page by page, which
// cost more than the copy into it. A block returns to the pool only when
// gRPC drops its last reference to the slice.
#ifndef RESIDENT_SERVER_RPC_SLICE_POOL_H_
#define RESIDENT_SERVER_RPC_SLICE_POOL_H_

#include <grpcpp/support/slice.h>

#include <cstddef>

namespace resident {

// A slice of `n` writable bytes (contents undefined).
grpc::Slice PooledSlice(size_t n);

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_SLICE_POOL_H_

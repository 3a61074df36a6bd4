// Memory for the data slices Download sends, recycled: a fresh 4 MiB
// malloc per chunk is mapped and zeroed by the kernel page by page, which
// cost more than the copy into it. A block returns to the pool only when
// gRPC drops its last reference to the slice. Blocks no download took
// for a reap interval are freed (TrimSlicePool).
#ifndef RESIDENT_SERVER_RPC_SLICE_POOL_H_
#define RESIDENT_SERVER_RPC_SLICE_POOL_H_

#include <grpcpp/support/slice.h>

#include <cstddef>

namespace resident {

// A slice of `n` writable bytes (contents undefined).
grpc::Slice PooledSlice(size_t n);

// Frees the kept blocks if none was taken since the last call: called once
// a reap interval, so an idle server holds none (up to 32 MiB otherwise).
// Returns whether it freed any.
bool TrimSlicePool();

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_SLICE_POOL_H_

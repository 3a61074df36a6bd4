// 64-byte aligned host memory with a cache of freed large blocks.
//
// Faulting in fresh pages costs more than a memory-bound op on them (64 MiB
// of new pages takes longer than adding two such arrays), so freed blocks of
// 1 MiB and more are kept, keyed by size, and handed out again for a request
// of the same or a slightly smaller size. Large blocks are mapped on 2 MiB
// boundaries and advised for transparent huge pages. Thread-safe.
//
// Buffers keep the allocator alive through a shared_ptr, so they may be
// destroyed from any thread and even after the backend that made them.
//
//   auto alloc = std::make_shared<HostAllocator>(cache_limit_bytes);
//   ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buf, alloc->Allocate(bytes));
#ifndef RESIDENT_SERVER_DEVICE_CPU_HOST_ALLOCATOR_H_
#define RESIDENT_SERVER_DEVICE_CPU_HOST_ALLOCATOR_H_

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>

#include "absl/status/statusor.h"
#include "server/device/backend.h"

namespace resident {

class HostAllocator : public std::enable_shared_from_this<HostAllocator> {
 public:
  // cache_limit: most bytes of freed blocks kept for reuse.
  // max_allocation: larger requests are RESOURCE_EXHAUSTED up front (the
  // host's RAM), since overcommitted memory would fail later, on first touch.
  HostAllocator(int64_t cache_limit, int64_t max_allocation);
  ~HostAllocator();
  HostAllocator(const HostAllocator&) = delete;
  HostAllocator& operator=(const HostAllocator&) = delete;

  // A buffer of `bytes` (0 allowed: a valid, empty buffer). INVALID_ARGUMENT
  // for negative sizes; RESOURCE_EXHAUSTED when the system has no memory
  // left even after Trim().
  absl::StatusOr<std::shared_ptr<Buffer>> Allocate(int64_t bytes);
  // Frees every cached block.
  void Trim();
  // Live buffers plus cached blocks stay within `bytes` (the device's
  // budget): blocks that would take the cache past it are unmapped.
  void SetBudget(int64_t bytes);

  int64_t in_use() const;  // requested bytes of live buffers
  int64_t cached() const;  // bytes of cached free blocks

 private:
  class HostBuffer;
  struct Block {
    void* ptr;
    int64_t capacity;
  };

  // Capacity actually mapped for a request of `bytes`.
  static int64_t CapacityFor(int64_t bytes);
  static bool IsCached(int64_t capacity);
  static void* Map(int64_t capacity);
  static void Unmap(const Block& block);
  // Takes a cached block that fits `capacity`, or returns nullptr.
  void* TakeCached(int64_t capacity, int64_t* got);
  void Release(Block block, int64_t bytes);

  const int64_t cache_limit_;
  int64_t budget_;  // guarded by mu_
  const int64_t max_allocation_;
  mutable std::mutex mu_;
  int64_t in_use_ = 0;
  int64_t cached_ = 0;
  std::list<Block> lru_;  // most recently freed first
  std::multimap<int64_t, std::list<Block>::iterator> by_capacity_;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_CPU_HOST_ALLOCATOR_H_

#include "server/device/cpu/host_allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"

namespace resident {
namespace {

constexpr int64_t kAlignment = 64;
// Blocks from this size on are mmapped and cached; smaller ones are left to
// malloc, which caches small blocks itself.
constexpr int64_t kLargeBlock = int64_t{1} << 20;
constexpr int64_t kHugePage = int64_t{2} << 20;
constexpr int64_t kPage = 4096;

int64_t RoundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

}  // namespace

class HostAllocator::HostBuffer final : public Buffer {
 public:
  HostBuffer(std::shared_ptr<HostAllocator> owner, Block block, int64_t bytes)
      : owner_(std::move(owner)), block_(block), bytes_(bytes) {}
  ~HostBuffer() override { owner_->Release(block_, bytes_); }
  void* data() const override { return block_.ptr; }
  int64_t size() const override { return bytes_; }

 private:
  std::shared_ptr<HostAllocator> owner_;
  Block block_;
  int64_t bytes_;
};

HostAllocator::HostAllocator(int64_t cache_limit, int64_t max_allocation)
    : cache_limit_(cache_limit), budget_(max_allocation), max_allocation_(max_allocation) {}

void HostAllocator::SetBudget(int64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    budget_ = bytes;
  }
  Trim();
}

HostAllocator::~HostAllocator() { Trim(); }

int64_t HostAllocator::CapacityFor(int64_t bytes) {
  if (bytes < kLargeBlock) return RoundUp(std::max<int64_t>(bytes, 1), kAlignment);
  return RoundUp(bytes, kPage);
}

bool HostAllocator::IsCached(int64_t capacity) { return capacity >= kLargeBlock; }

void* HostAllocator::Map(int64_t capacity) {
  if (!IsCached(capacity)) {
    return std::aligned_alloc(kAlignment, static_cast<size_t>(capacity));
  }
  // Over-map by a huge page and cut the ends off, so the block starts on a
  // 2 MiB boundary and can be backed by transparent huge pages.
  const size_t span = static_cast<size_t>(capacity + kHugePage);
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = RoundUp(static_cast<int64_t>(start), kHugePage);
  const size_t head = aligned - start;
  const size_t tail = span - head - static_cast<size_t>(capacity);
  if (head > 0) munmap(raw, head);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + capacity), tail);
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, static_cast<size_t>(capacity), MADV_HUGEPAGE);
  return p;
}

void HostAllocator::Unmap(const Block& block) {
  if (IsCached(block.capacity)) {
    munmap(block.ptr, static_cast<size_t>(block.capacity));
  } else {
    std::free(block.ptr);
  }
}

void* HostAllocator::TakeCached(int64_t capacity, int64_t* got) {
  auto it = by_capacity_.lower_bound(capacity);
  // Reuse a block at most 1/8 larger than needed; a bigger one would waste
  // too much of itself.
  if (it == by_capacity_.end() || it->first > capacity + capacity / 8) {
    return nullptr;
  }
  const Block block = *it->second;
  lru_.erase(it->second);
  by_capacity_.erase(it);
  cached_ -= block.capacity;
  *got = block.capacity;
  return block.ptr;
}

absl::StatusOr<std::shared_ptr<Buffer>> HostAllocator::Allocate(int64_t bytes) {
  if (bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot allocate a negative size: ", bytes));
  }
  if (bytes > max_allocation_) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot allocate ", bytes,
                                                     " bytes: more than the host's ",
                                                     max_allocation_, " bytes of RAM"));
  }
  const int64_t wanted = CapacityFor(bytes);
  Block block{nullptr, wanted};
  if (IsCached(wanted)) {
    std::lock_guard<std::mutex> lock(mu_);
    block.ptr = TakeCached(wanted, &block.capacity);
  }
  if (block.ptr == nullptr) {
    block = Block{Map(wanted), wanted};
    if (block.ptr == nullptr) {
      Trim();  // the cache may hold what the system lacks
      block.ptr = Map(wanted);
    }
    if (block.ptr == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("host out of memory allocating ", bytes, " bytes"));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_use_ += bytes;
  }
  return std::shared_ptr<Buffer>(std::make_shared<HostBuffer>(shared_from_this(), block, bytes));
}

void HostAllocator::Release(Block block, int64_t bytes) {
  std::list<Block> evicted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_use_ -= bytes;
    if (IsCached(block.capacity) && block.capacity <= cache_limit_) {
      lru_.push_front(block);
      by_capacity_.emplace(block.capacity, lru_.begin());
      cached_ += block.capacity;
      // Evict the least recently freed blocks beyond the limit, and beyond
      // what the budget leaves beside the live buffers.
      const int64_t limit = std::min(cache_limit_, std::max<int64_t>(0, budget_ - in_use_));
      while (cached_ > limit) {
        const Block& old = lru_.back();
        auto range = by_capacity_.equal_range(old.capacity);
        for (auto it = range.first; it != range.second; ++it) {
          if (it->second == std::prev(lru_.end())) {
            by_capacity_.erase(it);
            break;
          }
        }
        cached_ -= old.capacity;
        evicted.splice(evicted.end(), lru_, std::prev(lru_.end()));
      }
      block.ptr = nullptr;  // kept
    }
  }
  // Unmapping outside the lock: munmap of a large block takes a while.
  if (block.ptr != nullptr) Unmap(block);
  for (const Block& b : evicted) Unmap(b);
}

void HostAllocator::Trim() {
  std::list<Block> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    all.swap(lru_);
    by_capacity_.clear();
    cached_ = 0;
  }
  for (const Block& b : all) Unmap(b);
}

int64_t HostAllocator::in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_use_;
}

int64_t HostAllocator::cached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_;
}

}  // namespace resident

#include "server/rpc/slice_pool.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace resident {
namespace {

// Blocks below this are left to malloc; at most kKept blocks are kept (a
// few downloads' double buffers), the rest are freed.
constexpr size_t kMinPooled = size_t{256} << 10;
constexpr size_t kKept = 8;

struct Block {
  size_t capacity;
  // the bytes follow
  char* bytes() { return reinterpret_cast<char*>(this + 1); }
};

class Pool {
 public:
  Block* Take(size_t n) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t i = 0; i < free_.size(); ++i) {
        if (free_[i]->capacity == n) {
          Block* b = free_[i];
          free_[i] = free_.back();
          free_.pop_back();
          taken_ = true;
          return b;
        }
      }
      taken_ = true;
    }
    void* raw = std::malloc(sizeof(Block) + n);
    return raw == nullptr ? nullptr : new (raw) Block{n};
  }

  void Give(Block* b) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (free_.size() < kKept) {
        free_.push_back(b);
        return;
      }
    }
    std::free(b);
  }

  bool Trim() {
    std::vector<Block*> gone;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const bool taken = taken_;
      taken_ = false;
      if (taken) return false;
      gone.swap(free_);
    }
    for (Block* b : gone) std::free(b);
    return !gone.empty();
  }

 private:
  std::mutex mu_;
  std::vector<Block*> free_;
  bool taken_ = false;  // a block was asked for since the last Trim
};

Pool& ThePool() {
  static Pool* pool = new Pool();  // never destroyed: slices may outlive main
  return *pool;
}

void GiveBack(void* block) { ThePool().Give(static_cast<Block*>(block)); }

}  // namespace

bool TrimSlicePool() { return ThePool().Trim(); }

grpc::Slice PooledSlice(size_t n) {
  if (n < kMinPooled) return grpc::Slice(n);
  Block* b = ThePool().Take(n);
  if (b == nullptr) return grpc::Slice(n);  // as before the pool
  return grpc::Slice(b->bytes(), n, &GiveBack, b);
}

}  // namespace resident

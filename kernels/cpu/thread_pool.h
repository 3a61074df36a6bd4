// A fixed pool of worker threads for splitting one large loop across cores.
//
// Owned by a backend instance (no global pool), so tests can run backends of
// different sizes side by side. ParallelFor may be called from several threads
// at once; the calling thread works too, so a pool of N threads uses N-1
// workers plus the caller.
//
//   ThreadPool pool(4);
//   pool.ParallelFor(n, 1 << 16, [&](int64_t begin, int64_t end) { ... });
#ifndef RESIDENT_KERNELS_CPU_THREAD_POOL_H_
#define RESIDENT_KERNELS_CPU_THREAD_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace resident::cpu {

class ThreadPool {
 public:
  // threads <= 0: one per hardware thread.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Total parallelism, the caller included.
  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) on disjoint ranges covering [0, n), each at least
  // `min_chunk` long (except a lone short one), and returns when all are done.
  // Runs inline when n is small or the pool has one thread.
  void ParallelFor(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn);

 private:
  struct Job;
  void WorkerLoop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;  // one entry per helper wanted
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// Runs fn over [0, n) on `pool`, or inline when pool is null.
inline void ParallelFor(ThreadPool* pool, int64_t n, int64_t min_chunk,
                        const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (pool == nullptr) {
    fn(0, n);
  } else {
    pool->ParallelFor(n, min_chunk, fn);
  }
}

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_THREAD_POOL_H_

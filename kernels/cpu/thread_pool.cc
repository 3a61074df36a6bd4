#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>

namespace resident::cpu {

// One ParallelFor call. Chunks are claimed through `next`, so a helper that
// wakes late simply finds nothing left; the shared_ptr keeps the job alive
// for such a helper after the caller has returned.
struct ThreadPool::Job {
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0;
  int64_t chunks = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::mutex mu;
  std::condition_variable cv;

  // Runs chunks until none are left.
  void Work() {
    for (;;) {
      const int64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks) return;
      const int64_t begin = n * c / chunks;
      const int64_t end = n * (c + 1) / chunks;
      (*fn)(begin, end);
      if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) {
        std::lock_guard<std::mutex> lock(mu);
        cv.notify_all();
      }
    }
  }
};

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) {
    threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }
  workers_.reserve(threads - 1);
  for (int i = 0; i + 1 < threads; ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job->Work();
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t min_chunk,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(min_chunk, 1);
  const int64_t chunks = std::min<int64_t>(num_threads(), std::max<int64_t>(1, n / min_chunk));
  if (chunks <= 1) {
    fn(0, n);
    return;
  }
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->n = n;
  job->chunks = chunks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int64_t i = 0; i + 1 < chunks; ++i) queue_.push_back(job);
  }
  if (chunks == 2) {
    cv_.notify_one();
  } else {
    cv_.notify_all();
  }
  job->Work();
  std::unique_lock<std::mutex> lock(job->mu);
  job->cv.wait(lock, [&] { return job->done.load(std::memory_order_acquire) == job->chunks; });
}

}  // namespace resident::cpu

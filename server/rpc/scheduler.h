// Fair scheduling of programs across tenants.
//
// Programs queue per tenant; worker threads take the next program from the
// tenants in round-robin order, skipping a tenant that already runs
// `max_concurrent_per_tenant` programs. So one tenant's flood of long
// programs occupies at most that many workers and waits its turn, while
// another tenant's small programs go to the free workers.
//
// However many tenants flood: a tenant with nothing running never waits for
// a worker. When every worker is busy and such a tenant has work queued, an
// extra worker starts for it (at most `max_extra_threads` at once); it
// serves only tenants with nothing running and ends when there are none.
// So Alice's and Carol's endless programs can fill the `threads` workers,
// and Bob's next program still starts at once, on a thread of its own,
// sharing the cores with theirs.
//
// A task whose deadline passes while it waits is not run: it is called with
// `expired = true` (promptly: a reaper thread looks for expired tasks every
// few milliseconds, even while every worker is busy) so its call can finish
// with DEADLINE_EXCEEDED.
//
//   Scheduler sched({.threads = 8, .max_concurrent_per_tenant = 2});
//   sched.Submit("alice", deadline, [](bool expired) { ... });
#ifndef RESIDENT_SERVER_RPC_SCHEDULER_H_
#define RESIDENT_SERVER_RPC_SCHEDULER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"

namespace resident {

class Scheduler {
 public:
  using Clock = std::chrono::system_clock;  // gRPC deadlines are on it
  using Task = std::function<void(bool expired)>;

  struct Options {
    int threads = 4;
    int max_concurrent_per_tenant = 2;
    // Tasks of one tenant that may wait at once; more are refused, so one
    // script's flood of calls cannot grow the queue without bound.
    int64_t max_queued_per_tenant = 1024;
    // Request bytes (Submit's `bytes`) that may wait at once, per tenant and
    // in all: each queued call holds its request's host memory.
    int64_t max_queued_bytes_per_tenant = int64_t{256} << 20;
    int64_t max_queued_bytes = int64_t{1} << 30;
    // Extra workers for tenants with nothing running, beyond `threads`.
    int max_extra_threads = 64;
  };

  explicit Scheduler(Options options);
  // Runs (or expires) every task already submitted, then joins.
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues `task` for `tenant`. It is called exactly once, on a worker
  // thread: with false when its turn comes, with true if `deadline` passed
  // first. RESOURCE_EXHAUSTED (and the task is not kept) when the tenant
  // already has max_queued_per_tenant tasks waiting, or when `bytes` (the
  // host memory the waiting call holds) would take the tenant's or the
  // server's queued bytes past their limits; the message names the flag.
  absl::Status Submit(const std::string& tenant, Clock::time_point deadline, Task task,
                      int64_t bytes = 0);

  struct Stats {
    int64_t queued = 0;                 // waiting now
    int64_t queued_bytes = 0;           // their request bytes
    int64_t running = 0;                // running now
    int64_t expired = 0;                // ever dropped for a passed deadline
    int64_t ran = 0;                    // ever started
    int64_t extra_threads = 0;          // extra workers alive now
    int64_t extra_threads_started = 0;  // ever started
  };
  Stats stats() const;
  // Programs of `tenant` running now.
  int running(const std::string& tenant) const;

  // Runs `task(false)` on the calling thread, counted as one of `tenant`'s
  // running programs, if the tenant has nothing queued and a free slot;
  // otherwise returns false without running it. For programs so small that
  // a hop to a worker thread would cost more than they do.
  bool RunInlineIfIdle(const std::string& tenant, const Task& task);

 private:
  struct Queued {
    Clock::time_point deadline;
    Task task;
    int64_t bytes = 0;
  };
  struct TenantQueue {
    std::deque<Queued> queue;
    int64_t queued_bytes = 0;
    int running = 0;
    bool in_ring = false;  // listed in ring_
  };

  // A worker: `extra` ones serve only tenants with nothing running and
  // return when there are none.
  void Loop(bool extra);
  void ReapLoop();
  // Pops the next tenant a worker should serve from the ring, or nullopt
  // (mu_ held). `idle_only`: only a tenant with nothing running.
  std::optional<std::string> NextTenant(bool idle_only);
  // Starts an extra worker if a tenant with nothing running waits and no
  // worker is free for it (mu_ held); returns finished extras to join.
  void MaybeStartExtra();
  // Joins extra workers that have ended (mu_ not held).
  void JoinFinished();
  // Puts the tenant at the back of the ring if it has work and room (mu_ held).
  void MaybeEnqueue(const std::string& tenant, TenantQueue& q);
  // Takes the front task of `q` off the queue, with its bytes (mu_ held).
  Queued PopFront(TenantQueue& q);
  // Removes every queued task whose deadline passed (mu_ held).
  std::vector<Task> TakeExpired(Clock::time_point now);

  const Options options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  absl::flat_hash_map<std::string, TenantQueue> tenants_;
  std::deque<std::string> ring_;  // tenants with queued work and a free slot
  Stats stats_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
  int idle_ = 0;      // workers waiting for work
  int starting_ = 0;  // extra workers started that have not taken work yet
  std::list<std::thread> extras_;
  std::vector<std::thread::id> finished_;  // extras that have returned
  std::condition_variable reaper_cv_;
  std::thread reaper_;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_SCHEDULER_H_

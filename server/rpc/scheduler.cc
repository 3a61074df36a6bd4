#include "server/rpc/scheduler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/thread_stack.h"

namespace resident {

namespace {
// How often idle workers look for queued tasks whose deadline passed.
constexpr std::chrono::milliseconds kExpiryScan(20);
// How long a worker is idle before its stack's touched pages go back.
constexpr std::chrono::seconds kIdleBeforeStackRelease(1);
}  // namespace

Scheduler::Scheduler(Options options) : options_(options) {
  const int n = std::max(1, options_.threads);
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { Loop(/*extra=*/false); });
  reaper_ = std::thread([this] { ReapLoop(); });
}

Scheduler::~Scheduler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  reaper_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  reaper_.join();
  std::list<std::thread> extras;
  {
    std::lock_guard<std::mutex> lock(mu_);
    extras.swap(extras_);
  }
  for (std::thread& t : extras) t.join();
}

void Scheduler::ReapLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    reaper_cv_.wait_for(lock, kExpiryScan);
    std::vector<Task> expired = TakeExpired(Clock::now());
    if (expired.empty()) continue;
    cv_.notify_all();  // the ring may have emptied
    lock.unlock();
    for (Task& t : expired) t(/*expired=*/true);
    expired.clear();
    lock.lock();
  }
}

absl::Status Scheduler::Submit(const std::string& tenant, Clock::time_point deadline, Task task,
                               int64_t bytes) {
  JoinFinished();
  {
    std::lock_guard<std::mutex> lock(mu_);
    TenantQueue& q = tenants_[tenant];
    if (static_cast<int64_t>(q.queue.size()) >= options_.max_queued_per_tenant) {
      return absl::ResourceExhaustedError(
          absl::StrCat("tenant '", tenant, "' already has ", q.queue.size(),
                       " calls waiting their turn, the server's limit (--max-queued-per-tenant); "
                       "wait for some to finish"));
    }
    if (bytes > options_.max_queued_bytes_per_tenant - q.queued_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("tenant '", tenant, "' has ", q.queued_bytes,
                       " bytes of requests waiting and this one is ", bytes,
                       ", over the server's limit of ", options_.max_queued_bytes_per_tenant,
                       " per tenant (--max-queued-bytes-per-tenant); wait for some to finish"));
    }
    if (bytes > options_.max_queued_bytes - stats_.queued_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the server has ", stats_.queued_bytes,
                       " bytes of requests waiting and this one is ", bytes, ", over its limit of ",
                       options_.max_queued_bytes, " (--max-queued-bytes); retry later"));
    }
    q.queue.push_back(Queued{deadline, std::move(task), bytes});
    q.queued_bytes += bytes;
    stats_.queued_bytes += bytes;
    ++stats_.queued;
    MaybeEnqueue(tenant, q);
    MaybeStartExtra();
  }
  cv_.notify_one();
  return absl::OkStatus();
}

void Scheduler::JoinFinished() {
  std::vector<std::thread> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_.empty()) return;
    for (const std::thread::id id : finished_) {
      for (auto it = extras_.begin(); it != extras_.end(); ++it) {
        if (it->get_id() == id) {
          done.push_back(std::move(*it));
          extras_.erase(it);
          break;
        }
      }
    }
    finished_.clear();
  }
  for (std::thread& t : done) t.join();  // each has returned or is returning
}

void Scheduler::MaybeStartExtra() {
  if (stopping_) return;
  int starved = 0;  // tenants waiting with nothing running
  for (const std::string& t : ring_) {
    auto it = tenants_.find(t);
    if (it != tenants_.end() && it->second.running == 0 && !it->second.queue.empty()) ++starved;
  }
  while (idle_ + starting_ < starved && stats_.extra_threads < options_.max_extra_threads) {
    ++starting_;
    ++stats_.extra_threads;
    ++stats_.extra_threads_started;
    extras_.emplace_back([this] { Loop(/*extra=*/true); });
  }
}

std::optional<std::string> Scheduler::NextTenant(bool idle_only) {
  for (auto it = ring_.begin(); it != ring_.end();) {
    TenantQueue& q = tenants_[*it];
    if (q.queue.empty()) {  // lost its queue to expiry
      q.in_ring = false;
      it = ring_.erase(it);
      continue;
    }
    if (!idle_only || q.running == 0) {
      q.in_ring = false;
      std::string tenant = std::move(*it);
      ring_.erase(it);
      return tenant;
    }
    ++it;
  }
  return std::nullopt;
}

void Scheduler::MaybeEnqueue(const std::string& tenant, TenantQueue& q) {
  if (q.in_ring || q.queue.empty() ||
      q.running >= std::max(1, options_.max_concurrent_per_tenant)) {
    return;
  }
  q.in_ring = true;
  ring_.push_back(tenant);
}

Scheduler::Queued Scheduler::PopFront(TenantQueue& q) {
  Queued next = std::move(q.queue.front());
  q.queue.pop_front();
  --stats_.queued;
  q.queued_bytes -= next.bytes;
  stats_.queued_bytes -= next.bytes;
  return next;
}

std::vector<Scheduler::Task> Scheduler::TakeExpired(Clock::time_point now) {
  std::vector<Task> out;
  for (auto& [tenant, q] : tenants_) {
    for (auto it = q.queue.begin(); it != q.queue.end();) {
      if (it->deadline < now) {
        q.queued_bytes -= it->bytes;
        stats_.queued_bytes -= it->bytes;
        out.push_back(std::move(it->task));
        it = q.queue.erase(it);
      } else {
        ++it;
      }
    }
  }
  stats_.queued -= static_cast<int64_t>(out.size());
  stats_.expired += static_cast<int64_t>(out.size());
  return out;
}

void Scheduler::Loop(bool extra) {
  std::unique_lock<std::mutex> lock(mu_);
  bool fresh = extra;     // an extra worker counts as starting until it looks
  bool released = false;  // its stack given back since its last task
  for (;;) {
    std::optional<std::string> picked = NextTenant(/*idle_only=*/extra);
    if (fresh) {
      --starting_;
      fresh = false;
    }
    if (!picked) {
      if (extra) break;
      if (stopping_ && stats_.queued == 0) return;
      ++idle_;
      // Idle a while after work: the stack pages the work touched go back
      // (core/thread_stack.h), off the path of a busy worker.
      if (released) {
        cv_.wait(lock);
      } else if (cv_.wait_for(lock, kIdleBeforeStackRelease) == std::cv_status::timeout) {
        lock.unlock();
        ReleaseUnusedStack();
        lock.lock();
        released = true;
      }
      --idle_;
      continue;
    }
    released = false;
    std::string tenant = *std::move(picked);
    TenantQueue& q = tenants_[tenant];
    Queued next = PopFront(q);
    if (next.deadline < Clock::now()) {  // expired since the reaper last looked
      ++stats_.expired;
      MaybeEnqueue(tenant, q);
      lock.unlock();
      next.task(/*expired=*/true);
      next.task = nullptr;
      lock.lock();
      continue;
    }
    ++stats_.running;
    ++stats_.ran;
    ++q.running;
    MaybeEnqueue(tenant, q);  // to the back: the others go first
    MaybeStartExtra();        // this worker is taken: does someone starve?
    const bool more = !ring_.empty();
    lock.unlock();
    if (more) cv_.notify_one();
    next.task(/*expired=*/false);
    next.task = nullptr;  // destroy captures outside the lock
    lock.lock();
    TenantQueue& after = tenants_[tenant];
    --after.running;
    --stats_.running;
    MaybeEnqueue(tenant, after);
    if (after.running == 0 && after.queue.empty()) tenants_.erase(tenant);
    if (stopping_) {
      cv_.notify_all();  // idle workers may exit once nothing is queued
    } else if (!ring_.empty()) {
      cv_.notify_one();
    }
  }
  // An extra worker with no tenant left to serve ends; Submit joins it.
  // Its stack waits in glibc's cache for the next thread: without the pages
  // its work touched.
  lock.unlock();
  ReleaseUnusedStack();
  lock.lock();
  --stats_.extra_threads;
  finished_.push_back(std::this_thread::get_id());
}

Scheduler::Stats Scheduler::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

int Scheduler::running(const std::string& tenant) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tenants_.find(tenant);
  return it == tenants_.end() ? 0 : it->second.running;
}

bool Scheduler::RunInlineIfIdle(const std::string& tenant, const Task& task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return false;
    auto it = tenants_.find(tenant);
    if (it != tenants_.end() &&
        (!it->second.queue.empty() ||
         it->second.running >= std::max(1, options_.max_concurrent_per_tenant))) {
      return false;
    }
    TenantQueue& q = tenants_[tenant];
    ++q.running;
    ++stats_.running;
    ++stats_.ran;
  }
  task(/*expired=*/false);
  std::lock_guard<std::mutex> lock(mu_);
  TenantQueue& after = tenants_[tenant];
  --after.running;
  --stats_.running;
  MaybeEnqueue(tenant, after);  // work queued meanwhile may start now
  MaybeStartExtra();
  if (after.running == 0 && after.queue.empty()) tenants_.erase(tenant);
  if (!ring_.empty()) cv_.notify_one();
  return true;
}

}  // namespace resident

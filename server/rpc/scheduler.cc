#include "server/rpc/scheduler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace resident {

namespace {
// How often idle workers look for queued tasks whose deadline passed.
constexpr std::chrono::milliseconds kExpiryScan(20);
}  // namespace

Scheduler::Scheduler(Options options) : options_(options) {
  const int n = std::max(1, options_.threads);
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { Loop(); });
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

absl::Status Scheduler::Submit(const std::string& tenant, Clock::time_point deadline, Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    TenantQueue& q = tenants_[tenant];
    if (static_cast<int64_t>(q.queue.size()) >= options_.max_queued_per_tenant) {
      return absl::ResourceExhaustedError(
          absl::StrCat("tenant '", tenant, "' already has ", q.queue.size(),
                       " calls waiting their turn, the server's limit (--max-queued-per-tenant); "
                       "wait for some to finish"));
    }
    q.queue.push_back(Queued{deadline, std::move(task)});
    ++stats_.queued;
    MaybeEnqueue(tenant, q);
  }
  cv_.notify_one();
  return absl::OkStatus();
}

void Scheduler::MaybeEnqueue(const std::string& tenant, TenantQueue& q) {
  if (q.in_ring || q.queue.empty() ||
      q.running >= std::max(1, options_.max_concurrent_per_tenant)) {
    return;
  }
  q.in_ring = true;
  ring_.push_back(tenant);
}

std::vector<Scheduler::Task> Scheduler::TakeExpired(Clock::time_point now) {
  std::vector<Task> out;
  for (auto& [tenant, q] : tenants_) {
    for (auto it = q.queue.begin(); it != q.queue.end();) {
      if (it->deadline < now) {
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

void Scheduler::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // A tenant in the ring may have lost its queue to expiry.
    while (!ring_.empty() && tenants_[ring_.front()].queue.empty()) {
      tenants_[ring_.front()].in_ring = false;
      ring_.pop_front();
    }
    if (ring_.empty()) {
      if (stopping_ && stats_.queued == 0) return;
      cv_.wait(lock);
      continue;
    }
    std::string tenant = std::move(ring_.front());
    ring_.pop_front();
    TenantQueue& q = tenants_[tenant];
    q.in_ring = false;
    Queued next = std::move(q.queue.front());
    q.queue.pop_front();
    --stats_.queued;
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
  if (after.running == 0 && after.queue.empty()) tenants_.erase(tenant);
  if (!ring_.empty()) cv_.notify_one();
  return true;
}

}  // namespace resident

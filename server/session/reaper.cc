#include "server/session/reaper.h"

#include <utility>

namespace resident {

Reaper::Reaper(absl::Duration interval, std::function<void()> tick)
    : interval_(interval), tick_(std::move(tick)), thread_([this] { Loop(); }) {}

Reaper::~Reaper() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Reaper::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, absl::ToChronoMilliseconds(interval_));
    if (stopping_) break;
    lock.unlock();
    tick_();
    lock.lock();
  }
}

}  // namespace resident

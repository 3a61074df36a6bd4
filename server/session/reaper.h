// Reaper: the thread that looks for idle sessions. It calls `tick` every
// `interval` until it is destroyed; what counts as idle and what to do with
// it is the tick's business (SessionManager::ReapIdle).
//
// Thread-safety: its mutex is a leaf, held only while waiting, never while
// `tick` runs; the destructor waits for a tick in progress to return, so
// `tick` must not destroy the Reaper.
//
//   Reaper reaper(absl::Seconds(1), [&] { sessions.ReapIdle(absl::Now()); });
#ifndef RESIDENT_SERVER_SESSION_REAPER_H_
#define RESIDENT_SERVER_SESSION_REAPER_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/time/time.h"

namespace resident {

class Reaper {
 public:
  Reaper(absl::Duration interval, std::function<void()> tick);
  ~Reaper();  // stops at once, even mid-interval
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;

 private:
  void Loop();

  const absl::Duration interval_;
  const std::function<void()> tick_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_REAPER_H_

// Reaper on its own: it ticks on its interval, and stops at once.
#include "server/session/reaper.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace resident {
namespace {

TEST(ReaperTest, TicksEveryInterval) {
  std::atomic<int> ticks{0};
  {
    Reaper reaper(absl::Milliseconds(5), [&] { ++ticks; });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (ticks < 3 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  EXPECT_GE(ticks.load(), 3);
}

TEST(ReaperTest, StopsAtOnceMidInterval) {
  std::atomic<int> ticks{0};
  const auto start = std::chrono::steady_clock::now();
  {
    Reaper reaper(absl::Hours(1), [&] { ++ticks; });
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(ticks.load(), 0);
}

TEST(ReaperTest, WaitsForATickInProgress) {
  std::atomic<bool> in_tick{false}, tick_done{false};
  {
    Reaper reaper(absl::Milliseconds(1), [&] {
      if (tick_done) return;
      in_tick = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      tick_done = true;
    });
    while (!in_tick) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(tick_done) << "the destructor returned while a tick ran";
}

}  // namespace
}  // namespace resident

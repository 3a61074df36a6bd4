// The fair scheduler alone (no gRPC): round-robin order across tenants, the
// per-tenant cap, a flooding tenant not delaying another's small tasks,
// queued tasks past their deadline expiring without running, extra workers
// for tenants with nothing running (and their cap), and queued bytes.
#include "server/rpc/scheduler.h"

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace resident {
namespace {

using Clock = Scheduler::Clock;
using std::chrono::milliseconds;

Clock::time_point Far() { return Clock::now() + std::chrono::hours(1); }

TEST(SchedulerTest, TenantsAreServedRoundRobin) {
  // No extra workers: the order the one worker takes tasks in.
  Scheduler sched({.threads = 1, .max_concurrent_per_tenant = 1, .max_extra_threads = 0});
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::mutex mu;
  std::vector<std::string> order;
  EXPECT_TRUE(sched.Submit("a", Far(), [&](bool) { open.wait(); }).ok());
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(sched
                    .Submit("a", Far(),
                            [&](bool) {
                              std::lock_guard<std::mutex> l(mu);
                              order.push_back("a");
                            })
                    .ok());
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(sched
                    .Submit("b", Far(),
                            [&](bool) {
                              std::lock_guard<std::mutex> l(mu);
                              order.push_back("b");
                            })
                    .ok());
  }
  gate.set_value();
  while (sched.stats().ran < 9) std::this_thread::sleep_for(milliseconds(1));
  std::this_thread::sleep_for(milliseconds(5));
  std::lock_guard<std::mutex> l(mu);
  // a's four queued behind its gate alternate with b's, b first (a went last).
  EXPECT_EQ(order, (std::vector<std::string>{"b", "a", "b", "a", "b", "a", "b", "a"}));
}

TEST(SchedulerTest, ATenantNeverRunsMoreThanItsCap) {
  Scheduler sched({.threads = 6, .max_concurrent_per_tenant = 2});
  std::atomic<int> now{0}, peak{0}, done{0};
  for (int i = 0; i < 12; ++i) {
    EXPECT_TRUE(sched
                    .Submit("a", Far(),
                            [&](bool) {
                              int n = ++now;
                              int p = peak.load();
                              while (n > p && !peak.compare_exchange_weak(p, n)) {
                              }
                              std::this_thread::sleep_for(milliseconds(10));
                              --now;
                              ++done;
                            })
                    .ok());
  }
  while (done < 12) std::this_thread::sleep_for(milliseconds(1));
  EXPECT_EQ(peak.load(), 2);
}

TEST(SchedulerTest, AFloodDoesNotDelayAnotherTenantsSmallTasks) {
  // Tenant a queues 40 tasks of 250 ms (10 s of work; at its cap of 2, 5 s
  // of wall time). Tenant b's small tasks must each finish within 100 ms.
  Scheduler sched({.threads = 4, .max_concurrent_per_tenant = 2});
  std::atomic<bool> stop{false};
  for (int i = 0; i < 40; ++i) {
    EXPECT_TRUE(sched
                    .Submit("a", Far(),
                            [&](bool) {
                              for (int t = 0; t < 25 && !stop; ++t)
                                std::this_thread::sleep_for(milliseconds(10));
                            })
                    .ok());
  }
  std::this_thread::sleep_for(milliseconds(20));
  for (int i = 0; i < 10; ++i) {
    const auto start = std::chrono::steady_clock::now();
    std::promise<void> done;
    EXPECT_TRUE(sched.Submit("b", Far(), [&](bool) { done.set_value(); }).ok());
    ASSERT_EQ(done.get_future().wait_for(milliseconds(100)), std::future_status::ready)
        << "b's task " << i << " waited behind a's flood";
    EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(100));
    EXPECT_LE(sched.running("a"), 2);
  }
  EXPECT_GT(sched.stats().queued, 20) << "a's flood should still be queued";
  stop = true;  // the rest of a's tasks end at once
}

TEST(SchedulerTest, QueuedTasksPastTheirDeadlineExpireWithoutRunning) {
  // No extra workers, so b's task waits (an extra one would run it).
  Scheduler sched({.threads = 1, .max_concurrent_per_tenant = 1, .max_extra_threads = 0});
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  EXPECT_TRUE(sched.Submit("a", Far(), [&](bool) { open.wait(); }).ok());
  struct Opener {
    std::promise<void>& p;
    ~Opener() { p.set_value(); }
  } opener{gate};  // even when an assertion below returns early
  std::promise<bool> result;
  const auto start = Clock::now();
  EXPECT_TRUE(
      sched.Submit("b", start + milliseconds(50), [&](bool expired) { result.set_value(expired); })
          .ok());
  std::future<bool> f = result.get_future();
  // Expired while the only worker is still blocked: promptly, not when it frees.
  ASSERT_EQ(f.wait_for(milliseconds(1000)), std::future_status::ready);
  EXPECT_TRUE(f.get());
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
  EXPECT_EQ(sched.stats().expired, 1);
}

TEST(SchedulerTest, DestructionRunsWhatIsQueued) {
  std::atomic<int> ran{0};
  {
    Scheduler sched({.threads = 2, .max_concurrent_per_tenant = 1});
    for (int i = 0; i < 10; ++i) {
      EXPECT_TRUE(sched
                      .Submit(i % 2 ? "a" : "b", Far(),
                              [&](bool expired) {
                                if (!expired) ++ran;
                              })
                      .ok());
    }
  }
  EXPECT_EQ(ran.load(), 10);
}

TEST(SchedulerTest, AFullTenantQueueRefusesMoreAndOthersStillQueue) {
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  Scheduler sched({.threads = 1, .max_concurrent_per_tenant = 1, .max_queued_per_tenant = 3});
  EXPECT_TRUE(sched.Submit("a", Far(), [&](bool) { open.wait(); }).ok());
  while (sched.stats().running < 1) std::this_thread::sleep_for(milliseconds(1));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(sched.Submit("a", Far(), [](bool) {}).ok());
  absl::Status refused = sched.Submit("a", Far(), [](bool) { ADD_FAILURE() << "ran"; });
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("--max-queued-per-tenant"), absl::string_view::npos);
  EXPECT_TRUE(sched.Submit("b", Far(), [](bool) {}).ok());
  gate.set_value();
  while (sched.stats().ran < 5) std::this_thread::sleep_for(milliseconds(1));
}

// Every worker is held by a's and c's endless tasks: b, with nothing
// running, still starts at once on an extra worker, which ends after.
TEST(SchedulerTest, ATenantWithNothingRunningGetsAnExtraWorker) {
  Scheduler sched({.threads = 2, .max_concurrent_per_tenant = 2});
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  struct Opener {
    std::promise<void>& p;
    ~Opener() { p.set_value(); }
  } opener{gate};
  for (const char* t : {"a", "a", "c", "c"}) {
    EXPECT_TRUE(sched.Submit(t, Far(), [&](bool) { open.wait(); }).ok());
  }
  while (sched.stats().running < 2) std::this_thread::sleep_for(milliseconds(1));
  for (int i = 0; i < 5; ++i) {
    std::promise<void> done;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(sched.Submit("b", Far(), [&](bool) { done.set_value(); }).ok());
    ASSERT_EQ(done.get_future().wait_for(milliseconds(1000)), std::future_status::ready)
        << "b waited for a's or c's workers";
    EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(100));
  }
  // Neither a nor c waits with nothing running (which of their tasks took
  // the two workers and which an extra one depends on the interleaving).
  const auto start = std::chrono::steady_clock::now();
  while ((sched.running("a") < 1 || sched.running("c") < 1) &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(2)) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_GE(sched.running("a"), 1);
  EXPECT_GE(sched.running("c"), 1);
  EXPECT_GE(sched.stats().extra_threads_started, 1);  // at least b's
  EXPECT_LE(sched.running("a"), 2);
}

TEST(SchedulerTest, ExtraWorkersAreCappedAndEndWhenIdle) {
  Scheduler sched({.threads = 1, .max_concurrent_per_tenant = 1, .max_extra_threads = 1});
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::atomic<int> ran{0};
  for (const char* t : {"a", "b", "c"}) {
    EXPECT_TRUE(sched
                    .Submit(t, Far(),
                            [&](bool) {
                              ++ran;
                              open.wait();
                            })
                    .ok());
  }
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(ran.load(), 2) << "one worker and one extra; c waits";
  EXPECT_EQ(sched.stats().extra_threads, 1);
  gate.set_value();
  while (ran < 3) std::this_thread::sleep_for(milliseconds(1));
  const auto start = std::chrono::steady_clock::now();
  while (sched.stats().extra_threads > 0 &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_EQ(sched.stats().extra_threads, 0) << "an extra worker with nothing to do ends";
}

TEST(SchedulerTest, QueuedBytesAreBoundedPerTenantAndInAll) {
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  Scheduler sched({.threads = 1,
                   .max_concurrent_per_tenant = 1,
                   .max_queued_bytes_per_tenant = 100,
                   .max_queued_bytes = 150,
                   .max_extra_threads = 0});
  EXPECT_TRUE(sched.Submit("a", Far(), [&](bool) { open.wait(); }).ok());
  while (sched.stats().running < 1) std::this_thread::sleep_for(milliseconds(1));
  EXPECT_TRUE(sched
                  .Submit(
                      "a", Far(), [](bool) {}, 60)
                  .ok());
  absl::Status mine = sched.Submit(
      "a", Far(), [](bool) { ADD_FAILURE() << "ran"; }, 50);
  EXPECT_EQ(mine.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(mine.message().find("--max-queued-bytes-per-tenant"), absl::string_view::npos);
  EXPECT_TRUE(sched
                  .Submit(
                      "b", Far(), [](bool) {}, 80)
                  .ok());
  absl::Status all = sched.Submit(
      "c", Far(), [](bool) { ADD_FAILURE() << "ran"; }, 20);
  EXPECT_EQ(all.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(all.message().find("--max-queued-bytes)"), absl::string_view::npos);
  EXPECT_EQ(sched.stats().queued_bytes, 140);
  gate.set_value();
  while (sched.stats().ran < 3) std::this_thread::sleep_for(milliseconds(1));
  EXPECT_EQ(sched.stats().queued_bytes, 0);
  EXPECT_TRUE(sched
                  .Submit(
                      "a", Far(), [](bool) {}, 100)
                  .ok())
      << "the bytes came back";
}

}  // namespace
}  // namespace resident

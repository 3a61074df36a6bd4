// Long single ops that stop early when their program must stop.
//
// The executor checks for a deadline or a cancelled call between ops; one
// op that runs for seconds (a 4096^2 matmul on the CPU) would still run to
// its end. A backend that runs ops on the calling thread polls
// InterruptRequested() between blocks of such an op and then fails it with
// Interrupted(); the executor, which installed the check for the program
// with ScopedInterruptCheck, reports the real reason (DEADLINE_EXCEEDED,
// CANCELLED) instead.
//
// Thread-safety: the check is per thread; install it on the thread that
// runs the ops.
//
//   ScopedInterruptCheck scope([&] { return !check_continue().ok(); });
//   ... backend.Run(stream, MatmulOp{...}) ...   // polls InterruptRequested()
#ifndef RESIDENT_SERVER_DEVICE_INTERRUPT_H_
#define RESIDENT_SERVER_DEVICE_INTERRUPT_H_

#include <functional>

#include "absl/status/status.h"

namespace resident {

class ScopedInterruptCheck {
 public:
  // `check` returns true once the ops of this thread should stop.
  explicit ScopedInterruptCheck(std::function<bool()> check);
  ~ScopedInterruptCheck();
  ScopedInterruptCheck(const ScopedInterruptCheck&) = delete;
  ScopedInterruptCheck& operator=(const ScopedInterruptCheck&) = delete;

 private:
  std::function<bool()> check_;
  const std::function<bool()>* outer_;
};

// Whether the innermost check of this thread asks to stop (false if none).
bool InterruptRequested();
// This thread's innermost check as a function other threads may call (an
// op's helper threads) while the op runs inside the check's scope.
std::function<bool()> CurrentInterruptCheck();
// The status of an op stopped early, and the test for it.
absl::Status Interrupted();
bool IsInterrupted(const absl::Status& status);

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_INTERRUPT_H_

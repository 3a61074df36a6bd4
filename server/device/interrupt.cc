#include "server/device/interrupt.h"

#include <utility>

namespace resident {
namespace {

constexpr char kInterrupted[] = "the op was stopped between blocks of its work";
thread_local const std::function<bool()>* g_check = nullptr;

}  // namespace

ScopedInterruptCheck::ScopedInterruptCheck(std::function<bool()> check)
    : check_(std::move(check)), outer_(g_check) {
  g_check = &check_;
}

ScopedInterruptCheck::~ScopedInterruptCheck() { g_check = outer_; }

bool InterruptRequested() { return g_check != nullptr && *g_check && (*g_check)(); }

std::function<bool()> CurrentInterruptCheck() {
  const std::function<bool()>* check = g_check;
  if (check == nullptr || !*check) return {};
  return [check] { return (*check)(); };
}

absl::Status Interrupted() { return absl::CancelledError(kInterrupted); }

bool IsInterrupted(const absl::Status& status) {
  return status.code() == absl::StatusCode::kCancelled && status.message() == kInterrupted;
}

}  // namespace resident

#include "server/device/memory_budget.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace resident {

MemoryBudget::Reservation::Reservation(Reservation&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)),
      remaining_(std::exchange(other.remaining_, 0)) {}

MemoryBudget::Reservation& MemoryBudget::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    if (budget_ != nullptr) budget_->Unreserve(remaining_);
    budget_ = std::exchange(other.budget_, nullptr);
    remaining_ = std::exchange(other.remaining_, 0);
  }
  return *this;
}

MemoryBudget::Reservation::~Reservation() {
  if (budget_ != nullptr) budget_->Unreserve(remaining_);
}

int64_t MemoryBudget::used() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

int64_t MemoryBudget::reserved() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reserved_;
}

absl::StatusOr<MemoryBudget::Reservation> MemoryBudget::Reserve(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes < 0 || bytes > limit_ - used_ - reserved_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("needs ", bytes, " bytes of device memory; ", limit_ - used_ - reserved_,
                     " of the server's limit of ", limit_, " bytes (--max-memory) are free"));
  }
  reserved_ += bytes;
  return Reservation(this, bytes);
}

absl::Status MemoryBudget::Charge(int64_t bytes, Reservation* reservation) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t from_reservation = 0;
  if (reservation != nullptr && reservation->budget_ == this) {
    from_reservation = std::min(bytes, reservation->remaining_);
  }
  const int64_t rest = bytes - from_reservation;
  if (rest > limit_ - used_ - reserved_) {
    return absl::ResourceExhaustedError(absl::StrCat("allocating ", bytes,
                                                     " bytes would exceed the server's limit of ",
                                                     limit_, " bytes (--max-memory)"));
  }
  if (from_reservation > 0) {
    reservation->remaining_ -= from_reservation;
    reserved_ -= from_reservation;
  }
  used_ += bytes;
  return absl::OkStatus();
}

void MemoryBudget::Release(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  used_ -= bytes;
}

void MemoryBudget::Unreserve(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  reserved_ -= bytes;
}

}  // namespace resident

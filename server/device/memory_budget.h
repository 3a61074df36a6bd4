// The server's own accounting of device bytes, enforcing --max-memory before
// anything is allocated.
//
//   MemoryBudget budget(1 << 30);
//   ASSIGN_OR_RETURN(auto reservation, budget.Reserve(plan.peak_bytes));
//   ... allocations charged against `reservation` cannot fail for budget ...
#ifndef RESIDENT_SERVER_DEVICE_MEMORY_BUDGET_H_
#define RESIDENT_SERVER_DEVICE_MEMORY_BUDGET_H_

#include <cstdint>
#include <mutex>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace resident {

class MemoryBudget {
 public:
  // Headroom set aside for one program; what it does not use returns to the
  // budget when it is destroyed.
  class Reservation {
   public:
    Reservation() = default;
    Reservation(Reservation&& other) noexcept;
    Reservation& operator=(Reservation&& other) noexcept;
    ~Reservation();
    int64_t remaining() const { return remaining_; }

   private:
    friend class MemoryBudget;
    Reservation(MemoryBudget* budget, int64_t bytes) : budget_(budget), remaining_(bytes) {}
    MemoryBudget* budget_ = nullptr;
    int64_t remaining_ = 0;
  };

  explicit MemoryBudget(int64_t limit_bytes) : limit_(limit_bytes) {}

  int64_t limit() const { return limit_; }
  // Bytes charged to live buffers.
  int64_t used() const;
  // Bytes reserved and not yet charged.
  int64_t reserved() const;

  // Sets aside `bytes`; RESOURCE_EXHAUSTED (naming the limit) if used plus
  // reserved plus bytes would exceed it.
  absl::StatusOr<Reservation> Reserve(int64_t bytes);
  // Charges a new buffer, drawing first on `reservation` (may be null), then
  // on free budget; RESOURCE_EXHAUSTED if neither covers it.
  absl::Status Charge(int64_t bytes, Reservation* reservation);
  // Returns a freed buffer's bytes.
  void Release(int64_t bytes);

 private:
  void Unreserve(int64_t bytes);
  const int64_t limit_;
  mutable std::mutex mu_;
  int64_t used_ = 0;
  int64_t reserved_ = 0;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_MEMORY_BUDGET_H_

#include "server/device/device.h"

#include <utility>

#include "core/status_macros.h"

namespace resident {
namespace {

// Keeps the backend's buffer alive and returns its bytes to the budget.
class ChargedBuffer final : public Buffer {
 public:
  ChargedBuffer(std::shared_ptr<Buffer> inner, MemoryBudget* budget)
      : inner_(std::move(inner)), budget_(budget) {}
  ~ChargedBuffer() override {
    const int64_t bytes = inner_->size();
    inner_.reset();
    budget_->Release(bytes);
  }
  void* data() const override { return inner_->data(); }
  int64_t size() const override { return inner_->size(); }
  const Buffer* backing() const override { return inner_->backing(); }

 private:
  std::shared_ptr<Buffer> inner_;
  MemoryBudget* budget_;
};

}  // namespace

Device::Device(std::unique_ptr<Backend> backend, int64_t limit_bytes)
    : backend_(std::move(backend)),
      budget_(limit_bytes > 0 ? limit_bytes : backend_->memory().total) {}

absl::StatusOr<std::shared_ptr<Buffer>> Device::Allocate(int64_t bytes, Stream& stream,
                                                         MemoryBudget::Reservation* reservation) {
  RETURN_IF_ERROR(budget_.Charge(bytes, reservation));
  absl::StatusOr<std::shared_ptr<Buffer>> raw = backend_->Allocate(bytes, stream);
  if (!raw.ok()) {
    budget_.Release(bytes);
    return raw.status();
  }
  return std::shared_ptr<Buffer>(std::make_shared<ChargedBuffer>(*std::move(raw), &budget_));
}

}  // namespace resident

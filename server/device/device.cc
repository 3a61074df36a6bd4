#include "server/device/device.h"

#include <utility>

#include "core/status_macros.h"

namespace resident {
namespace {

// Keeps the backend's buffer alive and returns its bytes to the budget.
class ChargedBuffer final : public Buffer {
 public:
  ChargedBuffer(std::shared_ptr<Buffer> inner, Device* device)
      : inner_(std::move(inner)), device_(device), budget_(&device->budget()) {}
  ~ChargedBuffer() override {
    const int64_t bytes = inner_->size();
    inner_.reset();
    budget_->Release(bytes);
  }
  void* data() const override { return inner_->data(); }
  int64_t size() const override { return inner_->size(); }
  const Buffer* backing() const override { return inner_->backing(); }
  Device* device() const { return device_; }

 private:
  std::shared_ptr<Buffer> inner_;
  Device* device_;
  MemoryBudget* budget_;
};

// The device whose allocations on this thread are in an arena (ArenaScope).
thread_local const Device* tl_arena_device = nullptr;

}  // namespace

Device::ArenaScope::ArenaScope(Device& device) : previous_(tl_arena_device) {
  tl_arena_device = &device;
}

Device::ArenaScope::~ArenaScope() { tl_arena_device = previous_; }

Device::Device(std::unique_ptr<Backend> backend, int64_t limit_bytes, int index, std::string name)
    : backend_(std::move(backend)),
      budget_(limit_bytes > 0 ? limit_bytes : backend_->memory().total),
      index_(index),
      name_(name.empty() ? backend_->name() : std::move(name)) {
  backend_->SetMemoryLimit(budget_.limit());
}

bool Device::TrimIfIdle() {
  const int64_t n = allocations();
  const bool idle = n == seen_allocations_ && budget_.reserved() == 0;
  if (n != seen_allocations_) trimmed_ = false;
  seen_allocations_ = n;
  if (!idle || trimmed_) return false;
  backend_->Trim();
  trimmed_ = true;
  return true;
}

absl::StatusOr<std::shared_ptr<Buffer>> Device::Allocate(int64_t bytes, Stream& stream,
                                                         MemoryBudget::Reservation* reservation) {
  if (tl_arena_device == this) {
    // A block of an arena charged when it was allocated.
    allocations_.fetch_add(1, std::memory_order_relaxed);
    return backend_->Allocate(bytes, stream);
  }
  RETURN_IF_ERROR(budget_.Charge(bytes, reservation));
  absl::StatusOr<std::shared_ptr<Buffer>> raw = backend_->Allocate(bytes, stream);
  if (!raw.ok()) {
    budget_.Release(bytes);
    return raw.status();
  }
  allocations_.fetch_add(1, std::memory_order_relaxed);
  return std::shared_ptr<Buffer>(std::make_shared<ChargedBuffer>(*std::move(raw), this));
}

absl::StatusOr<DeviceArray> Device::CopyFrom(const DeviceArray& src, Stream& stream,
                                             MemoryBudget::Reservation* reservation) {
  RETURN_IF_ERROR(CheckHeld(src, "peer copy source"));
  const int64_t bytes = src.nbytes();
  DeviceArray out{nullptr, src.dtype, src.shape};
  ASSIGN_OR_RETURN(out.buffer, Allocate(bytes, stream, reservation));
  if (src.buffer != nullptr) {
    RETURN_IF_ERROR(stream.CopyFromPeer(*src.buffer, *out.buffer, bytes));
  }
  if (DeviceOf(src, this) != this) {
    peer_copies_.fetch_add(1, std::memory_order_relaxed);
    peer_copy_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  return out;
}

Device* DeviceOf(const Buffer& buffer) {
  const auto* charged = dynamic_cast<const ChargedBuffer*>(&buffer);
  return charged != nullptr ? charged->device() : nullptr;
}

Device* DeviceOf(const DeviceArray& array, Device* fallback) {
  if (array.buffer == nullptr) return fallback;
  Device* d = DeviceOf(*array.buffer);
  return d != nullptr ? d : fallback;
}

}  // namespace resident

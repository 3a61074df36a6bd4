#include "server/session/transfer.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/session/session_device.h"
#include "server/session/table_limits.h"

namespace resident {

// --- TransferSlots ------------------------------------------------------------

TransferSlots::TransferSlots(int64_t max_per_tenant) : max_per_tenant_(max_per_tenant) {}

absl::StatusOr<std::shared_ptr<void>> TransferSlots::Take(const std::string& tenant) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t& n = in_flight_[tenant];
  if (n >= max_per_tenant_) {
    return TenantLimitReached(tenant, n, "uploads and downloads in flight", "the server's limit",
                              "--max-transfers-per-tenant", "finish some first");
  }
  ++n;
  return std::shared_ptr<void>(nullptr, [this, tenant](void*) {
    std::lock_guard<std::mutex> lock(mu_);
    if (--in_flight_[tenant] <= 0) in_flight_.erase(tenant);
  });
}

int64_t TransferSlots::InFlight(const std::string& tenant) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = in_flight_.find(tenant);
  return it == in_flight_.end() ? 0 : it->second;
}

// --- Upload -----------------------------------------------------------------

Upload::Upload(Device& device, std::shared_ptr<Stream> stream, DeviceArray array,
               std::unique_ptr<QuotaHold> hold, std::shared_ptr<void> slot, Finisher finish)
    : device_(device),
      finish_(std::move(finish)),
      array_(std::move(array)),
      stream_(std::move(stream)),
      hold_(std::move(hold)),
      slot_(std::move(slot)) {}

Upload::~Upload() = default;

absl::Status Upload::Append(std::string_view bytes) {
  const int64_t total = array_.nbytes();
  if (static_cast<int64_t>(bytes.size()) > total - received_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "upload carries more than the ", total, " bytes its shape ", ShapeString(array_.shape),
        " and dtype ", DTypeName(array_.dtype), " declare"));
  }
  if (bytes.empty()) return absl::OkStatus();
  // Waits for the copy: the chunk's memory is the caller's only until we return.
  RETURN_IF_ERROR(WriteToDevice(device_, *stream_, bytes.data(), *array_.buffer, received_,
                                static_cast<int64_t>(bytes.size())));
  received_ += static_cast<int64_t>(bytes.size());
  return absl::OkStatus();
}

absl::Status Upload::Append(absl::Span<const std::string_view> pieces) {
  int64_t n = 0;
  for (std::string_view p : pieces) n += static_cast<int64_t>(p.size());
  const int64_t total = array_.nbytes();
  if (n > total - received_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "upload carries more than the ", total, " bytes its shape ", ShapeString(array_.shape),
        " and dtype ", DTypeName(array_.dtype), " declare"));
  }
  if (n == 0) return absl::OkStatus();
  int64_t offset = received_;
  absl::Status copied;
  for (std::string_view p : pieces) {
    if (p.empty()) continue;
    copied =
        stream_->CopyToDevice(p.data(), *array_.buffer, offset, static_cast<int64_t>(p.size()));
    if (!copied.ok()) break;
    offset += static_cast<int64_t>(p.size());
  }
  // Waits for the copies even after a failed one: the pieces' memory is
  // the caller's only until we return.
  absl::Status synced = stream_->Synchronize();
  RETURN_IF_ERROR(copied);
  RETURN_IF_ERROR(synced);
  received_ = offset;
  return absl::OkStatus();
}

absl::StatusOr<ArrayDescription> Upload::Finish() {
  const int64_t total = array_.nbytes();
  if (received_ != total) {
    return absl::InvalidArgumentError(absl::StrCat(
        "upload ended after ", received_, " of the ", total, " bytes its shape ",
        ShapeString(array_.shape), " and dtype ", DTypeName(array_.dtype), " declare"));
  }
  const DeviceArray array = std::move(array_);
  ASSIGN_OR_RETURN(HandleId id, finish_(array));
  hold_.reset();  // the array is now charged to the tenant itself
  return Describe(id, array);
}

// --- Download ---------------------------------------------------------------

Download::Download(Device& device, std::shared_ptr<Stream> stream, DeviceArray array,
                   ArrayDescription description, std::shared_ptr<void> slot)
    : device_(device),
      stream_(std::move(stream)),
      array_(std::move(array)),
      description_(std::move(description)),
      slot_(std::move(slot)) {}

absl::Status Download::Read(int64_t offset, int64_t size, void* dst) {
  if (offset < 0 || size < 0 || offset > array_.nbytes() - size) {
    return absl::OutOfRangeError("read past the end of the array");
  }
  if (size == 0) return absl::OkStatus();  // an empty array may have no buffer
  return ReadFromDevice(device_, *stream_, *array_.buffer, offset, dst, size);
}

}  // namespace resident

// Transfers: an Upload fills a new device array from chunks of bytes, a
// Download reads one out in pieces, and TransferSlots bounds how many of a
// tenant's are in flight (each holds up to two chunks of host memory while
// its client reads or writes).
//
// Thread-safety: an Upload or a Download is used by one caller at a time.
// TransferSlots locks itself; its mutex is a leaf (nothing else is locked
// while it is held), so slots may be taken and given back from anywhere.
// Every transfer must be destroyed before the SessionManager (or the
// slots, ledger and device) it came from.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Upload> up, sessions.BeginUpload(t, s, dtype, shape));
//   for (std::string_view chunk : chunks) RETURN_IF_ERROR(up->Append(chunk));
//   ASSIGN_OR_RETURN(ArrayDescription a, up->Finish());
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Download> d, sessions.BeginDownload(t, s, handle));
//   RETURN_IF_ERROR(d->Read(0, d->description().nbytes, dst));
#ifndef RESIDENT_SERVER_SESSION_TRANSFER_H_
#define RESIDENT_SERVER_SESSION_TRANSFER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/device/device.h"
#include "server/session/array_description.h"
#include "server/session/tenant_ledger.h"

namespace resident {

// At most max_per_tenant transfers of one tenant at once.
class TransferSlots {
 public:
  explicit TransferSlots(int64_t max_per_tenant);
  // One more transfer of the tenant, given back when the last copy of the
  // result is destroyed; RESOURCE_EXHAUSTED naming the flag at the limit.
  absl::StatusOr<std::shared_ptr<void>> Take(const std::string& tenant);
  int64_t InFlight(const std::string& tenant) const;

 private:
  const int64_t max_per_tenant_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, int64_t> in_flight_;
};

// An upload in progress: bytes arrive in order; Finish registers the array.
// Destroying an unfinished upload frees its buffer.
class Upload {
 public:
  // Registers the complete array (as a handle of the session); on error
  // the upload fails and the array is freed.
  using Finisher = std::function<absl::StatusOr<HandleId>(const DeviceArray&)>;

  // Made by SessionManager::BeginUpload: `array` is allocated and its
  // bytes and one array are held in the tenant's quota until Finish.
  Upload(Device& device, std::shared_ptr<Stream> stream, DeviceArray array,
         std::unique_ptr<QuotaHold> hold, std::shared_ptr<void> slot, Finisher finish);
  ~Upload();

  // Appends the next bytes; INVALID_ARGUMENT past the declared size.
  absl::Status Append(std::string_view bytes);
  // Appends the pieces in order, waiting for the device once: a message
  // arrives as many small slices, and a synchronise per slice would cost a
  // GPU more than the copies.
  absl::Status Append(absl::Span<const std::string_view> pieces);
  // INVALID_ARGUMENT unless exactly the declared bytes arrived.
  absl::StatusOr<ArrayDescription> Finish();
  int64_t received() const { return received_; }

 private:
  Device& device_;
  Finisher finish_;
  DeviceArray array_;
  std::shared_ptr<Stream> stream_;
  int64_t received_ = 0;
  std::unique_ptr<QuotaHold> hold_;
  std::shared_ptr<void> slot_;  // one of the tenant's transfers in flight
};

// A download: the array is held (it stays valid even if released) and read
// in pieces.
class Download {
 public:
  // Made by SessionManager::BeginDownload.
  Download(Device& device, std::shared_ptr<Stream> stream, DeviceArray array,
           ArrayDescription description, std::shared_ptr<void> slot);

  const ArrayDescription& description() const { return description_; }
  // Copies bytes [offset, offset + size) into dst; OUT_OF_RANGE past the end.
  absl::Status Read(int64_t offset, int64_t size, void* dst);

 private:
  Device& device_;
  std::shared_ptr<Stream> stream_;
  DeviceArray array_;
  ArrayDescription description_;
  std::shared_ptr<void> slot_;  // one of the tenant's transfers in flight
};

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_TRANSFER_H_

// A Backend together with the server's memory budget: the one object the
// program and session layers allocate through.
//
//   Device device(*CreateBackend("auto"), /*limit_bytes=*/0);
//   std::unique_ptr<Stream> stream = device.backend().NewStream();
//   ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buf, device.Allocate(bytes, *stream));
//   RETURN_IF_ERROR(device.backend().Run(*stream, FillOp{Scalar::Int(0), &array}));
#ifndef RESIDENT_SERVER_DEVICE_DEVICE_H_
#define RESIDENT_SERVER_DEVICE_DEVICE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/device/backend.h"
#include "server/device/memory_budget.h"

namespace resident {

class Device {
 public:
  // limit_bytes <= 0 means the device's total memory.
  Device(std::unique_ptr<Backend> backend, int64_t limit_bytes);

  // The device itself: its description, streams and Run.
  Backend& backend() { return *backend_; }
  // The bytes the server may still hand out.
  MemoryBudget& budget() { return budget_; }

  // A buffer charged to the budget (to `reservation` first, may be null);
  // the charge is returned when the last owner drops it. On device
  // out-of-memory the backend trims its pool and retries once.
  // RESOURCE_EXHAUSTED over the budget or the device; the backend's
  // Allocate errors otherwise.
  absl::StatusOr<std::shared_ptr<Buffer>> Allocate(
      int64_t bytes, Stream& stream, MemoryBudget::Reservation* reservation = nullptr);

 private:
  std::unique_ptr<Backend> backend_;
  MemoryBudget budget_;
};

// "auto", "cpu" or "cuda:N". auto picks cuda:0 when CUDA support was built
// and a device is present, else cpu. INVALID_ARGUMENT for an unknown spec,
// UNAVAILABLE when the device cannot be opened.
absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const std::string& spec);

// Whether this build includes the CUDA backend.
bool CudaSupportBuilt();

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_DEVICE_H_

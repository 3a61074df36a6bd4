// A Backend together with the server's memory budget: the one object the
// program and session layers allocate through. A server holds one or more
// (a DeviceSet, device_set.h), each with its own budget; a Device has an
// index in that set and a name unique in it ("cuda:0"; a repeat of the same
// backend in --device gets "#k" appended: "cpu", "cpu#1").
//
//   Device device(*CreateBackend("auto"), /*limit_bytes=*/0);
//   std::unique_ptr<Stream> stream = device.backend().NewStream();
//   ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buf, device.Allocate(bytes, *stream));
//   RETURN_IF_ERROR(device.backend().Run(*stream, FillOp{Scalar::Int(0), &array}));
#ifndef RESIDENT_SERVER_DEVICE_DEVICE_H_
#define RESIDENT_SERVER_DEVICE_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/device/backend.h"
#include "server/device/memory_budget.h"

namespace resident {

class Device {
 public:
  // limit_bytes <= 0 means the device's total memory. `name` empty: the
  // backend's name.
  Device(std::unique_ptr<Backend> backend, int64_t limit_bytes, int index = 0,
         std::string name = "");
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // Its position in the server's device set (0 for a lone device).
  int index() const { return index_; }
  // Unique in the set: the backend's name, "#k" appended for repeats.
  const std::string& name() const { return name_; }

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

  // While alive, buffers this thread allocates here are not charged to the
  // budget: a loop graph's trip is recorded into an arena (Backend::
  // CaptureLoop) that the executor already charged, so its blocks would
  // otherwise count twice.
  class ArenaScope {
   public:
    explicit ArenaScope(Device& device);
    ~ArenaScope();
    ArenaScope(const ArenaScope&) = delete;
    ArenaScope& operator=(const ArenaScope&) = delete;

   private:
    const Device* previous_;
  };

  // A copy of `src` (an array of any device of the set, this one included)
  // in a new buffer of this device, charged as Allocate charges it, made on
  // `stream` (a stream of this device) by Stream::CopyFromPeer; complete on
  // return. Counted in peer_copies() when src lives on another device.
  absl::StatusOr<DeviceArray> CopyFrom(const DeviceArray& src, Stream& stream,
                                       MemoryBudget::Reservation* reservation = nullptr);

  // Trims the backend's cache of freed blocks when the device has been idle
  // (no program holding a reservation, no allocation) since the previous
  // call, once per idle spell; true if it trimmed. Called periodically, so that a cache filled
  // by a burst of work goes back once the work is over.
  bool TrimIfIdle();

  // Buffers allocated here since start (the metrics' allocations counter).
  int64_t allocations() const { return allocations_.load(std::memory_order_relaxed); }
  // Arrays copied here from another device, and their bytes.
  int64_t peer_copies() const { return peer_copies_.load(std::memory_order_relaxed); }
  int64_t peer_copy_bytes() const { return peer_copy_bytes_.load(std::memory_order_relaxed); }

 private:
  std::unique_ptr<Backend> backend_;
  MemoryBudget budget_;
  const int index_;
  const std::string name_;
  std::atomic<int64_t> allocations_{0};
  int64_t seen_allocations_ = -1;  // TrimIfIdle's last look (its caller's thread)
  bool trimmed_ = false;           // since the last allocation
  std::atomic<int64_t> peer_copies_{0};
  std::atomic<int64_t> peer_copy_bytes_{0};
};

// The Device whose Allocate made `buffer` (every buffer of the session and
// program layers comes from one); nullptr for a buffer made by a backend
// directly.
Device* DeviceOf(const Buffer& buffer);
// DeviceOf(*array.buffer), or `fallback` for an array with no buffer (no
// bytes: it lives anywhere).
Device* DeviceOf(const DeviceArray& array, Device* fallback);

// "auto", "cpu" or "cuda:N". auto picks cuda:0 when CUDA support was built
// and a device is present, else cpu. INVALID_ARGUMENT for an unknown spec,
// UNAVAILABLE when the device cannot be opened.
absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const std::string& spec);

// Whether this build includes the CUDA backend.
bool CudaSupportBuilt();

// Readies the host's libraries for the backends; call it first in main,
// before any thread starts: it may execute the program again (argv) with
// settings a library reads only while loading (the CPU backend's OpenBLAS
// kernels on a CPU model it does not know).
void PrepareHostLibraries(char** argv);

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_DEVICE_H_

// The devices one server drives: --device's list, each a Device with its own
// memory budget, and the placement of sessions on them.
//
// One GPU (or the CPU backend) is the N = 1 case. Repeating a device in the
// list (cpu,cpu or cuda:0,cuda:0) makes separate Device instances, with
// separate budgets, of the same hardware: that is how a host with one GPU,
// or none, runs the multi-device paths (placement, peer copies).
//
//   ASSIGN_OR_RETURN(std::vector<std::string> specs, ParseDeviceList("cpu,cpu", 0));
//   ASSIGN_OR_RETURN(std::unique_ptr<DeviceSet> set, CreateDeviceSet("cpu,cpu", 0));
//   ASSIGN_OR_RETURN(Device* d, set->Find(""));  // the least loaded
#ifndef RESIDENT_SERVER_DEVICE_DEVICE_SET_H_
#define RESIDENT_SERVER_DEVICE_DEVICE_SET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/device/device.h"

namespace resident {

// The most devices one --device list may name.
inline constexpr int kMaxDevices = 64;

// The backend specs ("cpu", "cuda:N") of a --device value, in order:
//   auto   cuda:0 when a CUDA device is present, else cpu
//   all    every CUDA device, else cpu
//   a comma-separated list of cpu and cuda:N (repeats allowed)
// `cuda_devices` is the number of visible CUDA devices, -1 when this build
// has no CUDA support. INVALID_ARGUMENT, naming the entry, for an empty list
// or entry, an unknown name, an index out of range, cuda without CUDA
// support, auto or all combined with anything, cpu mixed with cuda, or more
// than kMaxDevices entries.
absl::StatusOr<std::vector<std::string>> ParseDeviceList(absl::string_view list, int cuda_devices);

// Unique device names for backend names in list order: a repeat gets "#k",
// k counting its earlier occurrences ({cpu, cpu, cpu} -> {cpu, cpu#1, cpu#2}).
std::vector<std::string> UniqueDeviceNames(const std::vector<std::string>& backend_names);

class DeviceSet {
 public:
  // `devices` non-empty, each with its index in this list.
  explicit DeviceSet(std::vector<std::unique_ptr<Device>> devices);
  // A set of one device owned by the caller (tests, tools).
  explicit DeviceSet(Device& device);
  DeviceSet(const DeviceSet&) = delete;
  DeviceSet& operator=(const DeviceSet&) = delete;

  int size() const { return static_cast<int>(devices_.size()); }
  Device& at(int index) const { return *devices_.at(static_cast<size_t>(index)); }
  const std::vector<Device*>& all() const { return devices_; }

  // The device with the most budget free (limit - used - reserved); ties go
  // to the lowest index.
  Device& LeastLoaded() const;
  // A device by request: empty -> LeastLoaded(); decimal digits -> that
  // index; else the device of that name. INVALID_ARGUMENT, listing the
  // devices, for an index out of range or an unknown name.
  absl::StatusOr<Device*> Find(absl::string_view request) const;
  // The first device that hit an unrecoverable error; nullptr if none.
  Device* FirstPoisoned() const;

 private:
  std::vector<std::unique_ptr<Device>> owned_;
  std::vector<Device*> devices_;
};

// Opens every device of a --device value (ParseDeviceList), each with a
// budget of `limit_bytes` (--max-memory applies per device; <= 0: the
// device's total). INVALID_ARGUMENT for a bad list, UNAVAILABLE when a
// device cannot be opened. Implemented in server/device/factory/.
absl::StatusOr<std::unique_ptr<DeviceSet>> CreateDeviceSet(const std::string& list,
                                                           int64_t limit_bytes);

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_DEVICE_SET_H_

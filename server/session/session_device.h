// Every call the session layer makes into the device's stream, allocation
// and copy API, one small helper per operation, so that a change to that
// API (e.g. copies moving onto the Stream object) is made here and nowhere
// else in server/session. (Programs reach the device through Execute, in
// server/program; the memory budget is the Device's own.)
//
// Thread-safety: as the Backend's (any thread; work on one stream is
// ordered). None of these may be called with the session layer's lock
// held: they may wait for the device.
//
//   std::shared_ptr<Stream> stream = NewDeviceStream(device);
//   ASSIGN_OR_RETURN(std::string bytes, ReadArray(device, *stream, array));
#ifndef RESIDENT_SERVER_SESSION_SESSION_DEVICE_H_
#define RESIDENT_SERVER_SESSION_SESSION_DEVICE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/npy.h"
#include "server/device/device.h"

namespace resident {

// A new stream of the device (each session has its own).
std::shared_ptr<Stream> NewDeviceStream(Device& device);

// `bytes` of device memory, charged to the device's budget.
absl::StatusOr<std::shared_ptr<Buffer>> AllocateOnDevice(Device& device, int64_t bytes,
                                                         Stream& stream);

// Copies `bytes` from host `src` into dst at `offset` and waits for the
// stream, so `src` may be reused on return (no copy for 0 bytes; the wait
// happens anyway, so earlier work on the stream, e.g. an allocation, is done).
absl::Status WriteToDevice(Device& device, Stream& stream, const void* src, Buffer& dst,
                           int64_t offset, int64_t bytes);

// Copies `bytes` of src at `offset` into host `dst`, complete on return
// (nothing for 0 bytes).
absl::Status ReadFromDevice(Device& device, Stream& stream, const Buffer& src, int64_t offset,
                            void* dst, int64_t bytes);

// The whole array's bytes on the host.
absl::StatusOr<std::string> ReadArray(Device& device, Stream& stream, const DeviceArray& array);

// A new device array holding a host array's bytes, complete on return.
absl::StatusOr<DeviceArray> LoadArray(Device& device, Stream& stream, const HostArray& host);

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_SESSION_DEVICE_H_

#include "server/session/session_device.h"

#include "core/status_macros.h"

namespace resident {

std::shared_ptr<Stream> NewDeviceStream(Device& device) { return device.backend().NewStream(); }

absl::StatusOr<std::shared_ptr<Buffer>> AllocateOnDevice(Device& device, int64_t bytes,
                                                         Stream& stream) {
  return device.Allocate(bytes, stream);
}

absl::Status WriteToDevice(Device& device, Stream& stream, const void* src, Buffer& dst,
                           int64_t offset, int64_t bytes) {
  if (bytes > 0) {
    RETURN_IF_ERROR(stream.CopyToDevice(src, dst, offset, bytes));
  }
  // The host memory is the caller's again only once the copy is done.
  return stream.Synchronize();
}

absl::Status ReadFromDevice(Device& device, Stream& stream, const Buffer& src, int64_t offset,
                            void* dst, int64_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  return stream.CopyToHost(src, offset, dst, bytes);
}

absl::StatusOr<std::string> ReadArray(Device& device, Stream& stream, const DeviceArray& array) {
  std::string host(static_cast<size_t>(array.nbytes()), '\0');
  if (!host.empty()) {
    RETURN_IF_ERROR(ReadFromDevice(device, stream, *array.buffer, 0, host.data(), array.nbytes()));
  }
  return host;
}

absl::StatusOr<DeviceArray> LoadArray(Device& device, Stream& stream, const HostArray& host) {
  DeviceArray array;
  array.dtype = host.dtype;
  array.shape = host.shape;
  const int64_t bytes = static_cast<int64_t>(host.bytes.size());
  ASSIGN_OR_RETURN(array.buffer, AllocateOnDevice(device, bytes, stream));
  RETURN_IF_ERROR(WriteToDevice(device, stream, host.bytes.data(), *array.buffer, 0, bytes));
  return array;
}

}  // namespace resident

// Device memory (Buffer) and the arrays that live in it (DeviceArray).
//
//   ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buf, device.Allocate(bytes, stream));
//   DeviceArray a{buf, DType::kFloat32, {2, 3}};
//   RETURN_IF_ERROR(CheckHeld(a, "add operand a"));  // shape valid, buffer big enough
#ifndef RESIDENT_SERVER_DEVICE_BUFFER_H_
#define RESIDENT_SERVER_DEVICE_BUFFER_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace resident {

// A block of device memory. Destroying it returns the memory to the backend
// (stream-ordered on CUDA, so pending work that uses it finishes first).
class Buffer {
 public:
  virtual ~Buffer() = default;
  // Device address (a host address on the CPU backend).
  virtual void* data() const = 0;
  // Size in bytes as allocated (what the memory budget was charged).
  virtual int64_t size() const = 0;
  // The backend's own buffer behind any wrapper (e.g. the budget's charge
  // holder), so a backend can recognise its memory.
  virtual const Buffer* backing() const { return this; }
};

// A C-contiguous array: dtype, shape and the buffer holding it. Several
// arrays may share a buffer (reshape); none is ever written after creation
// except by the executor when it proves no one else holds the buffer.
struct DeviceArray {
  std::shared_ptr<Buffer> buffer;
  DType dtype = DType::kFloat64;
  Shape shape;

  int64_t num_elements() const { return NumElements(shape); }
  int64_t nbytes() const { return num_elements() * ItemSize(dtype); }
  void* data() const { return buffer ? buffer->data() : nullptr; }
};

// Whether the bytes of x and y overlap (an empty or unheld array overlaps
// nothing).
bool Overlaps(const DeviceArray& x, const DeviceArray& y);

// OK when `array`'s shape is valid, its byte size fits int64 and its buffer
// holds all of it (a null buffer holds 0 bytes); else INVALID_ARGUMENT naming
// `role` ("add operand a"). Every backend checks every operand with this.
absl::Status CheckHeld(const DeviceArray& array, absl::string_view role);

// OK when [offset, offset + bytes) lies inside `buffer` and `host` is not
// null (unless bytes is 0); else INVALID_ARGUMENT naming `what`
// ("CopyToDevice"). Every stream checks its copies with this.
absl::Status CheckCopy(absl::string_view what, const Buffer& buffer, int64_t offset, int64_t bytes,
                       const void* host);

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_BUFFER_H_

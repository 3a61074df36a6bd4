// The device interface: memory, streams and the ops the executor runs.
//
// A Backend owns one device. The CPU backend (cpu/) is the reference and the
// default without a GPU; the CUDA backend (cuda/) runs the same ops on a GPU.
// Every op writes every element of its output and reads only its inputs, so
// no op exposes memory it did not write. Ops are queued on a Stream and may
// run asynchronously; results are visible to the host after Synchronize.
//
// Ops take arrays whose dtypes the program layer has already made agree (it
// inserts Cast where NumPy promotes); each method states what it accepts and
// returns INVALID_ARGUMENT (or UNIMPLEMENTED) for anything else.
#ifndef RESIDENT_SERVER_DEVICE_BACKEND_H_
#define RESIDENT_SERVER_DEVICE_BACKEND_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/scalar.h"
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

// An ordered queue of device work. Each session has its own.
class Stream {
 public:
  virtual ~Stream() = default;
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

enum class BinaryOp { kAdd, kSubtract, kMultiply, kDivide };

// A loop whose body is elementwise over arrays of one shape, described so a
// backend can run it in one pass: each element's values go through every
// iteration in registers, and memory is read and written once. Slots are
// numbered params first (carried values, then invariants), then one per step.
struct FusedLoopSpec {
  enum class Kind { kAdd, kSubtract, kMultiply, kDivide, kNegative, kCast };
  struct Step {
    Kind kind = Kind::kAdd;
    int a = -1, b = -1;  // operand slots (b only for binary kinds)
    DType dtype = DType::kFloat64;  // the result's; binary operands have it too
  };
  int64_t trip_count = 0;
  int num_carried = 0;
  std::vector<DType> param_dtypes;
  std::vector<bool> param_scalar;  // one element, broadcast to every index
  std::vector<Step> steps;
  std::vector<int> yields;  // per carried value: the slot it becomes
};

// Memory figures of a device, in bytes.
struct MemoryInfo {
  int64_t total = 0;   // device capacity (host RAM for the CPU backend)
  int64_t free = 0;    // what the device reports free now
  int64_t in_use = 0;  // held by live buffers of this backend
  int64_t cached = 0;  // freed blocks kept by the backend's pool
};

class Backend {
 public:
  virtual ~Backend() = default;

  // "cpu" or "cuda:N".
  virtual std::string name() const = 0;
  // A human description, e.g. "NVIDIA H200 (sm_90, 132 SMs)".
  virtual std::string description() const = 0;
  virtual MemoryInfo memory() const = 0;

  // A new stream; work on different streams may overlap.
  virtual std::unique_ptr<Stream> NewStream() = 0;
  // Blocks until all work queued on `stream` has finished; returns the first
  // error the device reported for it.
  virtual absl::Status Synchronize(Stream& stream) = 0;
  // True once the device hit an error that poisons it (a CUDA sticky error):
  // nothing more can run in this process, which must exit and be restarted.
  virtual bool poisoned() const { return false; }

  // Uninitialised device memory of `bytes` (0 allowed). RESOURCE_EXHAUSTED
  // when the device has none left after trimming its pool once.
  virtual absl::StatusOr<std::shared_ptr<Buffer>> Allocate(int64_t bytes,
                                                           Stream& stream) = 0;
  // Returns cached free blocks to the device.
  virtual void Trim() = 0;

  // Host -> device: bytes from `src` into dst at `offset`. The host memory
  // must stay valid until Synchronize(stream).
  virtual absl::Status CopyToDevice(Stream& stream, const void* src,
                                    Buffer& dst, int64_t offset,
                                    int64_t bytes) = 0;
  // Device -> host: bytes of src at `offset` into `dst`, complete on return.
  virtual absl::Status CopyToHost(Stream& stream, const Buffer& src,
                                  int64_t offset, void* dst,
                                  int64_t bytes) = 0;

  // out[...] = value, converted to out.dtype as NumPy's full() would.
  virtual absl::Status Fill(Stream& stream, const Scalar& value,
                            DeviceArray& out) = 0;
  // out is 1-D: out[i] = start + T(i) * delta evaluated in T = out.dtype's
  // own arithmetic (float32 math for float32, wrapping for integers), with
  // start and delta first converted to T. This is NumPy's arange fill; the
  // program layer computes start and delta as NumPy does. Not for bool.
  virtual absl::Status Arange(Stream& stream, const Scalar& start,
                              const Scalar& delta, DeviceArray& out) = 0;
  // out = a op b with NumPy broadcasting of a and b to out.shape.
  // a, b and out have one dtype. kAdd/kMultiply on bool are logical or/and;
  // kSubtract on bool and kDivide on bool or integers are not accepted.
  // Integer arithmetic wraps. out may share a buffer with a or b when that
  // input has out's shape.
  virtual absl::Status Binary(Stream& stream, BinaryOp op, const DeviceArray& a,
                              const DeviceArray& b, DeviceArray& out) = 0;
  // out = -a (integers wrap); not accepted for bool. out may alias a.
  virtual absl::Status Negative(Stream& stream, const DeviceArray& a,
                                DeviceArray& out) = 0;
  // out = a converted to out.dtype, broadcasting a to out.shape. Float to
  // integer truncates toward zero; NaN and out-of-range give the integer's
  // minimum (what NumPy gives on x86). Anything to bool is `!= 0`.
  virtual absl::Status Cast(Stream& stream, const DeviceArray& a,
                            DeviceArray& out) = 0;
  // Batched matrix product, all of one dtype, row-major:
  // out[i] (m x n) = a[i] (m x k) @ b[i] (k x n) for i < batch, where
  // a[i] starts at element i * a_batch_stride (0 broadcasts one matrix),
  // likewise b. Bool is or-of-ands, integers wrap.
  struct MatmulShape {
    int64_t batch = 1, m = 0, k = 0, n = 0;
    int64_t a_batch_stride = 0, b_batch_stride = 0;
  };
  virtual absl::Status Matmul(Stream& stream, const MatmulShape& shape,
                              const DeviceArray& a, const DeviceArray& b,
                              DeviceArray& out) = 0;
  // Sum over `axis` (removed from the shape) or over all elements (out is
  // 0-d). out.dtype is SumResultType(a.dtype). Empty sums are 0.
  virtual absl::Status Sum(Stream& stream, const DeviceArray& a,
                           std::optional<int> axis, DeviceArray& out) = 0;
  // Whether the executor should run fusable loops through FusedLoop (else
  // it runs the body op by op). A backend may implement FusedLoop without
  // preferring it.
  virtual bool SupportsFusedLoop() const { return false; }
  // Runs `spec` over params (carried values first, all of one shape, then
  // invariants, full-shape or one element) into outs (one per carried
  // value, the carried shape; an out may share a carried input's buffer).
  // Results equal running the body op by op, bit for bit.
  virtual absl::Status FusedLoop(Stream& stream, const FusedLoopSpec& spec,
                                 const std::vector<DeviceArray>& params,
                                 std::vector<DeviceArray>& outs) {
    return absl::UnimplementedError("this backend does not fuse loops");
  }
  // out = a with axes permuted: out.shape[i] = a.shape[perm[i]].
  virtual absl::Status Transpose(Stream& stream, const DeviceArray& a,
                                 absl::Span<const int> perm,
                                 DeviceArray& out) = 0;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_BACKEND_H_

// An ordered queue of device work, with the host copies into and out of it.
//
// Each session has its own stream (Backend::NewStream); ops run on it through
// Backend::Run and may run asynchronously, so results are visible to the
// host after Synchronize. Work on different streams may overlap.
//
//   std::unique_ptr<Stream> stream = backend.NewStream();
//   RETURN_IF_ERROR(stream->CopyToDevice(host.data(), *buffer, 0, host.size()));
//   RETURN_IF_ERROR(backend.Run(*stream, FillOp{Scalar::Int(0), &out}));
//   RETURN_IF_ERROR(stream->Synchronize());
//   RETURN_IF_ERROR(stream->CopyToHost(*out.buffer, 0, back.data(), out.nbytes()));
#ifndef RESIDENT_SERVER_DEVICE_STREAM_H_
#define RESIDENT_SERVER_DEVICE_STREAM_H_

#include <cstdint>

#include "absl/status/status.h"
#include "server/device/buffer.h"

namespace resident {

class Stream {
 public:
  virtual ~Stream() = default;

  // Queues a copy of `bytes` from host `src` into `dst` at `offset`; `src`
  // must stay valid until Synchronize(). INVALID_ARGUMENT for a range outside
  // dst, a null src or a buffer of another device; UNAVAILABLE once the
  // device is poisoned.
  virtual absl::Status CopyToDevice(const void* src, Buffer& dst, int64_t offset,
                                    int64_t bytes) = 0;
  // Copies `bytes` of `src` at `offset` into host `dst`, after the work
  // queued before it; complete on return. Errors as CopyToDevice.
  virtual absl::Status CopyToHost(const Buffer& src, int64_t offset, void* dst, int64_t bytes) = 0;
  // Copies the first `bytes` of `src`, memory of another device of the same
  // kind (or of this one), into `dst`, memory of this stream's device, after
  // the work queued before it; complete on return, so src may be freed then
  // (CUDA: cudaMemcpyPeerAsync, NVLink where present; CPU: memcpy). src must
  // be complete (every array behind a handle is). INVALID_ARGUMENT for a
  // range outside either buffer or a buffer of another kind of device;
  // UNAVAILABLE once poisoned; UNIMPLEMENTED where a backend has no peer
  // copy.
  virtual absl::Status CopyFromPeer(const Buffer& src, Buffer& dst, int64_t bytes);
  // Blocks until all work queued here has finished; returns the first error
  // the device reported for it (UNAVAILABLE once poisoned, INTERNAL else).
  virtual absl::Status Synchronize() = 0;
};

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_STREAM_H_

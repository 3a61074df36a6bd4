// The device interface, split as ggml's ggml-backend-impl.h splits it:
//  - DeviceInfo: what the device is (name, memory, health) and which ops it
//    runs (Supports), so callers can fall back;
//  - Allocator: its memory (the buffer type): Allocate, Trim;
//  - Stream (stream.h): an ordered queue with the host copies and Synchronize;
//  - Backend: all of the above for one device, plus NewStream and the one op
//    entry point, Run(Stream&, const DeviceOp&) (ops in device_op.h).
// A new op does not widen this interface: it is a new DeviceOp (or a new
// ElementwiseKind), and a backend that lacks it answers UNIMPLEMENTED.
//
// The CPU backend (cpu/) is the reference and the default without a GPU; the
// CUDA backend (cuda/) runs the same ops on a GPU. Upper layers allocate
// through Device (device.h), which charges the memory budget.
//
//   std::unique_ptr<Backend> backend = NewCpuBackend();
//   std::unique_ptr<Stream> stream = backend->NewStream();
//   ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buf, backend->Allocate(32, *stream));
//   DeviceArray x{buf, DType::kFloat64, {4}};
//   RETURN_IF_ERROR(backend->Run(*stream, FillOp{Scalar::Float(2.5), &x}));
//   RETURN_IF_ERROR(backend->Run(*stream, ElementwiseOp{ElementwiseKind::kAdd, {&x, &x}, &x}));
//   RETURN_IF_ERROR(stream->Synchronize());
#ifndef RESIDENT_SERVER_DEVICE_BACKEND_H_
#define RESIDENT_SERVER_DEVICE_BACKEND_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "server/device/buffer.h"
#include "server/device/device_op.h"
#include "server/device/stream.h"

namespace resident {

// Memory figures of a device, in bytes.
struct MemoryInfo {
  int64_t total = 0;   // device capacity (host RAM for the CPU backend)
  int64_t free = 0;    // what the device reports free now
  int64_t in_use = 0;  // held by live buffers of this backend
  int64_t cached = 0;  // freed blocks kept by the backend's pool
};

// What a device is, whether it still works, and what it runs.
//
//   if (backend.poisoned()) return UnavailableError(backend.name() + " failed");
//   if (backend.Supports(DeviceOpKind::kFusedLoop, dtype)) { /* fuse */ }
class DeviceInfo {
 public:
  virtual ~DeviceInfo() = default;
  // "cpu" or "cuda:N".
  virtual std::string name() const = 0;
  // A human description, e.g. "NVIDIA H200 (sm_90, 132 SMs)".
  virtual std::string description() const = 0;
  // The memory figures now; a figure the device cannot report reads 0.
  virtual MemoryInfo memory() const = 0;
  // True once the device hit an error that poisons it (a CUDA sticky error):
  // nothing more can run in this process, which must exit and be restarted.
  virtual bool poisoned() const = 0;
  // Whether callers should send this device ops of `kind` computing in
  // `dtype` (the result's): true when Run runs them, and well. False means
  // fall back (for kFusedLoop: run the loop body op by op). Run may accept
  // more than this admits: the CPU backend runs fused loops, as the
  // reference the GPU is checked against, but op by op is faster there.
  virtual bool Supports(DeviceOpKind kind, DType dtype) const = 0;
  // The bytes an op of a few-op elementwise program may read or write and
  // still be cheaper to run on the thread that received the request than
  // to hand to a worker: about as long as the two thread hops it saves
  // (tens of microseconds of this device's work).
  virtual int64_t inline_program_bytes() const { return int64_t{1} << 19; }
  // The element-ops (each op's elements, a loop's body once per trip) a
  // program of such arrays may run and still stay on the receiving thread:
  // a few milliseconds of this device's work at most, so that a loop or a
  // long chain that runs fused in well under that skips the hop too.
  virtual int64_t inline_program_work() const { return int64_t{1} << 22; }
  // The element-steps of a fused loop's first round (the executor sizes
  // later rounds by time): short enough that a deadline or a cancel stops
  // a loop promptly, long enough that a fast loop runs in one round.
  virtual int64_t fused_round_work() const { return int64_t{1} << 28; }
  // The elements below which a straight-line run of elementwise ops
  // (server/program/fusion.h) runs op by op rather than as one fused op:
  // where a new fused kernel costs a compile, small arrays gain too little
  // per run to pay for it.
  virtual int64_t fused_region_min_elements() const { return 1; }
  // Whether a FusedLoopOp of `spec` may run now; false: the caller runs its
  // steps op by op. The CUDA backend caps its compiled kernels, so that a
  // client sending endless distinct programs cannot grow them without bound.
  virtual bool FusesSpec(const FusedLoopSpec& spec) const { return true; }
};

// The device's memory (ggml's buffer type).
//
//   ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buf, allocator.Allocate(bytes, stream));
class Allocator {
 public:
  virtual ~Allocator() = default;
  // Uninitialised device memory of `bytes` (0 allowed), ordered on `stream`.
  // INVALID_ARGUMENT for a negative size or a stream of another device;
  // RESOURCE_EXHAUSTED when the device has none left after trimming its pool
  // once; UNAVAILABLE once poisoned.
  virtual absl::StatusOr<std::shared_ptr<Buffer>> Allocate(int64_t bytes, Stream& stream) = 0;
  // Returns cached free blocks to the device (the OS on the CPU). Never fails.
  virtual void Trim() = 0;
  // The server's budget for this device (--max-memory): a backend whose
  // cache of freed blocks draws on the same memory as its buffers (the
  // CPU's host RAM) keeps buffers plus cache within it. Default: no effect.
  virtual void SetMemoryLimit(int64_t bytes) {}
};

// A loop recorded once as a device graph (Backend::CaptureLoop) and run in
// rounds: the device itself tests the condition after each trip and
// decides whether to run the next, so a round costs one launch and one
// synchronisation however many trips it takes.
class LoopGraph {
 public:
  // What a round ended with: the trips taken by all rounds so far, and
  // whether the condition held after the last of them (a fixed-trip loop's
  // always holds).
  struct Round {
    int64_t trips = 0;
    bool holds = true;
  };
  virtual ~LoopGraph() = default;
  // Runs trips while the condition holds, until `trips_after` trips in all
  // (at least one more: call it only when the condition held); complete on
  // return. The carried values live in the slots the capture wrote.
  virtual absl::StatusOr<Round> Run(int64_t trips_after) = 0;
  // Whether the backend made it ready by updating an executable graph of
  // an earlier loop of the same shape (SetLoopGraphCache) rather than
  // instantiating a new one.
  virtual bool from_cache() const { return false; }
  // The most bytes of its arena the recorded trip held at once (values and
  // scratch), against which the planner's arena size can be judged; -1
  // where the backend does not know.
  virtual int64_t arena_peak_bytes() const { return -1; }
};

// What CaptureLoop records, in a trip's order. Both run on the capturing
// thread, queueing ops on the stream as any op is queued; the ops are
// recorded, not run.
struct LoopCaptureSpec {
  // Queues one trip's body, then the writes of its results into the
  // carried values' buffers.
  std::function<absl::Status()> body;
  // A while: queues the condition on the carried values and returns its
  // bool scalar. Empty for a fixed-trip loop.
  std::function<absl::StatusOr<DeviceArray>()> cond;
  // Memory of this device that every buffer a trip allocates (values and
  // scratch) is carved from while recording; the graph keeps it for its
  // life, as the addresses it replays.
  std::shared_ptr<Buffer> arena;
};

// One device: its description, its memory, its streams, and the op entry
// point. Buffers and streams may outlive the Backend that made them.
class Backend : public DeviceInfo, public Allocator {
 public:
  // A new stream of this device; work on different streams may overlap.
  virtual std::unique_ptr<Stream> NewStream() = 0;
  // Queues `op` on `stream` (a stream of this backend); results are visible
  // after stream.Synchronize(). The only way ops reach a device: each backend
  // dispatches every DeviceOp in one place. INVALID_ARGUMENT for arguments
  // the op does not accept (CheckOperands and each struct's rules) or a
  // stream of another device; UNIMPLEMENTED for an op this backend does not
  // run; RESOURCE_EXHAUSTED when scratch memory runs out; UNAVAILABLE once
  // poisoned; INTERNAL for other device errors.
  virtual absl::Status Run(Stream& stream, const DeviceOp& op) = 0;
  // Readies host memory that streams of this device will copy from and
  // into many times (a client's shared-memory region): CUDA page-locks it
  // (cudaHostRegister), so those copies run by DMA at pinned speed with no
  // staging. Undone when the returned token is dropped, which must happen
  // before the memory is unmapped. A null token where there is nothing to
  // do (the CPU); an error where the memory cannot be registered (the
  // memory still works, at pageable speed).
  virtual absl::StatusOr<std::shared_ptr<void>> RegisterHost(void* data, int64_t bytes) {
    return std::shared_ptr<void>();
  }
  // How many executable loop graphs each stream keeps after its loops end,
  // the least recently used dropped first, so that a later loop of the same
  // shape on that stream updates one with its new addresses instead of
  // instantiating its own (CUDA: cudaGraphExecUpdate). 0: none kept. They
  // hold no arrays, only the device's own description of the graph.
  virtual void SetLoopGraphCache(int entries) {}
  // Whether CaptureLoop can work here (CUDA 12.4+: conditional graph nodes).
  virtual bool CapturesLoops() const { return false; }
  // Records `spec`'s trip into a graph whose condition is decided on the
  // device (CUDA: a conditional WHILE node). Allocations made while
  // recording come from spec.arena, which lives with the graph, so every
  // replay finds its buffers at the same addresses. Nothing
  // runs and no array changes. UNIMPLEMENTED where not supported; any
  // other error (an op that cannot be recorded, the arena too small) means
  // run the loop trip by trip instead.
  virtual absl::StatusOr<std::unique_ptr<LoopGraph>> CaptureLoop(Stream& stream,
                                                                 const LoopCaptureSpec& spec) {
    return absl::UnimplementedError(name() + " does not record loops as graphs");
  }
};

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_BACKEND_H_

// A backend that forwards everything to another (the CPU reference) but
// takes loop captures, so the executor's graph path (slots, in-place views,
// the write-back of results, rounds, trip counts) runs on the CPU and can be
// checked bit for bit against trip by trip. Where CUDA records the body
// once and replays it, this one keeps the executor's two functions and
// calls them each trip, with the semantics of the CUDA graph: the body runs,
// then the condition, and another trip follows while the condition holds
// and the round has trips left. It also measures the bytes a trip holds at
// once, which must fit the arena the executor sized (CUDA fails the capture
// otherwise). Used by loop_graph_executor_test.
#ifndef RESIDENT_TESTS_UNIT_REPLAYING_BACKEND_H_
#define RESIDENT_TESTS_UNIT_REPLAYING_BACKEND_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "server/device/backend.h"

namespace resident {

class ReplayingBackend final : public Backend {
 public:
  explicit ReplayingBackend(std::unique_ptr<Backend> inner) : in_(std::move(inner)) {}
  std::string name() const override { return in_->name(); }
  std::string description() const override { return in_->description(); }
  MemoryInfo memory() const override { return in_->memory(); }
  bool poisoned() const override { return in_->poisoned(); }
  bool Supports(DeviceOpKind kind, DType dtype) const override {
    return in_->Supports(kind, dtype);
  }
  std::unique_ptr<Stream> NewStream() override { return in_->NewStream(); }
  absl::StatusOr<std::shared_ptr<Buffer>> Allocate(int64_t bytes, Stream& s) override {
    absl::StatusOr<std::shared_ptr<Buffer>> b = in_->Allocate(bytes, s);
    if (!b.ok() || !in_trip_) return b;
    live_ += bytes;
    peak_trip_bytes = std::max(peak_trip_bytes, live_);
    return std::shared_ptr<Buffer>(std::make_shared<Counted>(*std::move(b), bytes, this));
  }
  void Trim() override { in_->Trim(); }
  absl::Status Run(Stream& s, const DeviceOp& op) override { return in_->Run(s, op); }

  bool CapturesLoops() const override { return captures; }
  absl::StatusOr<std::unique_ptr<LoopGraph>> CaptureLoop(Stream& stream,
                                                         const LoopCaptureSpec& spec) override {
    ++capture_calls;
    if (!fail_capture.ok()) return fail_capture;
    if (spec.arena == nullptr || !spec.body) return absl::InvalidArgumentError("bad spec");
    return std::unique_ptr<LoopGraph>(std::make_unique<Graph>(this, stream, spec));
  }

  bool captures = true;       // false: as a backend without graphs
  absl::Status fail_capture;  // returned by CaptureLoop when not OK
  int capture_calls = 0;
  int64_t graph_trips = 0;      // trips run by graphs
  int64_t peak_trip_bytes = 0;  // most bytes a graph trip held at once
  int64_t arena_bytes = 0;      // the smallest arena given

 private:
  class Counted final : public Buffer {
   public:
    Counted(std::shared_ptr<Buffer> inner, int64_t bytes, ReplayingBackend* owner)
        : inner_(std::move(inner)), bytes_(bytes), owner_(owner) {}
    ~Counted() override { owner_->live_ -= bytes_; }
    void* data() const override { return inner_->data(); }
    int64_t size() const override { return inner_->size(); }
    const Buffer* backing() const override { return inner_->backing(); }

   private:
    std::shared_ptr<Buffer> inner_;
    int64_t bytes_;
    ReplayingBackend* owner_;
  };

  class Graph final : public LoopGraph {
   public:
    Graph(ReplayingBackend* owner, Stream& stream, LoopCaptureSpec spec)
        : owner_(owner), stream_(stream), spec_(std::move(spec)) {
      owner_->arena_bytes = owner_->arena_bytes == 0
                                ? spec_.arena->size()
                                : std::min(owner_->arena_bytes, spec_.arena->size());
    }
    int64_t arena_peak_bytes() const override { return owner_->peak_trip_bytes; }
    absl::StatusOr<Round> Run(int64_t until) override {
      Round r{trips_, true};
      for (;;) {
        owner_->in_trip_ = true;
        absl::Status s = Trip(r.holds);
        owner_->in_trip_ = false;
        if (!s.ok()) return s;
        r.trips = ++trips_;
        ++owner_->graph_trips;
        if (!r.holds || r.trips >= until) return r;
      }
    }

   private:
    absl::Status Trip(bool& holds) {
      if (absl::Status s = spec_.body(); !s.ok()) return s;
      holds = true;
      if (!spec_.cond) return absl::OkStatus();
      absl::StatusOr<DeviceArray> test = spec_.cond();
      if (!test.ok()) return test.status();
      uint8_t byte = 0;
      if (absl::Status s = stream_.CopyToHost(*test->buffer, 0, &byte, 1); !s.ok()) return s;
      holds = byte != 0;
      return absl::OkStatus();
    }
    ReplayingBackend* owner_;
    Stream& stream_;
    LoopCaptureSpec spec_;
    int64_t trips_ = 0;
  };

  std::unique_ptr<Backend> in_;
  bool in_trip_ = false;
  int64_t live_ = 0;
};

}  // namespace resident

#endif  // RESIDENT_TESTS_UNIT_REPLAYING_BACKEND_H_

// A backend that forwards everything to another (the CPU reference) but
// tells the executor it supports fused loops (or, with fuse false, that it
// does not), so each of the executor's two paths runs, and can be checked
// against the other, on the CPU. Used by
// fused_executor_test and by tests/fuzz/program_fuzzer.
#ifndef RESIDENT_TESTS_UNIT_FUSING_BACKEND_H_
#define RESIDENT_TESTS_UNIT_FUSING_BACKEND_H_

#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "server/device/backend.h"

namespace resident {

class FusingBackend final : public Backend {
 public:
  // `fuse` false: the opposite, a backend that takes no fused op, so the
  // executor runs every loop and region op by op (the reference).
  explicit FusingBackend(std::unique_ptr<Backend> inner, bool fuse = true)
      : in_(std::move(inner)), fuse_(fuse) {}
  std::string name() const override { return in_->name(); }
  std::string description() const override { return in_->description(); }
  MemoryInfo memory() const override { return in_->memory(); }
  bool poisoned() const override { return in_->poisoned(); }
  bool Supports(DeviceOpKind kind, DType dtype) const override {
    if (kind == DeviceOpKind::kFusedLoop) return fuse_;
    return in_->Supports(kind, dtype);
  }
  std::unique_ptr<Stream> NewStream() override { return in_->NewStream(); }
  absl::StatusOr<std::shared_ptr<Buffer>> Allocate(int64_t b, Stream& s) override {
    return in_->Allocate(b, s);
  }
  void Trim() override { in_->Trim(); }
  bool FusesSpec(const FusedLoopSpec& spec) const override {
    return admits && in_->FusesSpec(spec);
  }
  absl::Status Run(Stream& s, const DeviceOp& op) override {
    if (std::holds_alternative<FusedLoopOp>(op)) ++fused_calls;
    return in_->Run(s, op);
  }
  int fused_calls = 0;
  bool admits = true;  // false: as a backend whose fused-kernel cache is full

 private:
  std::unique_ptr<Backend> in_;
  const bool fuse_;
};

}  // namespace resident

#endif  // RESIDENT_TESTS_UNIT_FUSING_BACKEND_H_

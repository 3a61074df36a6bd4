// A backend that forwards everything to another (the CPU reference) but
// tells the executor it supports fused loops, so the fused-loop path that
// GPUs take runs, and can be checked, on the CPU. Used by
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
  explicit FusingBackend(std::unique_ptr<Backend> inner) : in_(std::move(inner)) {}
  std::string name() const override { return in_->name(); }
  std::string description() const override { return in_->description(); }
  MemoryInfo memory() const override { return in_->memory(); }
  bool poisoned() const override { return in_->poisoned(); }
  bool Supports(DeviceOpKind kind, DType dtype) const override {
    return kind == DeviceOpKind::kFusedLoop || in_->Supports(kind, dtype);
  }
  std::unique_ptr<Stream> NewStream() override { return in_->NewStream(); }
  absl::StatusOr<std::shared_ptr<Buffer>> Allocate(int64_t b, Stream& s) override {
    return in_->Allocate(b, s);
  }
  void Trim() override { in_->Trim(); }
  absl::Status Run(Stream& s, const DeviceOp& op) override {
    if (std::holds_alternative<FusedLoopOp>(op)) ++fused_calls;
    return in_->Run(s, op);
  }
  int fused_calls = 0;

 private:
  std::unique_ptr<Backend> in_;
};

}  // namespace resident

#endif  // RESIDENT_TESTS_UNIT_FUSING_BACKEND_H_

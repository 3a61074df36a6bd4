// A backend that forwards every op to another (the CPU reference) but asks
// the executor to fuse loops, so the fused-loop path that GPUs take runs,
// and can be checked, on the CPU. Used by fused_executor_test and by
// tests/fuzz/program_fuzzer.
#ifndef RESIDENT_TESTS_UNIT_FUSING_BACKEND_H_
#define RESIDENT_TESTS_UNIT_FUSING_BACKEND_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/device/backend.h"

namespace resident {

class FusingBackend final : public Backend {
 public:
  explicit FusingBackend(std::unique_ptr<Backend> inner) : in_(std::move(inner)) {}
  std::string name() const override { return in_->name(); }
  std::string description() const override { return in_->description(); }
  MemoryInfo memory() const override { return in_->memory(); }
  std::unique_ptr<Stream> NewStream() override { return in_->NewStream(); }
  absl::Status Synchronize(Stream& s) override { return in_->Synchronize(s); }
  absl::StatusOr<std::shared_ptr<Buffer>> Allocate(int64_t b, Stream& s) override {
    return in_->Allocate(b, s);
  }
  void Trim() override { in_->Trim(); }
  absl::Status CopyToDevice(Stream& s, const void* src, Buffer& d, int64_t o, int64_t n) override {
    return in_->CopyToDevice(s, src, d, o, n);
  }
  absl::Status CopyToHost(Stream& s, const Buffer& b, int64_t o, void* d, int64_t n) override {
    return in_->CopyToHost(s, b, o, d, n);
  }
  absl::Status Fill(Stream& s, const Scalar& v, DeviceArray& o) override { return in_->Fill(s, v, o); }
  absl::Status Arange(Stream& s, const Scalar& a, const Scalar& d, DeviceArray& o) override {
    return in_->Arange(s, a, d, o);
  }
  absl::Status Binary(Stream& s, BinaryOp op, const DeviceArray& a, const DeviceArray& b,
                      DeviceArray& o) override {
    return in_->Binary(s, op, a, b, o);
  }
  absl::Status Negative(Stream& s, const DeviceArray& a, DeviceArray& o) override {
    return in_->Negative(s, a, o);
  }
  absl::Status Cast(Stream& s, const DeviceArray& a, DeviceArray& o) override { return in_->Cast(s, a, o); }
  absl::Status Matmul(Stream& s, const MatmulShape& m, const DeviceArray& a, const DeviceArray& b,
                      DeviceArray& o) override {
    return in_->Matmul(s, m, a, b, o);
  }
  absl::Status Sum(Stream& s, const DeviceArray& a, std::optional<int> axis, DeviceArray& o) override {
    return in_->Sum(s, a, axis, o);
  }
  absl::Status Transpose(Stream& s, const DeviceArray& a, absl::Span<const int> p,
                         DeviceArray& o) override {
    return in_->Transpose(s, a, p, o);
  }
  bool SupportsFusedLoop() const override { return true; }
  absl::Status FusedLoop(Stream& s, const FusedLoopSpec& spec, const std::vector<DeviceArray>& p,
                         std::vector<DeviceArray>& o) override {
    ++fused_calls;
    return in_->FusedLoop(s, spec, p, o);
  }
  int fused_calls = 0;

 private:
  std::unique_ptr<Backend> in_;
};

}  // namespace resident

#endif  // RESIDENT_TESTS_UNIT_FUSING_BACKEND_H_

// The executor's fused-loop path (used on GPUs) against its op-by-op path,
// both on the CPU reference: a backend that forwards to the CPU backend but
// asks the executor to fuse.
#include <cstring>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "server/device/cpu/cpu_backend.h"
#include "server/device/device.h"
#include "server/program/executor.h"
#include "server/program/planner.h"
#include "tests/unit/fusing_backend.h"

namespace resident {
namespace {

Instruction Op(ElementwiseKind kind, std::vector<Operand> operands) {
  return MakeElementwise(kind, std::move(operands));
}

Instruction Op(OpKind op, std::vector<Operand> operands) {
  Instruction i;
  i.op = op;
  i.operands = std::move(operands);
  return i;
}

// x = arange(n) as float64, k = arange(n) as int32 (a handle inside the
// body), then loop 300 times: x = -(x * 1.5) / k + x (k cast to float64),
// c = c + k (int32, wraps).
std::shared_ptr<Program> TestProgram(const HandleId& k_handle, int64_t n) {
  auto p = std::make_shared<Program>();
  Instruction ar;
  ar.op = OpKind::kArange;
  ar.stop = Scalar::Int(n);
  ar.dtype = DType::kFloat64;
  p->instructions.push_back(ar);  // value 0: x
  Instruction c0;
  c0.op = OpKind::kFull;
  c0.shape = {n};
  c0.fill = Scalar::Int(2000000000);
  c0.dtype = DType::kInt32;
  p->instructions.push_back(c0);  // value 1: c
  Instruction half;
  half.op = OpKind::kFull;
  half.shape = {};
  half.fill = Scalar::Float(1.5);
  half.dtype = DType::kFloat32;
  p->instructions.push_back(half);          // value 2: 1.5 (0-d)
  auto body = std::make_shared<Program>();  // params: x, c, h
  body->instructions.push_back(
      Op(ElementwiseKind::kMultiply, {Operand::Value(0), Operand::Value(2)}));        // 3
  body->instructions.push_back(Op(ElementwiseKind::kNegative, {Operand::Value(3)}));  // 4
  body->instructions.push_back(
      Op(ElementwiseKind::kDivide, {Operand::Value(4), Operand::Handle(k_handle)}));  // 5
  body->instructions.push_back(
      Op(ElementwiseKind::kAdd, {Operand::Value(5), Operand::Value(0)}));  // 6
  body->instructions.push_back(
      Op(ElementwiseKind::kAdd, {Operand::Value(1), Operand::Handle(k_handle)}));  // 7
  body->yields = {Operand::Value(6), Operand::Value(7)};
  Instruction loop = Op(OpKind::kLoop, {Operand::Value(0), Operand::Value(1), Operand::Value(2)});
  loop.trip_count = 300;
  loop.body = body;
  p->instructions.push_back(loop);  // values 3, 4
  return p;
}

std::vector<std::string> RunProgram(bool fuse, int* fused_calls) {
  std::unique_ptr<Backend> backend = NewCpuBackend(2);
  FusingBackend* fusing = nullptr;
  if (fuse) {
    auto f = std::make_unique<FusingBackend>(std::move(backend));
    fusing = f.get();
    backend = std::move(f);
  }
  Device device(std::move(backend), int64_t{1} << 30);
  std::unique_ptr<Stream> stream = device.backend().NewStream();
  const int64_t n = 70001;  // several CPU blocks and a ragged end
  DeviceArray k{nullptr, DType::kInt32, {n}};
  k.buffer = device.Allocate(k.nbytes(), *stream).value();
  std::vector<int32_t> host(n);
  for (int64_t i = 0; i < n; ++i) host[i] = static_cast<int32_t>(i % 7) - 3;  // zeros too
  EXPECT_TRUE(stream->CopyToDevice(host.data(), *k.buffer, 0, k.nbytes()).ok());
  const HandleId kh = HandleId::Random();
  HandleResolver resolve = [&](const HandleId& h) -> absl::StatusOr<DeviceArray> {
    if (h == kh) return k;
    return absl::NotFoundError("no");
  };
  absl::StatusOr<Plan> plan = PlanProgram(TestProgram(kh, n), {{3, true, false}, {4, true, false}},
                                          resolve, ProgramLimits());
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  absl::StatusOr<std::vector<DeviceArray>> out =
      Execute(*plan, device, *stream, nullptr, ExecOptions());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  std::vector<std::string> bytes;
  for (const DeviceArray& a : *out) {
    std::string b(static_cast<size_t>(a.nbytes()), '\0');
    EXPECT_TRUE(stream->CopyToHost(*a.buffer, 0, b.data(), a.nbytes()).ok());
    bytes.push_back(std::move(b));
  }
  if (fusing != nullptr) *fused_calls = fusing->fused_calls;
  return bytes;
}

TEST(FusedExecutorTest, FusedLoopEqualsOpByOpBitForBit) {
  int fused_calls = 0;
  const std::vector<std::string> op_by_op = RunProgram(false, &fused_calls);
  const std::vector<std::string> fused = RunProgram(true, &fused_calls);
  EXPECT_GE(fused_calls, 1) << "the executor did not take the fused path";
  ASSERT_EQ(op_by_op.size(), 2u);
  ASSERT_EQ(fused.size(), 2u);
  EXPECT_TRUE(op_by_op[0] == fused[0]) << "float64 carried value differs";
  EXPECT_TRUE(op_by_op[1] == fused[1]) << "int32 carried value differs";
}

}  // namespace
}  // namespace resident

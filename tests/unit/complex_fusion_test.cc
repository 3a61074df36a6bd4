// Complex values never fuse: the planner (server/program/fusion.cc) leaves
// every instruction whose operands, scalar or result are complex out of
// fused regions and fused loops, and runs it op by op; real instructions
// around them still fuse. Run on the CPU reference through a backend that
// asks the executor to fuse (tests/unit/fusing_backend.h), against the op
// by op run, bit for bit.
#include <complex>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/device/cpu/cpu_backend.h"
#include "server/device/device.h"
#include "server/program/executor.h"
#include "server/program/fusion.h"
#include "server/program/planner.h"
#include "tests/unit/fusing_backend.h"

namespace resident {
namespace {

using K = ElementwiseKind;

Operand V(uint32_t i) { return Operand::Value(i); }

Instruction WithScalar(K kind, Operand a, Scalar s) {
  Instruction i = MakeElementwise(kind, {a});
  i.scalars.push_back(ScalarOperand{1, s});
  return i;
}

// x = full(n, 1.25) f64 [0]; y = x * 2 [1]; z = y + x [2] (a real region);
// c = astype(z, complex128) [3]; d = c * (0.5+2j) [4]; e = d + c [5];
// f = abs(e) [6] (float64 from complex); g = f * 3 [7]; h = g - x [8] (a
// real region again); w = x * (1+1j) [9] (a complex result of a real
// operand); then loop 5 times: k = k * (1-0.5j) + c over complex k = c.
std::shared_ptr<Program> MixedProgram(int64_t n) {
  auto p = std::make_shared<Program>();
  Instruction full;
  full.op = OpKind::kFull;
  full.shape = {n};
  full.fill = Scalar::Float(1.25);
  full.dtype = DType::kFloat64;
  p->instructions.push_back(full);                                              // 0
  p->instructions.push_back(WithScalar(K::kMultiply, V(0), Scalar::Float(2)));  // 1
  p->instructions.push_back(MakeElementwise(K::kAdd, {V(1), V(0)}));            // 2
  Instruction cast;
  cast.op = OpKind::kAstype;
  cast.operands = {V(2)};
  cast.dtype = DType::kComplex128;
  p->instructions.push_back(cast);                                                       // 3
  p->instructions.push_back(WithScalar(K::kMultiply, V(3), Scalar::Complex(0.5, 2.0)));  // 4
  p->instructions.push_back(MakeElementwise(K::kAdd, {V(4), V(3)}));                     // 5
  p->instructions.push_back(MakeElementwise(K::kAbsolute, {V(5)}));                      // 6
  p->instructions.push_back(WithScalar(K::kMultiply, V(6), Scalar::Float(3)));           // 7
  p->instructions.push_back(MakeElementwise(K::kSubtract, {V(7), V(0)}));                // 8
  p->instructions.push_back(WithScalar(K::kMultiply, V(0), Scalar::Complex(1, 1)));      // 9
  auto body = std::make_shared<Program>();  // params: k (0), c (1)
  body->instructions.push_back(WithScalar(K::kMultiply, V(0), Scalar::Complex(1, -0.5)));  // 2
  body->instructions.push_back(MakeElementwise(K::kAdd, {V(2), V(1)}));                    // 3
  body->yields = {V(3)};
  Instruction loop;
  loop.op = OpKind::kLoop;
  loop.operands = {V(3), V(3)};
  loop.trip_count = 5;
  loop.body = body;
  p->instructions.push_back(loop);  // 10
  return p;
}

struct MixedRun {
  std::vector<std::string> bytes;
  std::vector<std::pair<int, int>> regions;  // [begin, end) of each fused region
  int fused_calls = 0;
};

MixedRun RunMixed(bool fuse) {
  MixedRun r;
  auto f = std::make_unique<FusingBackend>(NewCpuBackend(2), fuse);
  FusingBackend* fusing = f.get();
  Device device(std::move(f), int64_t{1} << 30);
  std::unique_ptr<Stream> stream = device.backend().NewStream();
  const std::vector<OutputSpec> outs = {{2, true, false}, {5, true, false}, {6, true, false},
                                        {8, true, false}, {9, true, false}, {10, true, false}};
  HandleResolver none = [](const HandleId&) -> absl::StatusOr<DeviceArray> {
    return absl::NotFoundError("no");
  };
  absl::StatusOr<Plan> plan = PlanProgram(MixedProgram(1000), outs, none, ProgramLimits());
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return r;
  for (const auto& region : plan->top.region_at) {
    if (region != nullptr) r.regions.push_back({region->begin, region->end});
  }
  absl::StatusOr<std::vector<DeviceArray>> out =
      Execute(*plan, device, *stream, nullptr, ExecOptions());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return r;
  for (const DeviceArray& a : *out) {
    std::string b(static_cast<size_t>(a.nbytes()), '\0');
    EXPECT_TRUE(stream->CopyToHost(*a.buffer, 0, b.data(), a.nbytes()).ok());
    r.bytes.push_back(std::move(b));
  }
  r.fused_calls = fusing->fused_calls;
  return r;
}

TEST(ComplexFusionTest, ComplexStaysOutOfRegionsAndLoops) {
  const MixedRun fused = RunMixed(true);
  const MixedRun op_by_op = RunMixed(false);
  // Only the two real runs fuse: [1, 3) and [7, 9).
  EXPECT_EQ(fused.regions, (std::vector<std::pair<int, int>>{{1, 3}, {7, 9}}));
  EXPECT_EQ(fused.fused_calls, 2) << "the complex loop must run op by op";
  ASSERT_EQ(fused.bytes.size(), 6u);
  ASSERT_EQ(op_by_op.bytes.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_TRUE(fused.bytes[i] == op_by_op.bytes[i]) << "output " << i;
  // And the values are NumPy's: z = 3.75, e = z * (0.5+2j) + z.
  std::complex<double> e;
  std::memcpy(&e, fused.bytes[1].data(), sizeof(e));
  EXPECT_EQ(e, std::complex<double>(3.75 * 0.5 + 3.75, 3.75 * 2.0));
  double h;
  std::memcpy(&h, fused.bytes[3].data(), sizeof(h));
  EXPECT_DOUBLE_EQ(h, std::abs(e) * 3 - 1.25);
  std::complex<double> w;
  std::memcpy(&w, fused.bytes[4].data(), sizeof(w));
  EXPECT_EQ(w, std::complex<double>(1.25, 1.25));
}

}  // namespace
}  // namespace resident

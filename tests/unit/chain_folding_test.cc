// Chain folding end to end on the CPU reference: a program of random runs of
// dependent elementwise ops (every dtype, with a fixed handle operand of
// another dtype cast in, or x op x) gives the same bytes folded (fused loops,
// through FusingBackend, or the CPU's own loop path) as op by op unfolded.
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "server/device/cpu/cpu_backend.h"
#include "server/device/device.h"
#include "server/program/chain_folding.h"
#include "server/program/executor.h"
#include "server/program/planner.h"
#include "tests/unit/fusing_backend.h"

namespace resident {
namespace {

constexpr DType kDtypes[] = {DType::kBool,   DType::kInt8,   DType::kInt32,   DType::kInt64,
                             DType::kUint16, DType::kUint64, DType::kFloat32, DType::kFloat64};

struct Case {
  std::shared_ptr<Program> program;
  uint32_t result = 0;
};

// x = arange(n) as `dt`, then runs of `op`(x, x) or `op`(x, h) / `op`(h, x).
Case RandomChain(std::mt19937& rng, DType dt, const HandleId& h, int64_t n) {
  static constexpr ElementwiseKind kOps[] = {
      ElementwiseKind::kAdd,    ElementwiseKind::kSubtract,  ElementwiseKind::kMultiply,
      ElementwiseKind::kDivide, ElementwiseKind::kMaximum,   ElementwiseKind::kMinimum,
      ElementwiseKind::kPower,  ElementwiseKind::kRemainder, ElementwiseKind::kFloorDivide,
      ElementwiseKind::kLess,   ElementwiseKind::kEqual,     ElementwiseKind::kLogicalAnd};
  Case c;
  c.program = std::make_shared<Program>();
  Instruction ar;
  ar.op = OpKind::kArange;
  ar.stop = Scalar::Int(n);
  ar.dtype = dt;
  c.program->instructions.push_back(ar);
  uint32_t x = 0;
  const int runs = 1 + static_cast<int>(rng() % 4);
  for (int r = 0; r < runs; ++r) {
    const ElementwiseKind op = kOps[rng() % std::size(kOps)];
    const int form = static_cast<int>(rng() % 3);
    const int len = 1 + static_cast<int>(rng() % 9);
    for (int k = 0; k < len; ++k) {
      Instruction ins = MakeElementwise(op, {});
      const Operand v = Operand::Value(x);
      ins.operands = form == 0   ? std::vector<Operand>{v, v}
                     : form == 1 ? std::vector<Operand>{v, Operand::Handle(h)}
                                 : std::vector<Operand>{Operand::Handle(h), v};
      c.program->instructions.push_back(ins);
      ++x;
    }
  }
  c.result = x;
  return c;
}

// Runs `c` (folded or not) and returns the result's bytes and dtype, or the
// error's text.
std::string RunCase(const Case& c, const DeviceArray& hv, const HandleId& h, bool fold, bool fusing,
                    int* fused_calls, int* folded_runs) {
  std::unique_ptr<Backend> backend = NewCpuBackend(2);
  FusingBackend* f = nullptr;
  {
    // Not fusing: every loop and region op by op, the reference.
    auto fb = std::make_unique<FusingBackend>(std::move(backend), fusing);
    if (fusing) f = fb.get();
    backend = std::move(fb);
  }
  Device device(std::move(backend), int64_t{1} << 30);
  std::unique_ptr<Stream> stream = device.backend().NewStream();
  DeviceArray local{nullptr, hv.dtype, hv.shape};
  local.buffer = device.Allocate(hv.nbytes(), *stream).value();
  std::memcpy(local.data(), hv.data(), static_cast<size_t>(hv.nbytes()));
  HandleResolver resolve = [&](const HandleId& id) -> absl::StatusOr<DeviceArray> {
    if (id == h) return local;
    return absl::NotFoundError("no");
  };
  const std::vector<OutputSpec> outs = {{c.result, true, false}};
  absl::StatusOr<Plan> plan = fold ? PlanProgram(c.program, outs, resolve, ProgramLimits())
                                   : PlanUnfolded(c.program, outs, resolve, ProgramLimits());
  if (!plan.ok()) return "plan: " + plan.status().ToString();
  *folded_runs = plan->folded_runs;
  absl::StatusOr<std::vector<DeviceArray>> out =
      Execute(*plan, device, *stream, nullptr, ExecOptions());
  if (!out.ok()) return "run: " + out.status().ToString();
  const DeviceArray& a = (*out)[0];
  std::string b(static_cast<size_t>(a.nbytes()), '\0');
  EXPECT_TRUE(stream->CopyToHost(*a.buffer, 0, b.data(), a.nbytes()).ok());
  if (f != nullptr) *fused_calls = f->fused_calls;
  return std::string(DTypeName(a.dtype)) + ":" + b;
}

TEST(ChainFoldingTest, FoldedEqualsUnfoldedBitForBitOverEveryDtype) {
  std::mt19937 rng(12345);
  const int64_t n = 40003;  // more than one CPU block, ragged end
  int total_folded = 0, total_fused = 0;
  for (DType x_dt : kDtypes) {
    for (DType h_dt : kDtypes) {
      for (int trial = 0; trial < 4; ++trial) {
        std::unique_ptr<Backend> host = NewCpuBackend(1);
        Device hd(std::move(host), int64_t{1} << 30);
        std::unique_ptr<Stream> hs = hd.backend().NewStream();
        // The handle: one element (broadcast) or full, with values 1..3.
        const bool one = rng() % 2 == 0;
        DeviceArray hv{nullptr, h_dt, one ? Shape{1} : Shape{n}};
        hv.buffer = hd.Allocate(hv.nbytes(), *hs).value();
        const int64_t item = hv.nbytes() / hv.num_elements();
        for (int64_t i = 0; i < hv.num_elements(); ++i) {
          char* p = static_cast<char*>(hv.data()) + i * item;
          const int v = 1 + static_cast<int>(i % 3);
          VisitDType(
              h_dt,
              [&](auto zero) {
                using T = decltype(zero);
                T x;
                if constexpr (kIsBoolStorage<T>) {
                  x = 1;
                } else if constexpr (std::is_floating_point_v<T>) {
                  x = static_cast<T>(v * 0.75);
                } else {
                  x = static_cast<T>(v);
                }
                std::memcpy(p, &x, sizeof(T));
                return 0;
              },
              [] { return 0; });
        }
        const HandleId h = HandleId::Random();
        const Case c = RandomChain(rng, x_dt, h, n);
        int fused = 0, folded = 0, ignored = 0;
        const std::string ref = RunCase(c, hv, h, false, false, &ignored, &ignored);
        const std::string cpu = RunCase(c, hv, h, true, false, &ignored, &folded);
        const std::string fus = RunCase(c, hv, h, true, true, &fused, &ignored);
        SCOPED_TRACE(std::string(DTypeName(x_dt)) + " with " + DTypeName(h_dt));
        // An invalid program (bool arithmetic NumPy refuses, say) must fail
        // folded as it does unfolded.
        EXPECT_EQ(ref.substr(0, 5) == "plan:", cpu.substr(0, 5) == "plan:");
        EXPECT_TRUE(ref == cpu) << ref.substr(0, 200) << " vs " << cpu.substr(0, 200);
        EXPECT_TRUE(ref == fus) << ref.substr(0, 200) << " vs " << fus.substr(0, 200);
        total_folded += folded;
        total_fused += fused;
      }
    }
  }
  // The random programs must exercise folding and the fused path at all.
  EXPECT_GT(total_folded, 10);
  EXPECT_GT(total_fused, 10);
}

// x = x + 1.5 six times folds into one loop whose body keeps the scalar; a
// different scalar, position or op ends the run.
TEST(ChainFoldingTest, RunsWithTheSameScalarFold) {
  auto p = std::make_shared<Program>();
  Instruction ar;
  ar.op = OpKind::kArange;
  ar.stop = Scalar::Int(5);
  p->instructions.push_back(ar);
  for (uint32_t k = 0; k < 6; ++k) {
    Instruction add = MakeElementwise(ElementwiseKind::kAdd, {Operand::Value(k)});
    add.scalars.push_back(ScalarOperand{1, Scalar::Float(1.5)});
    p->instructions.push_back(add);
  }
  Instruction other = MakeElementwise(ElementwiseKind::kAdd, {Operand::Value(6)});
  other.scalars.push_back(ScalarOperand{0, Scalar::Float(1.5)});  // 1.5 + x: another side
  p->instructions.push_back(other);
  FoldedProgram f = FoldChains(p, {{7, true, false}});
  ASSERT_EQ(f.folded_runs, 1);
  ASSERT_EQ(f.program->instructions.size(), 3u);
  const Instruction& loop = f.program->instructions[1];
  EXPECT_EQ(loop.op, OpKind::kLoop);
  EXPECT_EQ(loop.trip_count, 6);
  ASSERT_EQ(loop.body->instructions.size(), 1u);
  ASSERT_EQ(loop.body->instructions[0].scalars.size(), 1u);
  EXPECT_EQ(loop.body->instructions[0].scalars[0].position, 1);
  EXPECT_EQ(f.program->instructions[2].scalars[0].position, 0);
  EXPECT_EQ(f.outputs[0].value, 2u);
}

}  // namespace
}  // namespace resident

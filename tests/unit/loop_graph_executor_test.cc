// The executor's graph path for loops and whiles (used on GPUs, where the
// trips after the first run as one CUDA graph) against trip by trip, both on
// the CPU reference: ReplayingBackend takes the captures and replays the
// recorded trip each time, so the slots, the in-place views, the write-back
// of results (swapped, duplicated, invariant), rounds and trip counts are
// all checked bit for bit.
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/device/cpu/cpu_backend.h"
#include "server/device/device.h"
#include "server/program/executor.h"
#include "server/program/planner.h"
#include "tests/unit/replaying_backend.h"

namespace resident {
namespace {

using K = ElementwiseKind;

Operand V(uint32_t i) { return Operand::Value(i); }

Instruction Op(OpKind op, std::vector<Operand> operands) {
  Instruction i;
  i.op = op;
  i.operands = std::move(operands);
  return i;
}

Instruction Ew(K kind, std::vector<Operand> operands) {
  return MakeElementwise(kind, std::move(operands));
}

Instruction WithScalar(K kind, Operand a, Scalar s) {
  Instruction i = MakeElementwise(kind, {a});
  i.scalars.push_back(ScalarOperand{1, s});
  return i;
}

Instruction Full(Shape shape, Scalar fill, DType dtype) {
  Instruction i;
  i.op = OpKind::kFull;
  i.shape = std::move(shape);
  i.fill = fill;
  i.dtype = dtype;
  return i;
}

// The handles every program may read: A (64, 64) float64 with entries in
// [0, 0.05], so x = A x / 2 + 1 converges; X (64,) float64; F (16,) float32.
struct Handles {
  HandleId a = HandleId::Random(), x = HandleId::Random(), f = HandleId::Random();
};

using MakeFn = std::function<std::shared_ptr<Program>(const Handles&)>;

struct Ran {
  std::vector<std::string> outputs;
  std::string x_after;  // handle X's bytes after the run
  LoopCounts loops;
  int capture_calls = 0;
  int64_t graph_trips = 0;
  int64_t peak_trip_bytes = 0;
  int64_t arena_bytes = 0;
};

Ran RunWith(bool graphs, const MakeFn& make, const std::vector<OutputSpec>& outputs,
            absl::Status fail_capture = absl::OkStatus()) {
  auto replaying = std::make_unique<ReplayingBackend>(NewCpuBackend(2));
  ReplayingBackend* backend = replaying.get();
  backend->fail_capture = fail_capture;
  Device device(std::move(replaying), int64_t{1} << 30);
  std::unique_ptr<Stream> stream = device.backend().NewStream();
  Handles h;
  auto upload = [&](DType dtype, Shape shape, const void* data) {
    DeviceArray a{nullptr, dtype, std::move(shape)};
    a.buffer = device.Allocate(a.nbytes(), *stream).value();
    EXPECT_TRUE(stream->CopyToDevice(data, *a.buffer, 0, a.nbytes()).ok());
    return a;
  };
  std::vector<double> a(64 * 64), x(64);
  for (int i = 0; i < 64; ++i) {
    x[i] = 0.25 * (i % 5);
    for (int j = 0; j < 64; ++j) a[i * 64 + j] = ((i * 7 + j * 3) % 11) / 200.0;
  }
  std::vector<float> f(16);
  for (int i = 0; i < 16; ++i) f[i] = 1.0f + 0.125f * static_cast<float>(i);
  const DeviceArray da = upload(DType::kFloat64, {64, 64}, a.data());
  const DeviceArray dx = upload(DType::kFloat64, {64}, x.data());
  const DeviceArray df = upload(DType::kFloat32, {16}, f.data());
  HandleResolver resolve = [&](const HandleId& id) -> absl::StatusOr<DeviceArray> {
    if (id == h.a) return da;
    if (id == h.x) return dx;
    if (id == h.f) return df;
    return absl::NotFoundError("no");
  };
  Ran ran;
  ProgramLimits limits;
  limits.loop_graphs = graphs;
  absl::StatusOr<Plan> plan = PlanProgram(make(h), outputs, resolve, limits);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return ran;
  ExecOptions options;
  options.loops = &ran.loops;
  // Within the plan's bound exactly, as the server reserves it: the rest of
  // the budget is reserved away, so the slots and the arena must fit it.
  absl::StatusOr<MemoryBudget::Reservation> mine = device.budget().Reserve(plan->peak_bytes);
  EXPECT_TRUE(mine.ok());
  MemoryBudget& budget = device.budget();
  absl::StatusOr<MemoryBudget::Reservation> rest =
      budget.Reserve(budget.limit() - budget.used() - budget.reserved());
  EXPECT_TRUE(rest.ok());
  absl::StatusOr<std::vector<DeviceArray>> out = Execute(*plan, device, *stream, &*mine, options);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return ran;
  for (const DeviceArray& r : *out) {
    std::string b(static_cast<size_t>(r.nbytes()), '\0');
    EXPECT_TRUE(stream->CopyToHost(*r.buffer, 0, b.data(), r.nbytes()).ok());
    ran.outputs.push_back(std::move(b));
  }
  ran.x_after.resize(static_cast<size_t>(dx.nbytes()));
  EXPECT_TRUE(stream->CopyToHost(*dx.buffer, 0, ran.x_after.data(), dx.nbytes()).ok());
  ran.capture_calls = backend->capture_calls;
  ran.graph_trips = backend->graph_trips;
  ran.peak_trip_bytes = backend->peak_trip_bytes;
  ran.arena_bytes = backend->arena_bytes;
  return ran;
}

int64_t Int64Of(const std::string& bytes) {
  int64_t v = 0;
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

// Fixed-point iteration to convergence, carrying (x, x_prev, t):
//   while max(abs(x - x_prev)) > 1e-12: x_prev, x, t = x, A @ x / 2 + 1, t + 1
// x_prev's result is the body's own parameter x, which the graph path must
// set aside before it overwrites x's slot.
std::shared_ptr<Program> ConvergeProgram(const Handles& h, int64_t max_trips) {
  auto p = std::make_shared<Program>();
  p->instructions.push_back(Full({64}, Scalar::Float(0), DType::kFloat64));  // 0: x_prev
  p->instructions.push_back(Full({}, Scalar::Int(0), DType::kInt64));        // 1: t
  auto body = std::make_shared<Program>();                       // 0 x, 1 x_prev, 2 t, 3 A
  body->instructions.push_back(Op(OpKind::kDot, {V(3), V(0)}));  // 4
  body->instructions.push_back(WithScalar(K::kMultiply, V(4), Scalar::Float(0.5)));  // 5
  body->instructions.push_back(WithScalar(K::kAdd, V(5), Scalar::Float(1)));         // 6
  body->instructions.push_back(WithScalar(K::kAdd, V(2), Scalar::Int(1)));           // 7
  body->yields = {V(6), V(0), V(7)};
  auto cond = std::make_shared<Program>();
  cond->instructions.push_back(Ew(K::kSubtract, {V(0), V(1)}));                       // 4
  cond->instructions.push_back(Ew(K::kAbsolute, {V(4)}));                             // 5
  cond->instructions.push_back(Op(OpKind::kMax, {V(5)}));                             // 6
  cond->instructions.push_back(WithScalar(K::kGreater, V(6), Scalar::Float(1e-12)));  // 7
  cond->yields = {V(7)};
  Instruction w = Op(OpKind::kWhile, {Operand::Handle(h.x), V(0), V(1), Operand::Handle(h.a)});
  w.body = body;
  w.cond = cond;
  w.trip_count = max_trips;
  p->instructions.push_back(w);  // 2 x, 3 x_prev, 4 t, 5 trips, 6 capped
  return p;
}

const std::vector<OutputSpec> kConvergeOutputs = {
    {2, true, false}, {3, true, false}, {4, true, false}, {5, true, false}, {6, true, false}};

TEST(LoopGraphExecutorTest, WhileToConvergenceEqualsTripByTripBitForBit) {
  const MakeFn make = [](const Handles& h) { return ConvergeProgram(h, 10000); };
  const Ran plain = RunWith(false, make, kConvergeOutputs);
  const Ran graph = RunWith(true, make, kConvergeOutputs);
  ASSERT_EQ(plain.outputs.size(), 5u);
  ASSERT_EQ(graph.outputs.size(), 5u);
  EXPECT_EQ(plain.capture_calls, 0);
  EXPECT_EQ(graph.capture_calls, 1);
  const int64_t trips = Int64Of(plain.outputs[3]);
  EXPECT_GT(trips, 50) << "a loop that converges slowly";
  EXPECT_LT(trips, 10000);
  EXPECT_EQ(graph.graph_trips, trips - 1) << "every trip after the first in the graph";
  for (size_t i = 0; i < 5; ++i)
    EXPECT_TRUE(plain.outputs[i] == graph.outputs[i]) << "output " << i;
  EXPECT_EQ(Int64Of(graph.outputs[2]), trips);  // t counted every trip
  EXPECT_EQ(graph.outputs[4], std::string(1, '\0')) << "not capped";
  EXPECT_EQ(graph.loops.whiles, 1);
  EXPECT_EQ(graph.loops.graph_whiles, 1);
  EXPECT_EQ(graph.loops.while_trips, trips);
  EXPECT_EQ(plain.loops.graph_whiles, 0);
  // The initial x was a handle: the loop copied it into a slot of its own.
  EXPECT_TRUE(graph.x_after == plain.x_after);
  EXPECT_TRUE(graph.x_after != graph.outputs[0]) << "the handle X was overwritten";
  EXPECT_LE(graph.peak_trip_bytes, graph.arena_bytes) << "a trip outgrew the arena it was given";
  // What the metrics report: the arena planned, and the trip's peak in it.
  EXPECT_EQ(graph.loops.graph_arena_bytes, graph.arena_bytes);
  EXPECT_EQ(graph.loops.graph_arena_peak_bytes, graph.peak_trip_bytes);
  EXPECT_GT(graph.loops.graph_arena_peak_bytes, 0);
  EXPECT_EQ(plain.loops.graph_arena_bytes, 0);
}

TEST(LoopGraphExecutorTest, WhileStoppedAtMaxTripsIsCappedInTheGraph) {
  const MakeFn make = [](const Handles& h) { return ConvergeProgram(h, 17); };
  const Ran plain = RunWith(false, make, kConvergeOutputs);
  const Ran graph = RunWith(true, make, kConvergeOutputs);
  ASSERT_EQ(graph.outputs.size(), 5u);
  EXPECT_EQ(Int64Of(graph.outputs[3]), 17);
  EXPECT_EQ(graph.outputs[4], std::string(1, '\1')) << "capped";
  EXPECT_EQ(graph.graph_trips, 16);
  EXPECT_EQ(graph.loops.capped, 1);
  for (size_t i = 0; i < 5; ++i)
    EXPECT_TRUE(plain.outputs[i] == graph.outputs[i]) << "output " << i;
}

// Results that trade places, repeat, or are an invariant, float32 (16,),
// F a handle. First, carrying (a, b, c, d) from (0.5, 1, 0, F):
//   while sum(b) < 1e6: a, b, c, d = b, a + b, F, d + c
// (a's result is the parameter b, whose slot b's result overwrites).
std::shared_ptr<Program> ShuffleProgram(const Handles& h) {
  auto p = std::make_shared<Program>();
  p->instructions.push_back(Full({16}, Scalar::Float(0.5), DType::kFloat32));  // 0: a
  p->instructions.push_back(Full({16}, Scalar::Float(1), DType::kFloat32));    // 1: b
  p->instructions.push_back(Full({16}, Scalar::Float(0), DType::kFloat32));    // 2: c
  auto body = std::make_shared<Program>();                  // 0 a, 1 b, 2 c, 3 d, 4 F
  body->instructions.push_back(Ew(K::kAdd, {V(0), V(1)}));  // 5
  body->instructions.push_back(Ew(K::kAdd, {V(3), V(2)}));  // 6
  body->yields = {V(1), V(5), V(4), V(6)};
  auto cond = std::make_shared<Program>();
  cond->instructions.push_back(Op(OpKind::kSum, {V(1)}));                        // 5
  cond->instructions.push_back(WithScalar(K::kLess, V(5), Scalar::Float(1e6)));  // 6
  cond->yields = {V(6)};
  // d starts as the handle F itself, also the invariant.
  Instruction w =
      Op(OpKind::kWhile, {V(0), V(1), V(2), Operand::Handle(h.f), Operand::Handle(h.f)});
  w.body = body;
  w.cond = cond;
  w.trip_count = 1000;
  p->instructions.push_back(w);  // 3 a, 4 b, 5 c, 6 d, 7 trips, 8 capped
  // A second while whose results are one value twice and the invariant:
  //   while sum(p) < 1e9: p, q, r = 2 * p, 2 * p, F
  auto body2 = std::make_shared<Program>();  // 0 p, 1 q, 2 r, 3 F
  body2->instructions.push_back(WithScalar(K::kMultiply, V(0), Scalar::Float(2)));  // 4
  body2->yields = {V(4), V(4), V(3)};
  auto cond2 = std::make_shared<Program>();
  cond2->instructions.push_back(Op(OpKind::kSum, {V(0)}));                        // 4
  cond2->instructions.push_back(WithScalar(K::kLess, V(4), Scalar::Float(1e9)));  // 5
  cond2->yields = {V(5)};
  Instruction w2 = Op(OpKind::kWhile, {V(3), V(4), V(5), Operand::Handle(h.f)});
  w2.body = body2;
  w2.cond = cond2;
  w2.trip_count = 1000;
  p->instructions.push_back(w2);  // 9 p, 10 q, 11 r, 12 trips, 13 capped
  return p;
}

TEST(LoopGraphExecutorTest, SwappedRepeatedAndInvariantResultsLandInTheirSlots) {
  std::vector<OutputSpec> outputs;
  for (uint32_t v = 3; v <= 13; ++v) outputs.push_back({v, true, false});
  const Ran plain = RunWith(false, ShuffleProgram, outputs);
  const Ran graph = RunWith(true, ShuffleProgram, outputs);
  ASSERT_EQ(plain.outputs.size(), outputs.size());
  ASSERT_EQ(graph.outputs.size(), outputs.size());
  EXPECT_EQ(graph.capture_calls, 2);
  EXPECT_EQ(graph.loops.graph_whiles, 2);
  EXPECT_GT(Int64Of(plain.outputs[4]), 5) << "the first while takes several trips";
  EXPECT_GT(Int64Of(plain.outputs[9]), 5) << "the second too";
  for (size_t i = 0; i < outputs.size(); ++i) {
    EXPECT_TRUE(plain.outputs[i] == graph.outputs[i]) << "output " << i;
  }
  EXPECT_LE(graph.peak_trip_bytes, graph.arena_bytes);
}

// A fixed-trip loop whose body does not fuse (a dot): x = A @ x / 2 + 1,
// 37 times, from the handle X.
std::shared_ptr<Program> FixedDotProgram(const Handles& h) {
  auto p = std::make_shared<Program>();
  auto body = std::make_shared<Program>();                                           // 0 x, 1 A
  body->instructions.push_back(Op(OpKind::kDot, {V(1), V(0)}));                      // 2
  body->instructions.push_back(WithScalar(K::kMultiply, V(2), Scalar::Float(0.5)));  // 3
  body->instructions.push_back(WithScalar(K::kAdd, V(3), Scalar::Float(1)));         // 4
  body->yields = {V(4)};
  Instruction loop = Op(OpKind::kLoop, {Operand::Handle(h.x), Operand::Handle(h.a)});
  loop.body = body;
  loop.trip_count = 37;
  p->instructions.push_back(loop);  // 0
  return p;
}

TEST(LoopGraphExecutorTest, FixedLoopOfADotRunsAsAGraphBitForBit) {
  const std::vector<OutputSpec> outputs = {{0, true, false}};
  const Ran plain = RunWith(false, FixedDotProgram, outputs);
  const Ran graph = RunWith(true, FixedDotProgram, outputs);
  ASSERT_EQ(graph.outputs.size(), 1u);
  EXPECT_EQ(graph.loops.graph_loops, 1);
  EXPECT_EQ(graph.graph_trips, 36);
  EXPECT_TRUE(plain.outputs[0] == graph.outputs[0]);
  EXPECT_TRUE(graph.x_after == plain.x_after) << "the handle X was overwritten";
}

TEST(LoopGraphExecutorTest, AFailedCaptureRunsTripByTrip) {
  const MakeFn make = [](const Handles& h) { return ConvergeProgram(h, 10000); };
  const Ran plain = RunWith(false, make, kConvergeOutputs);
  const Ran failed =
      RunWith(true, make, kConvergeOutputs, absl::InternalError("cannot record this op"));
  ASSERT_EQ(failed.outputs.size(), 5u);
  EXPECT_EQ(failed.capture_calls, 1);
  EXPECT_EQ(failed.graph_trips, 0);
  EXPECT_EQ(failed.loops.graph_fallbacks, 1);
  EXPECT_EQ(failed.loops.graph_whiles, 0);
  for (size_t i = 0; i < 5; ++i) EXPECT_TRUE(plain.outputs[i] == failed.outputs[i]);
  // Too small an arena: tried again with four times the bytes where the
  // budget has them (here it has not: the run is held to its bound), then
  // trip by trip.
  const Ran small =
      RunWith(true, make, kConvergeOutputs, absl::ResourceExhaustedError("arena too small"));
  EXPECT_GE(small.capture_calls, 1);
  EXPECT_EQ(small.loops.graph_fallbacks, 1);
  for (size_t i = 0; i < 5; ++i) EXPECT_TRUE(plain.outputs[i] == small.outputs[i]);
}

TEST(LoopGraphExecutorTest, BodiesWithOpsAGraphCannotRecordAreNotCaptured) {
  // A sort reads back to the host: the planner does not mark the loop.
  const MakeFn make = [](const Handles& h) {
    auto p = std::make_shared<Program>();
    auto body = std::make_shared<Program>();                                           // 0 x
    body->instructions.push_back(Op(OpKind::kSort, {V(0)}));                           // 1
    body->instructions.push_back(WithScalar(K::kMultiply, V(1), Scalar::Float(0.5)));  // 2
    body->yields = {V(2)};
    Instruction loop = Op(OpKind::kLoop, {Operand::Handle(h.x)});
    loop.body = body;
    loop.trip_count = 20;
    p->instructions.push_back(loop);
    return p;
  };
  const Ran plain = RunWith(false, make, {{0, true, false}});
  const Ran graph = RunWith(true, make, {{0, true, false}});
  EXPECT_EQ(graph.capture_calls, 0);
  EXPECT_EQ(graph.loops.graph_loops, 0);
  ASSERT_EQ(graph.outputs.size(), 1u);
  EXPECT_TRUE(plain.outputs[0] == graph.outputs[0]);
}

}  // namespace
}  // namespace resident

// PlanProgram with a fake handle resolver: validation before anything runs,
// liveness, and the device-memory bound.
#include "server/program/planner.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace resident {
namespace {

using ::testing::HasSubstr;

class PlannerTest : public ::testing::Test {
 protected:
  // A resident array known to the fake resolver (no buffer: planning never
  // touches data).
  HandleId AddArray(DType dtype, Shape shape) {
    HandleId h = HandleId::Random();
    arrays_[h] = DeviceArray{nullptr, dtype, std::move(shape)};
    return h;
  }

  absl::StatusOr<Plan> Plan_(Program p, const std::vector<OutputSpec>& outputs) {
    HandleResolver resolve = [this](const HandleId& h) -> absl::StatusOr<DeviceArray> {
      ++resolves_;
      auto it = arrays_.find(h);
      if (it == arrays_.end()) return absl::NotFoundError("array handle not found");
      return it->second;
    };
    return PlanProgram(std::make_shared<const Program>(std::move(p)), outputs, resolve, limits_);
  }

  static Instruction Ones(Shape shape, DType d = DType::kFloat64) {
    Instruction ins;
    ins.op = OpKind::kOnes;
    ins.shape = std::move(shape);
    ins.dtype = d;
    return ins;
  }
  static Instruction Binary(ElementwiseKind kind, Operand a, Operand b) {
    return MakeElementwise(kind, {a, b});
  }
  static Instruction Unary(ElementwiseKind kind, Operand a) { return MakeElementwise(kind, {a}); }
  static Instruction Binary(OpKind op, Operand a, Operand b) {
    Instruction ins;
    ins.op = op;
    ins.operands = {a, b};
    return ins;
  }
  static Instruction Unary(OpKind op, Operand a) {
    Instruction ins;
    ins.op = op;
    ins.operands = {a};
    return ins;
  }
  static Operand V(uint32_t v) { return Operand::Value(v); }
  static OutputSpec Keep(uint32_t v) { return OutputSpec{v, true, false}; }
  static OutputSpec Data(uint32_t v) { return OutputSpec{v, false, true}; }

  // A loop over `carried` values (operands 0..n-1) running `body`.
  static Instruction Loop(int64_t trips, std::vector<Operand> operands, Program body) {
    Instruction ins;
    ins.op = OpKind::kLoop;
    ins.trip_count = trips;
    ins.operands = std::move(operands);
    ins.body = std::make_shared<const Program>(std::move(body));
    return ins;
  }
  // Body: x -> x + x, one carried value.
  static Program DoublingBody() {
    Program body;
    body.instructions.push_back(Binary(ElementwiseKind::kAdd, V(0), V(0)));
    body.yields = {V(1)};
    return body;
  }
  // `depth` loops nested inside each other around a doubling body.
  static Program Nested(int depth) {
    Program p = DoublingBody();
    for (int d = 1; d < depth; ++d) {
      Program outer;
      outer.instructions.push_back(Loop(2, {V(0)}, std::move(p)));
      outer.yields = {V(1)};
      p = std::move(outer);
    }
    Program top;
    top.instructions.push_back(Ones({4}));
    top.instructions.push_back(Loop(2, {V(0)}, std::move(p)));
    return top;
  }

  absl::flat_hash_map<HandleId, DeviceArray> arrays_;
  ProgramLimits limits_;
  int resolves_ = 0;
};

TEST_F(PlannerTest, InfersTypesOfASimpleProgram) {
  const HandleId h = AddArray(DType::kInt32, {3, 1});
  Program p;
  p.instructions.push_back(Ones({4}, DType::kFloat32));                               // v0
  p.instructions.push_back(Binary(ElementwiseKind::kAdd, Operand::Handle(h), V(0)));  // v1
  p.instructions.push_back(Unary(ElementwiseKind::kNegative, V(1)));                  // v2
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(2), Data(0)});
  ASSERT_TRUE(plan.ok()) << plan.status();
  // np.ones((3,1), np.int32) + np.ones(4, np.float32) -> float64 (3, 4)
  ASSERT_EQ(plan->output_types.size(), 2u);
  EXPECT_EQ(plan->output_types[0], (ValueType{DType::kFloat64, {3, 4}}));
  EXPECT_EQ(plan->output_types[1], (ValueType{DType::kFloat32, {4}}));
  EXPECT_EQ(plan->inputs.size(), 1u);
  EXPECT_TRUE(plan->inputs.contains(h));
  EXPECT_EQ(plan->executed_ops, 3);
}

TEST_F(PlannerTest, RoutinesOfSeveralResultsDefineAValueEach) {
  // svd of a (5, 3) matrix: U v1, S v2, Vh v3 (full_matrices), then S is
  // used by a later instruction, whose result is v4.
  Program p;
  p.instructions.push_back(Ones({5, 3}));       // v0
  Instruction svd = Unary(OpKind::kSvd, V(0));  // v1, v2, v3
  svd.full = true;
  p.instructions.push_back(svd);
  p.instructions.push_back(Unary(ElementwiseKind::kNegative, V(2)));  // v4
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(1), Keep(3), Keep(4)});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->output_types.size(), 3u);
  EXPECT_EQ(plan->output_types[0], (ValueType{DType::kFloat64, {5, 5}}));
  EXPECT_EQ(plan->output_types[1], (ValueType{DType::kFloat64, {3, 3}}));
  EXPECT_EQ(plan->output_types[2], (ValueType{DType::kFloat64, {3}}));
  // Every result is allocated at once: the bound covers U, S and Vh.
  EXPECT_GE(plan->peak_bytes, (15 + 25 + 3 + 9) * 8);
  // A value past the last one is refused as before.
  Program q;
  q.instructions.push_back(Ones({2, 2}));
  q.instructions.push_back(Unary(OpKind::kEigh, V(0)));  // v1, v2
  EXPECT_FALSE(Plan_(q, {Keep(3)}).ok());
  EXPECT_TRUE(Plan_(q, {Keep(2)}).ok());
  Program r;  // eigh of a non-square matrix
  r.instructions.push_back(Ones({2, 3}));
  r.instructions.push_back(Unary(OpKind::kEigh, V(0)));
  absl::StatusOr<Plan> bad = Plan_(r, {Keep(1)});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("square"));
}

TEST_F(PlannerTest, ResolvesEachHandleOnce) {
  const HandleId h = AddArray(DType::kFloat64, {2});
  Program p;
  p.instructions.push_back(Binary(ElementwiseKind::kAdd, Operand::Handle(h), Operand::Handle(h)));
  p.instructions.push_back(Binary(ElementwiseKind::kAdd, V(0), Operand::Handle(h)));
  ASSERT_TRUE(Plan_(std::move(p), {Keep(1)}).ok());
  EXPECT_EQ(resolves_, 1);
}

TEST_F(PlannerTest, LaterResultReferenceIsInvalid) {
  Program p;
  p.instructions.push_back(Ones({2}));
  p.instructions.push_back(Binary(ElementwiseKind::kAdd, V(0), V(2)));  // v2 is later
  p.instructions.push_back(Ones({2}));
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(1)});
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("instruction 1 (add): operand 1: refers to value 2"));
}

TEST_F(PlannerTest, SelfReferenceIsInvalid) {
  Program p;
  p.instructions.push_back(Unary(ElementwiseKind::kNegative, V(0)));
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(0)});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PlannerTest, UnknownHandleIsNotFound) {
  AddArray(DType::kFloat64, {2});
  Program p;
  p.instructions.push_back(Ones({2}));
  p.instructions.push_back(
      Binary(ElementwiseKind::kAdd, V(0), Operand::Handle(HandleId::Random())));
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(1)});
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("instruction 1 (add): operand 1"));
}

TEST_F(PlannerTest, OperandErrorsNameTheInstruction) {
  Program p;
  p.instructions.push_back(Ones({2, 3}));
  p.instructions.push_back(Ones({4}));
  p.instructions.push_back(Binary(OpKind::kDot, V(0), V(1)));
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(2)});
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("instruction 2 (dot): shapes (2, 3) and (4,) not aligned"));
}

TEST_F(PlannerTest, LoopTripCounts) {
  for (int64_t trips :
       {int64_t{-1}, int64_t{-(int64_t{1} << 40)}, limits_.max_trip_count + 1, INT64_MAX}) {
    Program p;
    p.instructions.push_back(Ones({2}));
    p.instructions.push_back(Loop(trips, {V(0)}, DoublingBody()));
    absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(1)});
    ASSERT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << trips;
    EXPECT_THAT(std::string(plan.status().message()),
                HasSubstr(absl::StrCat("instruction 1 (loop): trip count ", trips)));
  }
  for (int64_t trips : {int64_t{0}, int64_t{1}, limits_.max_trip_count}) {
    Program p;
    p.instructions.push_back(Ones({2}));
    p.instructions.push_back(Loop(trips, {V(0)}, DoublingBody()));
    absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(1)});
    ASSERT_TRUE(plan.ok()) << trips << ": " << plan.status();
    EXPECT_EQ(plan->executed_ops, 2 + trips);
  }
}

TEST_F(PlannerTest, ExecutedOpsMultiplyOutAndAreBounded) {
  // Two nested loops of 2^20 trips each: 2^40 adds, over a 2^34 limit.
  Program inner = DoublingBody();
  Program outer;
  outer.instructions.push_back(Loop(int64_t{1} << 20, {V(0)}, std::move(inner)));
  outer.yields = {V(1)};
  Program p;
  p.instructions.push_back(Ones({2}));
  p.instructions.push_back(Loop(int64_t{1} << 20, {V(0)}, std::move(outer)));
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(1)});
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("ops"));
}

TEST_F(PlannerTest, NestingDepthLimit) {
  absl::StatusOr<Plan> ok = Plan_(Nested(limits_.max_loop_depth), {Keep(1)});
  ASSERT_TRUE(ok.ok()) << ok.status();
  absl::StatusOr<Plan> deep = Plan_(Nested(limits_.max_loop_depth + 1), {Keep(1)});
  ASSERT_EQ(deep.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(deep.status().message()), HasSubstr("nest deeper than the limit"));
}

TEST_F(PlannerTest, YieldTypeMismatch) {
  // Carried float64 (3,), body yields int32 (3,).
  Program body;
  Instruction cast = Unary(OpKind::kAstype, V(0));
  cast.dtype = DType::kInt32;
  body.instructions.push_back(cast);
  body.yields = {V(1)};
  Program p;
  p.instructions.push_back(Ones({3}));
  p.instructions.push_back(Loop(3, {V(0)}, std::move(body)));
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(1)});
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("body yield 0 is int32 (3,) but carried value 0 is float64 (3,)"));

  // Shape change: x -> sum(x).
  Program body2;
  body2.instructions.push_back(Unary(OpKind::kSum, V(0)));
  body2.yields = {V(1)};
  Program p2;
  p2.instructions.push_back(Ones({3}));
  p2.instructions.push_back(Loop(3, {V(0)}, std::move(body2)));
  plan = Plan_(std::move(p2), {Keep(1)});
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("body yield 0"));
}

TEST_F(PlannerTest, LoopWithInvariantAndSeveralCarriedValues) {
  // carried (a, b), invariant c: a' = a + c, b' = b * a.
  Program body;
  body.instructions.push_back(Binary(ElementwiseKind::kAdd, V(0), V(2)));       // v3
  body.instructions.push_back(Binary(ElementwiseKind::kMultiply, V(1), V(0)));  // v4
  body.yields = {V(3), V(4)};
  Program p;
  p.instructions.push_back(Ones({5}));                                     // v0
  p.instructions.push_back(Ones({5}));                                     // v1
  p.instructions.push_back(Ones({5}));                                     // v2
  p.instructions.push_back(Loop(4, {V(0), V(1), V(2)}, std::move(body)));  // v3, v4
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(3), Keep(4)});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->top.types.size(), 5u);
  EXPECT_EQ(plan->executed_ops, 3 + 1 + 4 * 2);
}

TEST_F(PlannerTest, DecidesEachLoweringOnce) {
  // The compute dtype and scalar fills of elementwise ops (in a loop body
  // too) and arange's fill are decided here; the executor only runs them.
  Program body;
  Instruction add = Unary(ElementwiseKind::kAdd, V(0));
  add.scalars = {ScalarOperand{1, Scalar::Int(2)}};  // int32 x + 2 stays int32
  body.instructions.push_back(add);
  body.yields = {V(1)};
  Program p;
  p.instructions.push_back(Ones({4}, DType::kInt32));          // v0
  p.instructions.push_back(Loop(3, {V(0)}, std::move(body)));  // v1
  Instruction scale = Unary(ElementwiseKind::kMultiply, V(1));
  scale.scalars = {ScalarOperand{0, Scalar::Float(1.5)}};  // 1.5 * int32 -> float64
  p.instructions.push_back(scale);                         // v2
  Instruction range;
  range.op = OpKind::kArange;
  range.stop = Scalar::Int(2);
  range.dtype = DType::kBool;
  p.instructions.push_back(range);  // v3: filled through int64
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(2), Keep(3)});
  ASSERT_TRUE(plan.ok()) << plan.status();
  const PlannedScope& top = plan->top;
  ASSERT_EQ(top.lowering_at.size(), 4u);
  ASSERT_NE(top.lowering_at[0], nullptr);  // ones: its fill
  EXPECT_EQ(top.lowering_at[0]->fills.size(), 1u);
  EXPECT_EQ(top.lowering_at[1], nullptr);  // the loop itself has none
  const Lowering* in_body = top.bodies[1]->lowering_at[0].get();
  ASSERT_NE(in_body, nullptr);
  EXPECT_EQ(in_body->compute, DType::kInt32);
  ASSERT_EQ(in_body->fills.size(), 1u);
  EXPECT_EQ(in_body->fills[0].as_int64(), 2);
  ASSERT_NE(top.lowering_at[2], nullptr);
  EXPECT_EQ(top.lowering_at[2]->compute, DType::kFloat64);
  ASSERT_EQ(top.lowering_at[2]->fills.size(), 1u);
  EXPECT_EQ(top.lowering_at[2]->fills[0].as_double(), 1.5);
  ASSERT_NE(top.lowering_at[3], nullptr);
  EXPECT_EQ(top.lowering_at[3]->compute, DType::kInt64);
  EXPECT_EQ(top.lowering_at[3]->arange.length, 2);
}

TEST_F(PlannerTest, BodyYieldingMoreValuesThanOperands) {
  Program body;
  body.yields = {V(0), V(0)};
  Program p;
  p.instructions.push_back(Ones({5}));
  p.instructions.push_back(Loop(1, {V(0)}, std::move(body)));
  EXPECT_EQ(Plan_(std::move(p), {Keep(1)}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PlannerTest, InlineResultsOverTheLimit) {
  limits_.max_inline_bytes = 1024;
  Program p;
  p.instructions.push_back(Ones({128}));  // exactly 1024 bytes
  p.instructions.push_back(Ones({129}));
  ASSERT_TRUE(Plan_(p, {Data(0)}).ok());
  absl::StatusOr<Plan> plan = Plan_(p, {Data(1)});
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("over the server's limit"));
  // Inline bytes add up across outputs.
  plan = Plan_(p, {Data(0), Data(0)});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  // Kept (not inline) results are not counted.
  EXPECT_TRUE(Plan_(p, {Keep(1), Data(0)}).ok());
}

TEST_F(PlannerTest, BadOutputs) {
  Program p;
  p.instructions.push_back(Ones({2}));
  EXPECT_EQ(Plan_(p, {Keep(1)}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Plan_(p, {Keep(0xFFFFFFFFu)}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Plan_(p, {OutputSpec{0, false, false}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  Program y = p;
  y.yields = {V(0)};
  EXPECT_EQ(Plan_(y, {Keep(0)}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PlannerTest, InstructionCountLimit) {
  limits_.max_instructions = 10;
  Program p;
  for (int i = 0; i < 11; ++i) p.instructions.push_back(Ones({1}));
  EXPECT_EQ(Plan_(p, {Keep(0)}).status().code(), absl::StatusCode::kInvalidArgument);
  p.instructions.pop_back();
  EXPECT_TRUE(Plan_(p, {Keep(0)}).ok());
}

TEST_F(PlannerTest, PeakBytesBoundsASimpleProgram) {
  // v0 = ones(1000); v1 = v0 + v0; keep v1. At the add both v0 and the
  // result exist: at least 16000 bytes, and no more than a few arrays.
  Program p;
  p.instructions.push_back(Ones({1000}));
  p.instructions.push_back(Binary(ElementwiseKind::kAdd, V(0), V(0)));
  absl::StatusOr<Plan> plan = Plan_(p, {Keep(1)});
  ASSERT_TRUE(plan.ok());
  EXPECT_GE(plan->peak_bytes, 16000);
  EXPECT_LE(plan->peak_bytes, 24000);
}

TEST_F(PlannerTest, PeakBytesOfAChainDoesNotGrowWithItsLength) {
  // x = ones(1000); 100 times x = x + x: dead values are freed, so the bound
  // stays at two arrays, not 101.
  Program p;
  p.instructions.push_back(Ones({1000}));
  for (uint32_t i = 0; i < 100; ++i) {
    p.instructions.push_back(Binary(ElementwiseKind::kAdd, V(i), V(i)));
  }
  absl::StatusOr<Plan> plan = Plan_(p, {Keep(100)});
  ASSERT_TRUE(plan.ok());
  EXPECT_GE(plan->peak_bytes, 16000);
  EXPECT_LE(plan->peak_bytes, 24000);
}

TEST_F(PlannerTest, PeakBytesCountsKeptValuesAndPromotion) {
  // Keeping every intermediate keeps them all alive.
  Program p;
  p.instructions.push_back(Ones({1000}));
  for (uint32_t i = 0; i < 10; ++i) {
    p.instructions.push_back(Binary(ElementwiseKind::kAdd, V(i), V(i)));
  }
  std::vector<OutputSpec> all;
  for (uint32_t i = 0; i <= 10; ++i) all.push_back(Keep(i));
  absl::StatusOr<Plan> plan = Plan_(p, all);
  ASSERT_TRUE(plan.ok());
  EXPECT_GE(plan->peak_bytes, 11 * 8000);

  // int32 (1000,) + float64 (1000,): result plus the promoted copy.
  Program q;
  q.instructions.push_back(Ones({1000}, DType::kInt32));
  q.instructions.push_back(Ones({1000}));
  q.instructions.push_back(Binary(ElementwiseKind::kAdd, V(0), V(1)));
  plan = Plan_(q, {Keep(2)});
  ASSERT_TRUE(plan.ok());
  EXPECT_GE(plan->peak_bytes, 4000 + 8000 + 8000 + 8000);
}

TEST_F(PlannerTest, PeakBytesIncludesLoopBodies) {
  // A loop whose body makes a 1 MB temporary from a 8-byte carried value.
  Program body;
  Instruction big = Ones({125000});                                        // 1,000,000 bytes
  body.instructions.push_back(big);                                        // v1
  body.instructions.push_back(Unary(OpKind::kSum, V(1)));                  // v2 (0-d)
  body.instructions.push_back(Binary(ElementwiseKind::kAdd, V(0), V(2)));  // v3
  body.yields = {V(3)};
  Program p;
  Instruction zero = Ones({});
  p.instructions.push_back(zero);
  p.instructions.push_back(Loop(3, {V(0)}, std::move(body)));
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(1)});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_GE(plan->peak_bytes, 1000000);
  EXPECT_LE(plan->peak_bytes, 1000100);
}

TEST_F(PlannerTest, OverflowingSizesAreInvalidNotWrapped) {
  Program p;
  p.instructions.push_back(Ones({int64_t{1} << 62, 4}));
  EXPECT_EQ(Plan_(p, {Keep(0)}).status().code(), absl::StatusCode::kInvalidArgument);
  // Legal arrays whose total would overflow saturate the bound instead.
  Program q;
  for (int i = 0; i < 4; ++i) q.instructions.push_back(Ones({int64_t{1} << 59}));
  absl::StatusOr<Plan> plan = Plan_(q, {Keep(0), Keep(1), Keep(2), Keep(3)});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_GT(plan->peak_bytes, int64_t{1} << 62);
}

// --- chain folding (chain_folding.h) ---------------------------------------

TEST_F(PlannerTest, SeedChainFoldsIntoOneLoop) {
  Program p;
  p.instructions.push_back(Ones({1024, 512, 4, 4}));  // v0
  for (uint32_t i = 0; i < 1024; ++i)
    p.instructions.push_back(Binary(ElementwiseKind::kAdd, V(i), V(i)));
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(1024)});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->folded_runs, 1);
  ASSERT_EQ(plan->program->instructions.size(), 2u);
  const Instruction& loop = plan->program->instructions[1];
  EXPECT_EQ(loop.op, OpKind::kLoop);
  EXPECT_EQ(loop.trip_count, 1024);
  EXPECT_EQ(plan->outputs[0].value, 1u);  // renumbered to the loop's output
  // The bound is three arrays (the loop's operand, its carried value and
  // the body's result), one more than unfolded, never one per add.
  EXPECT_LE(plan->peak_bytes, 3 * int64_t{1024} * 512 * 4 * 4 * 8);
}

TEST_F(PlannerTest, ChainWithFixedHandleFoldsAfterItsFirstOp) {
  const HandleId a = AddArray(DType::kFloat32, {16});
  Program p;
  p.instructions.push_back(
      Binary(ElementwiseKind::kAdd, Operand::Handle(a), Operand::Handle(a)));  // v0
  for (uint32_t i = 0; i < 100; ++i) {
    p.instructions.push_back(Binary(ElementwiseKind::kSubtract, V(i), Operand::Handle(a)));
  }
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(100)});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->folded_runs, 1);
  ASSERT_EQ(plan->program->instructions.size(), 2u);
  EXPECT_EQ(plan->program->instructions[1].trip_count, 100);
  const Program& body = *plan->program->instructions[1].body;
  ASSERT_EQ(body.instructions.size(), 1u);
  EXPECT_EQ(body.instructions[0].elementwise, ElementwiseKind::kSubtract);
  EXPECT_FALSE(body.instructions[0].operands[0].is_handle);  // x - a keeps its order
  EXPECT_TRUE(body.instructions[0].operands[1].is_handle);
}

TEST_F(PlannerTest, ChainStopsAtAnOutputOrASecondReader) {
  Program p;
  p.instructions.push_back(Ones({8}));  // v0
  for (uint32_t i = 0; i < 10; ++i)
    p.instructions.push_back(Binary(ElementwiseKind::kAdd, V(i), V(i)));
  // v5 is an output, v8 is read again by the last instruction.
  p.instructions.push_back(Binary(ElementwiseKind::kMultiply, V(10), V(8)));  // v11
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(5), Keep(11)});
  ASSERT_TRUE(plan.ok()) << plan.status();
  // v0..v5 is a run of 5 adds (folds); v5..v8 only 3 (stays); v8..v10 2.
  EXPECT_EQ(plan->folded_runs, 1);
  // ones, loop, 3 adds, 2 adds, multiply.
  EXPECT_EQ(plan->program->instructions.size(), 8u);
  EXPECT_EQ(plan->program->instructions[1].trip_count, 5);
  EXPECT_EQ(plan->outputs[0].value, 1u);
  EXPECT_EQ(plan->outputs[1].value, 7u);
}

TEST_F(PlannerTest, ChainThatChangesDtypeIsNotFolded) {
  const HandleId a = AddArray(DType::kFloat64, {4});
  Program p;
  p.instructions.push_back(Ones({4}, DType::kInt32));  // v0
  for (uint32_t i = 0; i < 6; ++i) {
    p.instructions.push_back(
        Binary(ElementwiseKind::kAdd, V(i), Operand::Handle(a)));  // int32 -> f64
  }
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(6)});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->folded_runs, 0);
  EXPECT_EQ(plan->program->instructions.size(), 7u);
}

TEST_F(PlannerTest, InvalidProgramIsReportedUnfolded) {
  Program p;
  p.instructions.push_back(Ones({8}));
  for (uint32_t i = 0; i < 6; ++i)
    p.instructions.push_back(Binary(ElementwiseKind::kAdd, V(i), V(i)));
  p.instructions.push_back(Binary(ElementwiseKind::kAdd, V(40), V(0)));
  absl::StatusOr<Plan> plan = Plan_(std::move(p), {Keep(6)});
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("instruction 7 (add)"));
}

}  // namespace
}  // namespace resident

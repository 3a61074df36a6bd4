// The op registry's rows: complete, named once, and what the decoder parses.
#include "server/program/op_registry.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace resident {
namespace {

constexpr int kNumOps = static_cast<int>(OpKind::kSvdvals) + 1;

TEST(OpRegistry, EveryOpHasARowWithItsFunctions) {
  std::set<std::string> names;
  for (int i = 0; i < kNumOps; ++i) {
    const OpKind op = static_cast<OpKind>(i);
    const OpDef& d = OpDefOf(op);
    EXPECT_EQ(d.kind, op);
    EXPECT_TRUE(names.insert(d.name).second) << "duplicate name " << d.name;
    if (op == OpKind::kLoop) continue;  // the planner types and runs loops
    EXPECT_NE(d.infer, nullptr) << d.name;
    EXPECT_NE(d.run, nullptr) << d.name;
    EXPECT_EQ(d.takes_scalars, d.operands == kByPosition) << d.name;
  }
}

TEST(OpRegistry, ParsesEveryWireNameButElementwise) {
  for (int i = 0; i < kNumOps; ++i) {
    const OpKind op = static_cast<OpKind>(i);
    const std::optional<ParsedOp> p = ParseOp(OpName(op));
    if (op == OpKind::kElementwise) {
      EXPECT_FALSE(p.has_value());
    } else {
      ASSERT_TRUE(p.has_value()) << OpName(op);
      EXPECT_EQ(p->op, op);
    }
  }
  const std::optional<ParsedOp> add = ParseOp("add");
  ASSERT_TRUE(add.has_value());
  EXPECT_EQ(add->op, OpKind::kElementwise);
  EXPECT_EQ(add->elementwise, ElementwiseKind::kAdd);
  EXPECT_FALSE(ParseOp("no_such_op").has_value());
}

TEST(OpRegistry, ReductionsNameTheirKind) {
  EXPECT_EQ(OpDefOf(OpKind::kArgmin).reduce, ReduceKind::kArgmin);
  EXPECT_STREQ(OpName(OpKind::kArgmin), "argmin");
  EXPECT_FALSE(OpDefOf(OpKind::kDot).reduce.has_value());
}

TEST(OpRegistry, OperandCountsAreCheckedFromTheRow) {
  Instruction ins;
  ins.op = OpKind::kTranspose;
  const absl::StatusOr<ValueType> t = InferType(ins, {});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "transpose takes 1 operand, got 0");
  ins.op = OpKind::kDot;
  ins.scalars.push_back({0, Scalar::Int(1)});
  EXPECT_EQ(InferType(ins, {}).status().message(), "dot takes no scalar operands");
}

TEST(OpRegistry, AliasingFollowsTheRow) {
  Instruction ins;
  ins.op = OpKind::kAstype;
  ins.dtype = DType::kFloat32;
  const ValueType f32{DType::kFloat32, {4}}, f64{DType::kFloat64, {4}};
  EXPECT_TRUE(ResultAliasesOperand(ins, {f32}, f32));
  EXPECT_FALSE(ResultAliasesOperand(ins, {f64}, f32));
  EXPECT_EQ(AllocationBound(ins, {f32}, f32), 0);
  EXPECT_EQ(AllocationBound(ins, {f64}, f32), 16);
}

// Ops whose time their size does not bound never run on the RPC thread:
// a 3x3 svd that never returned there stalled every tenant's calls.
TEST(OpRegistry, LibraryRoutinesAndLoopsAreNotSizeBounded) {
  for (OpKind op :
       {OpKind::kDot, OpKind::kMatmul, OpKind::kArange, OpKind::kWhile, OpKind::kCholesky,
        OpKind::kSolve, OpKind::kInv, OpKind::kDet, OpKind::kEigvalsh, OpKind::kSvdvals,
        OpKind::kQr, OpKind::kSvd, OpKind::kEigh, OpKind::kSlogdet}) {
    EXPECT_FALSE(OpDefOf(op).size_bounded) << OpName(op);
  }
  for (OpKind op :
       {OpKind::kElementwise, OpKind::kSum, OpKind::kSlice, OpKind::kReshape, OpKind::kFull}) {
    EXPECT_TRUE(OpDefOf(op).size_bounded) << OpName(op);
  }
}

}  // namespace
}  // namespace resident

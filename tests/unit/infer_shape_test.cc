// Inference of the reductions and shaping ops (infer_reduce.cc,
// infer_shape.cc) against NumPy 2.4: each expected dtype, shape and
// message is NumPy's for the expression in the comment beside it.
#include "server/program/infer_shape.h"
#include "server/program/op_registry.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace resident {
namespace {

using ::testing::HasSubstr;

constexpr DType kB = DType::kBool, kI8 = DType::kInt8, kI16 = DType::kInt16, kI32 = DType::kInt32,
                kI64 = DType::kInt64, kU8 = DType::kUint8, kU16 = DType::kUint16,
                kU32 = DType::kUint32, kU64 = DType::kUint64, kF32 = DType::kFloat32,
                kF64 = DType::kFloat64, kF16 = DType::kFloat16, kBF16 = DType::kBFloat16;

Instruction Op(OpKind op) {
  Instruction ins;
  ins.op = op;
  return ins;
}
ValueType T(DType d, Shape s) { return ValueType{d, std::move(s)}; }

void ExpectInvalid(const absl::StatusOr<ValueType>& t, const std::string& text) {
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr(text));
}

TEST(InferReduction, ResultDtypesAreNumPys) {
  // [getattr(np, op)(np.ones((2, 3), dt)).dtype for op in ops] for each dt
  const OpKind ops[] = {OpKind::kSum,    OpKind::kProd,   OpKind::kMean, OpKind::kMax, OpKind::kMin,
                        OpKind::kArgmax, OpKind::kArgmin, OpKind::kAny,  OpKind::kAll};
  // (rows in kAllDTypes order)
  const DType want[][9] = {{kI64, kI64, kF64, kB, kB, kI64, kI64, kB, kB},
                           {kI64, kI64, kF64, kI8, kI8, kI64, kI64, kB, kB},
                           {kI64, kI64, kF64, kI16, kI16, kI64, kI64, kB, kB},
                           {kI64, kI64, kF64, kI32, kI32, kI64, kI64, kB, kB},
                           {kI64, kI64, kF64, kI64, kI64, kI64, kI64, kB, kB},
                           {kU64, kU64, kF64, kU8, kU8, kI64, kI64, kB, kB},
                           {kU64, kU64, kF64, kU16, kU16, kI64, kI64, kB, kB},
                           {kU64, kU64, kF64, kU32, kU32, kI64, kI64, kB, kB},
                           {kU64, kU64, kF64, kU64, kU64, kI64, kI64, kB, kB},
                           {kF32, kF32, kF32, kF32, kF32, kI64, kI64, kB, kB},
                           {kF64, kF64, kF64, kF64, kF64, kI64, kI64, kB, kB},
                           {kF16, kF16, kF16, kF16, kF16, kI64, kI64, kB, kB},
                           {kBF16, kBF16, kBF16, kBF16, kBF16, kI64, kI64, kB, kB}};
  static_assert(std::size(want) == std::size(kAllDTypes));
  for (int d = 0; d < static_cast<int>(std::size(want)); ++d) {
    for (int k = 0; k < 9; ++k) {
      absl::StatusOr<ValueType> t = InferType(Op(ops[k]), {T(kAllDTypes[d], {2, 3})});
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_EQ(*t, T(want[d][k], {})) << OpName(ops[k]) << " of " << DTypeName(kAllDTypes[d]);
    }
  }
}

TEST(InferReduction, AxesAndKeepdims) {
  Instruction sum = Op(OpKind::kSum);
  sum.has_axes = true;
  sum.axes = {0, -1};
  sum.keepdims = true;  // np.sum(np.ones((2,3,4)), axis=(0,-1), keepdims=True).shape
  EXPECT_EQ(*InferType(sum, {T(kF64, {2, 3, 4})}), T(kF64, {1, 3, 1}));
  sum.keepdims = false;
  EXPECT_EQ(*InferType(sum, {T(kF64, {2, 3, 4})}), T(kF64, {3}));
  sum.axes = {};  // axis=() reduces nothing
  EXPECT_EQ(*InferType(sum, {T(kI32, {2, 3})}), T(kI64, {2, 3}));
  Instruction arg = Op(OpKind::kArgmax);
  arg.axis = 1;
  arg.keepdims = true;  // np.argmax(np.ones((2,3,4)), axis=1, keepdims=True).shape
  EXPECT_EQ(*InferType(arg, {T(kF32, {2, 3, 4})}), T(kI64, {2, 1, 4}));
}

TEST(InferReduction, ErrorsAreNumPys) {
  Instruction sum = Op(OpKind::kSum);
  sum.has_axes = true;
  sum.axes = {1, -1};
  ExpectInvalid(InferType(sum, {T(kF64, {2, 3})}), "duplicate value in 'axis'");
  sum.axes = {2};
  ExpectInvalid(InferType(sum, {T(kF64, {2, 3})}),
                "axis 2 is out of bounds for array of dimension 2");
  Instruction arg = Op(OpKind::kArgmin);
  arg.has_axes = true;
  arg.axes = {0, 1};
  ExpectInvalid(InferType(arg, {T(kF64, {2, 3})}), "'tuple' object cannot be interpreted");
  // np.zeros((0, 3)).max(axis=0) raises; .max(axis=1) is an empty array.
  Instruction max = Op(OpKind::kMax);
  max.axis = 0;
  ExpectInvalid(InferType(max, {T(kF64, {0, 3})}),
                "zero-size array to reduction operation maximum which has no identity");
  max.axis = 1;
  EXPECT_EQ(*InferType(max, {T(kF64, {0, 3})}), T(kF64, {0}));
  ExpectInvalid(InferType(Op(OpKind::kArgmax), {T(kI32, {0})}),
                "attempt to get argmax of an empty sequence");
  // Empty reductions with an identity are fine: np.zeros((0, 3)).prod() -> 1.0
  EXPECT_EQ(*InferType(Op(OpKind::kProd), {T(kF64, {0, 3})}), T(kF64, {}));
  ExpectInvalid(InferType(Op(OpKind::kMean), {}), "mean takes 1 operand, got 0");
  // A 0-d array takes axis=0 in sum, max, ... but np.mean(x0d, axis=0) is
  // AxisError (its item count checks the axis).
  Instruction zero_d = Op(OpKind::kSum);
  zero_d.axis = 0;
  EXPECT_EQ(*InferType(zero_d, {T(kF64, {})}), T(kF64, {}));
  zero_d.op = OpKind::kMean;
  ExpectInvalid(InferType(zero_d, {T(kF64, {})}),
                "axis 0 is out of bounds for array of dimension 0");
}

TEST(InferShaping, SlicesClampAsPython) {
  Instruction s = Op(OpKind::kSlice);
  // np.ones((5, 7))[::-2, 10:1:-3].shape == (3, 2)
  s.slices = {{std::nullopt, std::nullopt, -2}, {10, 1, -3}};
  EXPECT_EQ(*InferType(s, {T(kI32, {5, 7})}), T(kI32, {3, 2}));
  // [-100:100, 3:3] -> (5, 0)
  s.slices = {{-100, 100, std::nullopt}, {3, 3, std::nullopt}};
  EXPECT_EQ(*InferType(s, {T(kI32, {5, 7})}), T(kI32, {5, 0}));
  // Bounds at the edges of int64 clamp, never overflow.
  s.slices = {{INT64_MIN, INT64_MAX, INT64_MAX}};
  EXPECT_EQ(*InferType(s, {T(kB, {5})}), T(kB, {1}));
  s.slices = {{INT64_MAX, INT64_MIN, INT64_MIN}};
  EXPECT_EQ(*InferType(s, {T(kB, {5})}), T(kB, {1}));
  s.slices = {{std::nullopt, std::nullopt, 0}};
  ExpectInvalid(InferType(s, {T(kB, {5})}), "slice step cannot be zero");
  s.slices = {{}, {}};
  ExpectInvalid(InferType(s, {T(kB, {5})}),
                "too many indices for array: array is 1-dimensional, but 2 were indexed");
}

TEST(InferShaping, JoinsPromoteAndCheckShapes) {
  Instruction cat = Op(OpKind::kConcatenate);
  cat.axis = -1;  // np.concatenate([int32 (2,3), float32 (2,1)], axis=-1) -> float64 (2,4)
  EXPECT_EQ(*InferType(cat, {T(kI32, {2, 3}), T(kF32, {2, 1})}), T(kF64, {2, 4}));
  cat.axis.reset();  // axis=None flattens
  EXPECT_EQ(*InferType(cat, {T(kB, {2, 3}), T(kB, {})}), T(kB, {7}));
  ExpectInvalid(InferType(cat, {}), "need at least one array to concatenate");
  Instruction stack = Op(OpKind::kStack);
  stack.axis = -1;  // np.stack([np.ones((2,3))] * 2, axis=-1).shape == (2, 3, 2)
  EXPECT_EQ(*InferType(stack, {T(kF64, {2, 3}), T(kF64, {2, 3})}), T(kF64, {2, 3, 2}));
  ExpectInvalid(InferType(stack, {T(kF64, {2, 3}), T(kF64, {3, 2})}),
                "all input arrays must have the same shape");
}

TEST(InferShaping, SqueezeExpandDimsBroadcastTo) {
  // np.squeeze(np.ones((1,2,1))).shape == (2,)
  EXPECT_EQ(*InferType(Op(OpKind::kSqueeze), {T(kF32, {1, 2, 1})}), T(kF32, {2}));
  Instruction e = Op(OpKind::kExpandDims);
  e.has_axes = true;
  e.axes = {-1, 0};  // np.expand_dims(np.ones((2,3)), (-1, 0)).shape == (1, 2, 3, 1)
  EXPECT_EQ(*InferType(e, {T(kF32, {2, 3})}), T(kF32, {1, 2, 3, 1}));
  ExpectInvalid(InferType(Op(OpKind::kExpandDims), {T(kF32, {2})}), "expand_dims needs axis");
  Instruction b = Op(OpKind::kBroadcastTo);
  b.shape = {4, 1, 3};
  EXPECT_EQ(*InferType(b, {T(kI64, {3})}), T(kI64, {4, 1, 3}));
  b.shape = {-1, 3};
  ExpectInvalid(InferType(b, {T(kI64, {3})}), "must be non-negative");
  // squeeze/expand_dims share their operand's buffer: no allocation.
  EXPECT_EQ(AllocationBound(e, {T(kF32, {2, 3})}, T(kF32, {1, 2, 3, 1})), 0);
  EXPECT_EQ(OpDefOf(OpKind::kSqueeze).result, ResultBuffer::kOperand);
}

}  // namespace
}  // namespace resident

// Dtype and shape inference against NumPy's rules. Every expected value was
// produced by NumPy (1.24 on the dev machine, array-with-array promotion,
// which NumPy 2 keeps unchanged); the expression is named next to it.
#include "server/program/infer.h"
#include "server/program/infer_elementwise.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace resident {
namespace {

using ::testing::HasSubstr;

constexpr DType kB = DType::kBool, kI32 = DType::kInt32, kI64 = DType::kInt64,
                kF32 = DType::kFloat32, kF64 = DType::kFloat64;

Instruction Op(ElementwiseKind kind) { return MakeElementwise(kind, {}); }

Instruction Op(OpKind op) {
  Instruction ins;
  ins.op = op;
  return ins;
}

ValueType T(DType d, Shape s) { return ValueType{d, std::move(s)}; }

// The five dtypes these hand tables cover (infer_elementwise_test.cc checks
// every dtype pair against NumPy's generated tables).
constexpr DType kFive[] = {kB, kI32, kI64, kF32, kF64};

// numpy.add(np.ones(2, a), np.ones(2, b)).dtype for a, b in
// [bool, int32, int64, float32, float64] (rows a, columns b).
constexpr DType kAddTable[5][5] = {
    {kB, kI32, kI64, kF32, kF64},   {kI32, kI32, kI64, kF64, kF64}, {kI64, kI64, kI64, kF64, kF64},
    {kF32, kF64, kF64, kF32, kF64}, {kF64, kF64, kF64, kF64, kF64},
};
// numpy.divide(np.ones(2, a), np.ones(2, b)).dtype, same order.
constexpr DType kDivideTable[5][5] = {
    {kF64, kF64, kF64, kF32, kF64}, {kF64, kF64, kF64, kF64, kF64}, {kF64, kF64, kF64, kF64, kF64},
    {kF32, kF64, kF64, kF32, kF64}, {kF64, kF64, kF64, kF64, kF64},
};

TEST(PromoteTypes, EveryPairMatchesNumPy) {
  for (int a = 0; a < 5; ++a) {
    for (int b = 0; b < 5; ++b) {
      EXPECT_EQ(PromoteTypes(kFive[a], kFive[b]), kAddTable[a][b])
          << DTypeName(kFive[a]) << " + " << DTypeName(kFive[b]);
    }
  }
}

TEST(InferType, AddAndMultiplyEveryDtypePair) {
  for (ElementwiseKind op : {ElementwiseKind::kAdd, ElementwiseKind::kMultiply}) {
    for (int a = 0; a < 5; ++a) {
      for (int b = 0; b < 5; ++b) {
        absl::StatusOr<ValueType> t = InferType(Op(op), {T(kFive[a], {2}), T(kFive[b], {2})});
        ASSERT_TRUE(t.ok()) << t.status();
        EXPECT_EQ(t->dtype, kAddTable[a][b])
            << ElementwiseName(op) << " " << DTypeName(kFive[a]) << ", " << DTypeName(kFive[b]);
        EXPECT_EQ(t->shape, Shape({2}));
      }
    }
  }
}

TEST(InferType, DivideEveryDtypePair) {
  for (int a = 0; a < 5; ++a) {
    for (int b = 0; b < 5; ++b) {
      absl::StatusOr<ValueType> t =
          InferType(Op(ElementwiseKind::kDivide), {T(kFive[a], {2}), T(kFive[b], {2})});
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_EQ(t->dtype, kDivideTable[a][b])
          << DTypeName(kFive[a]) << " / " << DTypeName(kFive[b]);
      EXPECT_EQ(ArithmeticType(ElementwiseKind::kDivide, kFive[a], kFive[b]), kDivideTable[a][b]);
    }
  }
}

TEST(InferType, SubtractEveryDtypePairButBoolBool) {
  for (int a = 0; a < 5; ++a) {
    for (int b = 0; b < 5; ++b) {
      absl::StatusOr<ValueType> t =
          InferType(Op(ElementwiseKind::kSubtract), {T(kFive[a], {2}), T(kFive[b], {2})});
      if (a == 0 && b == 0) {
        // np.ones(2, bool) - np.ones(2, bool): TypeError "numpy boolean subtract..."
        ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
        EXPECT_THAT(std::string(t.status().message()), HasSubstr("boolean subtract"));
        continue;
      }
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_EQ(t->dtype, kAddTable[a][b]);
    }
  }
}

TEST(InferType, NegativeKeepsDtypeAndRefusesBool) {
  for (DType d : {kI32, kI64, kF32, kF64}) {
    absl::StatusOr<ValueType> t = InferType(Op(ElementwiseKind::kNegative), {T(d, {3, 1})});
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(*t, T(d, {3, 1}));
  }
  absl::StatusOr<ValueType> t = InferType(Op(ElementwiseKind::kNegative), {T(kB, {3})});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("boolean negative"));
}

TEST(InferType, WrongOperandCount) {
  absl::StatusOr<ValueType> t = InferType(Op(ElementwiseKind::kAdd), {T(kF64, {2})});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("takes 2 operands, got 1"));
  t = InferType(Op(OpKind::kOnes), {T(kF64, {2})});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BroadcastShapes, NumPyRules) {
  // (np.ones((8,1,6,1)) + np.ones((7,1,5))).shape == (8, 7, 6, 5)
  EXPECT_EQ(*BroadcastShapes({8, 1, 6, 1}, {7, 1, 5}), Shape({8, 7, 6, 5}));
  // (np.ones((5,4)) + np.ones(())).shape == (5, 4)
  EXPECT_EQ(*BroadcastShapes({5, 4}, {}), Shape({5, 4}));
  EXPECT_EQ(*BroadcastShapes({}, {}), Shape({}));
  // (np.ones((0,3)) + np.ones((1,3))).shape == (0, 3)
  EXPECT_EQ(*BroadcastShapes({0, 3}, {1, 3}), Shape({0, 3}));
  EXPECT_EQ(*BroadcastShapes({1}, {0}), Shape({0}));
  // np.ones((2,3)) + np.ones((4,)): "operands could not be broadcast
  // together with shapes (2,3) (4,)" (NumPy prints no space after commas).
  absl::StatusOr<Shape> bad = BroadcastShapes({2, 3}, {4});
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("could not be broadcast together"));
  EXPECT_FALSE(BroadcastShapes({0}, {2}).ok());
}

TEST(InferType, BroadcastInArithmetic) {
  absl::StatusOr<ValueType> t =
      InferType(Op(ElementwiseKind::kAdd), {T(kI32, {3, 1}), T(kF32, {4})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, T(kF64, {3, 4}));
  t = InferType(Op(ElementwiseKind::kMultiply), {T(kI32, {2, 3}), T(kI32, {3, 2})});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(InferType, DotShapes) {
  struct Case {
    Shape a, b, out;
  };
  // np.dot(np.ones(a), np.ones(b)).shape
  const Case cases[] = {
      {{2, 3}, {3, 4}, {2, 4}},
      {{2, 3}, {3}, {2}},
      {{3}, {3, 4}, {4}},
      {{3}, {3}, {}},
      {{2, 3}, {}, {2, 3}},  // np.dot(np.ones((2,3)), np.array(2.)) is
                             // multiply
      {{}, {4}, {4}},
      {{0, 3}, {3, 5}, {0, 5}},
      {{2, 0}, {0, 5}, {2, 5}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ValueType> t = InferType(Op(OpKind::kDot), {T(kF64, c.a), T(kF64, c.b)});
    ASSERT_TRUE(t.ok()) << ShapeString(c.a) << "." << ShapeString(c.b) << ": " << t.status();
    EXPECT_EQ(t->shape, c.out) << ShapeString(c.a) << "." << ShapeString(c.b);
  }
  // np.dot(np.ones(2, bool), np.ones(2, bool)).dtype == bool;
  // np.dot(int32, float32) -> float64.
  EXPECT_EQ(InferType(Op(OpKind::kDot), {T(kB, {2}), T(kB, {2})})->dtype, kB);
  EXPECT_EQ(InferType(Op(OpKind::kDot), {T(kI32, {2}), T(kF32, {2})})->dtype, kF64);
  EXPECT_EQ(InferType(Op(OpKind::kDot), {T(kI32, {2, 2}), T(kI32, {2})})->dtype, kI32);
}

TEST(InferType, DotErrors) {
  // np.dot(np.ones((2,3)), np.ones((4,5))):
  //   "shapes (2,3) and (4,5) not aligned: 3 (dim 1) != 4 (dim 0)"
  absl::StatusOr<ValueType> t = InferType(Op(OpKind::kDot), {T(kF64, {2, 3}), T(kF64, {4, 5})});
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("not aligned: 3 (dim 1) != 4 (dim 0)"));
  // np.dot(np.ones(3), np.ones((4,2))): "... 3 (dim 0) != 4 (dim 0)"
  t = InferType(Op(OpKind::kDot), {T(kF64, {3}), T(kF64, {4, 2})});
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("not aligned: 3 (dim 0) != 4 (dim 0)"));
  // N-D dot is not supported; the message points to matmul.
  t = InferType(Op(OpKind::kDot), {T(kF64, {2, 2, 3}), T(kF64, {3, 4})});
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("matmul"));
}

TEST(InferType, MatmulShapes) {
  struct Case {
    Shape a, b, out;
  };
  // np.matmul(np.ones(a), np.ones(b)).shape
  const Case cases[] = {
      {{2, 3}, {3, 4}, {2, 4}},
      {{5, 2, 3}, {3, 4}, {5, 2, 4}},
      {{2, 1, 2, 3}, {7, 3, 4}, {2, 7, 2, 4}},
      {{3}, {2, 3, 4}, {2, 4}},
      {{2, 3, 4}, {4}, {2, 3}},
      {{3}, {3}, {}},
      {{0, 2, 3}, {3, 4}, {0, 2, 4}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ValueType> t = InferType(Op(OpKind::kMatmul), {T(kF32, c.a), T(kF32, c.b)});
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(*t, T(kF32, c.out)) << ShapeString(c.a) << "@" << ShapeString(c.b);
  }
}

TEST(InferType, MatmulErrors) {
  // np.matmul(np.ones((2,3)), np.ones((4,5))): "matmul: Input operand 1 has a
  // mismatch in its core dimension 0, with gufunc signature
  // (n?,k),(k,m?)->(n?,m?) (size 4 is different from 3)"
  absl::StatusOr<ValueType> t = InferType(Op(OpKind::kMatmul), {T(kF64, {2, 3}), T(kF64, {4, 5})});
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()),
              HasSubstr("matmul: Input operand 1 has a mismatch in its core "
                        "dimension 0, with gufunc signature "
                        "(n?,k),(k,m?)->(n?,m?) (size 4 is different from 3)"));
  // np.matmul(np.ones(3), np.array(2.)): "matmul: Input operand 1 does not
  // have enough dimensions ..."
  t = InferType(Op(OpKind::kMatmul), {T(kF64, {3}), T(kF64, {})});
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()),
              HasSubstr("matmul: Input operand 1 does not have enough dimensions"));
  t = InferType(Op(OpKind::kMatmul), {T(kF64, {}), T(kF64, {3})});
  EXPECT_THAT(std::string(t.status().message()),
              HasSubstr("Input operand 0 does not have enough dimensions"));
  // Batch dims that do not broadcast: np.matmul(np.ones((2,2,3)), np.ones((3,3,4)))
  t = InferType(Op(OpKind::kMatmul), {T(kF64, {2, 2, 3}), T(kF64, {3, 3, 4})});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(InferType, SumDtypesAndAxes) {
  // np.ones(3, d).sum().dtype: bool -> int64, int32 -> int64, others kept.
  const DType want[] = {kI64, kI64, kI64, kF32, kF64};
  for (int d = 0; d < 5; ++d) {
    absl::StatusOr<ValueType> t = InferType(Op(OpKind::kSum), {T(kFive[d], {2, 3})});
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(*t, T(want[d], {})) << DTypeName(kFive[d]);
    Instruction ax = Op(OpKind::kSum);
    ax.axis = 0;
    t = InferType(ax, {T(kFive[d], {2, 3})});
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(*t, T(want[d], {3}));
  }
  Instruction ax = Op(OpKind::kSum);
  ax.axis = -1;  // np.ones((2,3,4)).sum(axis=-1).shape == (2, 3)
  EXPECT_EQ(InferType(ax, {T(kF64, {2, 3, 4})})->shape, Shape({2, 3}));
  ax.axis = 2;  // np.ones((2,3)).sum(axis=2): "axis 2 is out of bounds for array of dimension 2"
  absl::StatusOr<ValueType> t = InferType(ax, {T(kF64, {2, 3})});
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()),
              HasSubstr("axis 2 is out of bounds for array of dimension 2"));
  ax.axis = -3;
  EXPECT_FALSE(InferType(ax, {T(kF64, {2, 3})}).ok());
  // NumPy 2 lets a 0-d array take a single axis 0 or -1 (np.zeros(()).sum(axis=0)
  // == 0.0), but not in a tuple or any other axis (np.zeros(()).sum(axis=(0,)) and
  // .sum(axis=1): "axis 0|1 is out of bounds for array of dimension 0").
  ax.axis = 0;
  EXPECT_EQ(*InferType(ax, {T(kF64, {})}), T(kF64, {}));
  ax.axis = 1;
  EXPECT_FALSE(InferType(ax, {T(kF64, {})}).ok());
  Instruction tuple = Op(OpKind::kSum);
  tuple.has_axes = true;
  tuple.axes = {0};
  EXPECT_FALSE(InferType(tuple, {T(kF64, {})}).ok());
}

TEST(InferType, CreationDefaultsAndDtypes) {
  Instruction ones = Op(OpKind::kOnes);
  ones.shape = {2, 3};
  EXPECT_EQ(*InferType(ones, {}), T(kF64, {2, 3}));  // np.ones((2,3)).dtype
  ones.dtype = kI32;
  EXPECT_EQ(*InferType(ones, {}), T(kI32, {2, 3}));
  Instruction full = Op(OpKind::kFull);
  full.shape = {4};
  full.fill = Scalar::Int(7);  // np.full(4, 7).dtype == int64
  EXPECT_EQ(InferType(full, {})->dtype, kI64);
  full.fill = Scalar::Float(0.5);  // np.full(4, 0.5).dtype == float64
  EXPECT_EQ(InferType(full, {})->dtype, kF64);
  full.fill = Scalar::Bool(true);  // np.full(4, True).dtype == bool
  EXPECT_EQ(InferType(full, {})->dtype, kB);
  // np.full(4, 2**40, dtype=np.int32): OverflowError "Python integer
  // 1099511627776 out of bounds for int32" (NumPy 2).
  full.fill = Scalar::Int(int64_t{1} << 40);
  full.dtype = kI32;
  absl::StatusOr<ValueType> t = InferType(full, {});
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("out of bounds for int32"));
  Instruction nofill = Op(OpKind::kFull);
  nofill.shape = {1};
  EXPECT_EQ(InferType(nofill, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(InferType, OverflowingAndNegativeShapes) {
  Instruction ones = Op(OpKind::kOnes);
  ones.shape = {int64_t{1} << 62, 4};  // 2^64 elements
  absl::StatusOr<ValueType> t = InferType(ones, {});
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("64 bits"));
  ones.shape = {int64_t{1} << 60, 4};  // 2^62 elements fit; 2^65 bytes do not
  t = InferType(ones, {});
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("overflow"));
  // np.ones((2**62, 4, 0)): "array is too big" even with zero elements.
  ones.shape = {int64_t{1} << 62, 4, 0};
  EXPECT_EQ(InferType(ones, {}).status().code(), absl::StatusCode::kInvalidArgument);
  ones.shape = {3, -1};  // np.ones((3,-1)): "negative dimensions are not allowed"
  t = InferType(ones, {});
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("negative dimension"));
  ones.shape = Shape(65, 1);  // NumPy's limit is 64 dimensions
  EXPECT_EQ(InferType(ones, {}).status().code(), absl::StatusCode::kInvalidArgument);
  ones.shape = Shape(64, 1);
  EXPECT_TRUE(InferType(ones, {}).ok());
  // Broadcasting two legal shapes into an overflowing one.
  t = InferType(Op(ElementwiseKind::kAdd),
                {T(kB, {int64_t{1} << 40, 1}), T(kB, {1, int64_t{1} << 40})});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ComputeArange, LengthsAndFillParameters) {
  auto len = [](Scalar a, Scalar b, Scalar c, DType d) {
    absl::StatusOr<ArangeParams> p = ComputeArange(a, b, c, d);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? p->length : -1;
  };
  using S = Scalar;
  // np.arange(0,10,3) -> [0 3 6 9]; np.arange(10,0,-3) -> [10 7 4 1]
  EXPECT_EQ(len(S::Int(0), S::Int(10), S::Int(3), kI64), 4);
  EXPECT_EQ(len(S::Int(10), S::Int(0), S::Int(-3), kI64), 4);
  // np.arange(-3,4,2) -> [-3 -1 1 3]; np.arange(3,-4,-2) -> [3 1 -1 -3]
  EXPECT_EQ(len(S::Int(-3), S::Int(4), S::Int(2), kI64), 4);
  EXPECT_EQ(len(S::Int(3), S::Int(-4), S::Int(-2), kI64), 4);
  // np.arange(1,0) and np.arange(0,10,-1) are empty
  EXPECT_EQ(len(S::Int(1), S::Int(0), S::Int(1), kI64), 0);
  EXPECT_EQ(len(S::Int(0), S::Int(10), S::Int(-1), kI64), 0);
  // len(np.arange(0,1,0.1)) == 10; np.arange(0,1,0.3) -> [0 .3 .6 .9]
  EXPECT_EQ(len(S::Int(0), S::Int(1), S::Float(0.1), kF64), 10);
  EXPECT_EQ(len(S::Int(0), S::Int(1), S::Float(0.3), kF64), 4);
  // Extreme int64 bounds do not overflow the length computation:
  // ceil((2**64 - 1) / (2**63 - 1)) == 3 in exact integer arithmetic.
  EXPECT_EQ(len(S::Int(INT64_MIN), S::Int(INT64_MAX), S::Int(INT64_MAX), kI64), 3);

  // np.arange(0.5, 5, dtype=np.int64) -> [0 1 2 3 4]: start 0, delta 1.
  absl::StatusOr<ArangeParams> p = ComputeArange(S::Float(0.5), S::Int(5), S::Int(1), kI64);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->length, 5);
  EXPECT_EQ(p->start.as_int64(), 0);
  EXPECT_EQ(p->delta.as_int64(), 1);
  // np.arange(0, 1, 0.1, dtype=np.float32)[9] == 0.90000004: NumPy fills
  // with delta = float32(0.1) - float32(0) in float32.
  p = ComputeArange(S::Int(0), S::Int(1), S::Float(0.1), kF32);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->length, 10);
  EXPECT_EQ(p->start.as_double(), 0.0);
  EXPECT_EQ(p->delta.as_double(), static_cast<double>(0.1f));

  EXPECT_EQ(ArangeDefaultType(S::Int(0), S::Int(3), S::Int(1)), kI64);
  EXPECT_EQ(ArangeDefaultType(S::Int(0), S::Float(3), S::Int(1)), kF64);
}

// NumPy stores start and start + step (in double) as elements 0 and 1:
// np.arange(-1.44, 0.56, 1.0, dtype=np.float32)[1] == float32(-0.44), not
// float32(-1.44) + (float32(-0.44) - float32(-1.44)).
TEST(ComputeArange, TheSecondElementIsStartPlusStepRoundedOnce) {
  using S = Scalar;
  absl::StatusOr<ArangeParams> p =
      ComputeArange(S::Float(-1.44), S::Float(0.56), S::Float(1.0), kF32);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->second.as_double(), static_cast<double>(static_cast<float>(-1.44 + 1.0)));
  EXPECT_EQ(p->start.as_double(), static_cast<double>(-1.44f));
  p = ComputeArange(S::Float(-0.0), S::Float(1.0), S::Float(0.5), kF64);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(std::signbit(p->start.as_double())) << "-0.0 is stored as it is";
}

// NumPy 2 refuses a start (or start + step) the integer dtype cannot hold:
// np.arange(-2, 5, dtype=np.uint8) is OverflowError.
TEST(ComputeArange, IntegerStartAndSecondMustFitTheDtype) {
  using S = Scalar;
  const DType u8 = DType::kUint8;
  EXPECT_EQ(ComputeArange(S::Int(-2), S::Int(5), S::Int(1), u8).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ComputeArange(S::Float(-2.0), S::Float(5.0), S::Int(1), u8).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ComputeArange(S::Int(0), S::Int(600), S::Int(300), u8).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ComputeArange(S::Int(0), S::Int(300), S::Int(300), u8).ok()) << "one element";
  EXPECT_TRUE(ComputeArange(S::Int(250), S::Int(260), S::Int(1), u8).ok()) << "wraps after";
  EXPECT_TRUE(ComputeArange(S::Int(0), S::Int(300), S::Int(1), u8).ok());
}

TEST(ComputeArange, Errors) {
  using S = Scalar;
  // np.arange(0,10,0): "division by zero" / "Maximum allowed size exceeded"
  EXPECT_EQ(ComputeArange(S::Int(0), S::Int(10), S::Int(0), kI64).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ComputeArange(S::Int(0), S::Int(10), S::Float(0.0), kF64).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ComputeArange(S::Int(0), S::Float(1e300), S::Float(1e-300), kF64).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ComputeArange(S::Int(0), S::Int(1), S::Float(std::nan("")), kF64).status().code(),
            absl::StatusCode::kInvalidArgument);
  // np.arange(0, 3, dtype=bool): "arange() is only supported for booleans
  // when the result has at most length 2."
  EXPECT_EQ(ComputeArange(S::Int(0), S::Int(3), S::Int(1), kB).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ComputeArange(S::Int(0), S::Int(2), S::Int(1), kB).ok());
  // arange with a length that overflows the element count is refused.
  Instruction ar = Op(OpKind::kArange);
  ar.stop = S::Int(INT64_MAX);
  EXPECT_EQ(InferType(ar, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ResolveReshape, NumPyRules) {
  // np.ones((2,3,4)).reshape(-1,4).shape == (6, 4)
  EXPECT_EQ(*ResolveReshape({2, 3, 4}, {-1, 4}), Shape({6, 4}));
  EXPECT_EQ(*ResolveReshape({2, 3, 4}, {24}), Shape({24}));
  EXPECT_EQ(*ResolveReshape({}, {1, 1}), Shape({1, 1}));
  EXPECT_EQ(*ResolveReshape({1}, {}), Shape({}));
  EXPECT_EQ(*ResolveReshape({0, 3}, {3, 0}), Shape({3, 0}));
  // np.ones(6).reshape(4,-1): "cannot reshape array of size 6 into shape (4,newaxis)"
  absl::StatusOr<Shape> s = ResolveReshape({6}, {4, -1});
  ASSERT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("cannot reshape array of size 6 into shape"));
  // np.ones(6).reshape(-1,-1): "can only specify one unknown dimension"
  s = ResolveReshape({6}, {-1, -1});
  ASSERT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("can only specify one unknown dimension"));
  EXPECT_EQ(ResolveReshape({6}, {7}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveReshape({6}, {-2, -3}).status().code(), absl::StatusCode::kInvalidArgument);
  // A target whose known dims overflow is refused, not wrapped.
  EXPECT_EQ(ResolveReshape({8}, {int64_t{1} << 62, 4, -1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // np.zeros(0).reshape(2**62, 8, 0): "cannot reshape array of size 0 ..."
  EXPECT_EQ(ResolveReshape({0}, {int64_t{1} << 62, 8, 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ResolvePermutation, NumPyRules) {
  // np.ones((2,3,4)).transpose().shape == (4, 3, 2)
  EXPECT_EQ(*ResolvePermutation(3, {}), std::vector<int>({2, 1, 0}));
  // np.ones((2,3,4)).transpose(-1,0,1).shape == (4, 2, 3)
  EXPECT_EQ(*ResolvePermutation(3, {-1, 0, 1}), std::vector<int>({2, 0, 1}));
  EXPECT_EQ(*ResolvePermutation(0, {}), std::vector<int>({}));
  // np.ones((2,3,4)).transpose(0,0,1): "repeated axis in transpose"
  absl::StatusOr<std::vector<int>> p = ResolvePermutation(3, {0, 0, 1});
  ASSERT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("repeated axis in transpose"));
  // np.ones((2,3,4)).transpose(0,3,1): "axis 3 is out of bounds for array of dimension 3"
  p = ResolvePermutation(3, {0, 3, 1});
  ASSERT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("axis 3 is out of bounds for array of dimension 3"));
  EXPECT_FALSE(ResolvePermutation(3, {0, -4, 1}).ok());
  // np.ones((2,3,4)).transpose(0,1): "axes don't match array"
  p = ResolvePermutation(3, {0, 1});
  ASSERT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("axes don't match array"));

  Instruction tr = Op(OpKind::kTranspose);
  tr.axes = {1, 2, 0};  // np.ones((2,3,4), np.int32).transpose(1,2,0).shape
  EXPECT_EQ(*InferType(tr, {T(kI32, {2, 3, 4})}), T(kI32, {3, 4, 2}));
}

TEST(InferType, ReshapeAndAstype) {
  Instruction rs = Op(OpKind::kReshape);
  rs.shape = {3, -1};
  EXPECT_EQ(*InferType(rs, {T(kI64, {2, 3})}), T(kI64, {3, 2}));
  Instruction as = Op(OpKind::kAstype);
  for (DType d : kAllDTypes) {
    as.dtype = d;
    EXPECT_EQ(*InferType(as, {T(kF32, {5, 0})}), T(d, {5, 0}));
  }
  as.dtype.reset();
  EXPECT_EQ(InferType(as, {T(kF32, {5})}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(AllocationBound, CountsResultAndPromotedCopies) {
  // int32 (1000,) + float64 (1000,): the int32 operand is copied to float64.
  const ValueType a = T(kI32, {1000}), b = T(kF64, {1000});
  const ValueType out = *InferType(Op(ElementwiseKind::kAdd), {a, b});
  EXPECT_EQ(AllocationBound(Op(ElementwiseKind::kAdd), {a, b}, out), 8000 + 8000);
  // Same dtypes: only the result.
  EXPECT_EQ(AllocationBound(Op(ElementwiseKind::kAdd), {b, b}, out), 8000);
  // int/int divide computes in float64: both operands converted.
  const ValueType d = *InferType(Op(ElementwiseKind::kDivide), {a, a});
  EXPECT_EQ(AllocationBound(Op(ElementwiseKind::kDivide), {a, a}, d), 8000 * 3);
  Instruction rs = Op(OpKind::kReshape);
  EXPECT_EQ(AllocationBound(rs, {b}, b), 0);  // shares its operand's buffer
}

}  // namespace
}  // namespace resident

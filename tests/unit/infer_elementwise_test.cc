// Type resolution of every elementwise op of the table, against NumPy 2:
// the result dtype for every operand dtype (pair), read from
// numpy.<ufunc>(np.ones(1, a), np.ones(1, b)).dtype, and NEP 50's weak
// Python scalars (numpy.add(np.ones(2, int32), 1.5).dtype and the like).
// "ERR" is a dtype NumPy refuses, or one it gives that Resident lacks
// (float16 for sqrt of bool, int8 for power of bools): INVALID_ARGUMENT.
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/program/infer.h"
#include "server/program/infer_elementwise.h"

namespace resident {
namespace {

using ::testing::HasSubstr;

struct NumpyRow {
  const char* op;
  const char* results;  // unary: per dtype; binary: per (a, b), row-major
};
// Generated from NumPy 2.4 (dtype order: bool int32 int64 float32 float64).
constexpr NumpyRow kNumpy[] = {
    {"add",
     "kBool kInt32 kInt64 kFloat32 kFloat64 kInt32 kInt32 kInt64 kFloat64 kFloat64 kInt64 kInt64 "
     "kInt64 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat64 "
     "kFloat64 kFloat64 kFloat64"},
    {"subtract",
     "ERR kInt32 kInt64 kFloat32 kFloat64 kInt32 kInt32 kInt64 kFloat64 kFloat64 kInt64 kInt64 "
     "kInt64 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat64 "
     "kFloat64 kFloat64 kFloat64"},
    {"multiply",
     "kBool kInt32 kInt64 kFloat32 kFloat64 kInt32 kInt32 kInt64 kFloat64 kFloat64 kInt64 kInt64 "
     "kInt64 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat64 "
     "kFloat64 kFloat64 kFloat64"},
    {"divide",
     "kFloat64 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat64 kFloat64 kFloat64 kFloat64 "
     "kFloat64 kFloat64 kFloat64 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat32 kFloat64 "
     "kFloat64 kFloat64 kFloat64 kFloat64 kFloat64"},
    {"maximum",
     "kBool kInt32 kInt64 kFloat32 kFloat64 kInt32 kInt32 kInt64 kFloat64 kFloat64 kInt64 kInt64 "
     "kInt64 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat64 "
     "kFloat64 kFloat64 kFloat64"},
    {"minimum",
     "kBool kInt32 kInt64 kFloat32 kFloat64 kInt32 kInt32 kInt64 kFloat64 kFloat64 kInt64 kInt64 "
     "kInt64 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat64 "
     "kFloat64 kFloat64 kFloat64"},
    {"power",
     "ERR kInt32 kInt64 kFloat32 kFloat64 kInt32 kInt32 kInt64 kFloat64 kFloat64 kInt64 kInt64 "
     "kInt64 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat64 "
     "kFloat64 kFloat64 kFloat64"},
    {"remainder",
     "ERR kInt32 kInt64 kFloat32 kFloat64 kInt32 kInt32 kInt64 kFloat64 kFloat64 kInt64 kInt64 "
     "kInt64 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat64 "
     "kFloat64 kFloat64 kFloat64"},
    {"floor_divide",
     "ERR kInt32 kInt64 kFloat32 kFloat64 kInt32 kInt32 kInt64 kFloat64 kFloat64 kInt64 kInt64 "
     "kInt64 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat32 kFloat64 kFloat64 kFloat64 "
     "kFloat64 kFloat64 kFloat64"},
    {"equal",
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool "
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool"},
    {"not_equal",
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool "
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool"},
    {"less",
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool "
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool"},
    {"less_equal",
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool "
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool"},
    {"greater",
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool "
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool"},
    {"greater_equal",
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool "
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool"},
    {"logical_and",
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool "
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool"},
    {"logical_or",
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool "
     "kBool kBool kBool kBool kBool kBool kBool kBool kBool kBool"},
    {"negative", "ERR kInt32 kInt64 kFloat32 kFloat64"},
    {"absolute", "kBool kInt32 kInt64 kFloat32 kFloat64"},
    {"sign", "ERR kInt32 kInt64 kFloat32 kFloat64"},
    {"sqrt", "ERR kFloat64 kFloat64 kFloat32 kFloat64"},
    {"exp", "ERR kFloat64 kFloat64 kFloat32 kFloat64"},
    {"log", "ERR kFloat64 kFloat64 kFloat32 kFloat64"},
    {"log1p", "ERR kFloat64 kFloat64 kFloat32 kFloat64"},
    {"expm1", "ERR kFloat64 kFloat64 kFloat32 kFloat64"},
    {"sin", "ERR kFloat64 kFloat64 kFloat32 kFloat64"},
    {"cos", "ERR kFloat64 kFloat64 kFloat32 kFloat64"},
    {"tanh", "ERR kFloat64 kFloat64 kFloat32 kFloat64"},
    {"floor", "kBool kInt32 kInt64 kFloat32 kFloat64"},
    {"ceil", "kBool kInt32 kInt64 kFloat32 kFloat64"},
    {"logical_not", "kBool kBool kBool kBool kBool"},
    {"isnan", "kBool kBool kBool kBool kBool"},
    {"isfinite", "kBool kBool kBool kBool kBool"}};

std::vector<std::string> Split(const char* s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string Name(DType d) {
  switch (d) {
    case DType::kBool:
      return "kBool";
    case DType::kInt32:
      return "kInt32";
    case DType::kInt64:
      return "kInt64";
    case DType::kFloat32:
      return "kFloat32";
    case DType::kFloat64:
      return "kFloat64";
  }
  return "?";
}

ValueType T(DType d, Shape s) { return ValueType{d, std::move(s)}; }

TEST(InferElementwise, EveryOpAndDtypeAsNumpy) {
  ASSERT_EQ(std::size(kNumpy), static_cast<size_t>(kNumElementwiseKinds));
  for (const NumpyRow& row : kNumpy) {
    const ElementwiseInfo* e = FindElementwise(row.op);
    ASSERT_NE(e, nullptr) << row.op;
    const std::vector<std::string> want = Split(row.results);
    size_t i = 0;
    for (DType a : kAllDTypes) {
      if (e->arity == 1) {
        absl::StatusOr<ValueType> t = InferType(MakeElementwise(e->kind, {}), {T(a, {3})});
        EXPECT_EQ(t.ok() ? Name(t->dtype) : "ERR", want[i++]) << row.op << " " << DTypeName(a);
        if (t.ok()) {
          EXPECT_EQ(t->shape, Shape({3}));
        }
        continue;
      }
      for (DType b : kAllDTypes) {
        absl::StatusOr<ValueType> t =
            InferType(MakeElementwise(e->kind, {}), {T(a, {2, 1}), T(b, {3})});
        EXPECT_EQ(t.ok() ? Name(t->dtype) : "ERR", want[i++])
            << row.op << " " << DTypeName(a) << ", " << DTypeName(b);
        if (t.ok()) {
          EXPECT_EQ(t->shape, Shape({2, 3}));
        }
      }
    }
  }
}

TEST(InferElementwise, MissingDtypesAreNamed) {
  absl::StatusOr<ValueType> t =
      InferType(MakeElementwise(ElementwiseKind::kSqrt, {}), {T(DType::kBool, {2})});
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("float16"));
  t = InferType(MakeElementwise(ElementwiseKind::kPower, {}),
                {T(DType::kBool, {2}), T(DType::kBool, {2})});
  EXPECT_THAT(t.status().message(), HasSubstr("int8"));
  t = InferType(MakeElementwise(ElementwiseKind::kSign, {}), {T(DType::kBool, {2})});
  EXPECT_THAT(t.status().message(), HasSubstr("sign"));
}

// op(array of `a`, scalar) as NumPy 2 types it (NEP 50).
absl::StatusOr<ValueType> WithScalar(ElementwiseKind k, DType a, Scalar s, int position = 1) {
  Instruction ins = MakeElementwise(k, {});
  ins.scalars.push_back(ScalarOperand{position, s});
  return InferType(ins, {T(a, {4})});
}

TEST(InferElementwise, WeakScalarsFollowNep50) {
  using K = ElementwiseKind;
  constexpr DType kB = DType::kBool, kI32 = DType::kInt32, kI64 = DType::kInt64,
                  kF32 = DType::kFloat32, kF64 = DType::kFloat64;
  struct Case {
    K op;
    DType array;
    Scalar scalar;
    DType want;
  };
  // Literals from numpy.<op>(np.ones(2, dtype), scalar).dtype, NumPy 2.4.
  const Case cases[] = {
      {K::kAdd, kB, Scalar::Bool(true), kB},
      {K::kAdd, kB, Scalar::Int(1), kI64},
      {K::kAdd, kB, Scalar::Float(1.5), kF64},
      {K::kAdd, kI32, Scalar::Bool(true), kI32},
      {K::kAdd, kI32, Scalar::Int(1), kI32},
      {K::kAdd, kI32, Scalar::Float(1.5), kF64},
      {K::kAdd, kI64, Scalar::Int(1), kI64},
      {K::kAdd, kI64, Scalar::Float(1.5), kF64},
      {K::kAdd, kF32, Scalar::Int(1), kF32},
      {K::kAdd, kF32, Scalar::Float(1.5), kF32},
      {K::kAdd, kF32, Scalar::Int(int64_t{1} << 40), kF32},
      {K::kAdd, kF64, Scalar::Bool(true), kF64},
      {K::kDivide, kI32, Scalar::Int(3), kF64},
      {K::kDivide, kB, Scalar::Bool(true), kF64},
      {K::kDivide, kF32, Scalar::Int(3), kF32},
      {K::kLess, kI32, Scalar::Float(1.5), kB},
      {K::kLess, kF32, Scalar::Int(1), kB},
      {K::kEqual, kI32, Scalar::Int(int64_t{1} << 40), kB},
      {K::kPower, kI32, Scalar::Int(2), kI32},
      {K::kPower, kB, Scalar::Int(2), kI64},
      {K::kPower, kI64, Scalar::Float(0.5), kF64},
      {K::kMaximum, kB, Scalar::Int(1), kI64},
      {K::kFloorDivide, kI32, Scalar::Float(1.5), kF64},
      {K::kLogicalAnd, kF32, Scalar::Int(1), kB},
      {K::kAdd, kI64, Scalar::Int(int64_t{1} << 40), kI64},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ValueType> t = WithScalar(c.op, c.array, c.scalar);
    ASSERT_TRUE(t.ok()) << ElementwiseName(c.op) << " " << DTypeName(c.array) << " "
                        << c.scalar.ToString() << ": " << t.status();
    EXPECT_EQ(t->dtype, c.want) << ElementwiseName(c.op) << " " << DTypeName(c.array) << " "
                                << c.scalar.ToString();
    EXPECT_EQ(t->shape, Shape({4}));
    // The scalar on the left types the same.
    absl::StatusOr<ValueType> left = WithScalar(c.op, c.array, c.scalar, 0);
    ASSERT_TRUE(left.ok());
    EXPECT_EQ(left->dtype, c.want);
  }
}

TEST(InferElementwise, ScalarErrorsAsNumpy) {
  using K = ElementwiseKind;
  // numpy: OverflowError: Python integer 1099511627776 out of bounds for int32
  absl::StatusOr<ValueType> t = WithScalar(K::kAdd, DType::kInt32, Scalar::Int(int64_t{1} << 40));
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(),
              HasSubstr("Python integer 1099511627776 out of bounds for int32"));
  t = WithScalar(K::kAdd, DType::kInt32, Scalar::Int(-2147483649));
  EXPECT_THAT(t.status().message(), HasSubstr("out of bounds for int32"));
  EXPECT_TRUE(WithScalar(K::kAdd, DType::kInt32, Scalar::Int(-2147483648)).ok());
  // numpy: ValueError: Integers to negative integer powers are not allowed.
  t = WithScalar(K::kPower, DType::kInt32, Scalar::Int(-1));
  EXPECT_THAT(t.status().message(), HasSubstr("negative integer powers"));
  t = WithScalar(K::kPower, DType::kBool, Scalar::Int(-1));
  EXPECT_THAT(t.status().message(), HasSubstr("negative integer powers"));
  EXPECT_TRUE(WithScalar(K::kPower, DType::kFloat64, Scalar::Int(-1)).ok());
  EXPECT_TRUE(WithScalar(K::kPower, DType::kInt32, Scalar::Int(-1), 0).ok());  // (-1) ** x
  // NumPy refuses bool - True as bool - bool.
  EXPECT_FALSE(WithScalar(K::kSubtract, DType::kBool, Scalar::Bool(true)).ok());
  // Scalars only in elementwise ops, and the count must be the arity.
  Instruction dot;
  dot.op = OpKind::kDot;
  dot.scalars.push_back(ScalarOperand{1, Scalar::Int(1)});
  EXPECT_FALSE(InferType(dot, {T(DType::kFloat64, {2})}).ok());
  Instruction neg = MakeElementwise(K::kNegative, {});
  neg.scalars.push_back(ScalarOperand{1, Scalar::Int(1)});
  EXPECT_FALSE(InferType(neg, {T(DType::kFloat64, {2})}).ok());
  // Two scalars: NumPy's defaults (numpy.add(1, 2.0) is float64).
  Instruction two = MakeElementwise(K::kAdd, {});
  two.scalars = {ScalarOperand{0, Scalar::Int(1)}, ScalarOperand{1, Scalar::Float(2)}};
  absl::StatusOr<ValueType> both = InferType(two, {});
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->dtype, DType::kFloat64);
  EXPECT_EQ(both->shape, Shape());
}

// np.where(c, a, b).dtype and np.clip(a, lo, hi).dtype, NumPy 2.4.
TEST(InferElementwise, WhereAndClipTypes) {
  constexpr DType kB = DType::kBool, kI32 = DType::kInt32, kI64 = DType::kInt64,
                  kF32 = DType::kFloat32, kF64 = DType::kFloat64;
  Instruction where;
  where.op = OpKind::kWhere;
  absl::StatusOr<ValueType> t = InferType(where, {T(kB, {2, 1}), T(kF32, {3}), T(kI32, {1})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype, kF64);  // np.where(c, f32, i32)
  EXPECT_EQ(t->shape, Shape({2, 3}));
  t = InferType(where, {T(kF64, {2}), T(kI32, {2}), T(kI32, {2})});
  EXPECT_EQ(t->dtype, kI32);  // the condition's dtype takes no part
  where.scalars = {ScalarOperand{2, Scalar::Float(0.0)}};
  EXPECT_EQ(InferType(where, {T(kB, {2}), T(kF32, {2})})->dtype, kF32);  // np.where(c, f32, 0.0)
  where.scalars = {ScalarOperand{2, Scalar::Int(1)}};
  EXPECT_EQ(InferType(where, {T(kB, {2}), T(kB, {2})})->dtype, kI64);  // np.where(c, b, 1)
  where.scalars = {ScalarOperand{1, Scalar::Int(1)}, ScalarOperand{2, Scalar::Float(2)}};
  EXPECT_EQ(InferType(where, {T(kB, {2})})->dtype, kF64);  // np.where(c, 1, 2.0)
  where.scalars = {ScalarOperand{0, Scalar::Bool(true)}};
  EXPECT_FALSE(InferType(where, {T(kF32, {2}), T(kF32, {2})}).ok());  // scalar cond
  EXPECT_FALSE(InferType(where, {T(kF32, {2})}).ok());                // two operands

  Instruction clip;
  clip.op = OpKind::kClip;
  clip.scalars = {ScalarOperand{1, Scalar::Int(0)}, ScalarOperand{2, Scalar::Int(5)}};
  EXPECT_EQ(InferType(clip, {T(kI32, {2})})->dtype, kI32);  // np.clip(i32, 0, 5)
  clip.scalars = {ScalarOperand{1, Scalar::Float(0.5)}, ScalarOperand{2, Scalar::Float(1.5)}};
  EXPECT_EQ(InferType(clip, {T(kI32, {2})})->dtype, kF64);  // np.clip(i32, 0.5, 1.5)
  clip.scalars = {ScalarOperand{2, Scalar::Int(1)}};
  EXPECT_EQ(InferType(clip, {T(kF32, {2}), T(kF64, {})})->dtype, kF64);  // f32, f64(0), 1
}

TEST(InferElementwise, BoundCountsTheBoolTemporaryAndScalars) {
  // less(int32[1000], 1.5): computes in float64 (the operand's copy, the 0/1
  // temporary, the scalar) and returns 1000 bools.
  Instruction ins = MakeElementwise(ElementwiseKind::kLess, {});
  ins.scalars.push_back(ScalarOperand{1, Scalar::Float(1.5)});
  const ValueType a = T(DType::kInt32, {1000});
  const ValueType out = *InferType(ins, {a});
  EXPECT_EQ(out.dtype, DType::kBool);
  EXPECT_EQ(AllocationBound(ins, {a}, out), 1000 + 8000 + 8 + 8000);
}

}  // namespace
}  // namespace resident

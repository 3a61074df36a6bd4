// Every op through the client library against a real server in-process.
// Expected values are NumPy's (1.24 on the dev machine, arrays only so
// NumPy 2's promotion rules apply), computed outside this code and pasted
// as literals; the NumPy expression is named beside each.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "e2e_fixture.h"
#include "gmock/gmock.h"

namespace resident::e2e {
namespace {

using client::arange;
using client::astype;
using client::full;
using client::ones;
using client::zeros;
using ::testing::HasSubstr;

class OpsTest : public SharedServerTest<OpsTest> {
 public:
  static ServerOptions Options() {
    ServerOptions o;
    o.session_idle_timeout = absl::Minutes(5);
    return o;
  }
};

constexpr DType kB = DType::kBool, kI32 = DType::kInt32, kI64 = DType::kInt64,
                kF32 = DType::kFloat32, kF64 = DType::kFloat64;

// --- creation -------------------------------------------------------------

TEST_F(OpsTest, OnesAndZerosEveryDtype) {
  for (DType d : kAllDTypes) {
    ExpectArray(ones(*c_, {2, 3}, d), d, {2, 3}, std::vector<double>(6, 1.0), DTypeName(d));
    ExpectArray(zeros(*c_, {3, 1}, d), d, {3, 1}, std::vector<double>(3, 0.0), DTypeName(d));
  }
  // Default dtype float64 (np.ones(4).dtype).
  ExpectArray(ones(*c_, {4}), kF64, {4}, {1, 1, 1, 1});
}

TEST_F(OpsTest, Full) {
  // np.full((2,2), 2.5, dtype=np.int32) -> [[2,2],[2,2]]
  ExpectArray(full(*c_, {2, 2}, Scalar::Float(2.5), kI32), kI32, {2, 2}, {2, 2, 2, 2});
  // np.full(3, -1.5, dtype=np.int64) -> [-1,-1,-1]
  ExpectArray(full(*c_, {3}, Scalar::Float(-1.5), kI64), kI64, {3}, {-1, -1, -1});
  // np.full(2, 0.0, dtype=bool) -> [False, False]; np.full(2, -3, dtype=bool) -> [True, True]
  ExpectArray(full(*c_, {2}, Scalar::Float(0.0), kB), kB, {2}, {0, 0});
  ExpectArray(full(*c_, {2}, Scalar::Int(-3), kB), kB, {2}, {1, 1});
  // np.full(2, 0.1, dtype=np.float32) -> float32(0.1) == 0.10000000149011612
  ExpectArray(full(*c_, {2}, Scalar::Float(0.1), kF32), kF32, {2},
              {0.10000000149011612, 0.10000000149011612});
  // Default dtypes from the fill's kind: np.full(2, 7) int64, np.full(2, True) bool.
  ExpectArray(full(*c_, {2}, Scalar::Int(7)), kI64, {2}, {7, 7});
  ExpectArray(full(*c_, {2}, Scalar::Bool(true)), kB, {2}, {1, 1});
  ExpectArray(full(*c_, {1}, Scalar::Float(-0.0)), kF64, {1}, {-0.0});
}

TEST_F(OpsTest, Arange) {
  // np.arange(-3, 4, 2)
  ExpectArray(arange(*c_, Scalar::Int(-3), Scalar::Int(4), Scalar::Int(2)), kI64, {4},
              {-3, -1, 1, 3});
  // np.arange(0, 1, 0.1)
  ExpectArray(arange(*c_, Scalar::Int(0), Scalar::Int(1), Scalar::Float(0.1)), kF64, {10},
              {0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001, 0.7000000000000001,
               0.8, 0.9});
  // np.arange(0, 1, 0.1, dtype=np.float32)
  ExpectArray(
      arange(*c_, Scalar::Int(0), Scalar::Int(1), Scalar::Float(0.1), kF32), kF32, {10},
      {0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896, 0.4000000059604645, 0.5,
       0.6000000238418579, 0.699999988079071, 0.800000011920929, 0.9000000357627869});
  // np.arange(10, 0, -3, dtype=np.int32)
  ExpectArray(arange(*c_, Scalar::Int(10), Scalar::Int(0), Scalar::Int(-3), kI32), kI32, {4},
              {10, 7, 4, 1});
  // np.arange(0.5, 5, dtype=np.int64)
  ExpectArray(arange(*c_, Scalar::Float(0.5), Scalar::Int(5), Scalar::Int(1), kI64), kI64, {5},
              {0, 1, 2, 3, 4});
  // np.arange(0, 2, dtype=bool)
  ExpectArray(arange(*c_, Scalar::Int(0), Scalar::Int(2), Scalar::Int(1), kB), kB, {2}, {0, 1});
  // np.arange(1.5, -2, -0.5)
  ExpectArray(arange(*c_, Scalar::Float(1.5), Scalar::Int(-2), Scalar::Float(-0.5)), kF64, {7},
              {1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -1.5});
  // np.arange(1, 0) is empty; np.arange(5)
  ExpectArray(arange(*c_, Scalar::Int(1), Scalar::Int(0)), kI64, {0}, {});
  ExpectArray(arange(*c_, 5), kI64, {5}, {0, 1, 2, 3, 4});
}

// --- arithmetic: every dtype pair -------------------------------------------

struct PairCase {
  DType a, b;
  const char* op;
  std::optional<DType> out;  // nullopt: NumPy raises
  std::vector<double> want;
};

// Generated with:
//   A = [0, 1, 5, 3]; B = [3, 7, 1, 6]
//   r = getattr(np, op)(np.array(A).astype(a), np.array(B).astype(b))
//   -> (r.dtype, r.tolist()); TypeError -> nullopt
const PairCase kPairs[] = {
    {DType::kBool, DType::kBool, "add", DType::kBool, {1, 1, 1, 1}},
    {DType::kBool, DType::kBool, "subtract", std::nullopt, {}},
    {DType::kBool, DType::kBool, "multiply", DType::kBool, {0, 1, 1, 1}},
    {DType::kBool, DType::kBool, "divide", DType::kFloat64, {0.0, 1.0, 1.0, 1.0}},
    {DType::kBool, DType::kInt32, "add", DType::kInt32, {3, 8, 2, 7}},
    {DType::kBool, DType::kInt32, "subtract", DType::kInt32, {-3, -6, 0, -5}},
    {DType::kBool, DType::kInt32, "multiply", DType::kInt32, {0, 7, 1, 6}},
    {DType::kBool,
     DType::kInt32,
     "divide",
     DType::kFloat64,
     {0.0, 0.14285714285714285, 1.0, 0.16666666666666666}},
    {DType::kBool, DType::kInt64, "add", DType::kInt64, {3, 8, 2, 7}},
    {DType::kBool, DType::kInt64, "subtract", DType::kInt64, {-3, -6, 0, -5}},
    {DType::kBool, DType::kInt64, "multiply", DType::kInt64, {0, 7, 1, 6}},
    {DType::kBool,
     DType::kInt64,
     "divide",
     DType::kFloat64,
     {0.0, 0.14285714285714285, 1.0, 0.16666666666666666}},
    {DType::kBool, DType::kFloat32, "add", DType::kFloat32, {3.0, 8.0, 2.0, 7.0}},
    {DType::kBool, DType::kFloat32, "subtract", DType::kFloat32, {-3.0, -6.0, 0.0, -5.0}},
    {DType::kBool, DType::kFloat32, "multiply", DType::kFloat32, {0.0, 7.0, 1.0, 6.0}},
    {DType::kBool,
     DType::kFloat32,
     "divide",
     DType::kFloat32,
     {0.0, 0.1428571492433548, 1.0, 0.1666666716337204}},
    {DType::kBool, DType::kFloat64, "add", DType::kFloat64, {3.0, 8.0, 2.0, 7.0}},
    {DType::kBool, DType::kFloat64, "subtract", DType::kFloat64, {-3.0, -6.0, 0.0, -5.0}},
    {DType::kBool, DType::kFloat64, "multiply", DType::kFloat64, {0.0, 7.0, 1.0, 6.0}},
    {DType::kBool,
     DType::kFloat64,
     "divide",
     DType::kFloat64,
     {0.0, 0.14285714285714285, 1.0, 0.16666666666666666}},
    {DType::kInt32, DType::kBool, "add", DType::kInt32, {1, 2, 6, 4}},
    {DType::kInt32, DType::kBool, "subtract", DType::kInt32, {-1, 0, 4, 2}},
    {DType::kInt32, DType::kBool, "multiply", DType::kInt32, {0, 1, 5, 3}},
    {DType::kInt32, DType::kBool, "divide", DType::kFloat64, {0.0, 1.0, 5.0, 3.0}},
    {DType::kInt32, DType::kInt32, "add", DType::kInt32, {3, 8, 6, 9}},
    {DType::kInt32, DType::kInt32, "subtract", DType::kInt32, {-3, -6, 4, -3}},
    {DType::kInt32, DType::kInt32, "multiply", DType::kInt32, {0, 7, 5, 18}},
    {DType::kInt32, DType::kInt32, "divide", DType::kFloat64, {0.0, 0.14285714285714285, 5.0, 0.5}},
    {DType::kInt32, DType::kInt64, "add", DType::kInt64, {3, 8, 6, 9}},
    {DType::kInt32, DType::kInt64, "subtract", DType::kInt64, {-3, -6, 4, -3}},
    {DType::kInt32, DType::kInt64, "multiply", DType::kInt64, {0, 7, 5, 18}},
    {DType::kInt32, DType::kInt64, "divide", DType::kFloat64, {0.0, 0.14285714285714285, 5.0, 0.5}},
    {DType::kInt32, DType::kFloat32, "add", DType::kFloat64, {3.0, 8.0, 6.0, 9.0}},
    {DType::kInt32, DType::kFloat32, "subtract", DType::kFloat64, {-3.0, -6.0, 4.0, -3.0}},
    {DType::kInt32, DType::kFloat32, "multiply", DType::kFloat64, {0.0, 7.0, 5.0, 18.0}},
    {DType::kInt32,
     DType::kFloat32,
     "divide",
     DType::kFloat64,
     {0.0, 0.14285714285714285, 5.0, 0.5}},
    {DType::kInt32, DType::kFloat64, "add", DType::kFloat64, {3.0, 8.0, 6.0, 9.0}},
    {DType::kInt32, DType::kFloat64, "subtract", DType::kFloat64, {-3.0, -6.0, 4.0, -3.0}},
    {DType::kInt32, DType::kFloat64, "multiply", DType::kFloat64, {0.0, 7.0, 5.0, 18.0}},
    {DType::kInt32,
     DType::kFloat64,
     "divide",
     DType::kFloat64,
     {0.0, 0.14285714285714285, 5.0, 0.5}},
    {DType::kInt64, DType::kBool, "add", DType::kInt64, {1, 2, 6, 4}},
    {DType::kInt64, DType::kBool, "subtract", DType::kInt64, {-1, 0, 4, 2}},
    {DType::kInt64, DType::kBool, "multiply", DType::kInt64, {0, 1, 5, 3}},
    {DType::kInt64, DType::kBool, "divide", DType::kFloat64, {0.0, 1.0, 5.0, 3.0}},
    {DType::kInt64, DType::kInt32, "add", DType::kInt64, {3, 8, 6, 9}},
    {DType::kInt64, DType::kInt32, "subtract", DType::kInt64, {-3, -6, 4, -3}},
    {DType::kInt64, DType::kInt32, "multiply", DType::kInt64, {0, 7, 5, 18}},
    {DType::kInt64, DType::kInt32, "divide", DType::kFloat64, {0.0, 0.14285714285714285, 5.0, 0.5}},
    {DType::kInt64, DType::kInt64, "add", DType::kInt64, {3, 8, 6, 9}},
    {DType::kInt64, DType::kInt64, "subtract", DType::kInt64, {-3, -6, 4, -3}},
    {DType::kInt64, DType::kInt64, "multiply", DType::kInt64, {0, 7, 5, 18}},
    {DType::kInt64, DType::kInt64, "divide", DType::kFloat64, {0.0, 0.14285714285714285, 5.0, 0.5}},
    {DType::kInt64, DType::kFloat32, "add", DType::kFloat64, {3.0, 8.0, 6.0, 9.0}},
    {DType::kInt64, DType::kFloat32, "subtract", DType::kFloat64, {-3.0, -6.0, 4.0, -3.0}},
    {DType::kInt64, DType::kFloat32, "multiply", DType::kFloat64, {0.0, 7.0, 5.0, 18.0}},
    {DType::kInt64,
     DType::kFloat32,
     "divide",
     DType::kFloat64,
     {0.0, 0.14285714285714285, 5.0, 0.5}},
    {DType::kInt64, DType::kFloat64, "add", DType::kFloat64, {3.0, 8.0, 6.0, 9.0}},
    {DType::kInt64, DType::kFloat64, "subtract", DType::kFloat64, {-3.0, -6.0, 4.0, -3.0}},
    {DType::kInt64, DType::kFloat64, "multiply", DType::kFloat64, {0.0, 7.0, 5.0, 18.0}},
    {DType::kInt64,
     DType::kFloat64,
     "divide",
     DType::kFloat64,
     {0.0, 0.14285714285714285, 5.0, 0.5}},
    {DType::kFloat32, DType::kBool, "add", DType::kFloat32, {1.0, 2.0, 6.0, 4.0}},
    {DType::kFloat32, DType::kBool, "subtract", DType::kFloat32, {-1.0, 0.0, 4.0, 2.0}},
    {DType::kFloat32, DType::kBool, "multiply", DType::kFloat32, {0.0, 1.0, 5.0, 3.0}},
    {DType::kFloat32, DType::kBool, "divide", DType::kFloat32, {0.0, 1.0, 5.0, 3.0}},
    {DType::kFloat32, DType::kInt32, "add", DType::kFloat64, {3.0, 8.0, 6.0, 9.0}},
    {DType::kFloat32, DType::kInt32, "subtract", DType::kFloat64, {-3.0, -6.0, 4.0, -3.0}},
    {DType::kFloat32, DType::kInt32, "multiply", DType::kFloat64, {0.0, 7.0, 5.0, 18.0}},
    {DType::kFloat32,
     DType::kInt32,
     "divide",
     DType::kFloat64,
     {0.0, 0.14285714285714285, 5.0, 0.5}},
    {DType::kFloat32, DType::kInt64, "add", DType::kFloat64, {3.0, 8.0, 6.0, 9.0}},
    {DType::kFloat32, DType::kInt64, "subtract", DType::kFloat64, {-3.0, -6.0, 4.0, -3.0}},
    {DType::kFloat32, DType::kInt64, "multiply", DType::kFloat64, {0.0, 7.0, 5.0, 18.0}},
    {DType::kFloat32,
     DType::kInt64,
     "divide",
     DType::kFloat64,
     {0.0, 0.14285714285714285, 5.0, 0.5}},
    {DType::kFloat32, DType::kFloat32, "add", DType::kFloat32, {3.0, 8.0, 6.0, 9.0}},
    {DType::kFloat32, DType::kFloat32, "subtract", DType::kFloat32, {-3.0, -6.0, 4.0, -3.0}},
    {DType::kFloat32, DType::kFloat32, "multiply", DType::kFloat32, {0.0, 7.0, 5.0, 18.0}},
    {DType::kFloat32,
     DType::kFloat32,
     "divide",
     DType::kFloat32,
     {0.0, 0.1428571492433548, 5.0, 0.5}},
    {DType::kFloat32, DType::kFloat64, "add", DType::kFloat64, {3.0, 8.0, 6.0, 9.0}},
    {DType::kFloat32, DType::kFloat64, "subtract", DType::kFloat64, {-3.0, -6.0, 4.0, -3.0}},
    {DType::kFloat32, DType::kFloat64, "multiply", DType::kFloat64, {0.0, 7.0, 5.0, 18.0}},
    {DType::kFloat32,
     DType::kFloat64,
     "divide",
     DType::kFloat64,
     {0.0, 0.14285714285714285, 5.0, 0.5}},
    {DType::kFloat64, DType::kBool, "add", DType::kFloat64, {1.0, 2.0, 6.0, 4.0}},
    {DType::kFloat64, DType::kBool, "subtract", DType::kFloat64, {-1.0, 0.0, 4.0, 2.0}},
    {DType::kFloat64, DType::kBool, "multiply", DType::kFloat64, {0.0, 1.0, 5.0, 3.0}},
    {DType::kFloat64, DType::kBool, "divide", DType::kFloat64, {0.0, 1.0, 5.0, 3.0}},
    {DType::kFloat64, DType::kInt32, "add", DType::kFloat64, {3.0, 8.0, 6.0, 9.0}},
    {DType::kFloat64, DType::kInt32, "subtract", DType::kFloat64, {-3.0, -6.0, 4.0, -3.0}},
    {DType::kFloat64, DType::kInt32, "multiply", DType::kFloat64, {0.0, 7.0, 5.0, 18.0}},
    {DType::kFloat64,
     DType::kInt32,
     "divide",
     DType::kFloat64,
     {0.0, 0.14285714285714285, 5.0, 0.5}},
    {DType::kFloat64, DType::kInt64, "add", DType::kFloat64, {3.0, 8.0, 6.0, 9.0}},
    {DType::kFloat64, DType::kInt64, "subtract", DType::kFloat64, {-3.0, -6.0, 4.0, -3.0}},
    {DType::kFloat64, DType::kInt64, "multiply", DType::kFloat64, {0.0, 7.0, 5.0, 18.0}},
    {DType::kFloat64,
     DType::kInt64,
     "divide",
     DType::kFloat64,
     {0.0, 0.14285714285714285, 5.0, 0.5}},
    {DType::kFloat64, DType::kFloat32, "add", DType::kFloat64, {3.0, 8.0, 6.0, 9.0}},
    {DType::kFloat64, DType::kFloat32, "subtract", DType::kFloat64, {-3.0, -6.0, 4.0, -3.0}},
    {DType::kFloat64, DType::kFloat32, "multiply", DType::kFloat64, {0.0, 7.0, 5.0, 18.0}},
    {DType::kFloat64,
     DType::kFloat32,
     "divide",
     DType::kFloat64,
     {0.0, 0.14285714285714285, 5.0, 0.5}},
    {DType::kFloat64, DType::kFloat64, "add", DType::kFloat64, {3.0, 8.0, 6.0, 9.0}},
    {DType::kFloat64, DType::kFloat64, "subtract", DType::kFloat64, {-3.0, -6.0, 4.0, -3.0}},
    {DType::kFloat64, DType::kFloat64, "multiply", DType::kFloat64, {0.0, 7.0, 5.0, 18.0}},
    {DType::kFloat64,
     DType::kFloat64,
     "divide",
     DType::kFloat64,
     {0.0, 0.14285714285714285, 5.0, 0.5}},
};

TEST_F(OpsTest, ArithmeticEveryDtypePair) {
  for (const PairCase& pc : kPairs) {
    const std::string what = absl::StrCat(pc.op, "(", DTypeName(pc.a), ", ", DTypeName(pc.b), ")");
    Array a = UploadAs(*c_, pc.a, {4}, {0, 1, 5, 3});
    Array b = UploadAs(*c_, pc.b, {4}, {3, 7, 1, 6});
    const std::string op = pc.op;
    Array r = op == "add" ? a + b : op == "subtract" ? a - b : op == "multiply" ? a * b : a / b;
    if (!pc.out) {
      absl::Status s = r.Evaluate();
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << what;
      EXPECT_THAT(std::string(s.message()), HasSubstr("boolean subtract")) << what;
      continue;
    }
    ExpectArray(r, *pc.out, {4}, pc.want, what);
  }
}

TEST_F(OpsTest, Negative) {
  // -np.array([1.5, -0.0, 0.0])
  ExpectArray(-UploadAs(*c_, kF64, {3}, {1.5, -0.0, 0.0}), kF64, {3}, {-1.5, 0.0, -0.0});
  ExpectArray(-UploadAs(*c_, kF32, {2}, {2.5, -1}), kF32, {2}, {-2.5, 1});
  ExpectArray(-UploadAs(*c_, kI32, {2}, {7, -8}), kI32, {2}, {-7, 8});
  ExpectArray(-UploadAs(*c_, kI64, {2}, {7, -8}), kI64, {2}, {-7, 8});
  absl::Status s = (-ones(*c_, {2}, kB)).Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("boolean negative"));
}

TEST_F(OpsTest, Broadcasting) {
  // np.array([[1],[2],[3]], np.int32) + np.array([.5, 1.5, 2.5, 3.5], np.float32)
  Array a = UploadAs(*c_, kI32, {3, 1}, {1, 2, 3});
  Array b = UploadAs(*c_, kF32, {4}, {0.5, 1.5, 2.5, 3.5});
  ExpectArray(a + b, kF64, {3, 4}, {1.5, 2.5, 3.5, 4.5, 2.5, 3.5, 4.5, 5.5, 3.5, 4.5, 5.5, 6.5});
  // A 0-d operand broadcasts against anything: np.ones((2,2)) * np.array(3.)
  ExpectArray(ones(*c_, {2, 2}) * full(*c_, {}, Scalar::Float(3.0)), kF64, {2, 2}, {3, 3, 3, 3});
  // (2,1,3) - (4,1): (2,4,3)
  Array x = reshape(arange(*c_, 6), {2, 1, 3});
  Array y = reshape(arange(*c_, 4), {4, 1});
  absl::StatusOr<Shape> s = (x - y).shape();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, Shape({2, 4, 3}));
  absl::Status bad = (ones(*c_, {2, 3}) + ones(*c_, {4})).Evaluate();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.message()), HasSubstr("could not be broadcast"));
}

TEST_F(OpsTest, IntegerWraparound) {
  // np.array([2**31-1], np.int32) + np.ones(1, np.int32) -> [-2147483648]
  ExpectArray(UploadAs(*c_, kI32, {1}, {2147483647}) + ones(*c_, {1}, kI32), kI32, {1},
              {-2147483648.0});
  // np.array([-2**31], np.int32) - np.ones(1, np.int32) -> [2147483647]
  ExpectArray(UploadAs(*c_, kI32, {1}, {-2147483648.0}) - ones(*c_, {1}, kI32), kI32, {1},
              {2147483647});
  // np.array([65536], np.int32) * np.array([65536], np.int32) -> [0]
  Array m = UploadAs(*c_, kI32, {1}, {65536});
  ExpectArray(m * m, kI32, {1}, {0});
  // -np.array([-2**31], np.int32) -> [-2147483648]
  ExpectArray(-UploadAs(*c_, kI32, {1}, {-2147483648.0}), kI32, {1}, {-2147483648.0});
  // np.array([2**63-1], np.int64) + 1 -> [-9223372036854775808]
  const std::vector<int64_t> big = {INT64_MAX};
  absl::StatusOr<Array> b = c_->Upload<int64_t>({1}, big);
  ASSERT_TRUE(b.ok());
  absl::StatusOr<std::vector<int64_t>> v = (*b + ones(*c_, {1}, kI64)).ToVector<int64_t>();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, std::vector<int64_t>({INT64_MIN}));
  // np.array([2**32+5, -2**31-1], np.int64).astype(np.int32) -> [5, 2147483647]
  ExpectArray(astype(UploadAs(*c_, kI64, {2}, {4294967301.0, -2147483649.0}), kI32), kI32, {2},
              {5, 2147483647});
}

TEST_F(OpsTest, FloatDivisionByZero) {
  // np.array([1., -1., 0.]) / np.zeros(3) -> [inf, -inf, nan]
  ExpectArray(UploadAs(*c_, kF64, {3}, {1, -1, 0}) / zeros(*c_, {3}), kF64, {3},
              {kInf, -kInf, kNaN});
  // float32 stays float32
  ExpectArray(UploadAs(*c_, kF32, {3}, {1, -1, 0}) / zeros(*c_, {3}, kF32), kF32, {3},
              {kInf, -kInf, kNaN});
  // np.array([1, -1, 0]) / np.zeros(3, np.int64) -> float64 [inf, -inf, nan]
  ExpectArray(UploadAs(*c_, kI64, {3}, {1, -1, 0}) / zeros(*c_, {3}, kI64), kF64, {3},
              {kInf, -kInf, kNaN});
  ExpectArray(UploadAs(*c_, kI32, {3}, {1, -1, 0}) / zeros(*c_, {3}, kI32), kF64, {3},
              {kInf, -kInf, kNaN});
}

TEST_F(OpsTest, BoolSemantics) {
  Array a = UploadAs(*c_, kB, {4}, {0, 0, 1, 1});
  Array b = UploadAs(*c_, kB, {4}, {0, 1, 0, 1});
  // np.add on bool is logical or; np.multiply is logical and.
  ExpectArray(a + b, kB, {4}, {0, 1, 1, 1});
  ExpectArray(a * b, kB, {4}, {0, 0, 0, 1});
  // True + True stays True (not 2).
  ExpectArray(ones(*c_, {1}, kB) + ones(*c_, {1}, kB), kB, {1}, {1});
  // np.array([0,1,1,1,0], bool).sum() -> 3 (int64)
  ExpectArray(sum(UploadAs(*c_, kB, {5}, {0, 1, 1, 1, 0})), kI64, {}, {3});
  // np.array([0.0, -0.0, 0.5, nan, -inf]).astype(bool) -> [F, F, T, T, T]
  ExpectArray(astype(UploadAs(*c_, kF64, {5}, {0.0, -0.0, 0.5, kNaN, -kInf}), kB), kB, {5},
              {0, 0, 1, 1, 1});
  // np.array([0, 1], bool).astype(np.int32)
  ExpectArray(astype(b, kI32), kI32, {4}, {0, 1, 0, 1});
  // False is the identity of bool add.
  ExpectArray(a + zeros(*c_, {4}, kB), kB, {4}, {0, 0, 1, 1});
}

TEST_F(OpsTest, Astype) {
  // np.array([-1.7, 2.5, 3.9, -0.5]).astype(np.int32) -> [-1, 2, 3, 0]
  ExpectArray(astype(UploadAs(*c_, kF64, {4}, {-1.7, 2.5, 3.9, -0.5}), kI32), kI32, {4},
              {-1, 2, 3, 0});
  // np.array([0.1, 1e40, 1/3]).astype(np.float32)
  ExpectArray(astype(UploadAs(*c_, kF64, {3}, {0.1, 1e40, 1.0 / 3}), kF32), kF32, {3},
              {0.10000000149011612, kInf, 0.3333333432674408});
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      ExpectArray(astype(UploadAs(*c_, from, {2, 2}, {0, 1, 1, 0}), to), to, {2, 2}, {0, 1, 1, 0},
                  absl::StrCat(DTypeName(from), "->", DTypeName(to)));
    }
  }
}

// --- dot, matmul, sum, reshape, transpose ------------------------------------

TEST_F(OpsTest, Dot) {
  const std::vector<double> a6 = {0, 1, 2, 3, 4, 5}, b12 = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  // a = np.arange(6).reshape(2,3); b = np.arange(12).reshape(3,4); np.dot(a, b)
  const std::vector<double> ab = {20, 23, 26, 29, 56, 68, 80, 92};
  ExpectArray(dot(UploadAs(*c_, kI64, {2, 3}, a6), UploadAs(*c_, kI64, {3, 4}, b12)), kI64, {2, 4},
              ab);
  ExpectArray(dot(UploadAs(*c_, kF32, {2, 3}, a6), UploadAs(*c_, kF32, {3, 4}, b12)), kF32, {2, 4},
              ab);
  ExpectArray(dot(UploadAs(*c_, kF64, {2, 3}, a6), UploadAs(*c_, kF64, {3, 4}, b12)), kF64, {2, 4},
              ab);
  ExpectArray(dot(UploadAs(*c_, kI32, {2, 3}, a6), UploadAs(*c_, kI32, {3, 4}, b12)), kI32, {2, 4},
              ab);
  // np.dot(a.astype(np.int32), b.astype(np.float32)) -> float64
  ExpectArray(dot(UploadAs(*c_, kI32, {2, 3}, a6), UploadAs(*c_, kF32, {3, 4}, b12)), kF64, {2, 4},
              ab);
  // np.dot(np.arange(3.), np.arange(3.) + 1) -> 8.0 (0-d)
  ExpectArray(dot(UploadAs(*c_, kF64, {3}, {0, 1, 2}), UploadAs(*c_, kF64, {3}, {1, 2, 3})), kF64,
              {}, {8});
  // np.dot(a, np.array([1, 0, 2], np.int32)) -> int64 [4, 13]
  ExpectArray(dot(UploadAs(*c_, kI64, {2, 3}, a6), UploadAs(*c_, kI32, {3}, {1, 0, 2})), kI64, {2},
              {4, 13});
  // np.dot(np.array([1., 2.]), a) -> [6, 9, 12]
  ExpectArray(dot(UploadAs(*c_, kF64, {2}, {1, 2}), UploadAs(*c_, kI64, {2, 3}, a6)), kF64, {3},
              {6, 9, 12});
  // np.dot(np.array([1,0,1], bool), np.array([0,0,1], bool)) -> True; [0,1,0] -> False
  ExpectArray(dot(UploadAs(*c_, kB, {3}, {1, 0, 1}), UploadAs(*c_, kB, {3}, {0, 0, 1})), kB, {},
              {1});
  ExpectArray(dot(UploadAs(*c_, kB, {3}, {1, 0, 1}), UploadAs(*c_, kB, {3}, {0, 1, 0})), kB, {},
              {0});
  // np.dot(a.astype(float), np.array(2.5))
  ExpectArray(dot(UploadAs(*c_, kF64, {2, 3}, a6), full(*c_, {}, Scalar::Float(2.5))), kF64, {2, 3},
              {0, 2.5, 5, 7.5, 10, 12.5});
  // np.dot(np.ones((2,3)), np.ones((4,5))): not aligned
  absl::Status s = dot(ones(*c_, {2, 3}), ones(*c_, {4, 5})).Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("not aligned: 3 (dim 1) != 4 (dim 0)"));
}

TEST_F(OpsTest, Matmul) {
  std::vector<double> x24(24), y8(8), i12(12), i18(18);
  for (int i = 0; i < 24; ++i) x24[i] = i;
  for (int i = 0; i < 8; ++i) y8[i] = i;
  for (int i = 0; i < 12; ++i) i12[i] = i;
  for (int i = 0; i < 18; ++i) i18[i] = i;
  // np.matmul(np.arange(24.).reshape(2,3,4), np.arange(8.).reshape(4,2))
  ExpectArray(matmul(UploadAs(*c_, kF64, {2, 3, 4}, x24), UploadAs(*c_, kF64, {4, 2}, y8)), kF64,
              {2, 3, 2}, {28, 34, 76, 98, 124, 162, 172, 226, 220, 290, 268, 354});
  // np.matmul(np.arange(12).reshape(2,1,2,3), np.arange(18).reshape(3,3,2))
  ExpectArray(matmul(UploadAs(*c_, kI64, {2, 1, 2, 3}, i12), UploadAs(*c_, kI64, {3, 3, 2}, i18)),
              kI64, {2, 3, 2, 2}, {10, 13, 28, 40, 28,  31,  100, 112, 46,  49,  172, 184,
                                   46, 67, 64, 94, 172, 193, 244, 274, 298, 319, 424, 454});
  // np.matmul(np.array([1,2,3]), np.arange(24).reshape(2,3,4))
  ExpectArray(matmul(UploadAs(*c_, kI64, {3}, {1, 2, 3}), UploadAs(*c_, kI64, {2, 3, 4}, x24)),
              kI64, {2, 4}, {32, 38, 44, 50, 104, 110, 116, 122});
  // float32 @ float32 stays float32
  ExpectArray(
      matmul(UploadAs(*c_, kF32, {2, 3}, {0, 1, 2, 3, 4, 5}), UploadAs(*c_, kF32, {3, 4}, i12)),
      kF32, {2, 4}, {20, 23, 26, 29, 56, 68, 80, 92});
  // np.matmul(np.ones((2,0)), np.ones((0,4))) -> zeros (2,4)
  ExpectArray(matmul(ones(*c_, {2, 0}), ones(*c_, {0, 4})), kF64, {2, 4},
              std::vector<double>(8, 0.0));
  absl::Status s = matmul(ones(*c_, {2, 3}), ones(*c_, {4, 5})).Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("size 4 is different from 3"));
}

TEST_F(OpsTest, Sum) {
  Array x = reshape(arange(*c_, 24), {2, 3, 4});
  // np.arange(24).reshape(2,3,4).sum() -> 276
  ExpectArray(sum(x), kI64, {}, {276});
  // .sum(axis=0)
  ExpectArray(sum(x, 0), kI64, {3, 4}, {12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34});
  // .sum(axis=-1)
  ExpectArray(sum(x, -1), kI64, {2, 3}, {6, 22, 38, 54, 70, 86});
  // np.arange(24, dtype=np.int32).reshape(2,3,4).sum(axis=1) -> int64
  ExpectArray(sum(astype(x, kI32), 1), kI64, {2, 4}, {12, 15, 18, 21, 48, 51, 54, 57});
  // np.arange(10, dtype=np.float32).sum() -> float32 45
  ExpectArray(sum(arange(*c_, Scalar::Int(0), Scalar::Int(10), Scalar::Int(1), kF32)), kF32, {},
              {45});
  absl::Status s = sum(x, 3).Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("axis 3 is out of bounds"));
}

TEST_F(OpsTest, ReshapeAndTranspose) {
  Array x = reshape(arange(*c_, 24), {2, 3, 4});
  // np.arange(24).reshape(2,3,4).transpose()
  ExpectArray(transpose(x), kI64, {4, 3, 2}, {0, 12, 4, 16, 8,  20, 1, 13, 5, 17, 9,  21,
                                              2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23});
  // .transpose(1, 2, 0)
  ExpectArray(
      transpose(x, {1, 2, 0}), kI64, {3, 4, 2},
      {0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11, 23});
  // np.arange(6).reshape(3, -1)
  ExpectArray(reshape(arange(*c_, 6), {3, -1}), kI64, {3, 2}, {0, 1, 2, 3, 4, 5});
  // Reshape shares data but not identity: the source is unchanged.
  Array r = reshape(x, {24});
  Array r2 = r + r;
  ExpectArray(reshape(x, {-1}), kI64, {24}, {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                             12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
  ASSERT_TRUE(r2.Evaluate().ok());
  ExpectArray(sum(x), kI64, {}, {276});
  absl::Status s = reshape(x, {5, -1}).Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("cannot reshape array of size 24"));
  s = transpose(x, {0, 0, 1}).Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

// --- 0-d and empty arrays ----------------------------------------------------

TEST_F(OpsTest, ZeroDimensionalAndEmptyArrays) {
  ExpectArray(ones(*c_, {}) + ones(*c_, {}), kF64, {}, {2});
  ExpectArray(full(*c_, {}, Scalar::Int(5), kI32) * full(*c_, {}, Scalar::Int(-2), kI32), kI32, {},
              {-10});
  ExpectArray(reshape(full(*c_, {1, 1}, Scalar::Float(4.5)), {}), kF64, {}, {4.5});
  // np.zeros((0,3)) + np.ones((1,3)) -> shape (0, 3)
  ExpectArray(zeros(*c_, {0, 3}) + ones(*c_, {1, 3}), kF64, {0, 3}, {});
  // np.zeros((0,3)).sum(axis=0) -> [0., 0., 0.]; .sum() -> 0.0
  ExpectArray(sum(zeros(*c_, {0, 3}), 0), kF64, {3}, {0, 0, 0});
  ExpectArray(sum(zeros(*c_, {0, 3})), kF64, {}, {0});
  // np.matmul(np.zeros((0,3)), np.ones((3,4))).shape == (0, 4)
  ExpectArray(matmul(zeros(*c_, {0, 3}), ones(*c_, {3, 4})), kF64, {0, 4}, {});
  ExpectArray(transpose(zeros(*c_, {0, 3}, kI32)), kI32, {3, 0}, {});
  ExpectArray(astype(zeros(*c_, {2, 0}), kB), kB, {2, 0}, {});
  // Upload and download of an empty and of a 0-d array.
  absl::StatusOr<Array> e = c_->Upload(kF32, {0, 5}, "");
  ASSERT_TRUE(e.ok()) << e.status();
  ExpectArray(*e, kF32, {0, 5}, {});
  ExpectArray(UploadAs(*c_, kI64, {}, {42}), kI64, {}, {42});
}

// --- loops ---------------------------------------------------------------------

TEST_F(OpsTest, ServerSideLoopWithCarriedValuesAndInvariant) {
  // x = np.arange(3); s = np.zeros(3, np.int64); c = np.full(3, 2)
  // for _ in range(5): x, s = x + c, s + x   ->  x = [10 11 12], s = [20 25 30]
  Array c = full(*c_, {3}, Scalar::Int(2));
  std::vector<Array> out =
      c_->Loop(5, {arange(*c_, 3), zeros(*c_, {3}, kI64)}, [&](const std::vector<Array>& p) {
        return std::vector<Array>{p[0] + c, p[1] + p[0]};
      });
  ASSERT_EQ(out.size(), 2u);
  ExpectArray(out[0], kI64, {3}, {10, 11, 12});
  ExpectArray(out[1], kI64, {3}, {20, 25, 30});
}

TEST_F(OpsTest, LoopSwapsCarriedValues) {
  // a, b = 0, 1; 10 times a, b = b, a + b  ->  (55, 89)
  std::vector<Array> out =
      c_->Loop(10, {zeros(*c_, {1}, kI64), ones(*c_, {1}, kI64)}, [](const std::vector<Array>& p) {
        return std::vector<Array>{p[1], p[0] + p[1]};
      });
  ASSERT_EQ(out.size(), 2u);
  ExpectArray(out[0], kI64, {1}, {55});
  ExpectArray(out[1], kI64, {1}, {89});
}

TEST_F(OpsTest, LoopOfZeroTripsAndNestedLoops) {
  Array x0 = full(*c_, {2}, Scalar::Float(1.5));
  std::vector<Array> none = c_->Loop(
      0, {x0}, [](const std::vector<Array>& p) { return std::vector<Array>{p[0] + p[0]}; });
  ExpectArray(none[0], kF64, {2}, {1.5, 1.5});
  // 3 outer trips of 4 inner doublings: 1 * 2^12 = 4096.
  std::vector<Array> nested = c_->Loop(3, {ones(*c_, {2})}, [&](const std::vector<Array>& p) {
    return c_->Loop(4, {p[0]},
                    [](const std::vector<Array>& q) { return std::vector<Array>{q[0] + q[0]}; });
  });
  ExpectArray(nested[0], kF64, {2}, {4096, 4096});
  // The input array is unchanged by the loop (arrays are immutable).
  ExpectArray(x0, kF64, {2}, {1.5, 1.5});
}

TEST_F(OpsTest, LoopThatChangesDtypeIsRefused) {
  std::vector<Array> out = c_->Loop(2, {ones(*c_, {2})}, [](const std::vector<Array>& p) {
    return std::vector<Array>{astype(p[0], DType::kInt32)};
  });
  absl::Status s = out[0].Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("body yield 0 is int32 (2,)"));
}

// --- lazy batching, eager mode --------------------------------------------------

TEST_F(OpsTest, LazyLoopOf1024DoublingsIsOneRunRequest) {
  ClientOptions o;
  o.keep_alive = false;
  std::unique_ptr<Client> c = Connect(*server_, o);
  ASSERT_NE(c, nullptr);
  RpcCounter rpcs = RpcCounter::Install(*c, Target(*server_));
  Array x = ones(*c, {4, 4});
  for (int i = 0; i < 1024; ++i) x = x + x;
  EXPECT_EQ(rpcs.count("Run"), 0) << "lazy ops must be recorded, not sent";
  // 2.0**1024 overflows float64: np.ones(16) * 2.0**1023 * 2 -> inf
  ExpectArray(x, kF64, {4, 4}, std::vector<double>(16, kInf));
  EXPECT_EQ(rpcs.count("Run"), 1);
  absl::StatusOr<std::vector<client::ArrayListing>> list = c->List();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 1u) << "intermediates must not become handles";

  Array y = ones(*c, {4, 4});
  for (int i = 0; i < 1023; ++i) y = y + y;
  ExpectArray(y, kF64, {4, 4}, std::vector<double>(16, std::ldexp(1.0, 1023)));  // 2.0**1023
  EXPECT_EQ(rpcs.count("Run"), 2);
}

// The client folds these chains into loops before sending (program_builder);
// the results are NumPy's, computed op by op:
//   x = np.arange(4); 7 x (x = 10 - x)            -> [10, 9, 8, 7]
//   y = np.arange(1, 5, dtype=np.int32); 25 x (y = y * 3)  (wraps)
//   z = np.ones(3, np.float32); 100 x (z = z + np.float32(0.1))
TEST_F(OpsTest, RecordedChainsWithAFixedOperandMatchNumPy) {
  Array ten = client::full(*c_, {4}, Scalar::Int(10), kI64);
  Array x = client::arange(*c_, 4);
  for (int i = 0; i < 7; ++i) x = ten - x;
  ExpectArray(x, kI64, {4}, {10, 9, 8, 7}, "10 - x");

  Array three = client::full(*c_, {4}, Scalar::Int(3), kI32);
  Array y = client::arange(*c_, Scalar::Int(1), Scalar::Int(5), Scalar::Int(1), kI32);
  for (int i = 0; i < 25; ++i) y = y * three;
  ExpectArray(y, kI32, {4}, {1180052131, -1934863034, -754810903, 425241228}, "y * 3");

  Array tenth = client::full(*c_, {3}, Scalar::Float(0.1), kF32);
  ASSERT_TRUE(tenth.Evaluate().ok());
  Array z = ones(*c_, {3}, kF32);
  for (int i = 0; i < 100; ++i) z = z + tenth;
  // float32 bits 1093664774 == 11.000005722045898
  ExpectArray(z, kF32, {3}, std::vector<double>(3, 11.000005722045898), "z + 0.1f");
}

TEST_F(OpsTest, SeedJobOnesDoubledInFloat64) {
  // The seed tutorial's workload: np.ones((1024,512,4,4)) doubled 1023 times
  // is 2.0**1023 == 8.98846567431158e+307 everywhere; once more is inf.
  ClientOptions o;
  o.keep_alive = false;
  std::unique_ptr<Client> c = Connect(*server_, o);
  ASSERT_NE(c, nullptr);
  RpcCounter rpcs = RpcCounter::Install(*c, Target(*server_));
  Array x = ones(*c, {1024, 512, 4, 4});
  for (int i = 0; i < 1023; ++i) x = x + x;
  absl::StatusOr<std::vector<double>> v = x.ToVector<double>();
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->size(), size_t{1024} * 512 * 4 * 4);
  const double want = 8.98846567431158e+307;
  ASSERT_EQ(want, std::ldexp(1.0, 1023));
  size_t bad = 0;
  for (double d : *v) bad += d != want;
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(rpcs.count("Run"), 1);
  v = (x + x).ToVector<double>();
  ASSERT_TRUE(v.ok()) << v.status();
  bad = 0;
  for (double d : *v) bad += d != kInf;
  EXPECT_EQ(bad, 0u);
}

TEST_F(OpsTest, EagerModeSendsEveryOp) {
  ClientOptions o;
  o.lazy = false;
  o.keep_alive = false;
  std::unique_ptr<Client> c = Connect(*server_, o);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->lazy());
  RpcCounter rpcs = RpcCounter::Install(*c, Target(*server_));
  Array x = ones(*c, {3});
  EXPECT_EQ(rpcs.count("Run"), 1);
  for (int i = 0; i < 10; ++i) x = x + x;
  EXPECT_EQ(rpcs.count("Run"), 11);
  ExpectArray(x, kF64, {3}, {1024, 1024, 1024});
  EXPECT_EQ(rpcs.count("Run"), 11);
  // Dropped intermediates are released: at most the live array and the one
  // release still queued remain.
  ASSERT_TRUE(c->core()->SendReleases().ok());
  absl::StatusOr<std::vector<client::ArrayListing>> list = c->List();
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 1u);
  // An eager error surfaces on use, with the server's code.
  Array bad = ones(*c, {2}) + ones(*c, {3});
  EXPECT_EQ(bad.Evaluate().code(), absl::StatusCode::kInvalidArgument);
  // Eager loops run at once.
  std::vector<Array> l =
      c->Loop(3, {x}, [](const std::vector<Array>& p) { return std::vector<Array>{p[0] + p[0]}; });
  const int runs = rpcs.count("Run");
  ExpectArray(l[0], kF64, {3}, {8192, 8192, 8192});
  EXPECT_EQ(rpcs.count("Run"), runs);
}

TEST_F(OpsTest, BusyPollingClientGetsTheSameResultsAndErrors) {
  // ClientOptions::busy_poll changes how the client waits, nothing else: the
  // same requests, NumPy's results (np.ones(3) doubled 10 times), the
  // server's error codes.
  ClientOptions o;
  o.lazy = false;
  o.keep_alive = false;
  o.busy_poll = true;
  std::unique_ptr<Client> c = Connect(*server_, o);
  ASSERT_NE(c, nullptr);
  RpcCounter rpcs = RpcCounter::Install(*c, Target(*server_));
  Array x = ones(*c, {3});
  for (int i = 0; i < 10; ++i) x = x + x;
  EXPECT_EQ(rpcs.count("Run"), 11);
  ExpectArray(x, kF64, {3}, {1024, 1024, 1024});
  // The releases of the dropped intermediates travel busy-polled too.
  ASSERT_TRUE(c->core()->SendReleases().ok());
  absl::StatusOr<std::vector<client::ArrayListing>> list = c->List();
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 1u);
  absl::Status s = (-ones(*c, {2}, kB)).Evaluate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("boolean negative"));
  Array bad = ones(*c, {2}) + ones(*c, {3});
  EXPECT_EQ(bad.Evaluate().code(), absl::StatusCode::kInvalidArgument);
}

// --- transfers -------------------------------------------------------------------

TEST_F(OpsTest, UploadAndDownloadOver64MiBInChunks) {
  const int64_t n = (int64_t{68} << 20) / 8;  // 68 MiB of int64
  std::vector<int64_t> host(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) host[i] = i * 2654435761LL ^ (i << 7);
  absl::StatusOr<Array> a = c_->Upload<int64_t>({n}, host);
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<client::HostData> d = a->Download();
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->dtype, kI64);
  EXPECT_EQ(d->shape, Shape({n}));
  ASSERT_EQ(d->bytes.size(), host.size() * 8);
  EXPECT_EQ(std::memcmp(d->bytes.data(), host.data(), d->bytes.size()), 0);

  // On the wire the download is chunks of at most chunk_bytes.
  absl::StatusOr<client::ServerInfo> info = c_->Info();
  ASSERT_TRUE(info.ok());
  auto stub = v1::Resident::NewStub(
      grpc::CreateCustomChannel(Target(*server_), grpc::InsecureChannelCredentials(), [] {
        grpc::ChannelArguments args;
        args.SetMaxReceiveMessageSize(-1);
        return args;
      }()));
  v1::DownloadRequest req;
  req.set_session(c_->core()->session);
  absl::StatusOr<std::string> hex = a->handle_hex();
  ASSERT_TRUE(hex.ok());
  req.set_handle(HandleId::FromHex(*hex)->bytes());
  grpc::ClientContext ctx;
  auto reader = stub->Download(&ctx, req);
  v1::DownloadChunk chunk;
  int64_t chunks = 0, total = 0;
  while (reader->Read(&chunk)) {
    ++chunks;
    EXPECT_LE(static_cast<int64_t>(chunk.data().size()), info->chunk_bytes);
    total += static_cast<int64_t>(chunk.data().size());
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(total, n * 8);
  EXPECT_EQ(chunks, (n * 8 + info->chunk_bytes - 1) / info->chunk_bytes);
}

// --- memory is returned ----------------------------------------------------------

TEST_F(OpsTest, ClosingTheSessionFreesItsArrays) {
  c_.reset();
  MemoryBudget& budget = server_->device().budget();
  const int64_t before = budget.used();
  {
    std::unique_ptr<Client> c = Connect(*server_);
    Array a = ones(*c, {1000});
    Array b = a + a;
    Array u = UploadAs(*c, kI32, {100}, std::vector<double>(100, 3.0));
    ASSERT_TRUE(c->EvaluateAll({a, b}).ok());
    absl::StatusOr<client::ServerInfo> info = c->Info();
    ASSERT_TRUE(info.ok());
    EXPECT_GE(info->used_bytes - before, 8000 + 8000 + 400);
  }
  EXPECT_EQ(budget.used(), before);
  std::unique_ptr<Client> other = Connect(*server_);
  absl::StatusOr<client::ServerInfo> info = other->Info();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->used_bytes, before);
}

TEST(SessionExpiryTest, IdleSessionsAreFreedAndKeptAliveOnesAreNot) {
  ServerOptions so;
  so.session_idle_timeout = absl::Milliseconds(300);
  std::unique_ptr<Server> server = StartServer(so);
  ASSERT_NE(server, nullptr);
  MemoryBudget& budget = server->device().budget();
  ASSERT_EQ(budget.used(), 0);

  ClientOptions idle;
  idle.keep_alive = false;
  std::unique_ptr<Client> a = Connect(*server, idle);
  std::unique_ptr<Client> b = Connect(*server);  // renews in the background
  Array xa = ones(*a, {1000});
  Array xb = ones(*b, {500});
  ASSERT_TRUE(xa.Evaluate().ok());
  ASSERT_TRUE(xb.Evaluate().ok());
  EXPECT_EQ(budget.used(), 8000 + 4000);
  EXPECT_TRUE(WaitFor([&] { return budget.used() == 4000; }))
      << "the idle session's arrays were not freed: used " << budget.used();
  EXPECT_EQ(server->sessions().session_count(), 1);
  // The expired session is gone: its calls are NOT_FOUND.
  absl::StatusOr<std::vector<client::ArrayListing>> gone = a->List();
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ((xa + xa).Evaluate().code(), absl::StatusCode::kNotFound);
  // The kept-alive one still works well past the timeout.
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ExpectArray(xb + xb, kF64, {500}, std::vector<double>(500, 2.0));
  b.reset();
  a.reset();
  EXPECT_EQ(budget.used(), 0);
}

}  // namespace
}  // namespace resident::e2e

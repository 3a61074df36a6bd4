// The executor's fused-loop path (used on GPUs) against its op-by-op path,
// both on the CPU reference: a backend that forwards to the CPU backend but
// asks the executor to fuse.
#include <algorithm>
#include <cstring>
#include <memory>
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

Instruction WithScalar(ElementwiseKind kind, Operand a, int position, Scalar s) {
  Instruction i = MakeElementwise(kind, {a});
  i.scalars.push_back(ScalarOperand{position, s});
  return i;
}

// The newer ops with scalar operands and a bool-valued step: x = arange(n)
// as float32, c = full(n, 7) int32, loop 50 times:
//   x = maximum(x * 0.75 + 1, sqrt(abs(x))) + (x < 2.5)
//   c = (3 * c + 1) % 1000 - c // -7
std::shared_ptr<Program> ScalarProgram(const HandleId& unused, int64_t n) {
  (void)unused;
  using K = ElementwiseKind;
  auto p = std::make_shared<Program>();
  Instruction ar;
  ar.op = OpKind::kArange;
  ar.stop = Scalar::Int(n);
  ar.dtype = DType::kFloat32;
  p->instructions.push_back(ar);  // value 0: x
  Instruction c0;
  c0.op = OpKind::kFull;
  c0.shape = {n};
  c0.fill = Scalar::Int(7);
  c0.dtype = DType::kInt32;
  p->instructions.push_back(c0);            // value 1: c
  auto body = std::make_shared<Program>();  // params: x, c
  auto& b = body->instructions;
  auto v = [](uint32_t i) { return Operand::Value(i); };
  b.push_back(WithScalar(K::kMultiply, v(0), 1, Scalar::Float(0.75)));  // 2
  b.push_back(WithScalar(K::kAdd, v(2), 1, Scalar::Int(1)));            // 3
  b.push_back(Op(K::kAbsolute, {v(0)}));                                // 4
  b.push_back(Op(K::kSqrt, {v(4)}));                                    // 5
  b.push_back(Op(K::kMaximum, {v(3), v(5)}));                           // 6
  b.push_back(WithScalar(K::kLess, v(0), 1, Scalar::Float(2.5)));       // 7 (bool)
  b.push_back(Op(K::kAdd, {v(6), v(7)}));                               // 8
  b.push_back(WithScalar(K::kMultiply, v(1), 0, Scalar::Int(3)));       // 9
  b.push_back(WithScalar(K::kAdd, v(9), 1, Scalar::Int(1)));            // 10
  b.push_back(WithScalar(K::kRemainder, v(10), 1, Scalar::Int(1000)));  // 11
  b.push_back(WithScalar(K::kFloorDivide, v(1), 1, Scalar::Int(-7)));   // 12
  b.push_back(Op(K::kSubtract, {v(11), v(12)}));                        // 13
  body->yields = {v(8), v(13)};
  Instruction loop = Op(OpKind::kLoop, {v(0), v(1)});
  loop.trip_count = 50;
  loop.body = body;
  p->instructions.push_back(loop);  // values 2, 3
  return p;
}

// Straight-line: x = arange(n) f32 and k (int32 handle), then one region of
// mixed dtypes and scalars with three values read after it:
//   a = x * 1.5; b = a + k (f64); c = sqrt(b); d = c < 100; e = maximum(c, a)
// and, after a sum that ends the region, a second one on a:
//   f = -a; g = f.astype(int16); h = g * 3 (wraps)
std::shared_ptr<Program> RegionProgram(const HandleId& k, int64_t n) {
  using K = ElementwiseKind;
  auto p = std::make_shared<Program>();
  auto v = [](uint32_t i) { return Operand::Value(i); };
  Instruction ar;
  ar.op = OpKind::kArange;
  ar.stop = Scalar::Int(n);
  ar.dtype = DType::kFloat32;
  auto& b = p->instructions;
  b.push_back(ar);                                                     // 0: x
  b.push_back(WithScalar(K::kMultiply, v(0), 1, Scalar::Float(1.5)));  // 1: a
  b.push_back(Op(K::kAdd, {v(1), Operand::Handle(k)}));                // 2: b
  b.push_back(Op(K::kSqrt, {v(2)}));                                   // 3: c
  b.push_back(WithScalar(K::kLess, v(3), 1, Scalar::Float(100)));      // 4: d
  b.push_back(Op(K::kMaximum, {v(3), v(1)}));                          // 5: e
  b.push_back(Op(OpKind::kSum, {v(1)}));                               // 6: sum(a)
  b.push_back(Op(K::kNegative, {v(1)}));                               // 7: f
  Instruction cast = Op(OpKind::kAstype, {v(7)});
  cast.dtype = DType::kInt16;
  b.push_back(cast);                                               // 8: g
  b.push_back(WithScalar(K::kMultiply, v(8), 1, Scalar::Int(3)));  // 9: h
  return p;
}

// where and clip inside one region, with scalar operands (an int bound
// outside int16 clamps; a float condition with NaN is true):
//   x = arange(n) f32; k (int32 handle); a = k.astype(int16)
//   b = clip(a, -2, 100000); c = where(x < 3e4, b, -7); e = clip(x * 0.5, c, 1e4)
//   f = where(x - 35000, e, k)   (f32 cond: false only where x is 35000)
std::shared_ptr<Program> SelectProgram(const HandleId& k, int64_t n) {
  using K = ElementwiseKind;
  auto p = std::make_shared<Program>();
  auto v = [](uint32_t i) { return Operand::Value(i); };
  auto op = [](OpKind kind, std::vector<Operand> o, std::vector<ScalarOperand> s) {
    Instruction i = Op(kind, std::move(o));
    i.scalars = std::move(s);
    return i;
  };
  Instruction ar;
  ar.op = OpKind::kArange;
  ar.stop = Scalar::Int(n);
  ar.dtype = DType::kFloat32;
  auto& b = p->instructions;
  b.push_back(ar);  // 0: x
  Instruction cast = Op(OpKind::kAstype, {Operand::Handle(k)});
  cast.dtype = DType::kInt16;
  b.push_back(cast);  // 1: a
  b.push_back(
      op(OpKind::kClip, {v(1)}, {{1, Scalar::Int(-2)}, {2, Scalar::Int(100000)}}));  // 2: b (int16)
  b.push_back(WithScalar(K::kLess, v(0), 1, Scalar::Float(3e4)));                    // 3
  b.push_back(op(OpKind::kWhere, {v(3), v(2)}, {{2, Scalar::Int(-7)}}));             // 4: c (int16)
  b.push_back(WithScalar(K::kMultiply, v(0), 1, Scalar::Float(0.5)));                // 5
  b.push_back(op(OpKind::kClip, {v(5), v(4)}, {{2, Scalar::Float(1e4)}}));           // 6: e (f32)
  b.push_back(WithScalar(K::kSubtract, v(0), 1, Scalar::Float(35000)));   // 7: 0 at x = 35000
  b.push_back(op(OpKind::kWhere, {v(7), v(6), Operand::Handle(k)}, {}));  // 8: f (f64)
  return p;
}

// 130 dependent ops alternating add and multiply by an f64 operand y (so no
// chain folds): regions of kMaxRegionOps, 64 and 2 ops.
std::shared_ptr<Program> LongRegionProgram(const HandleId& y, int64_t n) {
  auto p = std::make_shared<Program>();
  Instruction ar;
  ar.op = OpKind::kArange;
  ar.stop = Scalar::Int(n);
  ar.dtype = DType::kFloat64;
  p->instructions.push_back(ar);
  for (uint32_t i = 0; i < 130; ++i) {
    p->instructions.push_back(Op(i % 2 ? ElementwiseKind::kMultiply : ElementwiseKind::kAdd,
                                 {Operand::Value(i), Operand::Handle(y)}));
  }
  return p;
}

// Operands broadcast inside regions (rows crossing the CPU's blocks):
//   x = arange(271 * 259) f32 as (271, 259); row = arange(259) f64;
//   col = arange(271) int16 as (271, 1)
//   a = x * row; b = a - col; c = maximum(b / 3, row)          (271, 259)
//   y = arange(4 * 5 * 6) i32 as (4, 5, 6); m = arange(5) i32 as (5, 1);
//   r = arange(24) f32 as (4, 1, 6)
//   d = y * m; e = where(d > 20, r, d); f = e + m             (4, 5, 6)
std::shared_ptr<Program> BroadcastProgram(const HandleId&, int64_t) {
  using K = ElementwiseKind;
  auto p = std::make_shared<Program>();
  auto v = [](uint32_t i) { return Operand::Value(i); };
  auto& b = p->instructions;
  auto arange = [&](int64_t n, DType dtype, Shape shape) {
    Instruction ar;
    ar.op = OpKind::kArange;
    ar.stop = Scalar::Int(n);
    ar.dtype = dtype;
    b.push_back(ar);
    Instruction re = Op(OpKind::kReshape, {v(static_cast<uint32_t>(b.size() - 1))});
    re.shape = std::move(shape);
    b.push_back(re);
  };
  arange(271 * 259, DType::kFloat32, {271, 259});                   // 0, 1: x
  arange(259, DType::kFloat64, {259});                              // 2, 3: row
  arange(271, DType::kInt16, {271, 1});                             // 4, 5: col
  b.push_back(Op(K::kMultiply, {v(1), v(3)}));                      // 6: a
  b.push_back(Op(K::kSubtract, {v(6), v(5)}));                      // 7: b
  b.push_back(WithScalar(K::kDivide, v(7), 1, Scalar::Float(3)));   // 8
  b.push_back(Op(K::kMaximum, {v(8), v(3)}));                       // 9: c
  arange(120, DType::kInt32, {4, 5, 6});                            // 10, 11: y
  arange(5, DType::kInt32, {5, 1});                                 // 12, 13: m
  arange(24, DType::kFloat32, {4, 1, 6});                           // 14, 15: r
  b.push_back(Op(K::kMultiply, {v(11), v(13)}));                    // 16: d
  b.push_back(WithScalar(K::kGreater, v(16), 1, Scalar::Int(20)));  // 17
  b.push_back(Op(OpKind::kWhere, {v(17), v(15), v(16)}));           // 18: e
  b.push_back(Op(K::kAdd, {v(18), v(13)}));                         // 19: f
  return p;
}

// Regions ending in a reduction of every element (k: int32 handle):
//   a = k * 3 - 1; c = (a > 2).sum()              count of a bool: int64
//   d = k.astype(uint8) * 7; m = d.max(keepdims)  wrapping uint8, (1,)
//   e = (k + 0.5 != 1.5).all(); f = (k - 5).prod() (int32 -> int64, wraps)
//   g = k + 1; s = g.astype(f32).sum()            a float sum: not fused,
//                                                 the run before it is
std::shared_ptr<Program> ReductionProgram(const HandleId& k, int64_t n) {
  using K = ElementwiseKind;
  auto p = std::make_shared<Program>();
  auto v = [](uint32_t i) { return Operand::Value(i); };
  const Operand kh = Operand::Handle(k);
  auto& b = p->instructions;
  auto reduce = [](OpKind op, uint32_t of, bool keepdims = false) {
    Instruction r = Op(op, {Operand::Value(of)});
    r.keepdims = keepdims;
    return r;
  };
  b.push_back(WithScalar(K::kMultiply, kh, 1, Scalar::Int(3)));    // 0
  b.push_back(WithScalar(K::kSubtract, v(0), 1, Scalar::Int(1)));  // 1: a
  b.push_back(WithScalar(K::kGreater, v(1), 1, Scalar::Int(2)));   // 2
  b.push_back(reduce(OpKind::kSum, 2));                            // 3: c
  Instruction cast = Op(OpKind::kAstype, {kh});
  cast.dtype = DType::kUint8;
  b.push_back(cast);                                                   // 4
  b.push_back(WithScalar(K::kMultiply, v(4), 1, Scalar::Int(7)));      // 5: d
  b.push_back(reduce(OpKind::kMax, 5, /*keepdims=*/true));             // 6: m
  b.push_back(WithScalar(K::kAdd, kh, 1, Scalar::Float(0.5)));         // 7
  b.push_back(WithScalar(K::kNotEqual, v(7), 1, Scalar::Float(1.5)));  // 8
  b.push_back(reduce(OpKind::kAll, 8));                                // 9: e
  b.push_back(WithScalar(K::kSubtract, kh, 1, Scalar::Int(5)));        // 10
  b.push_back(reduce(OpKind::kProd, 10));                              // 11: f
  b.push_back(WithScalar(K::kAdd, kh, 1, Scalar::Int(1)));             // 12: g
  Instruction to_f32 = Op(OpKind::kAstype, {v(12)});
  to_f32.dtype = DType::kFloat32;
  b.push_back(to_f32);                    // 13
  b.push_back(reduce(OpKind::kSum, 13));  // 14: s
  return p;
}

using ProgramFn = std::shared_ptr<Program> (*)(const HandleId&, int64_t);

std::vector<std::string> RunProgram(bool fuse, int* fused_calls, ProgramFn make = TestProgram,
                                    const std::vector<OutputSpec>& outputs = {{3, true, false},
                                                                              {4, true, false}},
                                    DType handle_dtype = DType::kInt32,
                                    std::vector<int>* region_starts = nullptr, bool admits = true) {
  std::unique_ptr<Backend> backend = NewCpuBackend(2);
  FusingBackend* fusing = nullptr;
  {
    // Not fusing: every loop and region op by op, the reference.
    auto f = std::make_unique<FusingBackend>(std::move(backend), fuse);
    f->admits = admits;
    if (fuse) fusing = f.get();
    backend = std::move(f);
  }
  Device device(std::move(backend), int64_t{1} << 30);
  std::unique_ptr<Stream> stream = device.backend().NewStream();
  const int64_t n = 70001;  // several CPU blocks and a ragged end
  DeviceArray k{nullptr, handle_dtype, {n}};
  k.buffer = device.Allocate(k.nbytes(), *stream).value();
  if (handle_dtype == DType::kInt32) {
    std::vector<int32_t> host(n);
    for (int64_t i = 0; i < n; ++i) host[i] = static_cast<int32_t>(i % 7) - 3;  // zeros too
    EXPECT_TRUE(stream->CopyToDevice(host.data(), *k.buffer, 0, k.nbytes()).ok());
  } else {  // float64 near 1, so 130 ops stay finite
    std::vector<double> host(n);
    for (int64_t i = 0; i < n; ++i) host[i] = 1.0 + static_cast<double>(i % 13) / 64.0;
    EXPECT_TRUE(stream->CopyToDevice(host.data(), *k.buffer, 0, k.nbytes()).ok());
  }
  const HandleId kh = HandleId::Random();
  HandleResolver resolve = [&](const HandleId& h) -> absl::StatusOr<DeviceArray> {
    if (h == kh) return k;
    return absl::NotFoundError("no");
  };
  absl::StatusOr<Plan> plan = PlanProgram(make(kh, n), outputs, resolve, ProgramLimits());
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  if (region_starts != nullptr) {
    region_starts->clear();
    for (size_t i = 0; i < plan->top.region_at.size(); ++i) {
      if (plan->top.region_at[i] != nullptr) region_starts->push_back(static_cast<int>(i));
    }
  }
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

TEST(FusedExecutorTest, ScalarOperandsNewOpsAndBoolStepsFuseBitForBit) {
  int fused_calls = 0;
  const std::vector<OutputSpec> outs = {{2, true, false}, {3, true, false}};
  const std::vector<std::string> op_by_op = RunProgram(false, &fused_calls, ScalarProgram, outs);
  const std::vector<std::string> fused = RunProgram(true, &fused_calls, ScalarProgram, outs);
  EXPECT_GE(fused_calls, 1) << "the executor did not take the fused path";
  ASSERT_EQ(op_by_op.size(), 2u);
  ASSERT_EQ(fused.size(), 2u);
  EXPECT_TRUE(op_by_op[0] == fused[0]) << "float32 carried value differs";
  EXPECT_TRUE(op_by_op[1] == fused[1]) << "int32 carried value differs";
}

TEST(FusedExecutorTest, StraightLineRegionsFuseBitForBit) {
  // Kept: d (bool), e (f64) of the first region; sum(a); h (int16) of the
  // second. c is read inside only, so only d and e (and a, read by the sum
  // and the second region) are written.
  const std::vector<OutputSpec> outs = {
      {4, true, false}, {5, true, false}, {6, true, false}, {9, true, false}};
  int fused_calls = 0;
  std::vector<int> starts;
  const std::vector<std::string> op_by_op =
      RunProgram(false, &fused_calls, RegionProgram, outs, DType::kInt32, &starts);
  EXPECT_EQ(starts, (std::vector<int>{1, 7}));
  const std::vector<std::string> fused = RunProgram(true, &fused_calls, RegionProgram, outs);
  EXPECT_EQ(fused_calls, 2) << "two regions, each one fused op";
  ASSERT_EQ(op_by_op.size(), 4u);
  ASSERT_EQ(fused.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(op_by_op[i] == fused[i]) << "output " << i;
}

TEST(FusedExecutorTest, LongRegionsSplitAtTheCap) {
  const std::vector<OutputSpec> outs = {{130, true, false}};
  int fused_calls = 0;
  std::vector<int> starts;
  const std::vector<std::string> op_by_op =
      RunProgram(false, &fused_calls, LongRegionProgram, outs, DType::kFloat64, &starts);
  EXPECT_EQ(starts, (std::vector<int>{1, 1 + kMaxRegionOps, 1 + 2 * kMaxRegionOps}));
  const std::vector<std::string> fused =
      RunProgram(true, &fused_calls, LongRegionProgram, outs, DType::kFloat64);
  EXPECT_EQ(fused_calls, 3);
  ASSERT_EQ(op_by_op.size(), 1u);
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_TRUE(op_by_op[0] == fused[0]);
}

TEST(FusedExecutorTest, WhereAndClipFuseBitForBit) {
  const std::vector<OutputSpec> outs = {{4, true, false}, {8, true, false}};
  int fused_calls = 0;
  std::vector<int> starts;
  const std::vector<std::string> op_by_op =
      RunProgram(false, &fused_calls, SelectProgram, outs, DType::kInt32, &starts);
  EXPECT_EQ(starts, (std::vector<int>{1})) << "one region from the astype to the last where";
  const std::vector<std::string> fused = RunProgram(true, &fused_calls, SelectProgram, outs);
  EXPECT_EQ(fused_calls, 1);
  ASSERT_EQ(op_by_op.size(), 2u);
  ASSERT_EQ(fused.size(), 2u);
  EXPECT_TRUE(op_by_op[0] == fused[0]) << "int16 where differs";
  EXPECT_TRUE(op_by_op[1] == fused[1]) << "float64 where of a clip differs";
}

// NumPy's broadcasting as the fused kernels read it: dims merged, ones dropped.
TEST(FusedBroadcastTest, LayoutsMergeNeighbours) {
  auto layout = [](const Shape& from, const Shape& to) {
    std::vector<std::pair<int64_t, int64_t>> v;
    const std::optional<FusedBroadcastLayout> l = FusedBroadcast(from, to);
    if (!l) return v;
    for (int d = 0; d < l->rank; ++d) v.push_back({l->dim[d], l->stride[d]});
    return v;
  };
  using V = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(layout({7}, {5, 7}), (V{{5, 0}, {7, 1}}));         // a row
  EXPECT_EQ(layout({5, 1}, {5, 7}), (V{{5, 1}, {7, 0}}));      // a column
  EXPECT_EQ(layout({1, 7}, {3, 5, 7}), (V{{15, 0}, {7, 1}}));  // stretched dims merge
  EXPECT_EQ(layout({3, 1, 7}, {3, 5, 7}), (V{{3, 7}, {5, 0}, {7, 1}}));
  EXPECT_EQ(layout({5, 7}, {3, 5, 7}), (V{{3, 0}, {35, 1}}));     // kept dims merge
  EXPECT_EQ(layout({5, 1, 1}, {5, 1, 4}), (V{{5, 1}, {4, 0}}));   // ones dropped
  EXPECT_TRUE(layout({2, 1, 2, 1, 2}, {2, 3, 2, 3, 2}).empty());  // 5 dims: past the cap
  EXPECT_TRUE(layout({6}, {5, 7}).empty());                       // does not broadcast
  EXPECT_TRUE(layout({5, 7}, {5, 7}).empty());                    // the shape itself
  EXPECT_TRUE(layout({1}, {5, 7}).empty());                       // one element: a scalar param
  EXPECT_TRUE(layout({7}, {0, 7}).empty());                       // nothing to read
  EXPECT_TRUE(layout({3, 5, 7}, {5, 7}).empty());
}

TEST(FusedExecutorTest, BroadcastOperandsFuseBitForBit) {
  const std::vector<OutputSpec> outs = {{9, true, false}, {19, true, false}};
  int fused_calls = 0;
  std::vector<int> starts;
  const std::vector<std::string> op_by_op =
      RunProgram(false, &fused_calls, BroadcastProgram, outs, DType::kInt32, &starts);
  EXPECT_EQ(starts, (std::vector<int>{6, 16})) << "one region per shape";
  const std::vector<std::string> fused = RunProgram(true, &fused_calls, BroadcastProgram, outs);
  EXPECT_EQ(fused_calls, 2);
  ASSERT_EQ(op_by_op.size(), 2u);
  ASSERT_EQ(fused.size(), 2u);
  EXPECT_TRUE(op_by_op[0] == fused[0]) << "(271, 259) region differs";
  EXPECT_TRUE(op_by_op[1] == fused[1]) << "(4, 5, 6) region differs";
  // And against values computed here: c[i][j] = max((i*259+j)*j - i) / 3, j).
  ASSERT_EQ(fused[0].size(), 271u * 259u * 8u);
  for (int64_t i : {0, 1, 100, 270}) {
    for (int64_t j : {0, 1, 258}) {
      double got;
      std::memcpy(&got, fused[0].data() + (i * 259 + j) * 8, 8);
      const double want =
          std::max((static_cast<double>(static_cast<float>(i * 259 + j)) * static_cast<double>(j) -
                    static_cast<double>(i)) /
                       3.0,
                   static_cast<double>(j));
      EXPECT_EQ(got, want) << i << "," << j;
    }
  }
}

TEST(FusedExecutorTest, TrailingReductionsFuseBitForBit) {
  const std::vector<OutputSpec> outs = {
      {3, true, false}, {6, true, false}, {9, true, false}, {11, true, false}, {14, true, false}};
  int fused_calls = 0;
  std::vector<int> starts;
  const std::vector<std::string> op_by_op =
      RunProgram(false, &fused_calls, ReductionProgram, outs, DType::kInt32, &starts);
  // Instructions 0-3, 4-6, 7-9 and 12-13 (the float sum stays out); the
  // lone subtract before the prod (10-11) is a region too.
  EXPECT_EQ(starts, (std::vector<int>{0, 4, 7, 10, 12}));
  const std::vector<std::string> fused = RunProgram(true, &fused_calls, ReductionProgram, outs);
  EXPECT_EQ(fused_calls, 5);
  ASSERT_EQ(op_by_op.size(), 5u);
  ASSERT_EQ(fused.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_TRUE(op_by_op[i] == fused[i]) << "output " << i;
  // Against values computed here from k[i] = i % 7 - 3.
  const int64_t n = 70001;
  int64_t count = 0;
  uint8_t most = 0;
  bool all = true;
  uint64_t prod = 1;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t k = static_cast<int32_t>(i % 7) - 3;
    count += k * 3 - 1 > 2;
    most = std::max<uint8_t>(most, static_cast<uint8_t>(static_cast<uint8_t>(k) * 7));
    all &= k + 0.5 != 1.5;
    prod *= static_cast<uint64_t>(static_cast<int64_t>(k - 5));
  }
  int64_t got_count;
  std::memcpy(&got_count, fused[0].data(), 8);
  EXPECT_EQ(got_count, count);
  ASSERT_EQ(fused[1].size(), 1u);
  EXPECT_EQ(static_cast<uint8_t>(fused[1][0]), most);
  ASSERT_EQ(fused[2].size(), 1u);
  EXPECT_EQ(fused[2][0] != 0, all);
  uint64_t got_prod;
  std::memcpy(&got_prod, fused[3].data(), 8);
  EXPECT_EQ(got_prod, prod);
}

// A backend that declines a spec (the CUDA kernel cache at its cap) gets
// the same program op by op: the same bytes, no fused op.
TEST(FusedExecutorTest, DeclinedSpecsRunOpByOp) {
  const std::vector<OutputSpec> outs = {
      {4, true, false}, {5, true, false}, {6, true, false}, {9, true, false}};
  int fused_calls = 0;
  const std::vector<std::string> op_by_op = RunProgram(false, &fused_calls, RegionProgram, outs);
  const std::vector<std::string> declined =
      RunProgram(true, &fused_calls, RegionProgram, outs, DType::kInt32, nullptr, /*admits=*/false);
  EXPECT_EQ(fused_calls, 0);
  ASSERT_EQ(declined.size(), 4u);
  EXPECT_EQ(op_by_op, declined);
}

}  // namespace
}  // namespace resident

// What tests/fuzz/program_fuzzer found, as the request path must now treat
// it. Each request goes the fuzzer's way: protobuf text -> v1::RunRequest ->
// DecodeProgram/DecodeOutputs -> PlanProgram under the server's default
// limits, then runs on the CPU backend with exactly the planner's memory
// bound free (op by op, or fusing loops as on a GPU). The fuzzer's inputs
// are kept in tests/fuzz/corpus/program/ (regress-*.pb) as well.
#include <google/protobuf/text_format.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "resident/v1/resident.pb.h"
#include "server/device/cpu/cpu_backend.h"
#include "server/rpc/proto_convert.h"
#include "tests/fuzz/bounded_run.h"
#include "tests/unit/fusing_backend.h"

namespace resident {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

class FuzzRegressionTest : public ::testing::Test {
 protected:
  // `operands { handle: ... }` naming an array of this type to the
  // fuzzers' resolver (tests/fuzz/fuzz_handles.h).
  static std::string HandleOperand(DType dtype, const Shape& shape) {
    return absl::StrCat("operands { handle: \"",
                        absl::CEscape(fuzz::EncodeHandle(dtype, shape)->bytes()), "\" }");
  }

  absl::StatusOr<Plan> PlanText(const std::string& text) {
    return PlanText(text, device_, *stream_);
  }
  absl::StatusOr<Plan> PlanText(const std::string& text, Device& device, Stream& stream) {
    v1::RunRequest req;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &req)) << text;
    const ProgramLimits limits;  // the server's defaults
    ASSIGN_OR_RETURN(std::shared_ptr<const Program> program,
                     DecodeProgram(req.program(), limits.max_loop_depth));
    ASSIGN_OR_RETURN(std::vector<OutputSpec> outputs, DecodeOutputs(req.outputs()));
    return PlanProgram(std::move(program), std::move(outputs),
                       fuzz::ResolveWithBuffers(device, stream, 1 << 20), limits);
  }

  // The bytes of each output, run within the plan's bound.
  absl::StatusOr<std::vector<std::string>> RunText(const std::string& text,
                                                   const ExecOptions& options = {}) {
    ASSIGN_OR_RETURN(Plan plan, PlanText(text));
    return fuzz::RunWithinBound(plan, device_, *stream_, options);
  }
  // The same, asking the executor to fuse loops (the path GPUs take).
  absl::StatusOr<std::vector<std::string>> RunFusingText(const std::string& text) {
    ASSIGN_OR_RETURN(Plan plan, PlanText(text, fusing_, *fusing_stream_));
    return fuzz::RunWithinBound(plan, fusing_, *fusing_stream_);
  }

  // Op by op (no fused loops or regions), and fusing.
  Device device_{std::make_unique<FusingBackend>(NewCpuBackend(1), false), int64_t{1} << 30};
  std::unique_ptr<Stream> stream_ = device_.backend().NewStream();
  Device fusing_{std::make_unique<FusingBackend>(NewCpuBackend(1)), int64_t{1} << 30};
  std::unique_ptr<Stream> fusing_stream_ = fusing_.backend().NewStream();
};

// A bool arange is filled through an int64 temporary, which the bound
// missed: run within the bound it failed with RESOURCE_EXHAUSTED.
TEST_F(FuzzRegressionTest, BoolArangeStaysWithinItsBound) {
  const std::string text = R"pb(
    program {
      instructions {
        op: "arange"
        dtype: DTYPE_BOOL
        start { int_value: 0 }
        stop { int_value: 2 }
        step { int_value: 1 }
      }
    }
    outputs { keep: true return_data: true })pb";
  absl::StatusOr<Plan> plan = PlanText(text);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_GE(plan->peak_bytes, 2 + 2 * 8);
  absl::StatusOr<std::vector<std::string>> out = RunText(text);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], std::string("\0\1", 2));  // np.arange(0, 2, 1, dtype=bool)
}

// matmul copies an operand whose batch dims differ from the result's out
// to the whole batch: here 36 elements of each operand for a result of 24,
// more than the bound's "each operand at its or the result's size".
TEST_F(FuzzRegressionTest, MatmulBroadcastCopiesStayWithinTheBound) {
  const std::string text = absl::StrCat(
      "program { instructions { op: \"matmul\" ", HandleOperand(DType::kInt64, {2, 1, 2, 3}),
      HandleOperand(DType::kInt64, {3, 3, 2}), " } } outputs { keep: true }");
  absl::StatusOr<Plan> plan = PlanText(text);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->output_types[0].shape, Shape({2, 3, 2, 2}));
  EXPECT_GE(plan->peak_bytes, (36 + 36 + 24) * 8);
  absl::StatusOr<std::vector<std::string>> out = RunText(text);
  EXPECT_TRUE(out.ok()) << out.status();

  // Converted and copied (int32 to float64 for a float64 partner).
  const std::string mixed = absl::StrCat(
      "program { instructions { op: \"matmul\" ", HandleOperand(DType::kInt32, {4, 1, 1, 5}),
      HandleOperand(DType::kFloat64, {1, 3, 5, 1}), " } } outputs { keep: true }");
  out = RunText(mixed);
  EXPECT_TRUE(out.ok()) << out.status();
}

// Integer bounds with start + step past int64 overflowed (UB) while
// computing the fill's delta; NumPy computes it with Python integers. (The
// overflow itself shows only under UBSan: -DRESIDENT_SANITIZE=ON.)
TEST_F(FuzzRegressionTest, ArangeStartPlusStepPastInt64) {
  for (const char* dtype : {"DTYPE_FLOAT64", "DTYPE_FLOAT32", "DTYPE_INT64", "DTYPE_INT32"}) {
    // np.arange(10, 0, 2**63 - 3): empty.
    absl::StatusOr<Plan> plan = PlanText(absl::StrCat(
        "program { instructions { op: \"arange\" dtype: ", dtype,
        " start { int_value: 10 } stop { int_value: 0 } step { int_value: ", kI64Max - 2,
        " } } } outputs { keep: true }"));
    ASSERT_TRUE(plan.ok()) << dtype << ": " << plan.status();
    EXPECT_EQ(plan->output_types[0].shape, Shape({0})) << dtype;
  }
  // np.arange(2**63 - 2, 2**63 - 1, 5): one element, start + step past int64.
  absl::StatusOr<std::vector<std::string>> out = RunText(
      absl::StrCat("program { instructions { op: \"arange\" start { int_value: ", kI64Max - 1,
                   " } stop { int_value: ", kI64Max, " } step { int_value: 5 } } }",
                   " outputs { return_data: true }"));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].size(), 8u);
  int64_t v;
  std::memcpy(&v, (*out)[0].data(), 8);
  EXPECT_EQ(v, kI64Max - 1);
}

// Sizes that each fit in int64 but whose sum or widening does not overflowed
// (UB) in the bound; now the bound saturates, so the server's reservation
// refuses the program with RESOURCE_EXHAUSTED, and astype to a wider dtype
// is checked like every other result.
TEST_F(FuzzRegressionTest, SizesPastInt64AreRefusedNotWrapped) {
  // int32 (1,) + float64 (2^59,): a 2^62-byte result plus a 2^62-byte
  // promoted copy of the int32 operand broadcast to it.
  absl::StatusOr<Plan> plan =
      PlanText(absl::StrCat("program { instructions { op: \"ones\" shape: 576460752303423488 }",
                            " instructions { op: \"add\" ", HandleOperand(DType::kInt32, {1}),
                            " operands { value: 0 } } } outputs { value: 1 keep: true }"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak_bytes, kI64Max);
  EXPECT_EQ(device_.budget().Reserve(plan->peak_bytes).status().code(),
            absl::StatusCode::kResourceExhausted);

  // A loop carrying two 2^62-byte values.
  plan = PlanText(
      "program { instructions { op: \"ones\" shape: 576460752303423488 }"
      " instructions { op: \"loop\" operands { value: 0 } operands { value: 0 } trip_count: 1"
      " body { yields { value: 0 } yields { value: 1 } } } }"
      " outputs { value: 1 keep: true }");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak_bytes, kI64Max);

  // bool (2^62,) as float64 would be 2^65 bytes.
  plan = PlanText(
      "program { instructions { op: \"ones\" shape: 4611686018427387904 dtype: DTYPE_BOOL }"
      " instructions { op: \"astype\" operands { value: 0 } dtype: DTYPE_FLOAT64 } }"
      " outputs { value: 1 keep: true }");
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << plan.status();
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("instruction 1 (astype): 4611686018427387904 elements of 8 bytes "
                        "overflow 64 bits"));
}

// A loop of an empty body counted no ops, so nested ones passed the
// executed-ops limit and spun about 2^60 times, and an empty body checked
// no deadline.
TEST_F(FuzzRegressionTest, EmptyLoopBodiesCountAndStop) {
  const std::string empty_loop = R"pb(op: "loop"
                                      operands { value: 0 }
                                      trip_count: 1073741824
                                      body { yields { value: 0 } })pb";
  absl::StatusOr<Plan> nested = PlanText(
      absl::StrCat("program { instructions { op: \"ones\" shape: 1000 }",
                   " instructions { op: \"loop\" operands { value: 0 } trip_count: 1073741824",
                   " body { instructions { ", empty_loop, " } yields { value: 1 } } } }",
                   " outputs { keep: true value: 1 }"));
  ASSERT_EQ(nested.status().code(), absl::StatusCode::kInvalidArgument) << nested.status();
  EXPECT_THAT(std::string(nested.status().message()), HasSubstr("ops"));

  const std::string single =
      absl::StrCat("program { instructions { op: \"ones\" shape: 3 }", " instructions { ",
                   empty_loop, " } }", " outputs { keep: true value: 1 }");
  absl::StatusOr<Plan> plan = PlanText(single);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->executed_ops, 1 + 1 + (int64_t{1} << 30));
  // The deadline stops it: here after 10 checks instead of 2^30 trips (op by
  // op a check per trip; fused, a check per round of bounded work).
  int checks = 0;
  ExecOptions options;
  options.check_continue = [&checks]() {
    return ++checks > 10 ? absl::DeadlineExceededError("deadline passed") : absl::OkStatus();
  };
  absl::StatusOr<std::vector<std::string>> out = RunText(single, options);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded) << out.status();
  EXPECT_EQ(checks, 11);
}

// A loop body holding a loop of no carried values (which defines no value)
// made PlanFusedLoop read its type past the end of the body's types: a heap
// overflow on every backend that fuses (CUDA), for any client.
TEST_F(FuzzRegressionTest, FusedLoopPlanningSkipsLoopsThatDefineNothing) {
  const std::string text = R"pb(
    program {
      instructions { op: "ones" shape: 2 dtype: DTYPE_INT32 }
      instructions {
        op: "loop"
        operands { value: 0 }
        trip_count: 4
        body {
          instructions {
            op: "add"
            operands { value: 0 }
            operands { value: 0 }
          }
          instructions { op: "loop" }
          yields { value: 1 }
        }
      }
    }
    outputs { value: 1 return_data: true })pb";
  absl::StatusOr<std::vector<std::string>> fused = RunFusingText(text);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(dynamic_cast<FusingBackend&>(fusing_.backend()).fused_calls, 0);
  absl::StatusOr<std::vector<std::string>> plain = RunText(text);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(*fused, *plain);
  const int32_t want[2] = {16, 16};  // 1 doubled 4 times
  EXPECT_EQ((*plain)[0], std::string(reinterpret_cast<const char*>(want), 8));
}

// clip of a (4,) operand with a (0, 4) one: the result is empty, but the
// (4,) operand is still converted to the compute dtype, which the bound
// (sized by the result) left out; the run overdrew its reservation.
TEST_F(FuzzRegressionTest, SelectOperandsLargerThanAnEmptyResultStayWithinTheBound) {
  for (const char* op : {"clip", "where"}) {
    const std::string text = absl::StrCat(
        "program { instructions { op: \"", op, "\" ", HandleOperand(DType::kInt32, {4}),
        " operands { scalar { int_value: 7 } } ", HandleOperand(DType::kFloat64, {0, 4}),
        " } } outputs { value: 0 keep: true }");
    absl::StatusOr<std::vector<std::string>> out = RunText(text);
    ASSERT_TRUE(out.ok()) << op << ": " << out.status();
  }
}

// sum over the empty axis of zeros((0, 2^63 - 2)) inferred a result of
// 2^63 - 2 float64 elements whose byte size overflowed int64 (UB) in the
// planner. Every result's size is checked now.
TEST_F(FuzzRegressionTest, AReductionWhoseResultSizeOverflowsIsRefused) {
  const std::string text = R"pb(
    program {
      instructions { op: "zeros" shape: 0 shape: 9223372036854775806 dtype: DTYPE_FLOAT64 }
      instructions {
        op: "sum"
        operands { value: 0 }
        has_axis: true
        axis: 0
      }
    }
    outputs { value: 1 keep: true })pb";
  absl::StatusOr<Plan> plan = PlanText(text);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << plan.status();
}

}  // namespace
}  // namespace resident

// libFuzzer target: the Run request path below gRPC. Bytes are parsed as a
// v1::RunRequest, decoded (DecodeProgram, DecodeOutputs) and planned
// (PlanProgram) twice: under the server's default ProgramLimits and under
// small ones that put every limit within the fuzzer's reach. Small plans
// are then run on the CPU backend with a memory budget of exactly the
// planner's bound, op by op, with loops fused (the GPU's path, on the
// CPU's reference FusedLoop), and with loops run as device graphs (the
// GPU's path for loops that do not fuse, replayed on the CPU by
// ReplayingBackend, planned with ProgramLimits::loop_graphs so the bound
// holds the arena).
//
// Findings (abort, so libFuzzer keeps the input): a status other than
// INVALID_ARGUMENT, NOT_FOUND or RESOURCE_EXHAUSTED (the codes planner.h
// documents), or an empty message; a plan under the small limits that the
// default limits refuse or type differently; an executed plan that fails,
// allocates more than its bound, returns other types than planned or leaks
// budget; fused or graph and op-by-op results that differ (beyond NaN
// payloads); and
// any sanitizer report.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "resident/v1/resident.pb.h"
#include "server/device/cpu/cpu_backend.h"
#include "server/device/device.h"
#include "server/program/planner.h"
#include "server/rpc/proto_convert.h"
#include "tests/fuzz/bounded_run.h"
#include "tests/fuzz/finding.h"
#include "tests/unit/fusing_backend.h"
#include "tests/unit/replaying_backend.h"

namespace resident::fuzz {
namespace {

void CheckDocumented(const absl::Status& s, const char* stage) {
  if (s.ok()) return;
  const absl::StatusCode c = s.code();
  if (c != absl::StatusCode::kInvalidArgument && c != absl::StatusCode::kNotFound &&
      c != absl::StatusCode::kResourceExhausted) {
    Finding(absl::StrCat(stage, " returned an undocumented code: ", s.ToString()));
  }
  if (s.message().empty()) Finding(absl::StrCat(stage, " returned an empty message"));
}

// Every limit within reach of a short input: loops nest 2 deep and run at
// most 16 times, 64 instructions, 4096 executed ops, 4 KiB inline.
ProgramLimits SmallLimits() {
  ProgramLimits l;
  l.max_loop_depth = 2;
  l.max_trip_count = 16;
  l.max_instructions = 64;
  l.max_executed_ops = 4096;
  l.max_inline_bytes = 4096;
  return l;
}

// Plans run on the CPU backend when they stay this small: the planner's
// bound, each input, the ops run, and the bound times the ops (a proxy for
// time).
constexpr int64_t kMaxRunBytes = 64 << 10;
constexpr int64_t kMaxRunInputBytes = 16 << 10;
constexpr int64_t kMaxRunOps = 1 << 14;
constexpr int64_t kMaxRunWork = int64_t{1} << 22;

absl::StatusOr<Plan> DecodeAndPlan(const v1::RunRequest& req, const ProgramLimits& limits,
                                   const HandleResolver& resolve) {
  absl::StatusOr<std::shared_ptr<const Program>> program =
      DecodeProgram(req.program(), limits.max_loop_depth);
  CheckDocumented(program.status(), "DecodeProgram");
  if (!program.ok()) return program.status();
  absl::StatusOr<std::vector<OutputSpec>> outputs = DecodeOutputs(req.outputs());
  CheckDocumented(outputs.status(), "DecodeOutputs");
  if (!outputs.ok()) return outputs.status();
  absl::StatusOr<Plan> plan =
      PlanProgram(*std::move(program), *std::move(outputs), resolve, limits);
  CheckDocumented(plan.status(), "PlanProgram");
  return plan;
}

// The devices small plans run on, made once per process: the CPU reference
// op by op, and the same asking the executor to fuse loops (the path GPUs
// take, through PlanFusedLoop and the CPU's reference FusedLoop).
struct Runner {
  Device plain{std::make_unique<FusingBackend>(NewCpuBackend(1), false), int64_t{1} << 30};
  Device fusing{std::make_unique<FusingBackend>(NewCpuBackend(1)), int64_t{1} << 30};
  Device graphs{std::make_unique<ReplayingBackend>(NewCpuBackend(1)), int64_t{1} << 30};
  std::unique_ptr<Stream> plain_stream = plain.backend().NewStream();
  std::unique_ptr<Stream> fusing_stream = fusing.backend().NewStream();
  std::unique_ptr<Stream> graphs_stream = graphs.backend().NewStream();
};

Runner& GetRunner() {
  static Runner* runner = new Runner;  // never destroyed: outlives every input
  return *runner;
}

bool SmallEnoughToRun(const Plan& plan) {
  if (plan.peak_bytes > kMaxRunBytes || plan.executed_ops > kMaxRunOps) return false;
  if (plan.executed_ops > kMaxRunWork / std::max<int64_t>(1, plan.peak_bytes)) return false;
  for (const auto& [h, a] : plan.inputs) {
    if (a.nbytes() > kMaxRunInputBytes) return false;
  }
  return true;
}

// Plans with buffers on `device` and runs within the bound; the results'
// bytes.
std::vector<std::string> RunOn(const v1::RunRequest& req, Device& device, Stream& stream,
                               const char* how, std::vector<ValueType>* types,
                               bool loop_graphs = false) {
  ProgramLimits limits;
  limits.loop_graphs = loop_graphs;
  absl::StatusOr<Plan> plan =
      DecodeAndPlan(req, limits, ResolveWithBuffers(device, stream, kMaxRunInputBytes));
  if (!plan.ok()) {
    Finding(absl::StrCat("planned by types, not with buffers: ", plan.status().ToString()));
  }
  absl::StatusOr<std::vector<std::string>> ran = RunWithinBound(*plan, device, stream);
  if (!ran.ok()) {
    Finding(absl::StrCat("a planned program failed to run ", how, " within its bound of ",
                         plan->peak_bytes, " bytes: ", ran.status().ToString()));
  }
  MemoryBudget& budget = device.budget();
  if (budget.used() != 0 || budget.reserved() != 0) {
    Finding(absl::StrCat("budget not returned ", how, ": used ", budget.used(), ", reserved ",
                         budget.reserved()));
  }
  *types = plan->output_types;
  return *std::move(ran);
}

// Bit for bit, except that any NaN equals any NaN (NumPy fixes no payload).
bool SameValues(const ValueType& t, const std::string& a, const std::string& b) {
  if (a == b) return true;
  if (a.size() != b.size() || !IsFloating(t.dtype)) return false;
  const size_t item = static_cast<size_t>(ItemSize(t.dtype));
  for (size_t i = 0; i < a.size(); i += item) {
    if (std::memcmp(a.data() + i, b.data() + i, item) == 0) continue;
    double x, y;
    if (t.dtype == DType::kFloat32) {
      float fx, fy;
      std::memcpy(&fx, a.data() + i, 4);
      std::memcpy(&fy, b.data() + i, 4);
      x = fx;
      y = fy;
    } else {
      std::memcpy(&x, a.data() + i, 8);
      std::memcpy(&y, b.data() + i, 8);
    }
    if (!(std::isnan(x) && std::isnan(y))) return false;
  }
  return true;
}

void RunAndCheck(const v1::RunRequest& req) {
  Runner& r = GetRunner();
  std::vector<ValueType> types;
  const std::vector<std::string> op_by_op =
      RunOn(req, r.plain, *r.plain_stream, "op by op", &types);
  const std::vector<std::string> fused =
      RunOn(req, r.fusing, *r.fusing_stream, "fusing loops", &types);
  const std::vector<std::string> graphs =
      RunOn(req, r.graphs, *r.graphs_stream, "as loop graphs", &types, true);
  for (size_t i = 0; i < types.size(); ++i) {
    if (!SameValues(types[i], op_by_op[i], fused[i])) {
      Finding(absl::StrCat("output ", i, " (", TypeString(types[i]),
                           ") differs between the op-by-op and the fused loop path"));
    }
    if (!SameValues(types[i], op_by_op[i], graphs[i])) {
      Finding(absl::StrCat("output ", i, " (", TypeString(types[i]),
                           ") differs between the op-by-op and the loop graph path"));
    }
  }
}

void FuzzOne(const v1::RunRequest& req) {
  absl::StatusOr<Plan> full = DecodeAndPlan(req, ProgramLimits(), ResolveType);
  absl::StatusOr<Plan> small = DecodeAndPlan(req, SmallLimits(), ResolveType);
  if (small.ok()) {
    // Smaller limits refuse more, never less, and change no type.
    if (!full.ok()) {
      Finding(absl::StrCat("planned under the small limits, refused under the defaults: ",
                           full.status().ToString()));
    }
    if (small->output_types != full->output_types || small->peak_bytes != full->peak_bytes ||
        small->executed_ops != full->executed_ops) {
      Finding("the limits changed a plan's types, bound or op count");
    }
  }
  if (full.ok() && SmallEnoughToRun(*full)) RunAndCheck(req);
}

}  // namespace
}  // namespace resident::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Protobuf logs every string field with invalid UTF-8; gRPC would refuse
  // those requests before our code, and the log drowns libFuzzer's.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  resident::v1::RunRequest req;
  // Bytes that are no RunRequest never reach our code: gRPC refuses them.
  if (!req.ParseFromArray(data, static_cast<int>(size))) return 0;
  resident::fuzz::FuzzOne(req);
  return 0;
}

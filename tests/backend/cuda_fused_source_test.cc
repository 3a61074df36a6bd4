// The CUDA backend's fused-loop code generator: every step kind and dtype
// yields source that NVRTC compiles. Needs the toolkit, not a GPU (NVRTC is
// a host library), so it runs wherever the CUDA backend is built; what the
// kernels compute is checked on a GPU by the conformance suite.
#include <nvrtc.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/device/cuda/fused_loop.h"

namespace resident::cuda_internal {
namespace {

using Step = FusedLoopSpec::Step;

// NVRTC's log when `source` does not compile to PTX for sm_90, else "".
std::string CompileErrors(const std::string& source) {
  nvrtcProgram prog = nullptr;
  if (nvrtcCreateProgram(&prog, source.c_str(), "fused.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    return "nvrtcCreateProgram failed";
  }
  const char* opts[] = {"--gpu-architecture=compute_90", "--fmad=false", "--std=c++17"};
  const nvrtcResult r = nvrtcCompileProgram(prog, 3, opts);
  std::string log;
  if (r != NVRTC_SUCCESS) {
    size_t size = 0;
    nvrtcGetProgramLogSize(prog, &size);
    log.assign(size, '\0');
    if (size > 0) nvrtcGetProgramLog(prog, log.data());
    log = std::string(nvrtcGetErrorString(r)) + "\n" + log;
  }
  nvrtcDestroyProgram(&prog);
  return log;
}

// x (carried, `dtype`) and k (invariant, one element) through every
// elementwise kind `dtype` accepts, with casts from and to every dtype.
FusedLoopSpec EveryStep(DType dtype) {
  FusedLoopSpec spec;
  spec.trip_count = 3;
  spec.num_carried = 1;
  spec.param_dtypes = {dtype, dtype};
  spec.param_scalar = {false, true};
  int last = 0;
  auto emit = [&](const Step& st) {
    spec.steps.push_back(st);
    return static_cast<int>(spec.param_dtypes.size() + spec.steps.size()) - 1;
  };
  for (ElementwiseKind kind : kAllElementwiseKinds) {
    if (!ElementwiseAccepts(kind, dtype)) continue;
    last = emit(Step::Of(kind, last, Arity(kind) == 2 ? 1 : -1, dtype));
  }
  for (DType other : kAllDTypes) {
    last = emit(Step::Cast(emit(Step::Cast(last, other)), dtype));
  }
  spec.yields = {last};
  return spec;
}

// A loop carrying hundreds of values, or a body of hundreds of ops, runs
// op by op: its kernel would take NVRTC minutes (a GPU run of a loop carrying
// 40,000 values took 323 s before this cap).
TEST(CudaFusedLoopSource, KernelsOfTooManyArgsOrStepsAreNotAdmitted) {
  FusedKernelCache cache(9, 0);  // admitting needs no device
  const FusedLoopSpec every = EveryStep(DType::kFloat64);
  EXPECT_TRUE(cache.Admits(every));
  FusedLoopSpec wide;
  wide.trip_count = 1;
  wide.num_carried = 200;
  wide.param_dtypes.assign(200, DType::kFloat64);
  wide.param_scalar.assign(200, false);
  for (int i = 0; i < 200; ++i) wide.yields.push_back((i + 1) % 200);
  EXPECT_FALSE(cache.Admits(wide)) << "400 pointers";
  wide.num_carried = 100;
  wide.param_dtypes.resize(100);
  wide.param_scalar.resize(100);
  wide.yields.resize(100);
  for (int& y : wide.yields) y %= 100;
  EXPECT_TRUE(cache.Admits(wide)) << "200 pointers";
  FusedLoopSpec deep = every;
  while (deep.steps.size() <= FusedKernelCache::kMaxKernelSteps) {
    const int last = static_cast<int>(deep.param_dtypes.size() + deep.steps.size()) - 1;
    deep.steps.push_back(Step::Of(ElementwiseKind::kNegative, last, -1, DType::kFloat64));
  }
  EXPECT_FALSE(cache.Admits(deep));
}

TEST(CudaFusedLoopSource, EveryStepOfEveryDtypeCompiles) {
  for (DType dtype : kAllDTypes) {
    const std::string source = FusedLoopSource(EveryStep(dtype));
    EXPECT_EQ(CompileErrors(source), "") << DTypeName(dtype) << ":\n" << source;
  }
}

// The same steps as a straight-line region (no carried values, one trip),
// writing two slots of different dtypes: the last, and the first cast out.
TEST(CudaFusedLoopSource, EveryStepOfEveryDtypeCompilesAsARegion) {
  for (DType dtype : kAllDTypes) {
    FusedLoopSpec spec = EveryStep(dtype);
    spec.trip_count = 1;
    spec.num_carried = 0;
    int cast_out = -1;
    for (size_t i = 0; i < spec.steps.size() && cast_out < 0; ++i) {
      if (spec.steps[i].dtype != dtype) {
        cast_out = static_cast<int>(spec.param_dtypes.size() + i);
      }
    }
    ASSERT_GE(cast_out, 0);
    spec.yields = {spec.yields[0], cast_out};
    const std::string source = FusedLoopSource(spec);
    EXPECT_EQ(CompileErrors(source), "") << DTypeName(dtype) << ":\n" << source;
    // Two outs, no trip loop and no carried update.
    EXPECT_NE(source.find("out1[i] = s"), std::string::npos) << source;
    EXPECT_EQ(source.find("for (long long t = 0"), std::string::npos) << source;
  }
}

// Broadcast params (a row, a column: FusedBroadcast layouts of rank 1 to
// 4) are read at their layout's index, in a region and in a loop.
TEST(CudaFusedLoopSource, BroadcastParamsCompile) {
  for (int carried : {0, 1}) {
    FusedLoopSpec spec;
    spec.trip_count = carried ? 4 : 1;
    spec.num_carried = carried;
    spec.param_dtypes = {DType::kFloat32, DType::kFloat64, DType::kInt16, DType::kBFloat16,
                         DType::kFloat32};
    spec.param_scalar = {false, false, false, false, false};
    spec.param_broadcast = {0, 1, 2, 3, 4};
    int last = 0;
    for (int p = 1; p < 5; ++p) {
      const int cast = static_cast<int>(spec.param_dtypes.size() + spec.steps.size());
      spec.steps.push_back(Step::Cast(p, DType::kFloat32));
      spec.steps.push_back(Step::Of(ElementwiseKind::kAdd, last, cast, DType::kFloat32));
      last = cast + 1;
    }
    spec.yields = {last};
    const std::string source = FusedLoopSource(spec);
    EXPECT_EQ(CompileErrors(source), "") << source;
    EXPECT_NE(source.find("ResidentBroadcast b3, "), std::string::npos) << source;
    EXPECT_NE(source.find("in2[resident_broadcast<2>(i, b2)]"), std::string::npos) << source;
    EXPECT_EQ(source.find("ResidentBroadcast b0"), std::string::npos) << source;
  }
}

// A reducing region: every kind and dtype FusedReductionFits compiles, with
// the finishing kernel beside the fused one.
TEST(CudaFusedLoopSource, TrailingReductionsCompile) {
  const ReduceKind kinds[] = {ReduceKind::kSum, ReduceKind::kProd, ReduceKind::kMax,
                              ReduceKind::kMin, ReduceKind::kAny,  ReduceKind::kAll};
  for (DType dtype : kAllDTypes) {
    for (ReduceKind kind : kinds) {
      if (!FusedReductionFits(kind, dtype)) continue;
      FusedLoopSpec spec;
      spec.trip_count = 1;
      spec.num_carried = 0;
      spec.param_dtypes = {dtype, dtype};
      spec.param_scalar = {false, true};
      spec.steps = {Step::Of(ElementwiseKind::kAdd, 0, 1, dtype)};
      spec.reduction = FusedLoopSpec::Reduction{kind, 2};
      const std::string source = FusedLoopSource(spec);
      EXPECT_EQ(CompileErrors(source), "")
          << DTypeName(dtype) << " " << ReduceKindName(kind) << ":\n"
          << source;
      EXPECT_NE(source.find("void resident_fused_finish("), std::string::npos) << source;
    }
  }
}

// Bool elements are their storage byte in the generated code, as in every
// other kernel (never C++'s bool, which must not hold other byte values).
TEST(CudaFusedLoopSource, BoolIsItsStorageByte) {
  const std::string source = FusedLoopSource(EveryStep(DType::kBool));
  // Bool buffers are their storage byte; only the shared expressions
  // (core/elementwise_expr.h, embedded first) compute in C++'s bool.
  const std::string kernel = source.substr(source.find("extern \"C\""));
  EXPECT_EQ(kernel.find("bool"), std::string::npos) << source;
  EXPECT_NE(kernel.find("resident_ew_add((p0 != 0), (p1 != 0))"), std::string::npos) << source;
  EXPECT_NE(source.find("const char* __restrict__ in0"), std::string::npos) << source;
}

}  // namespace
}  // namespace resident::cuda_internal

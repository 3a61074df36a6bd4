#include "server/device/cuda/fused_loop.h"

#include <nvrtc.h>

#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/device/cuda/cuda_backend_internal.h"
#include "server/device/cuda/elementwise_expr_text.h"

namespace resident::cuda_internal {
namespace {

// The generated code's element types: StorageType<D> spelled for NVRTC (bool
// is its storage byte, `char`, as in every other kernel, never C++'s bool).
const char* CType(DType d) {
  switch (d) {
#define RESIDENT_DTYPE_CTYPE(K, name, S, W, descr, ctype) \
  case DType::K:                                          \
    return ctype;  // "" for complex: never fused (server/program/fusion.cc)
    RESIDENT_DTYPES(RESIDENT_DTYPE_CTYPE)
#undef RESIDENT_DTYPE_CTYPE
  }
  return "?";
}
static_assert(std::is_same_v<StorageType<DType::kBool>, char>);
static_assert(std::is_same_v<StorageType<DType::kInt8>, signed char> &&
              std::is_same_v<StorageType<DType::kUint8>, unsigned char>);
static_assert(std::is_same_v<StorageType<DType::kInt16>, short> &&
              std::is_same_v<StorageType<DType::kUint16>, unsigned short>);
static_assert(std::is_same_v<StorageType<DType::kInt32>, int> &&
              std::is_same_v<StorageType<DType::kUint32>, unsigned int>);
static_assert(sizeof(long long) == ItemSize(DType::kInt64) &&
              sizeof(unsigned long long) == ItemSize(DType::kUint64));
static_assert(std::is_same_v<StorageType<DType::kFloat32>, float> &&
              std::is_same_v<StorageType<DType::kFloat64>, double>);
static_assert(std::is_same_v<StorageType<DType::kFloat16>, ResidentFloat16> &&
              std::is_same_v<StorageType<DType::kBFloat16>, ResidentBFloat16>);

// The same conversions as the Cast kernel (kernels/cuda/common.cuh's
// Convert), through the shared functions of core/elementwise_expr.h (float
// -> integer) and core/half.h (float16 / bfloat16 through their float).
std::string CastExpr(const std::string& x, DType from, DType to) {
  if (from == to) return x;
  if (IsHalf(from)) {
    const std::string f = absl::StrCat("resident_load(", x, ")");
    if (to == DType::kBool) return absl::StrCat("((char)(", f, " != 0.0f))");
    if (IsInteger(to)) {
      return absl::StrCat(
          from == DType::kFloat16 ? "resident_half_to_int<" : "resident_bf16_to_int<", CType(to),
          ">(", f, ")");
    }
    if (IsHalf(to)) return absl::StrCat("resident_store<", CType(to), ">(", f, ")");
    return absl::StrCat("((", CType(to), ")", f, ")");
  }
  if (IsHalf(to)) {
    if (from == DType::kBool) {
      return absl::StrCat("resident_store<", CType(to), ">(", x, " != 0 ? 1.0f : 0.0f)");
    }
    if (from == DType::kFloat32) return absl::StrCat("resident_store<", CType(to), ">(", x, ")");
    return absl::StrCat("resident_store_double<", CType(to), ">((double)", x, ")");
  }
  if (to == DType::kBool) return absl::StrCat("((char)(", x, " != 0))");
  if (from == DType::kBool)
    return absl::StrCat("(", x, " ? (", CType(to), ")1 : (", CType(to), ")0)");
  if (IsInteger(to) && IsFloating(from)) {
    return absl::StrCat("resident_float_to_int<", CType(to), ">((double)", x, ")");
  }
  return absl::StrCat("((", CType(to), ")", x, ")");
}

std::string Slot(const FusedLoopSpec& spec, int slot) {
  const int params = static_cast<int>(spec.param_dtypes.size());
  return slot < params ? absl::StrCat("p", slot) : absl::StrCat("s", slot);
}

// The expression of one step: a cast, or a call of the op table's function
// (core/elementwise_expr.h, embedded in the source) over the register type:
// a bool operand is read as `x != 0`, and the result stored in the slot's type.
std::string StepExpr(const FusedLoopSpec& spec, const FusedLoopSpec::Step& st,
                     const std::vector<DType>& dtypes) {
  if (st.select) {
    // A bool slot is its storage byte: any nonzero byte is true.
    return absl::StrCat("(", Slot(spec, st.a), " != 0 ? ", Slot(spec, st.b), " : ",
                        Slot(spec, st.c), ")");
  }
  if (!st.op.has_value()) return CastExpr(Slot(spec, st.a), dtypes[st.a], st.dtype);
  const ElementwiseInfo* e = FindElementwise(*st.op);
  if (e == nullptr) return "0";
  auto reg = [&](int slot) {
    if (dtypes[slot] == DType::kBool) return absl::StrCat("(", Slot(spec, slot), " != 0)");
    if (IsHalf(dtypes[slot])) return absl::StrCat("resident_load(", Slot(spec, slot), ")");
    return Slot(spec, slot);
  };
  std::string args = reg(st.a);
  if (e->arity == 2) absl::StrAppend(&args, ", ", reg(st.b));
  if (IsHalf(st.dtype)) {
    // Computed in float and rounded once per op, as the op-by-op kernels.
    const bool bf16_sign = *st.op == ElementwiseKind::kSign && st.dtype == DType::kBFloat16;
    return absl::StrCat("resident_store<", CType(st.dtype), ">((float)",
                        bf16_sign ? "resident_ew_sign_bf16" : e->function, "(", args, "))");
  }
  return absl::StrCat("((", CType(st.dtype), ")", e->function, "(", args, "))");
}

absl::Status Nvrtc(nvrtcResult r, const char* where) {
  if (r == NVRTC_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(where, ": ", nvrtcGetErrorString(r)));
}

// A broadcast param's read position (FusedBroadcastLayout): the flat index
// split over the layout's dims, in 32-bit arithmetic when every index fits.
constexpr char kBroadcastSource[] = R"(struct ResidentBroadcast {
  long long dim[4];
  long long stride[4];
  int narrow;
};
template <int R>
__device__ __forceinline__ long long resident_broadcast(long long i, const ResidentBroadcast& b) {
  long long off = 0;
  if (b.narrow) {
    unsigned int r = (unsigned int)i;
#pragma unroll
    for (int d = R - 1; d > 0; --d) {
      const unsigned int q = r / (unsigned int)b.dim[d];
      off += (long long)(r - q * (unsigned int)b.dim[d]) * b.stride[d];
      r = q;
    }
    return off + (long long)r * b.stride[0];
  }
#pragma unroll
  for (int d = R - 1; d > 0; --d) {
    const long long q = i / b.dim[d];
    off += (i - q * b.dim[d]) * b.stride[d];
    i = q;
  }
  return off + i * b.stride[0];
}
)";
static_assert(kMaxFusedBroadcastRank == 4, "ResidentBroadcast holds 4 dims");

// A trailing reduction's accumulator, identity and combine (device code):
// 64 bits, signed for max/min of signed integers and bool, else unsigned
// (sums and products wrap); then a block's combine over warp shuffles. The
// kinds FusedReductionFits are order-free, so any tree gives the same bits.
std::string ReductionPrelude(ReduceKind kind, DType dtype) {
  const bool is_signed = IsSignedInteger(dtype) || dtype == DType::kBool;
  const bool minmax = kind == ReduceKind::kMax || kind == ReduceKind::kMin;
  const char* acc = minmax && is_signed ? "long long" : "unsigned long long";
  const char* identity = "0ULL";
  const char* combine = "((a) + (b))";
  switch (kind) {
    case ReduceKind::kProd:
      identity = "1ULL";
      combine = "((a) * (b))";
      break;
    case ReduceKind::kAll:
      identity = "1ULL";
      combine = "((a) & (b))";
      break;
    case ReduceKind::kAny:
      combine = "((a) | (b))";
      break;
    case ReduceKind::kMax:
      identity = is_signed ? "(-9223372036854775807LL - 1)" : "0ULL";
      combine = "((a) < (b) ? (b) : (a))";
      break;
    case ReduceKind::kMin:
      identity = is_signed ? "9223372036854775807LL" : "18446744073709551615ULL";
      combine = "((b) < (a) ? (b) : (a))";
      break;
    default:
      break;
  }
  return absl::StrCat(
      "typedef ", acc, " resident_acc;\n", "#define RESIDENT_IDENTITY ((resident_acc)", identity,
      ")\n", "#define RESIDENT_COMBINE(a, b) ", combine, "\n",
      R"(__device__ __forceinline__ resident_acc resident_block_combine(resident_acc v) {
  __shared__ resident_acc warps[32];
  for (int o = 16; o > 0; o >>= 1) v = RESIDENT_COMBINE(v, __shfl_down_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warps[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (int)(blockDim.x >> 5) ? warps[lane] : RESIDENT_IDENTITY;
    for (int o = 16; o > 0; o >>= 1) v = RESIDENT_COMBINE(v, __shfl_down_sync(0xffffffffu, v, o));
  }
  return v;
}
)");
}

// The reduction's value of slot `x` (of `dtype`) as resident_acc: 0/1 for
// any/all (a float's NaN is true) and bool, the integer widened otherwise.
std::string ReductionElement(ReduceKind kind, DType dtype, const std::string& x) {
  if (kind == ReduceKind::kAny || kind == ReduceKind::kAll || dtype == DType::kBool) {
    const std::string v = IsHalf(dtype) ? absl::StrCat("resident_load(", x, ")") : x;
    return absl::StrCat("(resident_acc)(", v, " != 0)");
  }
  if (IsSignedInteger(dtype)) return absl::StrCat("(resident_acc)(long long)", x);
  return absl::StrCat("(resident_acc)", x);
}

// The host side of ResidentBroadcast, passed by value to the kernel.
struct BroadcastArg {
  long long dim[4];
  long long stride[4];
  int narrow;
};

// The dtype of each slot: params, then steps.
std::vector<DType> SlotDTypes(const FusedLoopSpec& spec) {
  std::vector<DType> d = spec.param_dtypes;
  for (const FusedLoopSpec::Step& st : spec.steps) d.push_back(st.dtype);
  return d;
}

}  // namespace

// One thread per element (grid-stride): params read into registers, then
// the steps, once for a straight-line region (no carried values; each out
// is a yielded slot), or `trips` times for a loop (the carried values
// updated from their yields; each out is a carried value).
std::string FusedLoopKernel(const FusedLoopSpec& spec) {
  const bool region = spec.num_carried == 0;
  const int params = static_cast<int>(spec.param_dtypes.size());
  const std::vector<DType> slot_dtypes = SlotDTypes(spec);
  auto broadcast = [&](int p) {
    return spec.param_broadcast.empty() ? 0 : spec.param_broadcast[p];
  };
  std::string src;
  bool any_broadcast = false;
  for (int p = 0; p < params; ++p) any_broadcast |= broadcast(p) > 0;
  if (any_broadcast) absl::StrAppend(&src, kBroadcastSource);
  absl::StrAppend(&src, "extern \"C\" __global__ void resident_fused(");
  for (int p = 0; p < params; ++p) {
    absl::StrAppend(&src, "const ", CType(spec.param_dtypes[p]), "* __restrict__ in", p, ", ");
    // A broadcast param's layout (FusedBroadcastLayout) by value.
    if (broadcast(p) > 0) absl::StrAppend(&src, "ResidentBroadcast b", p, ", ");
  }
  // A loop's outs may alias its carried params; a region's never do.
  for (size_t k = 0; k < spec.yields.size(); ++k) {
    absl::StrAppend(&src, CType(region ? slot_dtypes[spec.yields[k]] : spec.param_dtypes[k]),
                    region ? "* __restrict__ out" : "* out", k, ", ");
  }
  const std::optional<FusedLoopSpec::Reduction>& red = spec.reduction;
  if (red) {
    absl::StrAppend(&src, "unsigned long long* __restrict__ partial, ");
  }
  absl::StrAppend(&src,
                  "long long trips, long long n) {\n"
                  "  const long long stride = (long long)blockDim.x * gridDim.x;\n");
  if (red) absl::StrAppend(&src, "  resident_acc acc = RESIDENT_IDENTITY;\n");
  absl::StrAppend(&src,
                  "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;"
                  " i < n; i += stride) {\n");
  // Every param is read before any out is written (outs may alias them).
  for (int p = 0; p < params; ++p) {
    const std::string index =
        broadcast(p) > 0       ? absl::StrCat("resident_broadcast<", broadcast(p), ">(i, b", p, ")")
        : spec.param_scalar[p] ? "0"
                               : "i";
    absl::StrAppend(&src, region ? "    const " : "    ", CType(spec.param_dtypes[p]), " p", p,
                    " = in", p, "[", index, "];\n");
  }
  const char* indent = region ? "    " : "      ";
  if (!region) absl::StrAppend(&src, "    for (long long t = 0; t < trips; ++t) {\n");
  std::vector<DType> dtypes = spec.param_dtypes;
  for (size_t i = 0; i < spec.steps.size(); ++i) {
    const FusedLoopSpec::Step& st = spec.steps[i];
    const int slot = params + static_cast<int>(i);
    const std::string expr = StepExpr(spec, st, dtypes);
    absl::StrAppend(&src, indent, "const ", CType(st.dtype), " s", slot, " = ", expr, ";\n");
    dtypes.push_back(st.dtype);
  }
  if (region) {
    for (size_t k = 0; k < spec.yields.size(); ++k) {
      absl::StrAppend(&src, "    out", k, "[i] = ", Slot(spec, spec.yields[k]), ";\n");
    }
    if (red) {
      absl::StrAppend(&src, "    acc = RESIDENT_COMBINE(acc, ",
                      ReductionElement(red->kind, slot_dtypes[red->slot], Slot(spec, red->slot)),
                      ");\n");
    }
  } else {
    for (int c = 0; c < spec.num_carried; ++c) {
      absl::StrAppend(&src, "      const ", CType(spec.param_dtypes[c]), " y", c, " = ",
                      Slot(spec, spec.yields[c]), ";\n");
    }
    for (int c = 0; c < spec.num_carried; ++c) {
      absl::StrAppend(&src, "      p", c, " = y", c, ";\n");
    }
    absl::StrAppend(&src, "    }\n");
    for (int c = 0; c < spec.num_carried; ++c) {
      absl::StrAppend(&src, "    out", c, "[i] = p", c, ";\n");
    }
  }
  absl::StrAppend(&src, "  }\n");
  if (red) {
    absl::StrAppend(&src, "  acc = resident_block_combine(acc);\n",
                    "  if (threadIdx.x == 0) partial[blockIdx.x] = (unsigned long long)acc;\n");
  }
  absl::StrAppend(&src, "}\n");
  if (red) {
    // One block combines the partials into the result's dtype.
    const DType out = ReduceResultType(red->kind, slot_dtypes[red->slot]);
    absl::StrAppend(
        &src, "extern \"C\" __global__ void resident_fused_finish(",
        "const unsigned long long* __restrict__ partial, long long count, ", CType(out),
        "* __restrict__ out) {\n", "  resident_acc acc = RESIDENT_IDENTITY;\n",
        "  for (long long k = threadIdx.x; k < count; k += blockDim.x) {\n",
        "    acc = RESIDENT_COMBINE(acc, (resident_acc)partial[k]);\n", "  }\n",
        "  acc = resident_block_combine(acc);\n", "  if (threadIdx.x == 0) out[0] = ",
        out == DType::kBool ? "(char)(acc != 0)" : absl::StrCat("(", CType(out), ")acc"), ";\n}\n");
    src = absl::StrCat(ReductionPrelude(red->kind, slot_dtypes[red->slot]), src);
  }
  return src;
}

std::string FusedLoopSource(const FusedLoopSpec& spec) {
  return absl::StrCat(ElementwiseExprText(), FusedLoopKernel(spec));
}

FusedKernelCache::~FusedKernelCache() {
  for (auto& [src, lk] : kernels_) (void)cudaLibraryUnload(lk.first);
}

bool FusedKernelCache::Admits(const FusedLoopSpec& spec) {
  // A kernel takes a pointer per param and per out and a line per step: a
  // loop carrying tens of thousands of values (or with a body that long)
  // would be a kernel NVRTC takes minutes to compile, if its parameters fit
  // at all; it runs op by op instead.
  if (spec.param_dtypes.size() + spec.yields.size() > kMaxKernelArgs ||
      spec.steps.size() > kMaxKernelSteps) {
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (kernels_.size() < kMaxKernels) return true;
  }
  const std::string kernel = FusedLoopKernel(spec);
  std::lock_guard<std::mutex> lock(mu_);
  return kernels_.contains(kernel);
}

absl::StatusOr<FusedKernels> FusedKernelCache::Get(const std::string& kernel) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = kernels_.find(kernel); it != kernels_.end()) return it->second.second;
  }
  // Compiled and loaded without the lock (NVRTC takes tens of ms), so other
  // sessions' cached fused launches on this device do not wait for it; two
  // first uses of one kernel at once compile it twice and keep one.
  const std::string source = absl::StrCat(ElementwiseExprText(), kernel);
  nvrtcProgram prog = nullptr;
  RETURN_IF_ERROR(
      Nvrtc(nvrtcCreateProgram(&prog, source.c_str(), "resident_fused.cu", 0, nullptr, nullptr),
            "nvrtcCreateProgram"));
  const std::string arch = absl::StrCat("--gpu-architecture=sm_", major_, minor_);
  // No FMA contraction: the fused loop must equal the op-by-op kernels.
  const char* opts[] = {arch.c_str(), "--fmad=false", "--std=c++17"};
  const nvrtcResult compiled = nvrtcCompileProgram(prog, 3, opts);
  std::string cubin;
  absl::Status status = absl::OkStatus();
  if (compiled != NVRTC_SUCCESS) {
    size_t log_size = 0;
    nvrtcGetProgramLogSize(prog, &log_size);
    std::string log(log_size, '\0');
    if (log_size > 0) nvrtcGetProgramLog(prog, log.data());
    status = absl::InternalError(absl::StrCat(
        "NVRTC failed to compile a fused loop: ", nvrtcGetErrorString(compiled), "\n", log));
  } else {
    size_t size = 0;
    status = Nvrtc(nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
    if (status.ok()) {
      cubin.resize(size);
      status = Nvrtc(nvrtcGetCUBIN(prog, cubin.data()), "nvrtcGetCUBIN");
    }
  }
  nvrtcDestroyProgram(&prog);
  RETURN_IF_ERROR(status);
  cudaLibrary_t library = nullptr;
  cudaError_t e =
      cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return absl::InternalError(absl::StrCat("cudaLibraryLoadData: ", cudaGetErrorString(e)));
  }
  FusedKernels compiled_kernels;
  e = cudaLibraryGetKernel(&compiled_kernels.main, library, "resident_fused");
  if (e == cudaSuccess && kernel.find("resident_fused_finish") != std::string::npos) {
    e = cudaLibraryGetKernel(&compiled_kernels.finish, library, "resident_fused_finish");
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    (void)cudaLibraryUnload(library);
    return absl::InternalError(absl::StrCat("cudaLibraryGetKernel: ", cudaGetErrorString(e)));
  }
  std::lock_guard<std::mutex> lock(mu_);
  const auto [it, inserted] = kernels_.emplace(kernel, std::make_pair(library, compiled_kernels));
  if (!inserted) (void)cudaLibraryUnload(library);  // another thread's won
  return it->second.second;
}

// --- CudaBackend::Do(FusedLoopOp) ----------------------------------------------

absl::Status CudaBackend::Do(const StreamRef& s, const FusedLoopOp& op) {
  const FusedLoopSpec& spec = *op.spec;
  const absl::Span<const DeviceArray> params = op.params, outs = op.outs;
  ASSIGN_OR_RETURN(const Shape shape, CheckFusedLoopOp(op));
  const int64_t n = NumElements(shape);
  if (n == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(const FusedKernels kernels, fused_kernels_->Get(FusedLoopKernel(spec)));
  const bool reduces = spec.reduction.has_value();
  if (reduces && kernels.finish == nullptr) {
    return absl::InternalError("FusedLoop: the reduction's kernel is missing");
  }
  std::vector<const void*> pointers;
  for (const DeviceArray& a : params) pointers.push_back(a.data());
  // A reduction's out is the finishing kernel's.
  for (size_t k = 0; k < spec.yields.size(); ++k) pointers.push_back(outs[k].data());
  // Reserved up front: args keeps their addresses.
  std::vector<BroadcastArg> layouts;
  layouts.reserve(params.size());
  long long trips = spec.trip_count;
  long long count = n;
  std::vector<void*> args;
  args.reserve(pointers.size() + params.size() + 2);
  for (size_t k = 0; k < pointers.size(); ++k) {
    args.push_back(&pointers[k]);
    if (k >= params.size() || spec.param_broadcast.empty() || spec.param_broadcast[k] == 0) {
      continue;
    }
    const std::optional<FusedBroadcastLayout> l = FusedBroadcast(params[k].shape, shape);
    if (!l) return absl::InternalError("FusedLoop: a broadcast param lost its layout");
    BroadcastArg& b = layouts.emplace_back();
    for (int d = 0; d < kMaxFusedBroadcastRank; ++d) {
      b.dim[d] = d < l->rank ? l->dim[d] : 1;
      b.stride[d] = d < l->rank ? l->stride[d] : 0;
    }
    b.narrow = n <= int64_t{0xffffffff} ? 1 : 0;
    args.push_back(&b);
  }
  constexpr int kBlock = 256;
  const int64_t blocks =
      std::min<int64_t>((n + kBlock - 1) / kBlock, int64_t{device_->sm_count} * 32);
  // One 8-byte partial per block, freed (stream-ordered) after the finish.
  std::shared_ptr<CudaBuffer> partial;
  void* partial_data = nullptr;
  if (reduces) {
    ASSIGN_OR_RETURN(partial, AllocateOn(s, blocks * 8));
    partial_data = partial->data();
    args.push_back(&partial_data);
  }
  args.push_back(&trips);
  args.push_back(&count);
  RETURN_IF_ERROR(Check(cudaLaunchKernel(reinterpret_cast<const void*>(kernels.main),
                                         dim3(static_cast<unsigned>(blocks)), dim3(kBlock),
                                         args.data(), 0, s->stream()),
                        "cudaLaunchKernel(fused loop)"));
  if (!reduces) return absl::OkStatus();
  long long partials = blocks;
  void* out = outs.back().data();
  void* finish_args[] = {&partial_data, &partials, &out};
  return Check(cudaLaunchKernel(reinterpret_cast<const void*>(kernels.finish), dim3(1),
                                dim3(kBlock), finish_args, 0, s->stream()),
               "cudaLaunchKernel(fused reduction)");
}

}  // namespace resident::cuda_internal

// The random family's registry functions: `random` draws numpy.random.
// Generator's values from a PCG64 state held in a uint64 (6,) array
// (kernels/pcg64.h's layout: NumPy's state dict) and returns them with the
// state after them, so a client chains calls without reading anything
// back and successive calls continue NumPy's stream. The result dtype
// picks the draw: float64 low + range * next_double (random, uniform;
// `start` low, `stop` range), float32 next_float (random(dtype=float32)),
// integers and bool off + a bounded draw of the inclusive span rng (`start`
// off, `stop` rng, each the 64-bit two's complement pattern), NumPy's
// Lemire rejection. `normal` and `exponential` draw NumPy's ziggurat
// (kernels/ziggurat.h): float64 as loc + scale * z (`start` loc, normal
// only; `stop` scale; both absent for the standard draws), float32 as z.
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "server/program/op_registry.h"
#include "server/program/saturating.h"

namespace resident {
namespace {

absl::Status CheckDrawType(const Instruction& ins, DType d) {
  if (ins.op == OpKind::kNormal || ins.op == OpKind::kExponential) {
    if (ins.op == OpKind::kExponential && ins.start) {
      return absl::InvalidArgumentError("exponential: takes a scale (stop), no loc (start)");
    }
    if (d == DType::kFloat64 || (d == DType::kFloat32 && !ins.start && !ins.stop)) {
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat(
        OpName(ins.op), ": draws float64, or float32 without loc and scale (the standard draw), ",
        "not ", DTypeName(d), ins.start || ins.stop ? " with loc and scale" : ""));
  }
  if (d == DType::kFloat64 || d == DType::kFloat32 || d == DType::kBool ||
      (IsInteger(d) && !IsComplex(d))) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("random: draws float64, float32, integers or bool, not ", DTypeName(d)));
}

}  // namespace

absl::StatusOr<std::vector<ValueType>> InferRandom(const Instruction& ins,
                                                   absl::Span<const ValueType> ops) {
  const ValueType& state = ops[0];
  const char* name = OpName(ins.op);
  if (state.dtype != DType::kUint64 || state.shape != Shape{kRandomStateWords}) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": the generator state must be uint64 (",
                                                   kRandomStateWords, ",), not ",
                                                   TypeString(state)));
  }
  if (!ins.dtype) return absl::InvalidArgumentError(absl::StrCat(name, " needs a dtype"));
  RETURN_IF_ERROR(CheckDrawType(ins, *ins.dtype));
  const bool floating = *ins.dtype == DType::kFloat64 || *ins.dtype == DType::kFloat32;
  if (!floating && (!ins.start || !ins.stop)) {
    return absl::InvalidArgumentError("random: integers need start (off) and stop (rng)");
  }
  for (int64_t d : ins.shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": negative dimensions are not allowed"));
    }
  }
  return std::vector<ValueType>{ValueType{*ins.dtype, ins.shape},
                                ValueType{DType::kUint64, Shape{kRandomStateWords}}};
}

// The result, and the rejection draws' candidates and flags (a few words
// per element), plus a constant.
int64_t RandomBound(const Instruction&, absl::Span<const ValueType>, const ValueType& result) {
  return SaturatingAdd(SaturatingMul(result.num_elements(), 24), int64_t{16} << 20);
}

absl::StatusOr<std::vector<DeviceArray>> RunRandom(OpContext& ctx, const Instruction& ins,
                                                   std::vector<DeviceArray> args,
                                                   absl::Span<const ValueType> outs) {
  RandomOp op;
  if (ins.op == OpKind::kNormal || ins.op == OpKind::kExponential) {
    op.distribution =
        ins.op == OpKind::kNormal ? RandomDistribution::kNormal : RandomDistribution::kExponential;
    // The standard draws as loc -0.0, scale 1: -0.0 + 1 * z is z, -0.0
    // too; exponential's scale * z likewise as -0.0 + scale * z.
    op.low = ins.start ? ins.start->as_double() : -0.0;
    op.range = ins.stop ? ins.stop->as_double() : 1.0;
  } else if (outs[0].dtype == DType::kFloat64) {
    op.low = ins.start ? ins.start->as_double() : 0.0;
    op.range = ins.stop ? ins.stop->as_double() : 1.0;
  } else if (outs[0].dtype != DType::kFloat32) {
    op.off = static_cast<uint64_t>(ins.start->as_int64());
    op.rng = static_cast<uint64_t>(ins.stop->as_int64());
  }
  std::vector<DeviceArray> results;
  for (const ValueType& t : outs) {
    ASSIGN_OR_RETURN(DeviceArray r, Allocate(ctx, t.dtype, t.shape));
    results.push_back(std::move(r));
  }
  op.state = &args[0];
  op.out = &results[0];
  op.next_state = &results[1];
  RETURN_IF_ERROR(ctx.device.backend().Run(ctx.stream, op));
  return results;
}

}  // namespace resident

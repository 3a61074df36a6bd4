#include "server/device/device_op.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace resident {
namespace {

// The arrays of each kind of op, in a fixed order: inputs, then outputs.
using List = absl::InlinedVector<OpOperand, 4>;
void Collect(const FillOp& op, List& v) { v.push_back({op.out, "output"}); }
void Collect(const ArangeOp& op, List& v) { v.push_back({op.out, "output"}); }
void Collect(const ElementwiseOp& op, List& v) {
  v.push_back({op.in[0], "operand a"});
  if (Arity(op.kind) == 2) v.push_back({op.in[1], "operand b"});
  v.push_back({op.out, "output"});
}
void Collect(const CastOp& op, List& v) {
  v.insert(v.end(), {{op.in, "input"}, {op.out, "output"}});
}
void Collect(const MatmulOp& op, List& v) {
  v.insert(v.end(), {{op.a, "operand a"}, {op.b, "operand b"}, {op.out, "output"}});
}
void Collect(const ReduceOp& op, List& v) {
  v.insert(v.end(), {{op.in, "input"}, {op.out, "output"}});
}
void Collect(const TransposeOp& op, List& v) {
  v.insert(v.end(), {{op.in, "input"}, {op.out, "output"}});
}
void Collect(const ReduceAxesOp& op, List& v) {
  v.insert(v.end(), {{op.in, "input"}, {op.out, "output"}});
}
void Collect(const SliceOp& op, List& v) {
  v.insert(v.end(), {{op.in, "input"}, {op.out, "output"}});
}
void Collect(const ConcatOp& op, List& v) {
  for (const DeviceArray& a : op.ins) v.push_back({&a, "input"});
  v.push_back({op.out, "output"});
}
void Collect(const FusedLoopOp& op, List& v) {
  for (const DeviceArray& p : op.params) v.push_back({&p, "param"});
  for (const DeviceArray& o : op.outs) v.push_back({&o, "out"});
}

}  // namespace

namespace {

absl::Status CheckFusedLoopSpec(const FusedLoopSpec& spec) {
  std::vector<DType> slots = spec.param_dtypes;
  if (spec.param_scalar.size() != slots.size()) {
    return absl::InvalidArgumentError("FusedLoop: param_scalar does not match the params");
  }
  for (size_t i = 0; i < spec.steps.size(); ++i) {
    const FusedLoopSpec::Step& st = spec.steps[i];
    const int self = static_cast<int>(slots.size());
    auto reads = [&](int slot, bool typed, DType want) {
      return slot >= 0 && slot < self && (!typed || slots[slot] == want);
    };
    bool ok;
    if (st.select) {
      ok = reads(st.a, true, DType::kBool) && reads(st.b, true, st.dtype) &&
           reads(st.c, true, st.dtype);
    } else if (!st.op) {
      ok = reads(st.a, false, st.dtype);
    } else {
      const int arity = Arity(*st.op);
      ok = arity > 0 && reads(st.a, true, st.dtype) && (arity != 2 || reads(st.b, true, st.dtype));
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat("FusedLoop: step ", i, " is malformed"));
    }
    slots.push_back(st.dtype);
  }
  for (int y : spec.yields) {
    if (y < 0 || static_cast<size_t>(y) >= slots.size()) {
      return absl::InvalidArgumentError("FusedLoop: a yield names no slot");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shape> CheckFusedLoopOp(const FusedLoopOp& op) {
  if (op.spec == nullptr) return absl::InvalidArgumentError("fused loop without a spec");
  const FusedLoopSpec& spec = *op.spec;
  const absl::Span<const DeviceArray> params = op.params, outs = op.outs;
  const size_t np = spec.param_dtypes.size();
  // A straight-line region: no carried values, one trip, outs by yields.
  const bool region = spec.num_carried == 0;
  if (params.size() != np || spec.yields.size() != outs.size() || spec.num_carried < 0 ||
      (region ? spec.trip_count != 1 || outs.empty()
              : outs.size() != static_cast<size_t>(spec.num_carried))) {
    return absl::InvalidArgumentError("FusedLoop: params or outs do not match the spec");
  }
  RETURN_IF_ERROR(CheckFusedLoopSpec(spec));
  const Shape& shape = region ? outs[0].shape : params[0].shape;
  for (size_t p = 0; p < np; ++p) {
    const bool ok =
        params[p].dtype == spec.param_dtypes[p] &&
        (spec.param_scalar[p] ? params[p].num_elements() == 1 : params[p].shape == shape);
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("FusedLoop: param ", p, " does not match the spec"));
    }
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    const int y = spec.yields[k];
    const DType want = !region                       ? spec.param_dtypes[k]
                       : static_cast<size_t>(y) < np ? spec.param_dtypes[y]
                                                     : spec.steps[y - np].dtype;
    if (outs[k].dtype != want || outs[k].shape != shape) {
      return absl::InvalidArgumentError(absl::StrCat("FusedLoop: out ", k, " does not match"));
    }
  }
  return shape;
}

DType ReduceResultType(ReduceKind kind, DType in) {
  switch (kind) {
    case ReduceKind::kSum:
    case ReduceKind::kProd:
      return SumResultType(in);
    case ReduceKind::kMean:
      return IsFloating(in) || IsComplex(in) ? in : DType::kFloat64;
    case ReduceKind::kMax:
    case ReduceKind::kMin:
      return in;
    case ReduceKind::kArgmax:
    case ReduceKind::kArgmin:
      return DType::kInt64;
    case ReduceKind::kAny:
    case ReduceKind::kAll:
      return DType::kBool;
  }
  return in;
}

const char* ReduceKindName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
      return "sum";
    case ReduceKind::kProd:
      return "prod";
    case ReduceKind::kMean:
      return "mean";
    case ReduceKind::kMax:
      return "max";
    case ReduceKind::kMin:
      return "min";
    case ReduceKind::kArgmax:
      return "argmax";
    case ReduceKind::kArgmin:
      return "argmin";
    case ReduceKind::kAny:
      return "any";
    case ReduceKind::kAll:
      return "all";
  }
  return "reduce";
}

bool DefinedFor(DeviceOpKind kind, DType dtype) {
  switch (kind) {
    case DeviceOpKind::kArange:
      // NumPy fills bool through its integers; complex arange is refused.
      return dtype != DType::kBool && !IsComplex(dtype);
    case DeviceOpKind::kFusedLoop:
      return !IsComplex(dtype);  // complex never fuses (server/program/fusion.cc)
    case DeviceOpKind::kFill:
    case DeviceOpKind::kElementwise:
    case DeviceOpKind::kCast:
    case DeviceOpKind::kMatmul:
    case DeviceOpKind::kReduce:
    case DeviceOpKind::kTranspose:
    case DeviceOpKind::kReduceAxes:
    case DeviceOpKind::kSlice:
    case DeviceOpKind::kConcat:
      return true;
  }
  return false;
}

const char* DeviceOpName(DeviceOpKind kind) {
  switch (kind) {
    case DeviceOpKind::kFill:
      return "fill";
    case DeviceOpKind::kArange:
      return "arange";
    case DeviceOpKind::kElementwise:
      return "elementwise";
    case DeviceOpKind::kCast:
      return "cast";
    case DeviceOpKind::kMatmul:
      return "matmul";
    case DeviceOpKind::kReduce:
      return "reduce";
    case DeviceOpKind::kTranspose:
      return "transpose";
    case DeviceOpKind::kFusedLoop:
      return "fused loop";
    case DeviceOpKind::kReduceAxes:
      return "reduce axes";
    case DeviceOpKind::kSlice:
      return "slice";
    case DeviceOpKind::kConcat:
      return "concatenate";
  }
  return "?";
}

const char* OpLabel(const DeviceOp& op) {
  if (const auto* e = std::get_if<ElementwiseOp>(&op)) return ElementwiseName(e->kind);
  if (std::holds_alternative<ReduceOp>(op)) return "sum";
  if (const auto* r = std::get_if<ReduceAxesOp>(&op)) return ReduceKindName(r->kind);
  return DeviceOpName(KindOf(op));
}

absl::InlinedVector<OpOperand, 4> Operands(const DeviceOp& op) {
  absl::InlinedVector<OpOperand, 4> v;
  std::visit([&v](const auto& o) { Collect(o, v); }, op);
  return v;
}

absl::Status CheckOperands(const DeviceOp& op) {
  if (const auto* e = std::get_if<ElementwiseOp>(&op)) {
    const int arity = Arity(e->kind);
    if (arity == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown elementwise kind ", static_cast<int>(e->kind)));
    }
    if (arity == 1 && e->in[1] != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(ElementwiseName(e->kind), " takes one operand, got two"));
    }
  }
  if (const auto* f = std::get_if<FusedLoopOp>(&op); f != nullptr && f->spec == nullptr) {
    return absl::InvalidArgumentError("fused loop without a spec");
  }
  for (const OpOperand& o : Operands(op)) {
    if (o.array == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(OpLabel(op), " ", o.role, ": missing"));
    }
    // The op's name joins the message only on failure: no string per operand.
    const absl::Status held = CheckHeld(*o.array, o.role);
    if (!held.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(OpLabel(op), " ", held.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace resident

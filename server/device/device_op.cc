#include "server/device/device_op.h"

#include <algorithm>
#include <initializer_list>
#include <iterator>
#include <string>
#include <utility>
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
void Collect(const ArgsortOp& op, List& v) {
  v.push_back({op.in, "input"});
  v.push_back({op.out, "output"});
}
void Collect(const TakeAlongAxisOp& op, List& v) {
  v.push_back({op.in, "input"});
  v.push_back({op.idx, "indices"});
  v.push_back({op.out, "output"});
}
void Collect(const ScanOp& op, List& v) {
  v.push_back({op.in, "input"});
  v.push_back({op.out, "output"});
}
void Collect(const ExtractOp& op, List& v) {
  v.push_back({op.cond, "condition"});
  if (op.values != nullptr) v.push_back({op.values, "values"});
  v.push_back({op.out, "output"});
}
void Collect(const FftOp& op, List& v) {
  v.push_back({op.in, "input"});
  v.push_back({op.out, "output"});
}
void Collect(const LinalgOp& op, List& v) {
  v.push_back({op.a, "operand a"});
  if (op.kind == LinalgKind::kSolve) v.push_back({op.b, "operand b"});
  v.push_back({op.out, "output"});
  if (op.out2 != nullptr) v.push_back({op.out2, "output 2"});
  if (op.out3 != nullptr) v.push_back({op.out3, "output 3"});
}
void Collect(const RandomOp& op, List& v) {
  v.push_back({op.state, "state"});
  v.push_back({op.out, "output"});
  v.push_back({op.next_state, "next state"});
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
  if (!spec.param_broadcast.empty() && spec.param_broadcast.size() != slots.size()) {
    return absl::InvalidArgumentError("FusedLoop: param_broadcast does not match the params");
  }
  for (size_t p = 0; p < spec.param_broadcast.size(); ++p) {
    const int rank = spec.param_broadcast[p];
    // Carried values are of the loop's shape; a one-element param is scalar.
    if (rank < 0 || rank > kMaxFusedBroadcastRank ||
        (rank > 0 && (spec.param_scalar[p] || static_cast<int>(p) < spec.num_carried))) {
      return absl::InvalidArgumentError(
          absl::StrCat("FusedLoop: param ", p, "'s broadcast is malformed"));
    }
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
  if (const auto& r = spec.reduction) {
    if (spec.num_carried != 0 || r->slot < 0 || static_cast<size_t>(r->slot) >= slots.size() ||
        !FusedReductionFits(r->kind, slots[r->slot])) {
      return absl::InvalidArgumentError("FusedLoop: the reduction is malformed");
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
  const size_t yielded = spec.yields.size() + (spec.reduction ? 1 : 0);
  if (params.size() != np || yielded != outs.size() || spec.num_carried < 0 ||
      (region ? spec.trip_count != 1 || outs.empty()
              : outs.size() != static_cast<size_t>(spec.num_carried))) {
    return absl::InvalidArgumentError("FusedLoop: params or outs do not match the spec");
  }
  RETURN_IF_ERROR(CheckFusedLoopSpec(spec));
  const bool reduces = spec.reduction.has_value();
  if (reduces && (op.shape == nullptr || NumElements(*op.shape) == 0)) {
    return absl::InvalidArgumentError("FusedLoop: a reducing region needs its non-empty shape");
  }
  const Shape& shape = reduces ? *op.shape : region ? outs[0].shape : params[0].shape;
  const size_t full_outs = outs.size() - (reduces ? 1 : 0);
  for (size_t p = 0; p < np; ++p) {
    const int broadcast = spec.param_broadcast.empty() ? 0 : spec.param_broadcast[p];
    bool fits;
    if (broadcast > 0) {
      const std::optional<FusedBroadcastLayout> l = FusedBroadcast(params[p].shape, shape);
      fits = l.has_value() && l->rank == broadcast;
    } else {
      fits = spec.param_scalar[p] ? params[p].num_elements() == 1 : params[p].shape == shape;
    }
    const bool ok = params[p].dtype == spec.param_dtypes[p] && fits;
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("FusedLoop: param ", p, " does not match the spec"));
    }
  }
  if (reduces) {
    const FusedLoopSpec::Reduction& r = *spec.reduction;
    const DType from = static_cast<size_t>(r.slot) < np ? spec.param_dtypes[r.slot]
                                                        : spec.steps[r.slot - np].dtype;
    const DeviceArray& out = outs.back();
    if (out.dtype != ReduceResultType(r.kind, from) || out.num_elements() != 1) {
      return absl::InvalidArgumentError("FusedLoop: the reduction's out does not match");
    }
  }
  for (size_t k = 0; k < full_outs; ++k) {
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

bool FusedReductionFits(ReduceKind kind, DType dtype) {
  if (IsComplex(dtype)) return false;  // complex values never fuse
  switch (kind) {
    case ReduceKind::kAny:
    case ReduceKind::kAll:
      return true;
    case ReduceKind::kSum:
    case ReduceKind::kProd:
    case ReduceKind::kMax:
    case ReduceKind::kMin:
      return dtype == DType::kBool || IsInteger(dtype);
    default:
      return false;
  }
}

std::optional<FusedBroadcastLayout> FusedBroadcast(const Shape& from, const Shape& to) {
  if (from.size() > to.size() || from == to || NumElements(to) == 0 || NumElements(from) == 1) {
    return std::nullopt;
  }
  // Per dimension of `to`, outermost first: its extent and the param's
  // stride there (0 where stretched), then merged from the inside out.
  const size_t lead = to.size() - from.size();
  int64_t stride = 1;
  std::vector<std::pair<int64_t, int64_t>> dims(to.size());
  for (size_t d = to.size(); d-- > 0;) {
    const int64_t f = d < lead ? 1 : from[d - lead];
    if (f != 1 && f != to[d]) return std::nullopt;
    dims[d] = {to[d], f == 1 ? 0 : stride};
    stride *= f;
  }
  std::vector<std::pair<int64_t, int64_t>> merged;  // innermost first
  for (size_t d = to.size(); d-- > 0;) {
    const auto [extent, s] = dims[d];
    if (extent == 1) continue;
    if (!merged.empty()) {
      auto& [in_extent, in_stride] = merged.back();
      // Both stretched, or the outer one continues the inner contiguously.
      if ((s == 0 && in_stride == 0) || (s != 0 && in_stride != 0 && s == in_stride * in_extent)) {
        in_extent *= extent;
        continue;
      }
    }
    merged.push_back({extent, s});
  }
  if (merged.size() > static_cast<size_t>(kMaxFusedBroadcastRank)) return std::nullopt;
  FusedBroadcastLayout l;
  l.rank = static_cast<int>(merged.size());
  for (int d = 0; d < l.rank; ++d) {
    l.dim[d] = merged[l.rank - 1 - d].first;
    l.stride[d] = merged[l.rank - 1 - d].second;
  }
  return l;
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
    case DeviceOpKind::kTakeAlongAxis:
    case DeviceOpKind::kExtract:
      return true;
    case DeviceOpKind::kFft:  // the transform's dtypes: CheckFftOp
    case DeviceOpKind::kLinalg:
      return dtype == DType::kFloat32 || dtype == DType::kFloat64 || IsComplex(dtype);
    case DeviceOpKind::kArgsort:
      return true;               // complex: NumPy's lexicographic order
    case DeviceOpKind::kRandom:  // the drawn dtype
      return dtype == DType::kFloat64 || dtype == DType::kFloat32 || dtype == DType::kBool ||
             IsInteger(dtype);
    case DeviceOpKind::kScan:
      return dtype != DType::kBool;  // bool scans as int64
  }
  return false;
}

// By DeviceOpKind, in its order.
constexpr const char* kDeviceOpNames[] = {
    "fill",        "arange",    "elementwise",     "cast",        "matmul",
    "reduce",      "transpose", "fused loop",      "reduce axes", "slice",
    "concatenate", "argsort",   "take_along_axis", "scan",        "extract",
    "fft",         "linalg",    "random",
};
static_assert(std::size(kDeviceOpNames) == kNumDeviceOpKinds);

const char* DeviceOpName(DeviceOpKind kind) {
  const auto i = static_cast<size_t>(kind);
  return i < std::size(kDeviceOpNames) ? kDeviceOpNames[i] : "?";
}

absl::Status CheckFftOp(const FftOp& op) {
  const DeviceArray &in = *op.in, &out = *op.out;
  const bool real_in = op.kind == FftKind::kRealForward;
  const bool real_out = op.kind == FftKind::kRealInverse;
  const DType complex = real_in ? out.dtype : in.dtype;
  const bool f32 = complex == DType::kComplex64;
  const DType real = f32 ? DType::kFloat32 : DType::kFloat64;
  bool ok = IsComplex(complex) && in.dtype == (real_in ? real : complex) &&
            out.dtype == (real_out ? real : complex) && !in.shape.empty() &&
            in.shape.size() == out.shape.size() && in.buffer != out.buffer && op.axes >= 1 &&
            op.axes <= kMaxFftAxes && static_cast<int>(in.shape.size()) >= op.axes &&
            (op.axes == 1 || op.kind != FftKind::kRealInverse);
  if (ok) {
    for (size_t d = 0; d + 1 < in.shape.size(); ++d) ok &= in.shape[d] == out.shape[d];
    for (size_t d = in.shape.size() - op.axes; d + 1 < in.shape.size(); ++d) ok &= in.shape[d] > 0;
    const int64_t n_in = in.shape.back(), n_out = out.shape.back();
    switch (op.kind) {
      case FftKind::kForward:
      case FftKind::kInverse:
        ok &= n_in == n_out && n_in > 0;
        break;
      case FftKind::kRealForward:
        ok &= n_in > 0 && n_out == n_in / 2 + 1;
        break;
      case FftKind::kRealInverse:
        ok &= n_out > 0 && n_in == n_out / 2 + 1;
        break;
    }
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "fft: input and output do not fit the transform (dtypes of one precision, equal rows, "
      "last dimensions n and n, or n and n/2 + 1 for real transforms, 1 to 3 axes, one for "
      "irfft)");
}

int LinalgResults(LinalgKind kind) {
  switch (kind) {
    case LinalgKind::kQr:
    case LinalgKind::kEigh:
    case LinalgKind::kSlogdet:
      return 2;
    case LinalgKind::kSvd:
      return 3;
    default:
      return 1;
  }
}

namespace {

// The results of a decomposition: each its shape and dtype, distinct
// buffers, none a's.
bool DecompositionFits(const LinalgOp& op, int64_t m, int64_t n, const Shape& batch) {
  const DeviceArray* outs[] = {op.out, op.out2, op.out3};
  const int count = LinalgResults(op.kind);
  const DType real = IsComplex(op.a->dtype) ? ComplexComponent(op.a->dtype) : op.a->dtype;
  const int64_t k = std::min(m, n);
  auto shaped = [&](std::initializer_list<int64_t> tail) {
    Shape s = batch;
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  };
  std::vector<std::pair<Shape, DType>> want;
  switch (op.kind) {
    case LinalgKind::kQr:
      want = {{shaped({m, op.full ? m : k}), op.a->dtype},
              {shaped({op.full ? m : k, n}), op.a->dtype}};
      break;
    case LinalgKind::kSvd:
      want = {{shaped({m, op.full ? m : k}), op.a->dtype},
              {shaped({k}), real},
              {shaped({op.full ? n : k, n}), op.a->dtype}};
      break;
    case LinalgKind::kEigh:
      if (m != n) return false;
      want = {{shaped({n}), real}, {shaped({n, n}), op.a->dtype}};
      break;
    case LinalgKind::kSlogdet:
      if (m != n) return false;
      want = {{batch, op.a->dtype}, {batch, real}};
      break;
    default:
      return false;
  }
  for (int r = 0; r < count; ++r) {
    const DeviceArray* o = outs[r];
    if (o == nullptr || o->shape != want[r].first || o->dtype != want[r].second ||
        o->buffer == op.a->buffer) {
      return false;
    }
    for (int q = 0; q < r; ++q) {
      if (outs[q]->buffer == o->buffer) return false;
    }
  }
  return true;
}

}  // namespace

absl::Status CheckLinalgOp(const LinalgOp& op) {
  const DeviceArray &a = *op.a, &out = *op.out;
  const size_t rank = a.shape.size();
  bool ok = rank >= 2 && DefinedFor(DeviceOpKind::kLinalg, a.dtype) && a.buffer != out.buffer;
  if (ok && LinalgResults(op.kind) > 1) {
    ok = DecompositionFits(op, a.shape[rank - 2], a.shape[rank - 1],
                           Shape(a.shape.begin(), a.shape.end() - 2));
  } else if (ok) {
    const int64_t m = a.shape[rank - 2], n = a.shape[rank - 1];
    Shape want(a.shape.begin(), a.shape.end() - 2);  // the batch
    DType dtype = a.dtype;
    ok = op.kind == LinalgKind::kSvdvals || m == n;
    switch (op.kind) {
      case LinalgKind::kCholesky:
      case LinalgKind::kInv:
        want = a.shape;
        break;
      case LinalgKind::kSolve: {
        const DeviceArray* b = op.b;
        ok = ok && b != nullptr && b->dtype == a.dtype && b->shape.size() == rank &&
             std::equal(want.begin(), want.end(), b->shape.begin()) && b->shape[rank - 2] == n &&
             b->buffer != out.buffer;
        if (ok) want = b->shape;
        break;
      }
      case LinalgKind::kDet:
        break;
      case LinalgKind::kEigvalsh:
        want.push_back(n);
        dtype = IsComplex(a.dtype) ? ComplexComponent(a.dtype) : a.dtype;
        break;
      case LinalgKind::kSvdvals:
        want.push_back(std::min(m, n));
        dtype = IsComplex(a.dtype) ? ComplexComponent(a.dtype) : a.dtype;
        break;
      default:
        ok = false;
        break;
    }
    ok = ok && out.shape == want && out.dtype == dtype;
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "linalg: the operands and output do not fit the routine (stacks of float32, float64, "
      "complex64 or complex128 matrices, square but for svdvals)");
}

absl::Status CheckRandomOp(const RandomOp& op) {
  const Shape state_shape{kRandomStateWords};
  const bool uniform = op.distribution == RandomDistribution::kUniform;
  const bool ok = op.state->dtype == DType::kUint64 && op.state->shape == state_shape &&
                  op.next_state->dtype == DType::kUint64 && op.next_state->shape == state_shape &&
                  DefinedFor(DeviceOpKind::kRandom, op.out->dtype) &&
                  (uniform || op.out->dtype == DType::kFloat64 ||
                   (op.out->dtype == DType::kFloat32 && op.low == 0.0 && op.range == 1.0)) &&
                  op.next_state->buffer != op.state->buffer &&
                  op.next_state->buffer != op.out->buffer && op.out->buffer != op.state->buffer;
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "random: needs a uint64 (", kRandomStateWords,
      ",) state and next state and an output of float64, float32, an integer dtype or bool "
      "(normal, exponential: float64, or float32 of low 0 and range 1), three distinct "
      "buffers"));
}

const char* OpLabel(const DeviceOp& op) {
  if (const auto* e = std::get_if<ElementwiseOp>(&op)) return ElementwiseName(e->kind);
  if (std::holds_alternative<ReduceOp>(op)) return "sum";
  if (const auto* r = std::get_if<ReduceAxesOp>(&op)) return ReduceKindName(r->kind);
  if (const auto* c = std::get_if<ScanOp>(&op)) {
    return c->kind == ReduceKind::kProd ? "cumulative_prod" : "cumulative_sum";
  }
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

#include "server/rpc/proto_convert.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/client_text.h"
#include "core/status_macros.h"

namespace resident {
namespace {

absl::StatusOr<Operand> DecodeOperand(const v1::Operand& o) {
  switch (o.source_case()) {
    case v1::Operand::kHandle: {
      ASSIGN_OR_RETURN(HandleId h, DecodeHandle(o.handle(), "handle"));
      return Operand::Handle(h);
    }
    case v1::Operand::kValue:
      return Operand::Value(o.value());
    case v1::Operand::kScalar:
      return absl::InvalidArgumentError("a scalar operand is allowed only in an elementwise op");
    case v1::Operand::SOURCE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("operand names neither a handle nor a value");
}

absl::StatusOr<std::shared_ptr<const Program>> DecodeScope(const v1::Program& wire, int depth,
                                                           int max_depth,
                                                           const std::string& where) {
  if (depth > max_depth) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "loops nest deeper than the limit of ", max_depth));
  }
  auto program = std::make_shared<Program>();
  program->instructions.reserve(wire.instructions_size());
  for (int i = 0; i < wire.instructions_size(); ++i) {
    const v1::Instruction& w = wire.instructions(i);
    // Error context, formatted only on an error (the common case has none).
    auto octx = [&] { return absl::StrCat(where, "instruction ", i, " (", w.op(), ")"); };
    Instruction ins;
    std::optional<ParsedOp> op = ParseOp(w.op());
    if (!op) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "instruction ", i, ": unknown op ", ClientText(w.op())));
    }
    ins.op = op->op;
    ins.elementwise = op->elementwise;
    ins.operands.reserve(static_cast<size_t>(w.operands_size()));
    for (int j = 0; j < w.operands_size(); ++j) {
      if (TakesScalars(ins.op) && w.operands(j).has_scalar()) {
        std::optional<Scalar> v = DecodeScalar(w.operands(j).scalar());
        if (!v) {
          return absl::InvalidArgumentError(
              absl::StrCat(octx(), ": operand ", j, ": scalar has no value"));
        }
        ins.scalars.push_back(ScalarOperand{j, *v});
        continue;
      }
      absl::StatusOr<Operand> o = DecodeOperand(w.operands(j));
      if (!o.ok()) return Annotate(o.status(), absl::StrCat(octx(), ": operand ", j));
      ins.operands.push_back(*o);
    }
    ins.shape.assign(w.shape().begin(), w.shape().end());
    if (w.dtype() != v1::DTYPE_UNSPECIFIED) {
      absl::StatusOr<DType> dt = DecodeDType(w.dtype());
      if (!dt.ok()) return Annotate(dt.status(), octx());
      ins.dtype = *dt;
    }
    if (w.has_fill()) ins.fill = DecodeScalar(w.fill());
    if (w.has_start()) ins.start = DecodeScalar(w.start());
    if (w.has_stop()) ins.stop = DecodeScalar(w.stop());
    if (w.has_step()) ins.step = DecodeScalar(w.step());
    if (w.has_axis()) ins.axis = w.axis();
    ins.axes.assign(w.axes().begin(), w.axes().end());
    ins.has_axes = w.has_axes();
    ins.keepdims = w.keepdims();
    ins.descending = w.descending();
    ins.full = w.full();
    for (const v1::SliceRange& r : w.slices()) {
      SliceRange range;
      if (r.has_start()) range.start = r.start();
      if (r.has_stop()) range.stop = r.stop();
      if (r.has_step()) range.step = r.step();
      ins.slices.push_back(range);
    }
    ins.trip_count = w.trip_count();
    if (ins.op == OpKind::kLoop || ins.op == OpKind::kWhile) {
      ASSIGN_OR_RETURN(
          ins.body, DecodeScope(w.body(), depth + 1, max_depth, absl::StrCat(octx(), ", body ")));
    } else if (w.has_body()) {
      return absl::InvalidArgumentError(absl::StrCat(octx(), ": only loop and while have a body"));
    }
    if (ins.op == OpKind::kWhile) {
      if (!w.has_cond()) {
        return absl::InvalidArgumentError(absl::StrCat(octx(), ": while needs a cond program"));
      }
      ASSIGN_OR_RETURN(
          ins.cond, DecodeScope(w.cond(), depth + 1, max_depth, absl::StrCat(octx(), ", cond ")));
    } else if (w.has_cond()) {
      return absl::InvalidArgumentError(absl::StrCat(octx(), ": only while has a cond"));
    }
    CanonicaliseScalars(ins);
    program->instructions.push_back(std::move(ins));
  }
  for (int y = 0; y < wire.yields_size(); ++y) {
    absl::StatusOr<Operand> o = DecodeOperand(wire.yields(y));
    if (!o.ok()) return Annotate(o.status(), absl::StrCat(where, "yield ", y));
    program->yields.push_back(*o);
  }
  return program;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Program>> DecodeProgram(const v1::Program& program,
                                                             int max_depth) {
  return DecodeScope(program, 0, max_depth, "");
}

absl::StatusOr<std::vector<OutputSpec>> DecodeOutputs(
    const google::protobuf::RepeatedPtrField<v1::Output>& outputs) {
  std::vector<OutputSpec> out;
  out.reserve(outputs.size());
  for (const v1::Output& o : outputs) {
    out.push_back(OutputSpec{o.value(), o.keep(), o.return_data()});
  }
  return out;
}

void EncodeArray(const ArrayDescription& a, v1::ArrayInfo* out) {
  if (!(a.handle == HandleId())) out->set_handle(a.handle.bytes());
  out->set_dtype(EncodeDType(a.dtype));
  for (int64_t d : a.shape) out->add_shape(d);
  out->set_nbytes(a.nbytes);
  if (!a.name.empty()) out->set_name(a.name);
  if (!a.device.empty()) out->set_device(a.device);
}

}  // namespace resident

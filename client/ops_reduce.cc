// Reductions and shaping ops of the C++ client: each records one
// instruction (see client.h).
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "client/client.h"
#include "client/client_core.h"
#include "client/program_builder.h"
#include "core/proto/wire.h"

namespace resident::client {
namespace {

void SetAxis(v1::Instruction& ins, const AxisArg& axis) {
  if (axis.is_tuple()) {
    ins.set_has_axes(true);
    for (int64_t d : axis.axes()) ins.add_axes(d);
  } else if (axis.axis()) {
    ins.set_has_axis(true);
    ins.set_axis(*axis.axis());
  }
}

Array Reduction(const char* op, const Array& a, const AxisArg& axis, bool keepdims) {
  auto core = NodeOf(a) ? NodeOf(a)->core : nullptr;
  if (core == nullptr) return Array();
  auto n = core->NewOp(op, {NodeOf(a)});
  SetAxis(n->ins, axis);
  n->ins.set_keepdims(keepdims);
  return core->Finish(std::move(n));
}

Array Joined(const char* op, const std::vector<Array>& arrays, std::optional<int64_t> axis) {
  std::shared_ptr<ClientCore> core;
  std::vector<std::shared_ptr<Node>> inputs;
  for (const Array& a : arrays) {
    if (!NodeOf(a)) return Array();
    core = NodeOf(a)->core;
    inputs.push_back(NodeOf(a));
  }
  if (core == nullptr) return Array();  // no arrays: nothing to send
  auto n = core->NewOp(op, std::move(inputs));
  if (axis) {
    n->ins.set_has_axis(true);
    n->ins.set_axis(*axis);
  }
  return core->Finish(std::move(n));
}

}  // namespace

Array sum(const Array& a, const AxisArg& axis, bool keepdims) {
  return Reduction("sum", a, axis, keepdims);
}
Array prod(const Array& a, const AxisArg& axis, bool keepdims) {
  return Reduction("prod", a, axis, keepdims);
}
Array mean(const Array& a, const AxisArg& axis, bool keepdims) {
  return Reduction("mean", a, axis, keepdims);
}
Array max(const Array& a, const AxisArg& axis, bool keepdims) {
  return Reduction("max", a, axis, keepdims);
}
Array min(const Array& a, const AxisArg& axis, bool keepdims) {
  return Reduction("min", a, axis, keepdims);
}
Array any(const Array& a, const AxisArg& axis, bool keepdims) {
  return Reduction("any", a, axis, keepdims);
}
Array all(const Array& a, const AxisArg& axis, bool keepdims) {
  return Reduction("all", a, axis, keepdims);
}
Array argmax(const Array& a, std::optional<int64_t> axis, bool keepdims) {
  return Reduction("argmax", a, AxisArg(axis), keepdims);
}
Array argmin(const Array& a, std::optional<int64_t> axis, bool keepdims) {
  return Reduction("argmin", a, AxisArg(axis), keepdims);
}

Array slice(const Array& a, const std::vector<Slice>& slices) {
  auto core = NodeOf(a) ? NodeOf(a)->core : nullptr;
  if (core == nullptr) return Array();
  auto n = core->NewOp("slice", {NodeOf(a)});
  for (const Slice& s : slices) {
    v1::SliceRange* r = n->ins.add_slices();
    if (s.start) {
      r->set_has_start(true);
      r->set_start(*s.start);
    }
    if (s.stop) {
      r->set_has_stop(true);
      r->set_stop(*s.stop);
    }
    if (s.step) {
      r->set_has_step(true);
      r->set_step(*s.step);
    }
  }
  return core->Finish(std::move(n));
}

Array concatenate(const std::vector<Array>& arrays, std::optional<int64_t> axis) {
  return Joined("concatenate", arrays, axis);
}
Array stack(const std::vector<Array>& arrays, int64_t axis) {
  return Joined("stack", arrays, axis);
}

Array broadcast_to(const Array& a, const Shape& shape) {
  auto core = NodeOf(a) ? NodeOf(a)->core : nullptr;
  if (core == nullptr) return Array();
  auto n = core->NewOp("broadcast_to", {NodeOf(a)});
  for (int64_t d : shape) n->ins.add_shape(d);
  return core->Finish(std::move(n));
}

Array squeeze(const Array& a, const AxisArg& axis) { return Reduction("squeeze", a, axis, false); }

namespace {
// One op along an optional axis over `operands` (which share a client).
Array AlongAxis(const char* op, std::vector<const Array*> operands, std::optional<int64_t> axis,
                bool descending, std::optional<int64_t> length = std::nullopt) {
  auto core = NodeOf(*operands[0]) ? NodeOf(*operands[0])->core : nullptr;
  if (core == nullptr) return Array();
  std::vector<std::shared_ptr<Node>> nodes;
  for (const Array* a : operands) nodes.push_back(NodeOf(*a));
  auto n = core->NewOp(op, std::move(nodes));
  if (axis) {
    n->ins.set_has_axis(true);
    n->ins.set_axis(*axis);
  }
  n->ins.set_descending(descending);
  if (length) n->ins.add_shape(*length);
  return core->Finish(std::move(n));
}
// One instruction of `count` results, each an Array of its own.
std::vector<Array> Results(const char* op, const Array& a, int count,
                           const std::function<void(v1::Instruction&)>& set) {
  auto core = NodeOf(a) ? NodeOf(a)->core : nullptr;
  if (core == nullptr) return std::vector<Array>(static_cast<size_t>(count));
  auto n = core->NewOp(op, {NodeOf(a)});
  set(n->ins);
  n->num_outputs = count;
  std::vector<Array> outs;
  std::vector<std::shared_ptr<Node>> targets;
  for (int i = 0; i < count; ++i) {
    auto o = std::make_shared<Node>();
    o->core = core;
    o->kind = Node::Kind::kLoopOutput;
    o->inputs = {n};
    o->index = i;
    targets.push_back(o);
    n->outputs.push_back(o);
    outs.push_back(MakeArray(std::move(o)));
  }
  if (!core->options.lazy) core->Flush(targets).IgnoreError();  // the error resurfaces on use
  return outs;
}
}  // namespace

std::vector<Array> qr(const Array& a, bool complete) {
  return Results("qr", a, 2, [&](v1::Instruction& ins) { ins.set_full(complete); });
}
std::vector<Array> svd(const Array& a, bool full_matrices) {
  return Results("svd", a, 3, [&](v1::Instruction& ins) { ins.set_full(full_matrices); });
}
std::vector<Array> eigh(const Array& a) {
  return Results("eigh", a, 2, [](v1::Instruction&) {});
}
std::vector<Array> slogdet(const Array& a) {
  return Results("slogdet", a, 2, [](v1::Instruction&) {});
}

std::vector<Array> random(const Array& state, DType dtype, const Shape& shape, double low,
                          double range) {
  return Results("random", state, 2, [&](v1::Instruction& ins) {
    ins.set_dtype(EncodeDType(dtype));
    for (int64_t d : shape) ins.add_shape(d);
    ins.mutable_start()->set_float_value(low);
    ins.mutable_stop()->set_float_value(range);
  });
}
std::vector<Array> random_integers(const Array& state, DType dtype, const Shape& shape,
                                   uint64_t off, uint64_t rng) {
  return Results("random", state, 2, [&](v1::Instruction& ins) {
    ins.set_dtype(EncodeDType(dtype));
    for (int64_t d : shape) ins.add_shape(d);
    ins.mutable_start()->set_int_value(static_cast<int64_t>(off));
    ins.mutable_stop()->set_int_value(static_cast<int64_t>(rng));
  });
}
std::vector<Array> standard_normal(const Array& state, DType dtype, const Shape& shape) {
  return Results("normal", state, 2, [&](v1::Instruction& ins) {
    ins.set_dtype(EncodeDType(dtype));
    for (int64_t d : shape) ins.add_shape(d);
  });
}
std::vector<Array> normal(const Array& state, const Shape& shape, double loc, double scale) {
  return Results("normal", state, 2, [&](v1::Instruction& ins) {
    ins.set_dtype(EncodeDType(DType::kFloat64));
    for (int64_t d : shape) ins.add_shape(d);
    ins.mutable_start()->set_float_value(loc);
    ins.mutable_stop()->set_float_value(scale);
  });
}
std::vector<Array> standard_exponential(const Array& state, DType dtype, const Shape& shape) {
  return Results("exponential", state, 2, [&](v1::Instruction& ins) {
    ins.set_dtype(EncodeDType(dtype));
    for (int64_t d : shape) ins.add_shape(d);
  });
}
std::vector<Array> exponential(const Array& state, const Shape& shape, double scale) {
  return Results("exponential", state, 2, [&](v1::Instruction& ins) {
    ins.set_dtype(EncodeDType(DType::kFloat64));
    for (int64_t d : shape) ins.add_shape(d);
    ins.mutable_stop()->set_float_value(scale);
  });
}

Array argsort(const Array& a, int64_t axis, bool descending) {
  return AlongAxis("argsort", {&a}, axis, descending);
}
Array sort(const Array& a, int64_t axis, bool descending) {
  return AlongAxis("sort", {&a}, axis, descending);
}
Array take_along_axis(const Array& a, const Array& indices, int64_t axis) {
  return AlongAxis("take_along_axis", {&a, &indices}, axis, false);
}
Array cumsum(const Array& a, std::optional<int64_t> axis) {
  return AlongAxis("cumulative_sum", {&a}, axis, false);
}
Array cumprod(const Array& a, std::optional<int64_t> axis) {
  return AlongAxis("cumulative_prod", {&a}, axis, false);
}
namespace {
Array Select(const char* op, std::vector<const Array*> operands, int64_t count) {
  auto core = NodeOf(*operands[0]) ? NodeOf(*operands[0])->core : nullptr;
  if (core == nullptr) return Array();
  std::vector<std::shared_ptr<Node>> nodes;
  for (const Array* a : operands) nodes.push_back(NodeOf(*a));
  auto n = core->NewOp(op, std::move(nodes));
  n->ins.add_shape(count);
  return core->Finish(std::move(n));
}
}  // namespace

Array flatnonzero(const Array& a, int64_t count) { return Select("flatnonzero", {&a}, count); }
Array fft(const Array& a, int64_t axis) { return AlongAxis("fft", {&a}, axis, false); }
Array ifft(const Array& a, int64_t axis) { return AlongAxis("ifft", {&a}, axis, false); }
Array rfft(const Array& a, int64_t axis) { return AlongAxis("rfft", {&a}, axis, false); }
namespace {
// One transform over `axes` (1 to 3).
Array OverAxes(const char* op, const Array& a, const std::vector<int64_t>& axes) {
  auto core = NodeOf(a) ? NodeOf(a)->core : nullptr;
  if (core == nullptr) return Array();
  auto n = core->NewOp(op, {NodeOf(a)});
  n->ins.set_has_axes(true);
  for (int64_t ax : axes) n->ins.add_axes(ax);
  return core->Finish(std::move(n));
}
}  // namespace
Array fftn(const Array& a, const std::vector<int64_t>& axes) { return OverAxes("fft", a, axes); }
Array ifftn(const Array& a, const std::vector<int64_t>& axes) { return OverAxes("ifft", a, axes); }
Array rfftn(const Array& a, const std::vector<int64_t>& axes) { return OverAxes("rfft", a, axes); }
Array cholesky(const Array& a) { return AlongAxis("cholesky", {&a}, std::nullopt, false); }
Array solve(const Array& a, const Array& b) {
  return AlongAxis("solve", {&a, &b}, std::nullopt, false);
}
Array inv(const Array& a) { return AlongAxis("inv", {&a}, std::nullopt, false); }
Array det(const Array& a) { return AlongAxis("det", {&a}, std::nullopt, false); }
Array eigvalsh(const Array& a) { return AlongAxis("eigvalsh", {&a}, std::nullopt, false); }
Array svdvals(const Array& a) { return AlongAxis("svdvals", {&a}, std::nullopt, false); }
Array irfft(const Array& a, int64_t n, int64_t axis) {
  return AlongAxis("irfft", {&a}, axis, false, n);
}
Array extract(const Array& condition, const Array& arr, int64_t count) {
  return Select("extract", {&condition, &arr}, count);
}
Array expand_dims(const Array& a, const AxisArg& axis) {
  return Reduction("expand_dims", a, axis, false);
}

}  // namespace resident::client

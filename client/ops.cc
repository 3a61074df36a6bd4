// NumPy-like functions: each records one instruction (or runs it at once in
// eager mode).
#include <utility>

#include "absl/strings/str_cat.h"

#include "client/client.h"
#include "client/client_core.h"
#include "client/program_builder.h"

namespace resident::client {

namespace {

std::shared_ptr<ClientCore> CoreOf(const Array& a) { return NodeOf(a) ? NodeOf(a)->core : nullptr; }

Array Creation(Client& c, const char* op, const Shape& shape, std::optional<DType> dtype) {
  auto n = c.core()->NewOp(op, {});
  for (int64_t d : shape) n->ins.add_shape(d);
  if (dtype) n->ins.set_dtype(EncodeDType(*dtype));
  return c.core()->Finish(std::move(n));
}

Array BinaryOp(const char* op, const Array& a, const Array& b) {
  auto core = CoreOf(a) ? CoreOf(a) : CoreOf(b);
  if (core == nullptr || !NodeOf(a) || !NodeOf(b)) return Array();
  return core->Finish(core->NewOp(op, {NodeOf(a), NodeOf(b)}));
}

}  // namespace

Array ones(Client& c, const Shape& shape, DType dtype) { return Creation(c, "ones", shape, dtype); }
Array zeros(Client& c, const Shape& shape, DType dtype) {
  return Creation(c, "zeros", shape, dtype);
}
Array full(Client& c, const Shape& shape, Scalar value, std::optional<DType> dtype) {
  auto n = c.core()->NewOp("full", {});
  for (int64_t d : shape) n->ins.add_shape(d);
  if (dtype) n->ins.set_dtype(EncodeDType(*dtype));
  EncodeScalar(value, n->ins.mutable_fill());
  return c.core()->Finish(std::move(n));
}
Array arange(Client& c, Scalar start, Scalar stop, Scalar step, std::optional<DType> dtype) {
  auto n = c.core()->NewOp("arange", {});
  EncodeScalar(start, n->ins.mutable_start());
  EncodeScalar(stop, n->ins.mutable_stop());
  EncodeScalar(step, n->ins.mutable_step());
  if (dtype) n->ins.set_dtype(EncodeDType(*dtype));
  return c.core()->Finish(std::move(n));
}
Array arange(Client& c, int64_t stop) { return arange(c, Scalar::Int(0), Scalar::Int(stop)); }

Array Elementwise(const std::string& name, const std::vector<ArrayOrScalar>& operands) {
  std::shared_ptr<ClientCore> core;
  for (const ArrayOrScalar& o : operands) {
    if (o.array() != nullptr && CoreOf(*o.array()) != nullptr) {
      core = CoreOf(*o.array());
      break;
    }
  }
  if (core == nullptr) return Array();
  std::vector<std::shared_ptr<Node>> inputs;
  std::vector<std::pair<int, v1::Scalar>> scalars;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (const Array* a = operands[i].array()) {
      if (!NodeOf(*a)) return Array();
      inputs.push_back(NodeOf(*a));
    } else {
      v1::Scalar s;
      EncodeScalar(*operands[i].scalar(), &s);
      scalars.emplace_back(static_cast<int>(i), std::move(s));
    }
  }
  auto n = core->NewOp(name.c_str(), std::move(inputs));
  n->scalars = std::move(scalars);
  return core->Finish(std::move(n));
}

// The named functions, generated from the op table.
#define RESIDENT_CLIENT_EW_DEF_1(name) \
  Array name(const Array& a) { return Elementwise(#name, {a}); }
#define RESIDENT_CLIENT_EW_DEF_2(name) \
  Array name(const ArrayOrScalar& a, const ArrayOrScalar& b) { return Elementwise(#name, {a, b}); }
#define RESIDENT_CLIENT_EW_DEF(kind, name, arity, rule) RESIDENT_CLIENT_EW_DEF_##arity(name)
RESIDENT_ELEMENTWISE_OPS(RESIDENT_CLIENT_EW_DEF)
#undef RESIDENT_CLIENT_EW_DEF
#undef RESIDENT_CLIENT_EW_DEF_1
#undef RESIDENT_CLIENT_EW_DEF_2
Array dot(const Array& a, const Array& b) { return BinaryOp("dot", a, b); }
Array matmul(const Array& a, const Array& b) { return BinaryOp("matmul", a, b); }

Array reshape(const Array& a, const Shape& shape) {
  auto core = CoreOf(a);
  if (core == nullptr) return Array();
  auto n = core->NewOp("reshape", {NodeOf(a)});
  for (int64_t d : shape) n->ins.add_shape(d);
  return core->Finish(std::move(n));
}

Array transpose(const Array& a, const std::vector<int64_t>& axes) {
  auto core = CoreOf(a);
  if (core == nullptr) return Array();
  auto n = core->NewOp("transpose", {NodeOf(a)});
  for (int64_t d : axes) n->ins.add_axes(d);
  return core->Finish(std::move(n));
}

Array astype(const Array& a, DType dtype) {
  auto core = CoreOf(a);
  if (core == nullptr) return Array();
  auto n = core->NewOp("astype", {NodeOf(a)});
  n->ins.set_dtype(EncodeDType(dtype));
  return core->Finish(std::move(n));
}

std::vector<Array> Client::Loop(
    int64_t n, const std::vector<Array>& carried,
    const std::function<std::vector<Array>(const std::vector<Array>&)>& body) {
  // The body is recorded once against parameter placeholders, then sent as
  // the loop's body program: the server runs all n iterations.
  auto tag = std::make_shared<int>(0);
  std::vector<Array> params;
  for (size_t i = 0; i < carried.size(); ++i) {
    auto p = std::make_shared<Node>();
    p->core = core_;
    p->kind = Node::Kind::kParam;
    p->scope = tag.get();
    p->index = static_cast<int>(i);
    params.push_back(MakeArray(std::move(p)));
  }
  std::vector<Array> next = body(params);
  auto loop = core_->NewOp("loop", {});
  loop->ins.set_trip_count(n);
  loop->num_outputs = static_cast<int>(carried.size());
  std::vector<std::shared_ptr<Node>> yields;
  yields.reserve(next.size());
  for (const Array& a : next) yields.push_back(NodeOf(a));
  ScopeBuilder builder(tag.get(), static_cast<int>(carried.size()));
  absl::Status built = builder.Build(yields, loop->ins.mutable_body());
  for (const auto& y : yields) {
    absl::StatusOr<v1::Operand> o =
        y ? builder.OperandOf(y.get()) : absl::InvalidArgumentError("empty Array");
    if (!o.ok()) {
      built.Update(o.status());
      break;
    }
    *loop->ins.mutable_body()->add_yields() = *o;
  }
  if (next.size() != carried.size()) {
    built.Update(absl::InvalidArgumentError(absl::StrCat(
        "loop body returned ", next.size(), " values for ", carried.size(), " carried values")));
  }
  loop->error = built;
  for (const Array& a : carried) loop->inputs.push_back(NodeOf(a));
  for (const auto& inv : builder.invariants()) loop->inputs.push_back(inv);
  std::vector<Array> outputs;
  for (size_t i = 0; i < carried.size(); ++i) {
    auto o = std::make_shared<Node>();
    o->core = core_;
    o->kind = Node::Kind::kLoopOutput;
    o->inputs = {loop};
    o->index = static_cast<int>(i);
    outputs.push_back(MakeArray(std::move(o)));
  }
  if (!core_->options.lazy && !outputs.empty()) {
    std::vector<std::shared_ptr<Node>> targets;
    targets.reserve(outputs.size());
    for (const Array& a : outputs) targets.push_back(NodeOf(a));
    core_->Flush(targets).IgnoreError();
  }
  return outputs;
}

}  // namespace resident::client

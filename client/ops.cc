// NumPy-like functions: each records one instruction (or runs it at once in
// eager mode).
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

#include "client/client.h"
#include "client/client_core.h"
#include "client/program_builder.h"
#include "core/elementwise_kind.h"

namespace resident::client {

namespace {

ClientCore* CoreOf(const Array& a) { return NodeOf(a) ? NodeOf(a)->core.get() : nullptr; }

Array Creation(Client& c, const char* op, const Shape& shape, std::optional<DType> dtype) {
  auto n = c.core()->NewOp(op, {});
  for (int64_t d : shape) n->ins.add_shape(d);
  if (dtype) n->ins.set_dtype(EncodeDType(*dtype));
  return c.core()->Finish(std::move(n));
}

Array BinaryOp(const char* op, const Array& a, const Array& b) {
  ClientCore* core = CoreOf(a) ? CoreOf(a) : CoreOf(b);
  if (core == nullptr || !NodeOf(a) || !NodeOf(b)) return Array();
  return core->Finish(core->NewOp(op, {NodeOf(a), NodeOf(b)}));
}

// Whether `n` is a chain of `op` on `side` (a plain op counts as its first
// step) that one more application with `fixed` as the other operand extends.
bool Extends(const Node& n, const ClientCore& core, std::string_view op, ChainSide side,
             const Node* fixed) {
  if (n.kind != Node::Kind::kOp || n.core.get() != &core || !n.error.ok() || n.ins.op() != op) {
    return false;
  }
  if (n.chain > 0) {
    return n.chain_side == side && (side == ChainSide::kBoth || n.inputs[1].get() == fixed);
  }
  if (!n.plain_elementwise || n.inputs.size() != 2) return false;
  switch (side) {
    case ChainSide::kBoth:
      return n.inputs[0] == n.inputs[1];
    case ChainSide::kFirst:
      return n.inputs[1].get() == fixed;
    case ChainSide::kSecond:
      return n.inputs[0].get() == fixed;
  }
  return false;
}

// `op(a, b)` as one more step of a chain a or b is (see Node::chain), or
// null when it is none. Only in lazy mode: eager nodes run at once.
std::shared_ptr<Node> ExtendChain(ClientCore& core, const ElementwiseInfo& e,
                                  const std::shared_ptr<Node>& a, const std::shared_ptr<Node>& b) {
  if (!core.options.lazy || !a || !b || e.arity != 2) return nullptr;
  const std::string_view op = e.name;
  const std::shared_ptr<Node>* carried = nullptr;
  const std::shared_ptr<Node>* fixed = nullptr;
  ChainSide side = ChainSide::kBoth;
  if (a == b) {
    if (Extends(*a, core, op, ChainSide::kBoth, nullptr)) carried = &a;
  } else if (Extends(*a, core, op, ChainSide::kFirst, b.get())) {
    carried = &a, fixed = &b, side = ChainSide::kFirst;
  } else if (Extends(*b, core, op, ChainSide::kSecond, a.get())) {
    carried = &b, fixed = &a, side = ChainSide::kSecond;
  }
  if (carried == nullptr) return nullptr;
  // The chain's base is the value its first step read: the plain op itself
  // (kept outside the loop, see ScopeBuilder::FindRuns) or the chain's base.
  const Node& c = **carried;
  std::vector<std::shared_ptr<Node>> inputs{c.chain > 0 ? c.inputs[0] : *carried};
  if (fixed != nullptr) inputs.push_back(*fixed);
  auto n = core.NewOp(e.name, std::move(inputs));
  n->chain = c.chain + 1;
  n->chain_side = side;
  return n;
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

namespace {

// Elementwise's body, over a span so that the named functions pass their
// operands without building a vector.
// `info` is the table's row for `name` (nullptr for where/clip or an unknown
// name, which the server refuses).
Array ElementwiseOf(const std::string& name, const ElementwiseInfo* info,
                    absl::Span<const ArrayOrScalar> operands) {
  ClientCore* core = nullptr;
  for (const ArrayOrScalar& o : operands) {
    if (o.array() != nullptr && CoreOf(*o.array()) != nullptr) {
      core = CoreOf(*o.array());
      break;
    }
  }
  if (core == nullptr) return Array();
  // The table's own name is sent (an alias resolves to it), so chains of
  // `mod` and `remainder` compare equal.
  if (info != nullptr && operands.size() == 2 && operands[0].array() != nullptr &&
      operands[1].array() != nullptr) {
    if (auto chain =
            ExtendChain(*core, *info, NodeOf(*operands[0].array()), NodeOf(*operands[1].array()))) {
      return core->Finish(std::move(chain));
    }
  }
  std::vector<std::shared_ptr<Node>> inputs;
  inputs.reserve(operands.size());
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
  auto n = core->NewOp(info != nullptr ? info->name : name.c_str(), std::move(inputs));
  n->plain_elementwise = scalars.empty();
  n->scalars = std::move(scalars);
  return core->Finish(std::move(n));
}

}  // namespace

Array Elementwise(const std::string& name, const std::vector<ArrayOrScalar>& operands) {
  return ElementwiseOf(name, FindElementwise(name), operands);
}

// The named functions, generated from the op table.
#define RESIDENT_CLIENT_EW_DEF_1(name)                                  \
  Array name(const Array& a) {                                          \
    static const std::string kName = #name;                             \
    static const ElementwiseInfo* const kInfo = FindElementwise(kName); \
    const ArrayOrScalar operands[] = {a};                               \
    return ElementwiseOf(kName, kInfo, operands);                       \
  }
#define RESIDENT_CLIENT_EW_DEF_2(name)                                  \
  Array name(const ArrayOrScalar& a, const ArrayOrScalar& b) {          \
    static const std::string kName = #name;                             \
    static const ElementwiseInfo* const kInfo = FindElementwise(kName); \
    const ArrayOrScalar operands[] = {a, b};                            \
    return ElementwiseOf(kName, kInfo, operands);                       \
  }
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

namespace {

// The parameter placeholders of a body scope tagged `tag`, one per carried value.
std::vector<Array> ScopeParams(const std::shared_ptr<ClientCore>& core, const void* tag,
                               size_t count) {
  std::vector<Array> params;
  for (size_t i = 0; i < count; ++i) {
    auto p = std::make_shared<Node>();
    p->core = core;
    p->kind = Node::Kind::kParam;
    p->scope = tag;
    p->index = static_cast<int>(i);
    params.push_back(MakeArray(std::move(p)));
  }
  return params;
}

// Emits `targets` as the body program `out` (yields = targets) of the scope
// `tag`; the first error, if any.
absl::Status BuildScope(ScopeBuilder& builder, const std::vector<std::shared_ptr<Node>>& targets,
                        v1::Program* out) {
  absl::Status built = builder.Build(targets, out);
  for (const auto& y : targets) {
    absl::StatusOr<v1::Operand> o =
        y ? builder.OperandOf(y.get()) : absl::InvalidArgumentError("empty Array");
    if (!o.ok()) {
      built.Update(o.status());
      break;
    }
    *out->add_yields() = *o;
  }
  return built;
}

std::vector<std::shared_ptr<Node>> NodesOf(const std::vector<Array>& arrays) {
  std::vector<std::shared_ptr<Node>> nodes;
  nodes.reserve(arrays.size());
  for (const Array& a : arrays) nodes.push_back(NodeOf(a));
  return nodes;
}

}  // namespace

std::vector<Array> Client::LoopOutputs(const std::shared_ptr<Node>& loop, size_t count) {
  std::vector<Array> outputs;
  for (size_t i = 0; i < count; ++i) {
    auto o = std::make_shared<Node>();
    o->core = core_;
    o->kind = Node::Kind::kLoopOutput;
    o->inputs = {loop};
    o->index = static_cast<int>(i);
    loop->outputs.push_back(o);
    outputs.push_back(MakeArray(std::move(o)));
  }
  if (!core_->options.lazy && !outputs.empty()) core_->Flush(NodesOf(outputs)).IgnoreError();
  return outputs;
}

std::vector<Array> Client::Loop(
    int64_t n, const std::vector<Array>& carried,
    const std::function<std::vector<Array>(const std::vector<Array>&)>& body) {
  // The body is recorded once against parameter placeholders, then sent as
  // the loop's body program: the server runs all n iterations.
  auto tag = std::make_shared<int>(0);
  std::vector<Array> next = body(ScopeParams(core_, tag.get(), carried.size()));
  auto loop = core_->NewOp("loop", {});
  loop->ins.set_trip_count(n);
  loop->num_outputs = static_cast<int>(carried.size());
  ScopeBuilder builder(tag.get(), static_cast<int>(carried.size()));
  absl::Status built = BuildScope(builder, NodesOf(next), loop->ins.mutable_body());
  if (next.size() != carried.size()) {
    built.Update(absl::InvalidArgumentError(absl::StrCat(
        "loop body returned ", next.size(), " values for ", carried.size(), " carried values")));
  }
  loop->error = built;
  for (const Array& a : carried) loop->inputs.push_back(NodeOf(a));
  for (const auto& inv : builder.invariants()) loop->inputs.push_back(inv);
  return LoopOutputs(loop, carried.size());
}

Client::WhileResult Client::While(
    const std::function<Array(const std::vector<Array>&)>& cond,
    const std::function<std::vector<Array>(const std::vector<Array>&)>& body,
    const std::vector<Array>& init, int64_t max_trips) {
  auto tag = std::make_shared<int>(0);
  const std::vector<Array> params = ScopeParams(core_, tag.get(), init.size());
  const std::vector<std::shared_ptr<Node>> test = {NodeOf(cond(params))};
  const std::vector<std::shared_ptr<Node>> next = NodesOf(body(params));
  auto loop = core_->NewOp("while", {});
  loop->ins.set_trip_count(max_trips);
  loop->num_outputs = static_cast<int>(init.size()) + 2;
  // Both scopes take every outer array either reads, numbered once.
  ScopeBuilder scout(tag.get(), static_cast<int>(init.size()));
  std::vector<std::shared_ptr<Node>> all = test;
  all.insert(all.end(), next.begin(), next.end());
  v1::Program scratch;
  absl::Status built = BuildScope(scout, all, &scratch);
  ScopeBuilder for_cond(tag.get(), static_cast<int>(init.size()));
  for_cond.PresetInvariants(scout.invariants());
  built.Update(BuildScope(for_cond, test, loop->ins.mutable_cond()));
  ScopeBuilder for_body(tag.get(), static_cast<int>(init.size()));
  for_body.PresetInvariants(scout.invariants());
  built.Update(BuildScope(for_body, next, loop->ins.mutable_body()));
  if (next.size() != init.size()) {
    built.Update(absl::InvalidArgumentError(absl::StrCat(
        "while body returned ", next.size(), " values for ", init.size(), " carried values")));
  }
  if (init.empty()) built.Update(absl::InvalidArgumentError("while needs a carried value"));
  loop->error = built;
  for (const Array& a : init) loop->inputs.push_back(NodeOf(a));
  for (const auto& inv : scout.invariants()) loop->inputs.push_back(inv);
  std::vector<Array> outs = LoopOutputs(loop, init.size() + 2);
  WhileResult r;
  r.capped = outs.back();
  outs.pop_back();
  r.trips = outs.back();
  outs.pop_back();
  r.carried = std::move(outs);
  return r;
}

}  // namespace resident::client

#include "client/program_builder.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/elementwise_kind.h"
#include "core/status_macros.h"

namespace resident::client {

bool ScopeBuilder::Internal(const Node* root) {
  // Top level: every pending node. Body: pending nodes that depend on one
  // of this body's parameters; the rest is computed outside, once.
  if (scope_ == nullptr) {
    return root->kind == Node::Kind::kOp || root->kind == Node::Kind::kLoopOutput;
  }
  if (auto it = internal_.find(root); it != internal_.end()) return it->second;
  // Iterative post-order so long chains do not overflow the stack.
  std::vector<std::pair<const Node*, size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    auto& [n, next] = stack.back();
    if (internal_.contains(n)) {
      stack.pop_back();
      continue;
    }
    if (n->kind == Node::Kind::kParam || n->kind == Node::Kind::kMaterialized) {
      internal_[n] = n->kind == Node::Kind::kParam && n->scope == scope_;
      stack.pop_back();
      continue;
    }
    if (next < n->inputs.size()) {
      const Node* child = n->inputs[next++].get();
      if (!internal_.contains(child)) stack.emplace_back(child, 0);
      continue;
    }
    bool dep = false;
    for (const auto& in : n->inputs) dep |= internal_.at(in.get());
    internal_[n] = dep;
    stack.pop_back();
  }
  return internal_.at(root);
}

absl::Status ScopeBuilder::Build(const std::vector<std::shared_ptr<Node>>& targets,
                                 v1::Program* out) {
  // 1. Order the internal pending nodes; collect invariants.
  absl::flat_hash_map<const Node*, bool> visited;
  for (const auto& target : targets) {
    std::vector<std::pair<std::shared_ptr<Node>, size_t>> stack;
    auto visit = [&](const std::shared_ptr<Node>& n) {
      if (visited.contains(n.get())) return;
      const bool param_here = n->kind == Node::Kind::kParam && n->scope == scope_;
      if (n->kind == Node::Kind::kMaterialized || param_here) {
        visited[n.get()] = true;
        return;
      }
      if (n->kind == Node::Kind::kParam && scope_ == nullptr) {
        visited[n.get()] = true;  // reported below
        return;
      }
      if (!Internal(n.get())) {
        visited[n.get()] = true;
        if (!invariant_index_.contains(n.get())) {  // else preset
          invariant_index_[n.get()] = static_cast<int>(invariants_.size());
          invariants_.push_back(n);
        }
        return;
      }
      stack.emplace_back(n, 0);
      visited[n.get()] = false;
    };
    visit(target);
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs.size()) {
        std::shared_ptr<Node> child = n->inputs[next++];
        visit(child);
        continue;
      }
      visited[n.get()] = true;
      order_.push_back(n);
      stack.pop_back();
    }
  }
  // The other outputs of each op of several outputs emitted here, while
  // something holds them: values of the same instruction, so they are kept
  // too (else a held output stays pending and a later use runs the op again).
  const size_t emitted = order_.size();
  for (size_t i = 0; i < emitted; ++i) {
    for (const std::weak_ptr<Node>& w : order_[i]->outputs) {
      std::shared_ptr<Node> o = w.lock();
      if (o && o->kind == Node::Kind::kLoopOutput && !visited.contains(o.get())) {
        visited[o.get()] = true;
        order_.push_back(std::move(o));
      }
    }
  }
  for (const auto& n : order_) {
    if (!n->error.ok()) return n->error;
  }
  // 2. Chains of one op on one value become loops (top level only: a body
  // is a loop already).
  const std::vector<ChainRun> runs =
      scope_ == nullptr ? FindRuns(targets) : std::vector<ChainRun>{};
  // 3. Number values: parameters first, then each instruction's outputs; a
  // folded run has one, its last node's.
  uint32_t next_value = static_cast<uint32_t>(num_carried_ + invariants_.size());
  size_t run = 0;
  for (size_t i = 0; i < order_.size(); ++i) {
    const auto& n = order_[i];
    if (run < runs.size() && i >= runs[run].begin) {
      if (i < runs[run].end) continue;  // read only inside the loop
      ++run;
    }
    if (n->kind == Node::Kind::kLoopOutput) {
      values_[n.get()] = values_.at(n->inputs[0].get()) + static_cast<uint32_t>(n->index);
      continue;
    }
    // An unrolled chain's steps each have a value; its last is the node's.
    const uint32_t steps = n->chain > 0 && !AsLoop(*n) ? static_cast<uint32_t>(n->chain) : 1;
    values_[n.get()] = next_value + steps - 1;  // a loop's: its first output's
    next_value += steps - 1 + static_cast<uint32_t>(n->num_outputs);
  }
  // 4. Emit instructions.
  run = 0;
  for (size_t i = 0; i < order_.size(); ++i) {
    const auto& n = order_[i];
    if (run < runs.size() && i == runs[run].begin) {
      const ChainRun& r = runs[run++];
      const Node& first = *order_[r.begin];
      RETURN_IF_ERROR(EmitLoop(first.ins.op(),
                               first.inputs[r.side == ChainSide::kSecond ? 1 : 0].get(),
                               first.inputs[r.side == ChainSide::kFirst ? 1 : 0].get(), r.side,
                               static_cast<int64_t>(r.end - r.begin + 1), out->add_instructions()));
      i = r.end;
      continue;
    }
    if (n->kind == Node::Kind::kLoopOutput) continue;
    if (n->chain > 0) {
      RETURN_IF_ERROR(EmitChain(*n, out));
      continue;
    }
    v1::Instruction* ins = out->add_instructions();
    *ins = n->ins;
    size_t next_scalar = 0;
    for (const auto& in : n->inputs) {
      while (next_scalar < n->scalars.size() &&
             n->scalars[next_scalar].first == ins->operands_size()) {
        *ins->add_operands()->mutable_scalar() = n->scalars[next_scalar++].second;
      }
      ASSIGN_OR_RETURN(*ins->add_operands(), OperandOf(in.get()));
    }
    for (; next_scalar < n->scalars.size(); ++next_scalar) {
      *ins->add_operands()->mutable_scalar() = n->scalars[next_scalar].second;
    }
  }
  return absl::OkStatus();
}

std::vector<ChainRun> ScopeBuilder::FindRuns(const std::vector<std::shared_ptr<Node>>& targets) {
  // Ids for core/chain_runs.h: a pending node's is its place in order_; a
  // materialized one's is negative, one per handle.
  absl::flat_hash_map<const Node*, int64_t> id;
  id.reserve(order_.size());
  for (size_t i = 0; i < order_.size(); ++i) id[order_[i].get()] = static_cast<int64_t>(i);
  absl::flat_hash_map<std::string_view, int64_t> handle_ids;
  auto id_of = [&](const Node* n) -> int64_t {
    if (n->kind == Node::Kind::kMaterialized) {
      return handle_ids.try_emplace(n->handle, -2 - static_cast<int64_t>(handle_ids.size()))
          .first->second;
    }
    auto it = id.find(n);
    return it == id.end() ? -1 : it->second;
  };
  std::vector<ChainStep> steps(order_.size());
  std::vector<int> uses(order_.size(), 0);
  std::vector<bool> is_output(order_.size(), false);
  for (size_t i = 0; i < order_.size(); ++i) {
    const Node& n = *order_[i];
    for (const auto& in : n.inputs) {
      const int64_t v = id_of(in.get());
      if (v >= 0) ++uses[v];
    }
    // As Flush decides what to keep: the targets and what an Array holds.
    is_output[i] =
        n.user_refs.load() > 0 ||
        std::any_of(targets.begin(), targets.end(), [&](const auto& t) { return t.get() == &n; });
    const ElementwiseInfo* e = FindElementwise(n.ins.op());
    // Only the op is set: no attribute could make two steps differ. Scalar
    // operands do not fold (the server's fused loops have no constants).
    const bool plain = n.ins.ByteSizeLong() == 2 + n.ins.op().size() && n.scalars.empty();
    if (n.kind != Node::Kind::kOp || n.chain > 0 || n.num_outputs != 1 || n.inputs.size() != 2 ||
        e == nullptr || e->arity != 2 || !plain) {
      continue;
    }
    steps[i].op = static_cast<int64_t>(e->kind);
    steps[i].output = static_cast<int64_t>(i);
    for (int k = 0; k < 2; ++k) steps[i].operand[k] = id_of(n.inputs[k].get());
  }
  // The client does not know dtypes or shapes, so a run's first op stays
  // outside its loop: its result has the type every later step keeps (NumPy's
  // promotion and broadcasting are idempotent: f(f(x, c), c) has the type of
  // f(x, c)), which a loop's carried value must. int32 / int32 is float64,
  // and from then on float64 / int32 is float64 again.
  std::vector<ChainRun> runs = FindChainRuns(steps, uses, is_output);
  std::vector<ChainRun> typed;
  for (ChainRun r : runs) {
    ++r.begin;
    if (r.end - r.begin + 1 >= kMinChainRun - 1) typed.push_back(r);
  }
  return typed;
}

bool ScopeBuilder::AsLoop(const Node& n) const {
  // A body is a loop already (a nested loop would stop its fusion); a short
  // chain runs as plain ops, as the planner would leave it.
  return scope_ == nullptr && n.chain >= static_cast<int64_t>(kMinChainRun) - 1;
}

absl::Status ScopeBuilder::EmitChain(const Node& n, v1::Program* out) {
  const Node* fixed = n.chain_side == ChainSide::kBoth ? nullptr : n.inputs[1].get();
  if (AsLoop(n)) {
    return EmitLoop(n.ins.op(), n.inputs[0].get(), fixed, n.chain_side, n.chain,
                    out->add_instructions());
  }
  ASSIGN_OR_RETURN(v1::Operand v, OperandOf(n.inputs[0].get()));
  v1::Operand other;
  if (fixed != nullptr) {
    ASSIGN_OR_RETURN(other, OperandOf(fixed));
  }
  uint32_t next = values_.at(&n) + 1 - static_cast<uint32_t>(n.chain);
  for (int64_t step = 0; step < n.chain; ++step) {
    v1::Instruction* ins = out->add_instructions();
    ins->set_op(n.ins.op());
    *ins->add_operands() = n.chain_side == ChainSide::kSecond ? other : v;
    *ins->add_operands() = n.chain_side == ChainSide::kFirst ? other : v;
    v.set_value(next++);
  }
  return absl::OkStatus();
}

absl::Status ScopeBuilder::EmitLoop(const std::string& op, const Node* chain, const Node* fixed,
                                    ChainSide side, int64_t trips, v1::Instruction* loop) {
  // loop(trip = its length) over the chain's value; a fixed operand that is
  // a value travels in as an invariant, a handle is named in the body.
  loop->set_op("loop");
  loop->set_trip_count(trips);
  ASSIGN_OR_RETURN(*loop->add_operands(), OperandOf(chain));
  v1::Program* body = loop->mutable_body();
  v1::Instruction* step = body->add_instructions();
  step->set_op(op);
  v1::Operand carried;
  carried.set_value(0);
  v1::Operand other;
  if (side != ChainSide::kBoth && fixed->kind == Node::Kind::kMaterialized) {
    other.set_handle(fixed->handle);
  } else if (side != ChainSide::kBoth) {
    ASSIGN_OR_RETURN(*loop->add_operands(), OperandOf(fixed));
    other.set_value(1);
  }
  switch (side) {
    case ChainSide::kBoth:
      *step->add_operands() = carried;
      *step->add_operands() = carried;
      break;
    case ChainSide::kFirst:
      *step->add_operands() = carried;
      *step->add_operands() = other;
      break;
    case ChainSide::kSecond:
      *step->add_operands() = other;
      *step->add_operands() = carried;
      break;
  }
  body->add_yields()->set_value(static_cast<uint32_t>(loop->operands_size()));
  return absl::OkStatus();
}

absl::StatusOr<v1::Operand> ScopeBuilder::OperandOf(const Node* n) const {
  v1::Operand o;
  if (n->kind == Node::Kind::kMaterialized) {
    o.set_handle(n->handle);
  } else if (n->kind == Node::Kind::kParam && n->scope == scope_ && scope_ != nullptr) {
    o.set_value(static_cast<uint32_t>(n->index));
  } else if (auto inv = invariant_index_.find(n); inv != invariant_index_.end()) {
    o.set_value(static_cast<uint32_t>(num_carried_ + inv->second));
  } else if (auto v = values_.find(n); v != values_.end()) {
    o.set_value(v->second);
  } else {
    return absl::FailedPreconditionError("an array of a loop body was used outside its loop");
  }
  return o;
}

}  // namespace resident::client

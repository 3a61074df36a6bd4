#include "client/program_builder.h"

#include <utility>

#include "absl/strings/str_cat.h"

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
        invariant_index_[n.get()] = static_cast<int>(invariants_.size());
        invariants_.push_back(n);
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
  // 2. Number values: parameters first, then each instruction's outputs.
  uint32_t next_value = static_cast<uint32_t>(num_carried_ + invariants_.size());
  for (const auto& n : order_) {
    if (n->kind == Node::Kind::kLoopOutput) {
      values_[n.get()] = values_.at(n->inputs[0].get()) + static_cast<uint32_t>(n->index);
      continue;
    }
    values_[n.get()] = next_value;
    next_value += static_cast<uint32_t>(n->num_outputs);
  }
  // 3. Emit instructions.
  for (const auto& n : order_) {
    if (!n->error.ok()) return n->error;
    if (n->kind == Node::Kind::kLoopOutput) continue;
    v1::Instruction* ins = out->add_instructions();
    *ins = n->ins;
    size_t next_scalar = 0;
    for (const auto& in : n->inputs) {
      while (next_scalar < n->scalars.size() &&
             n->scalars[next_scalar].first == ins->operands_size()) {
        *ins->add_operands()->mutable_scalar() = n->scalars[next_scalar++].second;
      }
      absl::StatusOr<v1::Operand> o = OperandOf(in.get());
      if (!o.ok()) return o.status();
      *ins->add_operands() = *std::move(o);
    }
    for (; next_scalar < n->scalars.size(); ++next_scalar) {
      *ins->add_operands()->mutable_scalar() = n->scalars[next_scalar].second;
    }
  }
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

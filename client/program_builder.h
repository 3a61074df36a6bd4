// Turns a graph of recorded nodes into a wire program (the top level or a
// loop body).
#ifndef RESIDENT_CLIENT_PROGRAM_BUILDER_H_
#define RESIDENT_CLIENT_PROGRAM_BUILDER_H_

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "client/client_core.h"
#include "core/chain_runs.h"

namespace resident::client {

class ScopeBuilder {
 public:
  // scope: the loop body's tag (its kParam nodes carry it), or nullptr for
  // the top level. num_carried: the body's carried parameters.
  ScopeBuilder(const void* scope, int num_carried) : scope_(scope), num_carried_(num_carried) {}

  // Numbers these outer nodes as the body's invariants, in order, before
  // Build: a while's condition and body share one parameter list.
  void PresetInvariants(const std::vector<std::shared_ptr<Node>>& invariants) {
    for (const auto& n : invariants) {
      invariant_index_[n.get()] = static_cast<int>(invariants_.size());
      invariants_.push_back(n);
    }
  }
  // Emits every pending node `targets` need into `out`, in dependency order.
  absl::Status Build(const std::vector<std::shared_ptr<Node>>& targets, v1::Program* out);
  // The operand that names `node` inside this scope (after Build).
  absl::StatusOr<v1::Operand> OperandOf(const Node* node) const;

  // Pending nodes emitted, in order (kOp and kLoopOutput).
  const std::vector<std::shared_ptr<Node>>& emitted() const { return order_; }
  // Value id of an emitted single-valued node.
  uint32_t ValueOf(const Node* node) const { return values_.at(node); }
  // Body only: outer nodes the body reads, passed in as extra loop operands.
  const std::vector<std::shared_ptr<Node>>& invariants() const { return invariants_; }

 private:
  bool Internal(const Node* root);  // computed inside this scope
  // Top level: the chains of order_ that become loops (core/chain_runs.h).
  std::vector<ChainRun> FindRuns(const std::vector<std::shared_ptr<Node>>& targets);
  // `trips` applications of `op` to `chain` (the other operand `fixed`, or
  // `chain` itself for kBoth) as one loop instruction.
  absl::Status EmitLoop(const std::string& op, const Node* chain, const Node* fixed, ChainSide side,
                        int64_t trips, v1::Instruction* loop);
  // A recorded chain (Node::chain): one loop, or its steps unrolled.
  bool AsLoop(const Node& n) const;
  absl::Status EmitChain(const Node& n, v1::Program* out);
  const void* scope_;
  int num_carried_;
  absl::flat_hash_map<const Node*, bool> internal_;
  absl::flat_hash_map<const Node*, uint32_t> values_;
  absl::flat_hash_map<const Node*, int> invariant_index_;
  std::vector<std::shared_ptr<Node>> order_;
  std::vector<std::shared_ptr<Node>> invariants_;
};

}  // namespace resident::client

#endif  // RESIDENT_CLIENT_PROGRAM_BUILDER_H_

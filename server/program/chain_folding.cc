#include "server/program/chain_folding.h"

#include <tuple>
#include <utility>

#include "absl/base/casts.h"
#include "absl/container/flat_hash_map.h"
#include "core/chain_runs.h"

namespace resident {
namespace {

// A binary elementwise instruction of two array operands.
bool Foldable(const Instruction& ins) {
  return ElementwiseKindOf(ins) && ins.operands.size() == 2 && ins.scalars.empty();
}

// A binary elementwise instruction of one array and one scalar (x + 1.0).
bool ScalarForm(const Instruction& ins) {
  return ElementwiseKindOf(ins) && Arity(ins.elementwise) == 2 && ins.operands.size() == 1 &&
         ins.scalars.size() == 1;
}

// A scalar's identity for chain detection: equal for scalars of one kind
// and one bit pattern (NaN and -0.0 included).
std::tuple<int, uint64_t> ScalarKey(const Scalar& v) {
  if (v.is_float()) return {2, absl::bit_cast<uint64_t>(v.as_double())};
  if (v.is_int()) return {1, static_cast<uint64_t>(v.as_int64())};
  return {0, v.as_bool() ? 1u : 0u};
}

}  // namespace

FoldedProgram FoldChains(const std::shared_ptr<const Program>& program,
                         const std::vector<OutputSpec>& outputs) {
  FoldedProgram result{program, outputs, 0};
  const std::vector<Instruction>& ins = program->instructions;
  // Value numbers: the top level has no params, and a loop defines one value
  // per carried value.
  std::vector<uint32_t> first_output(ins.size());
  uint32_t next = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    first_output[i] = next;
    next += static_cast<uint32_t>(NumResults(ins[i]));
  }
  const uint32_t num_values = next;
  std::vector<int> uses(num_values, 0);
  for (const Instruction& in : ins) {
    for (const Operand& o : in.operands) {
      if (!o.is_handle && o.value < num_values) ++uses[o.value];
    }
  }
  std::vector<bool> is_output(num_values, false);
  for (const OutputSpec& o : outputs) {
    if (o.value < num_values) is_output[o.value] = true;
  }
  // The instructions as core/chain_runs.h sees them: handles and scalars
  // get negative ids, equal for the same handle or the same scalar. A scalar
  // sits at its position among the operands (x * 2.0 or 2.0 - x).
  std::vector<ChainStep> steps(ins.size());
  absl::flat_hash_map<HandleId, int64_t> handle_ids;
  absl::flat_hash_map<std::tuple<int, uint64_t>, int64_t> scalar_ids;
  int64_t next_id = -2;
  auto fresh = [&](auto& ids, const auto& key) {
    auto [it, added] = ids.try_emplace(key, next_id);
    if (added) --next_id;
    return it->second;
  };
  auto id_of = [&](const Operand& o) {
    return o.is_handle ? fresh(handle_ids, o.handle) : static_cast<int64_t>(o.value);
  };
  for (size_t i = 0; i < ins.size(); ++i) {
    const Instruction& in = ins[i];
    const bool scalar = ScalarForm(in);
    if (!Foldable(in) && !scalar) continue;
    // ScalarKey has no key for a complex scalar; such steps stay as they are.
    if (scalar && in.scalars[0].value.is_complex()) continue;
    steps[i].op = static_cast<int64_t>(*ElementwiseKindOf(in));
    steps[i].output = first_output[i];
    if (scalar) {
      const int at = in.scalars[0].position == 0 ? 0 : 1;
      steps[i].operand[at] = fresh(scalar_ids, ScalarKey(in.scalars[0].value));
      steps[i].operand[1 - at] = id_of(in.operands[0]);
    } else {
      steps[i].operand[0] = id_of(in.operands[0]);
      steps[i].operand[1] = id_of(in.operands[1]);
    }
  }
  const std::vector<ChainRun> runs = FindChainRuns(steps, uses, is_output);
  if (runs.empty()) return result;

  auto folded = std::make_shared<Program>();
  std::vector<uint32_t> renumber(num_values, 0);
  uint32_t new_next = 0;
  auto map_operand = [&](Operand o) {
    if (!o.is_handle && o.value < num_values) o.value = renumber[o.value];
    return o;
  };
  size_t i = 0;
  size_t next_run = 0;
  while (i < ins.size()) {
    if (next_run == runs.size() || runs[next_run].begin != i) {
      Instruction copy = ins[i];
      for (Operand& o : copy.operands) o = map_operand(o);
      folded->instructions.push_back(std::move(copy));
      for (uint32_t v = first_output[i];
           v < (i + 1 < ins.size() ? first_output[i + 1] : num_values); ++v) {
        renumber[v] = new_next++;
      }
      ++i;
      continue;
    }
    const size_t end = runs[next_run].end;
    if (ScalarForm(ins[i])) {  // the scalar stays in the body's one instruction
      Instruction loop;
      loop.op = OpKind::kLoop;
      loop.trip_count = static_cast<int64_t>(end - i + 1);
      loop.operands.push_back(map_operand(ins[i].operands[0]));
      auto body = std::make_shared<Program>();
      Instruction step = MakeElementwise(ins[i].elementwise, {Operand::Value(0)});
      step.scalars = ins[i].scalars;
      body->instructions.push_back(std::move(step));
      body->yields = {Operand::Value(1)};
      loop.body = std::move(body);
      folded->instructions.push_back(std::move(loop));
      renumber[first_output[end]] = new_next++;
      ++result.folded_runs;
      ++next_run;
      i = end + 1;
      continue;
    }
    const int side = static_cast<int>(runs[next_run].side);  // 0 both, 1 first, 2 second
    const Operand other = ins[i].operands[side == 1 ? 1 : 0];
    ++next_run;
    // Instructions i..end become loop(trip = end - i + 1) over the chain's
    // value; a fixed operand that is a value travels as an invariant.
    const Operand& a = ins[i].operands[0];
    const Operand chain = side == 2 ? ins[i].operands[1] : a;
    Instruction loop;
    loop.op = OpKind::kLoop;
    loop.trip_count = static_cast<int64_t>(end - i + 1);
    loop.operands.push_back(map_operand(chain));
    auto body = std::make_shared<Program>();
    Instruction step = MakeElementwise(ins[i].elementwise, {});
    Operand fixed_in_body = other;
    if (side != 0 && !other.is_handle) {
      loop.operands.push_back(map_operand(other));
      fixed_in_body = Operand::Value(1);
    }
    if (side == 0) {
      step.operands = {Operand::Value(0), Operand::Value(0)};
    } else if (side == 1) {
      step.operands = {Operand::Value(0), fixed_in_body};
    } else {
      step.operands = {fixed_in_body, Operand::Value(0)};
    }
    const uint32_t body_params = static_cast<uint32_t>(loop.operands.size());
    body->instructions.push_back(std::move(step));
    body->yields = {Operand::Value(body_params)};
    loop.body = std::move(body);
    folded->instructions.push_back(std::move(loop));
    renumber[first_output[end]] = new_next++;
    ++result.folded_runs;
    i = end + 1;
  }
  if (result.folded_runs == 0) return result;
  for (OutputSpec& o : result.outputs) {
    if (o.value < num_values) o.value = renumber[o.value];
  }
  result.program = std::move(folded);
  return result;
}

}  // namespace resident

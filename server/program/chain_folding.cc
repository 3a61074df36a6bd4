#include "server/program/chain_folding.h"

#include <cstring>
#include <utility>

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

bool SameScalar(const ScalarOperand& x, const ScalarOperand& y) {
  const Scalar &a = x.value, &b = y.value;
  if (x.position != y.position || a.is_bool() != b.is_bool() || a.is_int() != b.is_int()) {
    return false;
  }
  if (a.is_float()) {
    const double da = a.as_double(), db = b.as_double();
    return std::memcmp(&da, &db, sizeof(double)) == 0;  // NaN and -0.0 too
  }
  return a.is_int() ? a.as_int64() == b.as_int64() : a.as_bool() == b.as_bool();
}

// How instruction `ins` continues a chain whose current value is `v`: 0 when
// both operands are v, 1 when operand 0 is v, 2 when operand 1 is v, -1 when
// it does not.
int ChainSide(const Instruction& ins, uint32_t v) {
  if (ScalarForm(ins)) {
    const Operand& a = ins.operands[0];
    if (a.is_handle || a.value != v) return -1;
    return ins.scalars[0].position == 1 ? 1 : 2;
  }
  if (!Foldable(ins)) return -1;
  const Operand& a = ins.operands[0];
  const Operand& b = ins.operands[1];
  const bool ia = !a.is_handle && a.value == v;
  const bool ib = !b.is_handle && b.value == v;
  if (ia && ib) return 0;
  if (ia) return 1;
  if (ib) return 2;
  return -1;
}

bool SameOperand(const Operand& x, const Operand& y) {
  return x.is_handle == y.is_handle && (x.is_handle ? x.handle == y.handle : x.value == y.value);
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
    next += ins[i].op == OpKind::kLoop
                ? static_cast<uint32_t>(ins[i].body ? ins[i].body->yields.size() : 0)
                : 1;
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
  // A value (an instruction's only output) that only the next one reads.
  auto internal = [&](size_t i) {
    const uint32_t v = first_output[i];
    const int want = ChainSide(ins[i + 1], v) == 0 ? 2 : 1;
    return ins[i].op != OpKind::kLoop && !is_output[v] && uses[v] == want;
  };

  auto folded = std::make_shared<Program>();
  std::vector<uint32_t> renumber(num_values, 0);
  uint32_t new_next = 0;
  auto map_operand = [&](Operand o) {
    if (!o.is_handle && o.value < num_values) o.value = renumber[o.value];
    return o;
  };
  size_t i = 0;
  while (i < ins.size()) {
    // A run starts at instruction j = i + 1 continuing value of i (or at i
    // itself when i is the first instruction taking a value by both sides).
    size_t end = i;
    int side = -1;
    Operand other;
    if (ScalarForm(ins[i]) && !ins[i].operands[0].is_handle) {
      // A run of one op with the same scalar: x = x * 2.0, ...
      size_t e = i;
      while (e + 1 < ins.size() && internal(e) && ScalarForm(ins[e + 1]) &&
             ins[e + 1].elementwise == ins[i].elementwise &&
             ChainSide(ins[e + 1], first_output[e]) > 0 &&
             SameScalar(ins[e + 1].scalars[0], ins[i].scalars[0])) {
        ++e;
      }
      if (e - i + 1 >= static_cast<size_t>(kMinFoldedRun)) {
        end = e;
        side = 3;
      }
    } else if (Foldable(ins[i])) {
      // Instruction i may start a run on its operand 0 or 1 (a value), or
      // on both sides when they are the same value.
      for (int s : {0, 1, 2}) {
        const Operand& a = ins[i].operands[0];
        const Operand& b = ins[i].operands[1];
        const Operand& chain = s == 2 ? b : a;
        if (chain.is_handle) continue;
        if (s == 0 && !SameOperand(a, b)) continue;
        if (s != 0 && SameOperand(a, b)) continue;
        const Operand fixed = s == 1 ? b : a;
        size_t e = i;
        while (e + 1 < ins.size() && internal(e) && Foldable(ins[e + 1]) &&
               ins[e + 1].op == ins[i].op && ins[e + 1].elementwise == ins[i].elementwise &&
               ChainSide(ins[e + 1], first_output[e]) == s &&
               (s == 0 || SameOperand(ins[e + 1].operands[s == 1 ? 1 : 0], fixed))) {
          ++e;
        }
        if (e - i + 1 >= static_cast<size_t>(kMinFoldedRun) && e > end) {
          end = e;
          side = s;
          other = fixed;
        }
      }
    }
    if (side < 0) {
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
    if (side == 3) {  // the scalar stays in the body's one instruction
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
      i = end + 1;
      continue;
    }
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

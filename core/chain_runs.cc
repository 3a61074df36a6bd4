#include "core/chain_runs.h"

namespace resident {
namespace {

// How `s` continues a chain whose current value is `v` on `side`, with the
// fixed operand `fixed` (ignored for kBoth).
bool Continues(const ChainStep& s, int64_t v, ChainSide side, int64_t fixed) {
  switch (side) {
    case ChainSide::kBoth:
      return s.operand[0] == v && s.operand[1] == v;
    case ChainSide::kFirst:
      return s.operand[0] == v && s.operand[1] == fixed && fixed != v;
    case ChainSide::kSecond:
      return s.operand[1] == v && s.operand[0] == fixed && fixed != v;
  }
  return false;
}

}  // namespace

std::vector<ChainRun> FindChainRuns(absl::Span<const ChainStep> steps, const std::vector<int>& uses,
                                    const std::vector<bool>& is_output, size_t min_run) {
  std::vector<ChainRun> runs;
  // Output of step e, read only by step e + 1 (twice when it is x op x).
  auto internal = [&](size_t e, ChainSide side) {
    const int64_t v = steps[e].output;
    if (v < 0 || static_cast<size_t>(v) >= uses.size() || is_output[v]) return false;
    return uses[v] == (side == ChainSide::kBoth ? 2 : 1);
  };
  size_t i = 0;
  while (i < steps.size()) {
    const ChainStep& first = steps[i];
    ChainRun best{i, i, ChainSide::kBoth};
    if (first.op >= 0 && first.output >= 0) {
      // Instruction i may start a run on both sides, or on either one with
      // the other operand fixed.
      for (ChainSide side : {ChainSide::kBoth, ChainSide::kFirst, ChainSide::kSecond}) {
        const int64_t fixed = side == ChainSide::kFirst ? first.operand[1] : first.operand[0];
        const int64_t chain = side == ChainSide::kSecond ? first.operand[1] : first.operand[0];
        if (!Continues(first, chain, side, fixed)) continue;
        size_t e = i;
        while (e + 1 < steps.size() && steps[e + 1].op == first.op && internal(e, side) &&
               Continues(steps[e + 1], steps[e].output, side, fixed)) {
          ++e;
        }
        if (e > best.end) best = {i, e, side};
      }
    }
    if (best.end - best.begin + 1 >= min_run) {
      runs.push_back(best);
      i = best.end + 1;
    } else {
      ++i;
    }
  }
  return runs;
}

}  // namespace resident

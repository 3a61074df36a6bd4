// Finding chains of identical dependent instructions (x = x + x, 1024 times,
// as a lazily recorded loop sends it), for the two places that fold them
// into loop instructions: the C++ client, before it sends a program (so
// neither side pays per instruction), and the server's planner, for every
// other client. The detection is here, once; each side rewrites its own
// form of the program.
//
//   std::vector<ChainRun> runs = FindChainRuns(steps, uses, is_output);
//   for (const ChainRun& r : runs) ... instructions r.begin..r.end -> loop
#ifndef RESIDENT_CORE_CHAIN_RUNS_H_
#define RESIDENT_CORE_CHAIN_RUNS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace resident {

// Runs shorter than this stay as they are.
inline constexpr size_t kMinChainRun = 4;

// One instruction as the detector sees it.
struct ChainStep {
  // Equal for instructions that compute the same binary op with the same
  // attributes; negative for one that never chains (a loop, a creation op,
  // an op whose result dtype or shape may differ from its operand's).
  int64_t op = -1;
  // Its two operands: a value's id is its number (>= 0); any other operand
  // (a handle) has a negative id, equal for equal operands.
  int64_t operand[2] = {-1, -1};
  // Its one output value (>= 0), or negative if it has not exactly one.
  int64_t output = -1;
};

// Which operand carries the chain: kBoth (x op x), kFirst (x op c), kSecond
// (c op x), where c is the same operand all along the run.
enum class ChainSide { kBoth, kFirst, kSecond };

struct ChainRun {
  size_t begin = 0, end = 0;  // instructions begin..end (inclusive)
  ChainSide side = ChainSide::kBoth;
};

// The maximal runs, in order and disjoint: instructions begin..end compute
// one op, each takes the previous one's output on `side` (the other operand
// fixed), and every output but the last is read only by the next
// instruction (uses[v] counts the reads of value v) and is not a program
// output (is_output[v]). `uses` and `is_output` are indexed by value.
std::vector<ChainRun> FindChainRuns(absl::Span<const ChainStep> steps, const std::vector<int>& uses,
                                    const std::vector<bool>& is_output,
                                    size_t min_run = kMinChainRun);

}  // namespace resident

#endif  // RESIDENT_CORE_CHAIN_RUNS_H_

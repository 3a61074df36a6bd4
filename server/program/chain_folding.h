// Straight-line chain folding: a run of identical dependent elementwise
// instructions on one value (x = x + x, 1024 times, as a lazily recorded
// client loop sends it) becomes one loop instruction of that trip count, so
// the loop fusion of server/program/fusion.h runs it as one fused kernel
// instead of one pass over memory per op.
#ifndef RESIDENT_SERVER_PROGRAM_CHAIN_FOLDING_H_
#define RESIDENT_SERVER_PROGRAM_CHAIN_FOLDING_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "server/program/program.h"

namespace resident {

struct FoldedProgram {
  std::shared_ptr<const Program> program;
  std::vector<OutputSpec> outputs;  // value numbers renumbered to the folded program
  int folded_runs = 0;              // loops formed; 0: the program is the input
};

// Folds the top-level scope of `program` (runs found by core/chain_runs.h,
// shorter than kMinChainRun stay as they are). A run is instructions i..i+k-1 of
// one elementwise op where each takes the previous one's output on the same
// side (both sides, or one side and one fixed other operand: an array or
// the same scalar, x = x * 2.0), and every
// output but the last is read only by the next instruction and is no
// output. Loop bodies are left alone (they are fused as loops already).
FoldedProgram FoldChains(const std::shared_ptr<const Program>& program,
                         const std::vector<OutputSpec>& outputs);

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_CHAIN_FOLDING_H_

#include "server/program/op_registry.h"

#include <array>

#include "server/program/infer_elementwise.h"

namespace resident {
namespace {

constexpr OpDef Lowered(OpDef def, LowerFn lower) {
  def.lower = lower;
  return def;
}

// An op whose time its size does not bound (OpDef::size_bounded).
constexpr OpDef Unbounded(OpDef def) {
  def.size_bounded = false;
  return def;
}

// An op a loop graph cannot record (OpDef::graph).
constexpr OpDef NoGraph(OpDef def) {
  def.graph = false;
  return def;
}

constexpr OpDef Creation(OpKind kind, const char* name, InferFn infer, RunFn run, LowerFn lower,
                         BoundFn bound = nullptr) {
  return Lowered({kind, name, 0, false, false, ResultBuffer::kNew, std::nullopt, infer, bound, run},
                 lower);
}
constexpr OpDef Unary(OpKind kind, const char* name, InferFn infer, RunFn run,
                      ResultBuffer result = ResultBuffer::kNew) {
  return {kind, name, 1, false, false, result, std::nullopt, infer, nullptr, run};
}
constexpr OpDef Reduction(OpKind kind, ReduceKind reduce) {
  return {
      kind,           ReduceKindName(reduce), 1,           false, false, ResultBuffer::kNew, reduce,
      InferReduction, ReductionBound,         RunReduction};
}

constexpr OpDef Transform(OpKind kind, const char* name) {
  return NoGraph(
      {kind, name, 1, false, false, ResultBuffer::kNew, std::nullopt, InferFft, FftBound, RunFft});
}

constexpr OpDef Factorisation(OpKind kind, const char* name, int operands) {
  return Unbounded(NoGraph({kind, name, operands, false, false, ResultBuffer::kNew, std::nullopt,
                            InferLinalg, LinalgBound, RunLinalg}));
}

// Several results: qr, svd, eigh, slogdet.
constexpr OpDef Decomposition(OpKind kind, const char* name, int results) {
  return Unbounded(NoGraph({kind, name, 1, false, false, ResultBuffer::kNew, std::nullopt, nullptr,
                            LinalgBound, nullptr, InferDecomposition, RunDecomposition, results}));
}

// In OpKind's order (checked below).
constexpr OpDef kOps[] = {
    Creation(OpKind::kOnes, "ones", InferFill, RunFill, LowerFill),
    Creation(OpKind::kZeros, "zeros", InferFill, RunFill, LowerFill),
    Creation(OpKind::kFull, "full", InferFill, RunFill, LowerFill),
    Unbounded(
        Creation(OpKind::kArange, "arange", InferArange, RunArange, LowerArange, ArangeBound)),
    Lowered({OpKind::kElementwise, "elementwise", kByPosition, true, true, ResultBuffer::kNew,
             std::nullopt, InferElementwise, ElementwiseAllocationBound, RunElementwise},
            LowerElementwise),
    Lowered({OpKind::kWhere, "where", kByPosition, true, true, ResultBuffer::kNew, std::nullopt,
             InferSelect, SelectAllocationBound, RunWhere},
            LowerSelect),
    Lowered({OpKind::kClip, "clip", kByPosition, true, true, ResultBuffer::kNew, std::nullopt,
             InferSelect, SelectAllocationBound, RunClip},
            LowerSelect),
    Unbounded({OpKind::kDot, "dot", 2, false, false, ResultBuffer::kNew, std::nullopt, InferDot,
               DotBound, RunDot}),
    Unbounded({OpKind::kMatmul, "matmul", 2, false, false, ResultBuffer::kNew, std::nullopt,
               InferMatmul, MatmulBound, RunMatmul}),
    Reduction(OpKind::kSum, ReduceKind::kSum),
    Unary(OpKind::kReshape, "reshape", InferReshape, RunAlias, ResultBuffer::kOperand),
    Unary(OpKind::kTranspose, "transpose", InferTranspose, RunTranspose),
    {OpKind::kAstype, "astype", 1, false, true, ResultBuffer::kOperandWhenSameDType, std::nullopt,
     InferAstype, nullptr, RunAstype},
    NoGraph({OpKind::kLoop, "loop", kAnyOperands, false, false, ResultBuffer::kNew, std::nullopt,
             nullptr, nullptr, nullptr}),
    Reduction(OpKind::kProd, ReduceKind::kProd),
    Reduction(OpKind::kMean, ReduceKind::kMean),
    Reduction(OpKind::kMax, ReduceKind::kMax),
    Reduction(OpKind::kMin, ReduceKind::kMin),
    Reduction(OpKind::kArgmax, ReduceKind::kArgmax),
    Reduction(OpKind::kArgmin, ReduceKind::kArgmin),
    Reduction(OpKind::kAny, ReduceKind::kAny),
    Reduction(OpKind::kAll, ReduceKind::kAll),
    Unary(OpKind::kSlice, "slice", InferSlice, RunSlice),
    {OpKind::kConcatenate, "concatenate", kAnyOperands, false, false, ResultBuffer::kNew,
     std::nullopt, InferConcatenate, JoinBound, RunJoin},
    {OpKind::kStack, "stack", kAnyOperands, false, false, ResultBuffer::kNew, std::nullopt,
     InferStack, JoinBound, RunJoin},
    Unary(OpKind::kBroadcastTo, "broadcast_to", InferBroadcastTo, RunBroadcastTo),
    Unary(OpKind::kSqueeze, "squeeze", InferSqueeze, RunAlias, ResultBuffer::kOperand),
    Unary(OpKind::kExpandDims, "expand_dims", InferExpandDims, RunAlias, ResultBuffer::kOperand),
    NoGraph({OpKind::kArgsort, "argsort", 1, false, false, ResultBuffer::kNew, std::nullopt,
             InferArgsort, ArgsortBound, RunArgsort}),
    NoGraph({OpKind::kSort, "sort", 1, false, false, ResultBuffer::kNew, std::nullopt, InferArgsort,
             ArgsortBound, RunArgsort}),
    NoGraph({OpKind::kTakeAlongAxis, "take_along_axis", 2, false, false, ResultBuffer::kNew,
             std::nullopt, InferTakeAlongAxis, TakeAlongAxisBound, RunTakeAlongAxis}),
    {OpKind::kCumulativeSum, "cumulative_sum", 1, false, false, ResultBuffer::kNew, std::nullopt,
     InferCumulative, CumulativeBound, RunCumulative},
    {OpKind::kCumulativeProd, "cumulative_prod", 1, false, false, ResultBuffer::kNew, std::nullopt,
     InferCumulative, CumulativeBound, RunCumulative},
    NoGraph({OpKind::kFlatnonzero, "flatnonzero", 1, false, false, ResultBuffer::kNew, std::nullopt,
             InferExtract, ExtractBound, RunExtract}),
    NoGraph({OpKind::kExtract, "extract", 2, false, false, ResultBuffer::kNew, std::nullopt,
             InferExtract, ExtractBound, RunExtract}),
    Transform(OpKind::kFft, "fft"),
    Transform(OpKind::kIfft, "ifft"),
    Transform(OpKind::kRfft, "rfft"),
    Transform(OpKind::kIrfft, "irfft"),
    Factorisation(OpKind::kCholesky, "cholesky", 1),
    Factorisation(OpKind::kSolve, "solve", 2),
    Factorisation(OpKind::kInv, "inv", 1),
    Factorisation(OpKind::kDet, "det", 1),
    Factorisation(OpKind::kEigvalsh, "eigvalsh", 1),
    Factorisation(OpKind::kSvdvals, "svdvals", 1),
    Decomposition(OpKind::kQr, "qr", 2),            // Q, R
    Decomposition(OpKind::kSvd, "svd", 3),          // U, S, Vh
    Decomposition(OpKind::kEigh, "eigh", 2),        // eigenvalues, eigenvectors
    Decomposition(OpKind::kSlogdet, "slogdet", 2),  // sign, logabsdet
    // The values and the state after them.
    NoGraph({OpKind::kRandom, "random", 1, false, false, ResultBuffer::kNew, std::nullopt, nullptr,
             RandomBound, nullptr, InferRandom, RunRandom, 2}),
    NoGraph({OpKind::kNormal, "normal", 1, false, false, ResultBuffer::kNew, std::nullopt, nullptr,
             RandomBound, nullptr, InferRandom, RunRandom, 2}),
    NoGraph({OpKind::kExponential, "exponential", 1, false, false, ResultBuffer::kNew, std::nullopt,
             nullptr, RandomBound, nullptr, InferRandom, RunRandom, 2}),
    // Planned and run by the planner and executor themselves, as loop is.
    Unbounded(NoGraph({OpKind::kWhile, "while", kAnyOperands, false, false, ResultBuffer::kNew,
                       std::nullopt, nullptr, nullptr, nullptr})),
};

constexpr bool InOpKindOrder() {
  for (size_t i = 0; i < std::size(kOps); ++i) {
    if (static_cast<size_t>(kOps[i].kind) != i) return false;
  }
  return true;
}
static_assert(InOpKindOrder(), "kOps rows must follow OpKind's order");
static_assert(std::size(kOps) == static_cast<size_t>(OpKind::kWhile) + 1,
              "every OpKind needs a row");

}  // namespace

const OpDef& OpDefOf(OpKind op) { return kOps[static_cast<size_t>(op)]; }

const OpDef* FindOpDef(std::string_view name) {
  for (const OpDef& d : kOps) {
    if (d.kind != OpKind::kElementwise && name == d.name) return &d;
  }
  return nullptr;
}

bool ResultAliasesOperand(const Instruction& ins, absl::Span<const ValueType> ops,
                          const ValueType& result) {
  switch (OpDefOf(ins.op).result) {
    case ResultBuffer::kNew:
      return false;
    case ResultBuffer::kOperand:
      return true;
    case ResultBuffer::kOperandWhenSameDType:
      return !ops.empty() && ops[0].dtype == result.dtype;
  }
  return false;
}

// Elementwise ops by the op table's names; "elementwise" itself is no wire op.
std::optional<ParsedOp> ParseOp(std::string_view name) {
  if (const ElementwiseInfo* e = FindElementwise(name)) {
    return ParsedOp{OpKind::kElementwise, e->kind};
  }
  if (const OpDef* d = FindOpDef(name)) return ParsedOp{d->kind, {}};
  return std::nullopt;
}

const char* OpName(OpKind op) { return OpDefOf(op).name; }

bool TakesScalars(OpKind op) { return OpDefOf(op).takes_scalars; }

int NumResults(const Instruction& ins) {
  if (ins.op == OpKind::kLoop) return ins.body ? static_cast<int>(ins.body->yields.size()) : 0;
  if (ins.op == OpKind::kWhile) return ins.body ? static_cast<int>(ins.body->yields.size()) + 2 : 2;
  return OpDefOf(ins.op).results;
}

}  // namespace resident

// The op registry: one row per OpKind (op_registry.cc) says everything the
// program layer knows about an op: its wire name, its operands, whether it
// takes scalars or fuses, whether its result aliases an operand, its
// reduction, and the functions that infer its type, bound its allocations
// and lower it onto the Backend. The decoder, the planner, fusion and the
// executor read the row; none of them switches on OpKind. Elementwise ops
// are one row whose functions read core/elementwise_kind.h's table.
//
// A new op is an OpKind, a row here, its infer and run functions (declared
// below, defined beside their kind in infer*.cc and ops*.cc), a lower
// function if its run needs something decided from the types (a compute
// dtype, fill values), and, if it needs one, a DeviceOp with a kernel per
// backend.
#ifndef RESIDENT_SERVER_PROGRAM_OP_REGISTRY_H_
#define RESIDENT_SERVER_PROGRAM_OP_REGISTRY_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/reduce_kind.h"
#include "server/program/infer.h"
#include "server/program/ops.h"
#include "server/program/program.h"

namespace resident {

using InferFn = absl::StatusOr<ValueType> (*)(const Instruction&, absl::Span<const ValueType>);
using BoundFn = int64_t (*)(const Instruction&, absl::Span<const ValueType>, const ValueType&);
using RunFn = absl::StatusOr<DeviceArray> (*)(OpContext&, const Instruction&,
                                              std::vector<DeviceArray>, const ValueType&);
// Routines of several results (qr, svd, eigh, slogdet).
using InferManyFn = absl::StatusOr<std::vector<ValueType>> (*)(const Instruction&,
                                                               absl::Span<const ValueType>);
using RunManyFn = absl::StatusOr<std::vector<DeviceArray>> (*)(OpContext&, const Instruction&,
                                                               std::vector<DeviceArray>,
                                                               absl::Span<const ValueType>);
// What the planner decides for the run function (OpContext::lowering),
// given the operand types and the result's.
using LowerFn = absl::StatusOr<Lowering> (*)(const Instruction&, absl::Span<const ValueType>,
                                             const ValueType&);

// Whether the result is operand 0's buffer under another dtype or shape.
enum class ResultBuffer : uint8_t {
  kNew,
  kOperand,               // reshape, squeeze, expand_dims
  kOperandWhenSameDType,  // astype to the operand's own dtype
};

// Array operand counts other than a fixed number.
inline constexpr int kAnyOperands = -1;  // concatenate, stack: one or more
inline constexpr int kByPosition = -2;   // arrays and scalars by position: infer checks

struct OpDef {
  OpKind kind;
  const char* name;  // the wire name; "elementwise" for the table's row
  int operands;      // array operands, or kAnyOperands / kByPosition
  bool takes_scalars = false;
  bool fuses = false;  // fusion.cc expresses it as FusedLoopSpec steps
  ResultBuffer result = ResultBuffer::kNew;
  std::optional<ReduceKind> reduce;  // reductions over axis sets
  InferFn infer = nullptr;           // nullptr: the loop, which the planner types
  BoundFn bound = nullptr;           // nullptr: the result's bytes (or 0 if aliased)
  RunFn run = nullptr;
  // A routine of several results has these instead of infer and run; its
  // bound is called with the first result and the planner adds the others'
  // bytes. Its results never alias an operand and never fuse.
  InferManyFn infer_many = nullptr;
  RunManyFn run_many = nullptr;
  int results = 1;          // values it defines (a loop: one per carried value)
  LowerFn lower = nullptr;  // nullptr: its run function needs no lowering
  // Whether a loop body may record it into a device graph (Backend::
  // CaptureLoop): false for an op that reads back to the host (sort's NaN
  // check, take's bounds check, extract's count, the factorisations'
  // infos), advances host-side state each run (random), runs through a
  // library plan bound to the session's stream (FFT), or is a loop itself.
  bool graph = true;
  // Whether its time is bounded by the elements it reads and makes, so a
  // small instance is quick enough to run on the RPC thread itself
  // (service.cc's small programs): false for dot and matmul (cubic), arange
  // (its length comes from scalars), the linear-algebra routines (LAPACK's
  // and cuSOLVER's iterations are not interruptible; on a 3x3 matrix they
  // may still take long) and while loops (their trips are not known). A
  // blocked RPC thread stalls every tenant's calls, admin ones included.
  bool size_bounded = true;
};

const OpDef& OpDefOf(OpKind op);
// The row of a wire name other than "elementwise"; nullptr if none.
const OpDef* FindOpDef(std::string_view name);

// Whether `ins`'s result shares operand 0's buffer, given the operands'
// types and the result's.
bool ResultAliasesOperand(const Instruction& ins, absl::Span<const ValueType> ops,
                          const ValueType& result);

// ---- The rows' functions, defined beside their kind. ----

// infer.cc
absl::StatusOr<ValueType> InferFill(const Instruction& ins, absl::Span<const ValueType> ops);
absl::StatusOr<ValueType> InferArange(const Instruction& ins, absl::Span<const ValueType> ops);
absl::StatusOr<ValueType> InferDot(const Instruction& ins, absl::Span<const ValueType> ops);
absl::StatusOr<ValueType> InferMatmul(const Instruction& ins, absl::Span<const ValueType> ops);
absl::StatusOr<ValueType> InferReshape(const Instruction& ins, absl::Span<const ValueType> ops);
absl::StatusOr<ValueType> InferTranspose(const Instruction& ins, absl::Span<const ValueType> ops);
absl::StatusOr<ValueType> InferAstype(const Instruction& ins, absl::Span<const ValueType> ops);
int64_t ArangeBound(const Instruction& ins, absl::Span<const ValueType> ops,
                    const ValueType& result);
int64_t DotBound(const Instruction& ins, absl::Span<const ValueType> ops, const ValueType& result);
int64_t MatmulBound(const Instruction& ins, absl::Span<const ValueType> ops,
                    const ValueType& result);
// infer_elementwise.cc: InferElementwise, InferSelect and their bounds
// (infer_elementwise.h).
// infer_reduce.cc
absl::StatusOr<ValueType> InferReduction(const Instruction& ins, absl::Span<const ValueType> ops);
int64_t ReductionBound(const Instruction& ins, absl::Span<const ValueType> ops,
                       const ValueType& result);
// infer_shape.cc
absl::StatusOr<ValueType> InferSlice(const Instruction& ins, absl::Span<const ValueType> ops);
absl::StatusOr<ValueType> InferConcatenate(const Instruction& ins, absl::Span<const ValueType> ops);
absl::StatusOr<ValueType> InferStack(const Instruction& ins, absl::Span<const ValueType> ops);
absl::StatusOr<ValueType> InferBroadcastTo(const Instruction& ins, absl::Span<const ValueType> ops);
absl::StatusOr<ValueType> InferSqueeze(const Instruction& ins, absl::Span<const ValueType> ops);
absl::StatusOr<ValueType> InferExpandDims(const Instruction& ins, absl::Span<const ValueType> ops);
int64_t JoinBound(const Instruction& ins, absl::Span<const ValueType> ops, const ValueType& result);

// sort_ops.cc
absl::StatusOr<ValueType> InferArgsort(const Instruction& ins, absl::Span<const ValueType> ops);
absl::StatusOr<ValueType> InferTakeAlongAxis(const Instruction& ins,
                                             absl::Span<const ValueType> ops);
absl::StatusOr<ValueType> InferCumulative(const Instruction& ins, absl::Span<const ValueType> ops);
int64_t ArgsortBound(const Instruction& ins, absl::Span<const ValueType> ops,
                     const ValueType& result);
int64_t TakeAlongAxisBound(const Instruction& ins, absl::Span<const ValueType> ops,
                           const ValueType& result);
int64_t CumulativeBound(const Instruction& ins, absl::Span<const ValueType> ops,
                        const ValueType& result);
absl::StatusOr<DeviceArray> RunArgsort(OpContext& ctx, const Instruction& ins,
                                       std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunTakeAlongAxis(OpContext& ctx, const Instruction& ins,
                                             std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunCumulative(OpContext& ctx, const Instruction& ins,
                                          std::vector<DeviceArray> args, const ValueType& out);

// select_ops.cc
absl::StatusOr<ValueType> InferExtract(const Instruction& ins, absl::Span<const ValueType> ops);
int64_t ExtractBound(const Instruction& ins, absl::Span<const ValueType> ops,
                     const ValueType& result);
absl::StatusOr<DeviceArray> RunExtract(OpContext& ctx, const Instruction& ins,
                                       std::vector<DeviceArray> args, const ValueType& out);

// fft_ops.cc
absl::StatusOr<ValueType> InferFft(const Instruction& ins, absl::Span<const ValueType> ops);
int64_t FftBound(const Instruction& ins, absl::Span<const ValueType> ops, const ValueType& result);
absl::StatusOr<DeviceArray> RunFft(OpContext& ctx, const Instruction& ins,
                                   std::vector<DeviceArray> args, const ValueType& out);

// linalg_ops.cc
absl::StatusOr<ValueType> InferLinalg(const Instruction& ins, absl::Span<const ValueType> ops);
int64_t LinalgBound(const Instruction& ins, absl::Span<const ValueType> ops,
                    const ValueType& result);
absl::StatusOr<DeviceArray> RunLinalg(OpContext& ctx, const Instruction& ins,
                                      std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<std::vector<ValueType>> InferDecomposition(const Instruction& ins,
                                                          absl::Span<const ValueType> ops);
// random_ops.cc
absl::StatusOr<std::vector<ValueType>> InferRandom(const Instruction& ins,
                                                   absl::Span<const ValueType> ops);
int64_t RandomBound(const Instruction& ins, absl::Span<const ValueType> ops,
                    const ValueType& result);
absl::StatusOr<std::vector<DeviceArray>> RunRandom(OpContext& ctx, const Instruction& ins,
                                                   std::vector<DeviceArray> args,
                                                   absl::Span<const ValueType> outs);
absl::StatusOr<std::vector<DeviceArray>> RunDecomposition(OpContext& ctx, const Instruction& ins,
                                                          std::vector<DeviceArray> args,
                                                          absl::Span<const ValueType> outs);

// ops.cc
// ops.cc: the lowerings the planner decides.
absl::StatusOr<Lowering> LowerFill(const Instruction& ins, absl::Span<const ValueType> ops,
                                   const ValueType& out);
absl::StatusOr<Lowering> LowerArange(const Instruction& ins, absl::Span<const ValueType> ops,
                                     const ValueType& out);
absl::StatusOr<Lowering> LowerElementwise(const Instruction& ins, absl::Span<const ValueType> ops,
                                          const ValueType& out);
absl::StatusOr<Lowering> LowerSelect(const Instruction& ins, absl::Span<const ValueType> ops,
                                     const ValueType& out);
absl::StatusOr<DeviceArray> RunFill(OpContext& ctx, const Instruction& ins,
                                    std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunArange(OpContext& ctx, const Instruction& ins,
                                      std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunElementwise(OpContext& ctx, const Instruction& ins,
                                           std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunWhere(OpContext& ctx, const Instruction& ins,
                                     std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunClip(OpContext& ctx, const Instruction& ins,
                                    std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunDot(OpContext& ctx, const Instruction& ins,
                                   std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunMatmul(OpContext& ctx, const Instruction& ins,
                                      std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunAlias(OpContext& ctx, const Instruction& ins,
                                     std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunTranspose(OpContext& ctx, const Instruction& ins,
                                         std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunAstype(OpContext& ctx, const Instruction& ins,
                                      std::vector<DeviceArray> args, const ValueType& out);
// ops_shape.cc
absl::StatusOr<DeviceArray> RunReduction(OpContext& ctx, const Instruction& ins,
                                         std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunSlice(OpContext& ctx, const Instruction& ins,
                                     std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunJoin(OpContext& ctx, const Instruction& ins,
                                    std::vector<DeviceArray> args, const ValueType& out);
absl::StatusOr<DeviceArray> RunBroadcastTo(OpContext& ctx, const Instruction& ins,
                                           std::vector<DeviceArray> args, const ValueType& out);

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_OP_REGISTRY_H_

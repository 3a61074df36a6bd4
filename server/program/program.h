// Programs in domain form: what the RPC layer decodes a request into.
//
// A program is a list of instructions in SSA form. Values of a scope are
// numbered in order: a loop body's parameters first, then each output of
// each instruction (one each, but a loop has one per carried value and qr,
// svd, eigh and slogdet have their results in order). Operands
// name an existing array by handle or an earlier value of the same scope.
#ifndef RESIDENT_SERVER_PROGRAM_PROGRAM_H_
#define RESIDENT_SERVER_PROGRAM_PROGRAM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/elementwise_kind.h"
#include "core/handle_id.h"
#include "core/scalar.h"
#include "core/shape.h"

namespace resident {

enum class OpKind {
  kOnes,
  kZeros,
  kFull,
  kArange,
  kElementwise,  // any row of the op table; Instruction::elementwise says which
  kWhere,        // where(cond, a, b)
  kClip,         // clip(a, lo, hi)
  kDot,
  kMatmul,
  kSum,
  kReshape,
  kTranspose,
  kAstype,
  kLoop,
  // Reductions over axis sets and shaping (infer_reduce.cc, ops_shape.cc).
  kProd,
  kMean,
  kMax,
  kMin,
  kArgmax,
  kArgmin,
  kAny,
  kAll,
  kSlice,
  kConcatenate,
  kStack,
  kBroadcastTo,
  kSqueeze,
  kExpandDims,
  // Sorting and scans along one axis (sort_ops.cc).
  kArgsort,
  kSort,
  kTakeAlongAxis,
  kCumulativeSum,
  kCumulativeProd,
  // Mask selection, of a declared length (select_ops.cc).
  kFlatnonzero,
  kExtract,
  // Discrete Fourier transforms along one axis (fft_ops.cc).
  kFft,
  kIfft,
  kRfft,
  kIrfft,
  // Dense linear algebra of stacks of matrices (linalg_ops.cc).
  kCholesky,
  kSolve,
  kInv,
  kDet,
  kEigvalsh,
  kSvdvals,
  // ... and those of several results (linalg_ops.cc).
  kQr,
  kSvd,
  kEigh,
  kSlogdet,
  // numpy.random.Generator's draws from a PCG64 state (random_ops.cc).
  kRandom,
  kNormal,       // normal and standard_normal: kRandom's operands and results
  kExponential,  // exponential and standard_exponential: the same
  // while(cond, body): loop's operands, a condition body, max_trips.
  kWhile,
};

// A wire op name: its OpKind and, for kElementwise, the table's row. Every
// row of kElementwiseTable (and its aliases: "abs", "mod") is a wire op.
struct ParsedOp {
  OpKind op = OpKind::kElementwise;
  ElementwiseKind elementwise = ElementwiseKind::kAdd;
};
std::optional<ParsedOp> ParseOp(std::string_view name);
// ParseOp, OpName and TakesScalars read the op registry (op_registry.h).
const char* OpName(OpKind op);  // "elementwise" for kElementwise

struct Operand {
  static Operand Handle(const HandleId& h) { return {true, h, 0}; }
  static Operand Value(uint32_t v) { return {false, HandleId(), v}; }
  bool is_handle = false;
  HandleId handle;
  uint32_t value = 0;
};

// An elementwise operand given as a Python scalar: weak in NumPy 2's
// promotion (NEP 50). `position` is its place among the op's operands; the
// array operands stay in Instruction::operands, in order, so everything that
// walks operands (liveness, folding, fusion) sees arrays only.
struct ScalarOperand {
  int position = 0;
  Scalar value;
};

struct Program;

// One axis of a basic slice, as Python's slice(start, stop, step); a
// missing bound or step is Python's default.
struct SliceRange {
  std::optional<int64_t> start = std::nullopt, stop = std::nullopt, step = std::nullopt;
};

struct Instruction {
  OpKind op = OpKind::kElementwise;
  ElementwiseKind elementwise = ElementwiseKind::kAdd;  // kElementwise
  std::vector<Operand> operands;
  std::vector<ScalarOperand> scalars;       // elementwise, where, clip; by position
  Shape shape;                              // ones, zeros, full, reshape
  std::optional<DType> dtype;               // creation ops, astype
  std::optional<Scalar> fill;               // full
  std::optional<Scalar> start, stop, step;  // arange
  std::optional<int64_t> axis;              // sum
  std::vector<int64_t> axes;                // transpose (empty: reversed)
  // Reductions, squeeze, expand_dims: `axes` is the axis tuple when
  // has_axes (empty: axis=()); else `axis` is the one axis, or none.
  bool has_axes = false;
  bool keepdims = false;                // reductions
  bool descending = false;              // argsort, sort: the Array API's descending
  bool full = false;                    // qr: mode='complete'; svd: full_matrices
  std::vector<SliceRange> slices;       // slice: one per leading axis
  int64_t trip_count = 0;               // loop; while: max_trips
  std::shared_ptr<const Program> body;  // loop, while
  std::shared_ptr<const Program> cond;  // while: yields one bool scalar
};

// Whether `op` accepts scalar operands (Instruction::scalars).
bool TakesScalars(OpKind op);
// How many values `ins` defines: one, a loop's carried values, a while's
// carried values and its trips and capped, or the results of qr (2), svd
// (3), eigh (2) and slogdet (2).
int NumResults(const Instruction& ins);

// The instruction's name for messages: NumPy's name for an elementwise one
// ("add"), else OpName.
const char* InstructionName(const Instruction& ins);
// The elementwise kind of an elementwise instruction; nullopt otherwise.
std::optional<ElementwiseKind> ElementwiseKindOf(const Instruction& ins);
// An elementwise instruction of array operands.
Instruction MakeElementwise(ElementwiseKind kind, std::vector<Operand> operands);
// Rewrites an instruction's scalar operands into the form every later pass
// assumes, as decoded: a logical and/or/xor tests a scalar's own truth
// (NumPy casts both operands to bool), so its scalars become Python bools;
// otherwise logical_xor(float32 [0, 1], 1e-50) would test 1e-50 cast to
// float32, which is 0.
void CanonicaliseScalars(Instruction& ins);

struct Program {
  std::vector<Instruction> instructions;
  std::vector<Operand> yields;  // loop bodies: next carried values
};

// A value the caller wants back from a top-level program.
struct OutputSpec {
  uint32_t value = 0;
  bool keep = false;         // becomes a handle
  bool return_data = false;  // bytes returned inline
};

}  // namespace resident

#endif  // RESIDENT_SERVER_PROGRAM_PROGRAM_H_

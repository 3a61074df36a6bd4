// Programs in domain form: what the RPC layer decodes a request into.
//
// A program is a list of instructions in SSA form. Values of a scope are
// numbered in order: a loop body's parameters first, then each output of
// each instruction (one each; a loop has one per carried value). Operands
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
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,
  kNegative,
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
};

std::optional<OpKind> ParseOpKind(std::string_view name);
const char* OpName(OpKind op);
// The device's elementwise kind of an elementwise instruction (add,
// subtract, multiply, divide, negative); nullopt for every other op. The one
// place the program layer maps its ops onto ElementwiseKind.
std::optional<ElementwiseKind> ElementwiseKindOf(OpKind op);

struct Operand {
  static Operand Handle(const HandleId& h) { return {true, h, 0}; }
  static Operand Value(uint32_t v) { return {false, HandleId(), v}; }
  bool is_handle = false;
  HandleId handle;
  uint32_t value = 0;
};

struct Program;

// One axis of a basic slice, as Python's slice(start, stop, step); a
// missing bound or step is Python's default.
struct SliceRange {
  std::optional<int64_t> start = std::nullopt, stop = std::nullopt, step = std::nullopt;
};

struct Instruction {
  OpKind op = OpKind::kAdd;
  std::vector<Operand> operands;
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
  std::vector<SliceRange> slices;       // slice: one per leading axis
  int64_t trip_count = 0;               // loop
  std::shared_ptr<const Program> body;  // loop
};

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

// The shaping ops' inference, with NumPy's messages (see infer_shape.h).
#include <algorithm>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/slice_indices.h"
#include "core/status_macros.h"
#include "server/program/infer_shape.h"
#include "server/program/op_registry.h"

namespace resident {
namespace {

absl::Status Invalid(const std::string& msg) { return absl::InvalidArgumentError(msg); }

absl::StatusOr<ValueType> Checked(DType dtype, Shape shape) {
  ASSIGN_OR_RETURN(int64_t n, CheckedNumElements(shape));
  RETURN_IF_ERROR(CheckedNumBytes(n, ItemSize(dtype)).status());
  return ValueType{dtype, std::move(shape)};
}

absl::Status OutOfBounds(int64_t axis, int64_t rank) {
  return Invalid(absl::StrCat("axis ", axis, " is out of bounds for array of dimension ", rank));
}

absl::StatusOr<int> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return OutOfBounds(axis, rank);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

DType PromoteAll(absl::Span<const ValueType> ops) {
  DType t = ops[0].dtype;
  for (const ValueType& o : ops) t = PromoteTypes(t, o.dtype);
  return t;
}

// Python's slice.indices for one axis (core/slice_indices.h).
absl::StatusOr<std::pair<SliceAxisSpec, int64_t>> AxisSlice(const SliceRange& s, int64_t dim) {
  ASSIGN_OR_RETURN(SliceBounds b, SliceIndices(s.start, s.stop, s.step.value_or(1), dim));
  return std::make_pair(SliceAxisSpec{b.first, b.step}, b.length);
}

}  // namespace

absl::StatusOr<ValueType> InferConcatenate(const Instruction& ins,
                                           absl::Span<const ValueType> ops) {
  if (ops.empty()) return Invalid("need at least one array to concatenate");
  const DType dt = PromoteAll(ops);
  if (!ins.axis) {  // axis=None: the flattened arrays, joined
    int64_t total = 0;
    for (const ValueType& o : ops) {
      if (__builtin_add_overflow(total, o.num_elements(), &total)) {
        return Invalid("concatenate: result too large");
      }
    }
    return Checked(dt, {total});
  }
  const Shape& first = ops[0].shape;
  const int64_t rank = static_cast<int64_t>(first.size());
  if (rank == 0) return Invalid("zero-dimensional arrays cannot be concatenated");
  ASSIGN_OR_RETURN(const int axis, NormalizeAxis(*ins.axis, rank));
  Shape out = first;
  for (size_t i = 1; i < ops.size(); ++i) {
    const Shape& s = ops[i].shape;
    if (static_cast<int64_t>(s.size()) != rank) {
      return Invalid(absl::StrCat(
          "all the input arrays must have same number of dimensions, but the array at index 0 "
          "has ",
          rank, " dimension(s) and the array at index ", i, " has ", s.size(), " dimension(s)"));
    }
    for (int d = 0; d < rank; ++d) {
      if (d != axis && s[d] != first[d]) {
        return Invalid(absl::StrCat(
            "all the input array dimensions except for the concatenation axis must match "
            "exactly, but along dimension ",
            d, ", the array at index 0 has size ", first[d], " and the array at index ", i,
            " has size ", s[d]));
      }
    }
    if (__builtin_add_overflow(out[axis], s[axis], &out[axis])) {
      return Invalid("concatenate: result too large");
    }
  }
  return Checked(dt, std::move(out));
}

absl::StatusOr<ValueType> InferStack(const Instruction& ins, absl::Span<const ValueType> ops) {
  if (ops.empty()) return Invalid("need at least one array to stack");
  for (const ValueType& o : ops) {
    if (o.shape != ops[0].shape) return Invalid("all input arrays must have the same shape");
  }
  const int64_t rank = static_cast<int64_t>(ops[0].shape.size()) + 1;
  ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ins.axis.value_or(0), rank));
  Shape out = ops[0].shape;
  out.insert(out.begin() + axis, static_cast<int64_t>(ops.size()));
  return Checked(PromoteAll(ops), std::move(out));
}

absl::StatusOr<ValueType> InferBroadcastTo(const Instruction& ins,
                                           absl::Span<const ValueType> ops) {
  const ValueType& a = ops[0];
  for (int64_t d : ins.shape) {
    if (d < 0) return Invalid("all elements of broadcast shape must be non-negative");
  }
  const Shape& to = ins.shape;
  if (a.shape.size() > to.size()) {
    return Invalid("input operand has more dimensions than allowed by the axis remapping");
  }
  const size_t lead = to.size() - a.shape.size();
  for (size_t d = 0; d < a.shape.size(); ++d) {
    if (a.shape[d] != 1 && a.shape[d] != to[lead + d]) {
      return Invalid(
          absl::StrCat("operands could not be broadcast together with remapped shapes "
                       "[original->remapped]: ",
                       ShapeString(a.shape), " and requested shape ", ShapeString(to)));
    }
  }
  return Checked(a.dtype, to);
}

namespace {

// squeeze's and expand_dims' axes: the tuple, the one axis, or none.
std::vector<int64_t> GivenAxes(const Instruction& ins) {
  if (ins.has_axes) return ins.axes;
  if (ins.axis) return {*ins.axis};
  return {};
}

}  // namespace

absl::StatusOr<ValueType> InferSqueeze(const Instruction& ins, absl::Span<const ValueType> ops) {
  const ValueType& a = ops[0];
  const int64_t rank = static_cast<int64_t>(a.shape.size());
  std::vector<bool> drop(rank, false);
  if (!ins.has_axes && !ins.axis) {
    for (int64_t d = 0; d < rank; ++d) drop[d] = a.shape[d] == 1;
  } else {
    for (int64_t g : GivenAxes(ins)) {
      if (rank == 0 && !ins.has_axes && (g == 0 || g == -1)) continue;  // as NumPy on 0-d
      ASSIGN_OR_RETURN(const int ax, NormalizeAxis(g, rank));
      if (drop[ax]) return Invalid("duplicate value in 'axis'");
      if (a.shape[ax] != 1) {
        return Invalid("cannot select an axis to squeeze out which has size not equal to one");
      }
      drop[ax] = true;
    }
  }
  Shape out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!drop[d]) out.push_back(a.shape[d]);
  }
  return ValueType{a.dtype, std::move(out)};
}

absl::StatusOr<ValueType> InferExpandDims(const Instruction& ins, absl::Span<const ValueType> ops) {
  const ValueType& a = ops[0];
  if (!ins.has_axes && !ins.axis) return Invalid("expand_dims needs axis");
  const std::vector<int64_t> given = GivenAxes(ins);
  const int64_t rank = static_cast<int64_t>(a.shape.size() + given.size());
  std::vector<bool> added(rank, false);
  for (int64_t g : given) {
    ASSIGN_OR_RETURN(const int ax, NormalizeAxis(g, rank));
    if (added[ax]) return Invalid("repeated axis");
    added[ax] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) out.push_back(added[d] ? 1 : a.shape[next++]);
  return ValueType{a.dtype, std::move(out)};
}

absl::StatusOr<NormalizedSlice> NormalizeSlices(const Instruction& ins,
                                                absl::Span<const int64_t> shape) {
  const size_t rank = shape.size();
  if (ins.slices.size() > rank) {
    return Invalid(absl::StrCat("too many indices for array: array is ", rank, "-dimensional, but ",
                                ins.slices.size(), " were indexed"));
  }
  NormalizedSlice n;
  for (size_t d = 0; d < rank; ++d) {
    if (d >= ins.slices.size()) {
      n.axes.push_back({0, 1});
      n.shape.push_back(shape[d]);
      continue;
    }
    ASSIGN_OR_RETURN(auto axis, AxisSlice(ins.slices[d], shape[d]));
    n.axes.push_back(axis.first);
    n.shape.push_back(axis.second);
  }
  return n;
}

absl::StatusOr<ValueType> InferSlice(const Instruction& ins, absl::Span<const ValueType> ops) {
  ASSIGN_OR_RETURN(NormalizedSlice n, NormalizeSlices(ins, ops[0].shape));
  return ValueType{ops[0].dtype, std::move(n.shape)};
}

// Promoted copies of the operands beside the result.
int64_t JoinBound(const Instruction&, absl::Span<const ValueType> ops, const ValueType& result) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t bound = result.nbytes();
  for (const ValueType& o : ops) {
    if (o.dtype == result.dtype) continue;
    int64_t copy;
    if (__builtin_mul_overflow(o.num_elements(), ItemSize(result.dtype), &copy) ||
        __builtin_add_overflow(bound, copy, &bound)) {
      return kMax;
    }
  }
  return bound;
}

}  // namespace resident

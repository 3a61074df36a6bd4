#include "server/program/infer.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/status_macros.h"
#include "server/program/infer_elementwise.h"
#include "server/program/infer_shape.h"
#include "server/program/op_registry.h"
#include "server/program/saturating.h"

namespace resident {
namespace {

absl::Status Invalid(absl::string_view msg) { return absl::InvalidArgumentError(msg); }

// Validates a shape attribute and returns it as a type.
absl::StatusOr<ValueType> MakeType(DType dtype, Shape shape) {
  ASSIGN_OR_RETURN(int64_t n, CheckedNumElements(shape));
  RETURN_IF_ERROR(CheckedNumBytes(n, ItemSize(dtype)).status());
  return ValueType{dtype, std::move(shape)};
}

// A Python int fill must fit the integer dtype, as in NumPy 2.
absl::Status CheckFillFits(const Scalar& fill, DType dtype) {
  if (!fill.is_int() || !IsInteger(dtype)) return absl::OkStatus();
  const int64_t v = fill.as_int64();
  if (!IntFitsIn(v, dtype)) {
    return Invalid(absl::StrCat("Python integer ", v, " out of bounds for ", DTypeName(dtype)));
  }
  return absl::OkStatus();
}

// start + step of integer bounds, exact as with NumPy's Python integers. It
// leaves int64 only for an arange of at most one element (two need
// start + step strictly between start and stop), whose fill never reads it.
__int128 IntegerNext(const Scalar& start, const Scalar& step) {
  return static_cast<__int128>(start.as_int64()) + step.as_int64();
}

absl::StatusOr<ValueType> DotType(const ValueType& a, const ValueType& b) {
  const DType dt = PromoteTypes(a.dtype, b.dtype);
  const size_t ra = a.shape.size(), rb = b.shape.size();
  if (ra == 0 || rb == 0) {  // numpy.dot of a scalar is multiply
    ASSIGN_OR_RETURN(Shape s, BroadcastShapes(a.shape, b.shape));
    return MakeType(dt, std::move(s));
  }
  if (ra > 2 || rb > 2) {
    return Invalid(absl::StrCat("dot supports 0-D, 1-D and 2-D operands, got ",
                                ShapeString(a.shape), " and ", ShapeString(b.shape),
                                "; use matmul for stacks of matrices"));
  }
  const int64_t ka = a.shape[ra - 1];
  const size_t kb_axis = rb == 1 ? 0 : rb - 2;
  const int64_t kb = b.shape[kb_axis];
  if (ka != kb) {
    return Invalid(absl::StrCat("shapes ", ShapeString(a.shape), " and ", ShapeString(b.shape),
                                " not aligned: ", ka, " (dim ", ra - 1, ") != ", kb, " (dim ",
                                kb_axis, ")"));
  }
  Shape out;
  if (ra == 2) out.push_back(a.shape[0]);
  if (rb == 2) out.push_back(b.shape[1]);
  return MakeType(dt, std::move(out));
}

absl::StatusOr<ValueType> MatmulType(const ValueType& a, const ValueType& b) {
  if (a.shape.empty() || b.shape.empty()) {
    return Invalid(absl::StrCat("matmul: Input operand ", a.shape.empty() ? 0 : 1,
                                " does not have enough dimensions (has 0, "
                                "requires at least 1)"));
  }
  Shape sa = a.shape, sb = b.shape;
  const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), 1);
  if (b_vec) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2], k = sa.back();
  const int64_t kb = sb[sb.size() - 2], n = sb.back();
  if (k != kb) {
    return Invalid(
        absl::StrCat("matmul: Input operand 1 has a mismatch in its core dimension 0, with "
                     "gufunc signature (n?,k),(k,m?)->(n?,m?) (size ",
                     kb, " is different from ", k, ")"));
  }
  ASSIGN_OR_RETURN(Shape batch, BroadcastShapes(absl::MakeConstSpan(sa).subspan(0, sa.size() - 2),
                                                absl::MakeConstSpan(sb).subspan(0, sb.size() - 2)));
  if (!a_vec) batch.push_back(m);
  if (!b_vec) batch.push_back(n);
  return MakeType(PromoteTypes(a.dtype, b.dtype), std::move(batch));
}

// What ops.cc's RunMatmul allocates: each operand converted
// to the result's dtype when it differs, each operand whose batch dims are
// not the result's copied out to the result's batch (while its converted
// copy is still held), and the result. A broadcast copy can exceed both the
// operand and the result (a (2,1,2,3) by a (3,3,2) copies 36 elements of
// each for a result of 24), so it is counted from the batch, saturating.
int64_t MatmulTypesBound(const ValueType& a, const ValueType& b, const ValueType& result) {
  const DType ct = result.dtype;
  const size_t matrix_dims = (a.shape.size() > 1 ? 1 : 0) + (b.shape.size() > 1 ? 1 : 0);
  const Shape batch(result.shape.begin(), result.shape.end() - matrix_dims);
  const int64_t batch_elems = NumElements(batch);
  int64_t bound = result.nbytes();
  for (const ValueType& o : {a, b}) {
    if (o.dtype != ct) {
      bound = SaturatingAdd(bound, SaturatingMul(o.num_elements(), ItemSize(ct)));
    }
    if (o.shape.size() < 2) continue;  // a vector is one matrix, never copied
    const Shape own(o.shape.begin(), o.shape.end() - 2);
    Shape padded(batch.size() - own.size(), 1);
    padded.insert(padded.end(), own.begin(), own.end());
    if (NumElements(own) == 1 || batch_elems == 1 || padded == batch) continue;
    const int64_t matrix = o.shape[o.shape.size() - 2] * o.shape.back();
    bound = SaturatingAdd(bound, SaturatingMul(SaturatingMul(batch_elems, matrix), ItemSize(ct)));
  }
  return bound;
}

}  // namespace

std::string TypeString(const ValueType& t) {
  return absl::StrCat(DTypeName(t.dtype), " ", ShapeString(t.shape));
}

DType ArangeDefaultType(const Scalar& start, const Scalar& stop, const Scalar& step) {
  if (start.is_complex() || stop.is_complex() || step.is_complex()) return DType::kComplex128;
  if (start.is_float() || stop.is_float() || step.is_float()) {
    return DType::kFloat64;
  }
  return DType::kInt64;
}

absl::StatusOr<ArangeParams> ComputeArange(const Scalar& start, const Scalar& stop,
                                           const Scalar& step, DType dtype) {
  ArangeParams p;
  if (start.is_complex() || stop.is_complex() || step.is_complex()) {
    return Invalid("arange: complex bounds are not supported by Resident");
  }
  const bool all_int = !start.is_float() && !stop.is_float() && !step.is_float();
  if (all_int) {
    const __int128 s = start.as_int64(), e = stop.as_int64(), d = step.as_int64();
    if (d == 0) return Invalid("arange: step must not be zero");
    const __int128 span = e - s;
    __int128 len = span / d;
    if (len * d != span) ++len;  // ceil for either sign; negative -> empty
    if (len < 0 || (span > 0) != (d > 0)) len = 0;
    if (len > std::numeric_limits<int64_t>::max()) {
      return Invalid("arange: too many elements");
    }
    p.length = static_cast<int64_t>(len);
  } else {
    const double s = start.as_double(), e = stop.as_double(), d = step.as_double();
    if (d == 0 || std::isnan(d)) return Invalid("arange: step must not be zero");
    const double len = std::ceil((e - s) / d);
    if (std::isnan(len)) return Invalid("arange: cannot compute length");
    if (len >= 9.2e18) return Invalid("arange: too many elements");
    p.length = len > 0 ? static_cast<int64_t>(len) : 0;
  }
  // NumPy stores start and start+step in the dtype, then fills with their
  // difference computed in the dtype.
  switch (dtype) {
    case DType::kComplex64:
    case DType::kComplex128:
      return Invalid(absl::StrCat("arange of ", DTypeName(dtype),
                                  " is not supported by Resident (NumPy computes it); use "
                                  "arange(...).astype(",
                                  DTypeName(dtype), ")"));
    case DType::kFloat64: {
      const double a = start.as_double();
      const double b = all_int ? static_cast<double>(IntegerNext(start, step))
                               : start.as_double() + step.as_double();
      p.start = Scalar::Float(a);
      p.second = Scalar::Float(b);
      p.delta = Scalar::Float(b - a);
      break;
    }
    case DType::kFloat32: {
      const float a = static_cast<float>(start.as_double());
      const double next = all_int ? static_cast<double>(IntegerNext(start, step))
                                  : start.as_double() + step.as_double();
      const float b = static_cast<float>(next);
      p.start = Scalar::Float(a);
      p.second = Scalar::Float(b);
      p.delta = Scalar::Float(static_cast<double>(b - a));
      break;
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      // NumPy's HALF_fill (and ml_dtypes'): both stored as the dtype, their
      // difference taken in float.
      auto round = [&](double v) {
        return dtype == DType::kFloat16 ? resident_load(resident_double_to_half(v))
                                        : resident_load(resident_double_to_bf16(v));
      };
      const float a = round(start.as_double());
      const double next = all_int ? static_cast<double>(IntegerNext(start, step))
                                  : start.as_double() + step.as_double();
      const float b = round(next);
      p.start = Scalar::Float(a);
      p.second = Scalar::Float(b);
      p.delta = Scalar::Float(static_cast<double>(b - a));
      break;
    }
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUint8:
    case DType::kUint16:
    case DType::kUint32:
    case DType::kUint64:
    case DType::kBool: {
      // Non-integer bounds are truncated as NumPy's setitem does.
      const int64_t a = Scalar::Float(start.as_double()).as_int64();
      const int64_t b = all_int
                            ? static_cast<int64_t>(static_cast<uint64_t>(IntegerNext(start, step)))
                            : Scalar::Float(start.as_double() + step.as_double()).as_int64();
      p.start = Scalar::Int(a);
      p.delta =
          Scalar::Int(static_cast<int64_t>(static_cast<uint64_t>(b) - static_cast<uint64_t>(a)));
      if (all_int) p.start = Scalar::Int(start.as_int64());
      p.second = Scalar::Int(b);
      // NumPy 2 stores the first two elements as Python ints: each must fit.
      if (dtype != DType::kBool) {
        const int64_t first = p.start.as_int64();
        const __int128 next = all_int ? IntegerNext(start, step) : b;
        const char* bad = nullptr;
        int64_t value = 0;
        if (p.length >= 1 && !IntFitsIn(first, dtype)) {
          bad = "start";
          value = first;
        } else if (p.length >= 2 && (next < INT64_MIN || next > INT64_MAX ||
                                     !IntFitsIn(static_cast<int64_t>(next), dtype))) {
          bad = "start + step";
          value = static_cast<int64_t>(next);
        }
        if (bad != nullptr) {
          return Invalid(absl::StrCat("arange: Python integer ", value, " out of bounds for ",
                                      DTypeName(dtype), " (the ", bad, " NumPy stores)"));
        }
      }
      if (dtype == DType::kBool && p.length > 2) {
        return Invalid("arange: no fill-function for data-type bool beyond 2 elements");
      }
      break;
    }
  }
  return p;
}

absl::StatusOr<Shape> ResolveReshape(absl::Span<const int64_t> from, absl::Span<const int64_t> to) {
  const int64_t size = NumElements(from);
  Shape out(to.begin(), to.end());
  int unknown = -1;
  int64_t known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (unknown >= 0) return Invalid("reshape: can only specify one unknown dimension");
      unknown = static_cast<int>(i);
    } else if (out[i] < 0) {
      return Invalid(
          absl::StrCat("reshape: negative dimension ", out[i], " in shape ", ShapeString(to)));
    }
  }
  Shape known_dims;
  for (int64_t d : out) {
    if (d != -1) known_dims.push_back(d);
  }
  ASSIGN_OR_RETURN(known, CheckedNumElements(known_dims));
  if (unknown >= 0) {
    if (known == 0 || size % known != 0) {
      return Invalid(
          absl::StrCat("cannot reshape array of size ", size, " into shape ", ShapeString(to)));
    }
    out[unknown] = size / known;
  } else if (known != size) {
    return Invalid(
        absl::StrCat("cannot reshape array of size ", size, " into shape ", ShapeString(to)));
  }
  return out;
}

absl::StatusOr<std::vector<int>> ResolvePermutation(int rank, absl::Span<const int64_t> axes) {
  std::vector<int> perm(rank);
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
    return perm;
  }
  if (static_cast<int>(axes.size()) != rank) {
    return Invalid(absl::StrCat("transpose: axes don't match array: got ", axes.size(),
                                " axes for an array of dimension ", rank));
  }
  std::vector<bool> seen(rank, false);
  for (int i = 0; i < rank; ++i) {
    int64_t a = axes[i];
    if (a < -rank || a >= rank) {
      return Invalid(
          absl::StrCat("transpose: axis ", a, " is out of bounds for array of dimension ", rank));
    }
    if (a < 0) a += rank;
    if (seen[a]) return Invalid("transpose: repeated axis in transpose");
    seen[a] = true;
    perm[i] = static_cast<int>(a);
  }
  return perm;
}

namespace {

absl::Status CheckOperandCounts(const Instruction& ins, absl::Span<const ValueType> ops) {
  const OpDef& def = OpDefOf(ins.op);
  if (!ins.scalars.empty() && !def.takes_scalars) {
    return Invalid(absl::StrCat(def.name, " takes no scalar operands"));
  }
  const size_t n = static_cast<size_t>(def.operands);
  if (def.operands >= 0 && ops.size() != n) {
    return Invalid(absl::StrCat(InstructionName(ins), " takes ", n, " operand", n == 1 ? "" : "s",
                                ", got ", ops.size()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ValueType> InferType(const Instruction& ins, absl::Span<const ValueType> ops) {
  const OpDef& def = OpDefOf(ins.op);
  if (def.infer == nullptr) {
    return absl::InternalError(absl::StrCat("InferType called on ", def.name));
  }
  RETURN_IF_ERROR(CheckOperandCounts(ins, ops));
  return def.infer(ins, ops);
}

absl::StatusOr<std::vector<ValueType>> InferTypes(const Instruction& ins,
                                                  absl::Span<const ValueType> ops) {
  const OpDef& def = OpDefOf(ins.op);
  if (def.infer_many == nullptr) {
    ASSIGN_OR_RETURN(ValueType t, InferType(ins, ops));
    return std::vector<ValueType>{std::move(t)};
  }
  RETURN_IF_ERROR(CheckOperandCounts(ins, ops));
  return def.infer_many(ins, ops);
}

int64_t AllocationBound(const Instruction& ins, absl::Span<const ValueType> ops,
                        const ValueType& result) {
  if (ResultAliasesOperand(ins, ops, result)) return 0;
  const OpDef& def = OpDefOf(ins.op);
  return def.bound != nullptr ? def.bound(ins, ops, result) : result.nbytes();
}

absl::StatusOr<ValueType> InferFill(const Instruction& ins, absl::Span<const ValueType>) {
  if (ins.op != OpKind::kFull) return MakeType(ins.dtype.value_or(DType::kFloat64), ins.shape);
  if (!ins.fill) return Invalid("full needs a fill value");
  const DType dt = ins.dtype.value_or(ins.fill->natural_dtype());
  RETURN_IF_ERROR(CheckFillFits(*ins.fill, dt));
  return MakeType(dt, ins.shape);
}

absl::StatusOr<ValueType> InferArange(const Instruction& ins, absl::Span<const ValueType>) {
  if (!ins.stop) return Invalid("arange needs stop");
  const Scalar start = ins.start.value_or(Scalar::Int(0));
  const Scalar step = ins.step.value_or(Scalar::Int(1));
  const DType dt = ins.dtype.value_or(ArangeDefaultType(start, *ins.stop, step));
  ASSIGN_OR_RETURN(ArangeParams p, ComputeArange(start, *ins.stop, step, dt));
  return MakeType(dt, {p.length});
}

absl::StatusOr<ValueType> InferDot(const Instruction&, absl::Span<const ValueType> ops) {
  return DotType(ops[0], ops[1]);
}

absl::StatusOr<ValueType> InferMatmul(const Instruction&, absl::Span<const ValueType> ops) {
  return MatmulType(ops[0], ops[1]);
}

absl::StatusOr<ValueType> InferReshape(const Instruction& ins, absl::Span<const ValueType> ops) {
  ASSIGN_OR_RETURN(Shape s, ResolveReshape(ops[0].shape, ins.shape));
  return MakeType(ops[0].dtype, std::move(s));
}

absl::StatusOr<ValueType> InferTranspose(const Instruction& ins, absl::Span<const ValueType> ops) {
  ASSIGN_OR_RETURN(std::vector<int> perm,
                   ResolvePermutation(static_cast<int>(ops[0].shape.size()), ins.axes));
  Shape s(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) s[i] = ops[0].shape[perm[i]];
  return ValueType{ops[0].dtype, std::move(s)};
}

absl::StatusOr<ValueType> InferAstype(const Instruction& ins, absl::Span<const ValueType> ops) {
  if (!ins.dtype) return Invalid("astype needs a dtype");
  return MakeType(*ins.dtype, ops[0].shape);  // a wider dtype may overflow
}

// A bool arange is filled through an int64 temporary (ops.cc), as NumPy
// does; it has at most 2 elements.
int64_t ArangeBound(const Instruction&, absl::Span<const ValueType>, const ValueType& result) {
  const int64_t out = result.nbytes();
  return result.dtype == DType::kBool ? out + result.num_elements() * ItemSize(DType::kInt64) : out;
}

// Operands promoted to the compute dtype: at most each operand at the
// result's size or its own, in the compute dtype. Saturating: the sum of
// sizes that each fit in int64 need not.
int64_t DotBound(const Instruction&, absl::Span<const ValueType> ops, const ValueType& result) {
  int64_t bound = result.nbytes();
  const DType ct = result.dtype;
  for (const ValueType& o : ops) {
    if (o.dtype != ct) {
      bound = SaturatingAdd(
          bound, SaturatingMul(std::max(o.num_elements(), result.num_elements()), ItemSize(ct)));
    }
  }
  return bound;
}

int64_t MatmulBound(const Instruction&, absl::Span<const ValueType> ops, const ValueType& result) {
  return MatmulTypesBound(ops[0], ops[1], result);
}

}  // namespace resident

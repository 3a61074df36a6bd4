#include "kernels/cpu/concat.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace resident::cpu {

absl::StatusOr<Shape> ConcatShape(absl::Span<const Shape> shapes, int axis) {
  if (shapes.empty()) return absl::InvalidArgumentError("need at least one array to concatenate");
  const int rank = static_cast<int>(shapes[0].size());
  if (rank == 0)
    return absl::InvalidArgumentError("zero-dimensional arrays cannot be concatenated");
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of bounds for array of dimension ", rank));
  }
  if (axis < 0) axis += rank;
  Shape out = shapes[0];
  for (size_t i = 1; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    if (static_cast<int>(s.size()) != rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "all the input array dimensions except for the concatenation axis must match exactly: "
          "array 0 has ",
          rank, " dimension(s) and array ", i, " has ", s.size()));
    }
    for (int d = 0; d < rank; ++d) {
      if (d != axis && s[d] != out[d]) {
        return absl::InvalidArgumentError(absl::StrCat("along dimension ", d, ", array 0 has size ",
                                                       out[d], " and array ", i, " has size ",
                                                       s[d]));
      }
    }
    if (__builtin_add_overflow(out[axis], s[axis], &out[axis])) {
      return absl::InvalidArgumentError("concatenated length overflows int64");
    }
  }
  RETURN_IF_ERROR(CheckedNumElements(out).status());
  return out;
}

absl::StatusOr<Shape> StackShape(absl::Span<const Shape> shapes, int axis) {
  if (shapes.empty()) return absl::InvalidArgumentError("need at least one array to stack");
  const int rank = static_cast<int>(shapes[0].size());
  if (axis < -rank - 1 || axis > rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of bounds for array of dimension ", rank + 1));
  }
  if (axis < 0) axis += rank + 1;
  for (const Shape& s : shapes) {
    if (s != shapes[0])
      return absl::InvalidArgumentError("all input arrays must have the same shape");
  }
  Shape out = shapes[0];
  out.insert(out.begin() + axis, static_cast<int64_t>(shapes.size()));
  RETURN_IF_ERROR(CheckedNumElements(out).status());
  return out;
}

absl::Status Concatenate(ThreadPool* pool, absl::Span<const ConstView> ins, int axis,
                         const MutView& out) {
  std::vector<Shape> shapes;
  for (const ConstView& v : ins) {
    if (v.dtype != out.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("concatenate of ", NameOf(v.dtype), " into ", NameOf(out.dtype)));
    }
    shapes.emplace_back(v.shape.begin(), v.shape.end());
  }
  ASSIGN_OR_RETURN(Shape expected, ConcatShape(shapes, axis));
  if (!std::equal(expected.begin(), expected.end(), out.shape.begin(), out.shape.end())) {
    return absl::InvalidArgumentError(absl::StrCat("concatenate gives ", ShapeString(expected),
                                                   ", not ", ShapeString(out.shape)));
  }
  const int rank = static_cast<int>(expected.size());
  if (axis < 0) axis += rank;
  // Each input is (outer, chunk) bytes; out's row o is the inputs' rows o in turn.
  int64_t outer = 1, inner = ItemSize(out.dtype);
  for (int d = 0; d < axis; ++d) outer *= expected[d];
  for (int d = axis + 1; d < rank; ++d) inner *= expected[d];
  std::vector<int64_t> chunk, offset;
  int64_t row = 0;
  for (const ConstView& v : ins) {
    chunk.push_back(v.shape[axis] * inner);
    offset.push_back(row);
    row += chunk.back();
  }
  auto* dst = static_cast<unsigned char*>(out.data);
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(row, 1));
  ParallelFor(pool, outer, grain, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      for (size_t i = 0; i < ins.size(); ++i) {
        if (chunk[i] == 0) continue;
        std::memcpy(dst + o * row + offset[i],
                    static_cast<const unsigned char*>(ins[i].data) + o * chunk[i], chunk[i]);
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace resident::cpu

// The CUDA backend's reductions over axis sets (kernels/cuda/reduce_axes.cu,
// CUB), slices (the strided copy kernel over a sliced layout) and
// concatenation (one 2-D copy per input). Like cuda_ops.cc, each Do()
// checks what the program layer should already have made right, so a bug
// upstream is INVALID_ARGUMENT, not a poisoned device.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/status_macros.h"
#include "kernels/cuda/reduce_axes.h"
#include "server/device/cuda/cuda_backend_internal.h"
#include "server/device/cuda/strided_layout.h"

namespace resident::cuda_internal {
namespace {

namespace k = cuda_kernels;

std::string Describe(const DeviceArray& a) {
  return absl::StrCat(std::string(DTypeName(a.dtype)), ShapeString(a.shape));
}

// The reduction's layout over a C-contiguous input: extent-1 dimensions
// dropped, neighbours of one class (kept or reduced) merged, which keeps
// both row-major orders. False when a class needs more than kMaxReduceRank
// dimensions.
bool MakeLayout(absl::Span<const int64_t> shape, const std::vector<bool>& reduced,
                k::ReduceLayout* l) {
  const std::vector<int64_t> stride = ContiguousStrides(shape);
  int last = -1;  // class of the previous kept-in-layout dimension
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    const int cls = reduced[d] ? 1 : 0;
    int32_t& rank = cls ? l->reduced_rank : l->kept_rank;
    int64_t* ext = cls ? l->reduced_shape : l->kept_shape;
    int64_t* str = cls ? l->reduced_stride : l->kept_stride;
    if (last == cls) {  // contiguous with its neighbour: merge
      ext[rank - 1] *= shape[d];
      str[rank - 1] = stride[d];
    } else {
      if (rank == k::kMaxReduceRank) return false;
      ext[rank] = shape[d];
      str[rank] = stride[d];
      ++rank;
    }
    last = cls;
  }
  return true;
}

}  // namespace

absl::Status CudaBackend::Do(const StreamRef& s, const ReduceAxesOp& op) {
  const DeviceArray &a = *op.in, &out = *op.out;
  const char* name = ReduceKindName(op.kind);
  const DType want = ReduceResultType(op.kind, a.dtype);
  if (out.dtype != want) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": output of ", Describe(a), " must be ",
                                                   std::string(DTypeName(want)), ", not ",
                                                   Describe(out)));
  }
  const int rank = static_cast<int>(a.shape.size());
  std::vector<bool> reduced(rank, false);
  Shape expected;
  for (size_t i = 0; i < op.axes.size(); ++i) {
    const int ax = op.axes[i];
    if (ax < 0 || ax >= rank || (i > 0 && ax <= op.axes[i - 1])) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": axes must be sorted, distinct and in [0, ", rank, ")"));
    }
    reduced[ax] = true;
  }
  k::ReduceLayout l;
  l.n_out = 1;
  l.m = 1;
  for (int d = 0; d < rank; ++d) {
    if (reduced[d]) {
      l.m *= a.shape[d];
    } else {
      l.n_out *= a.shape[d];
      expected.push_back(a.shape[d]);
    }
  }
  if (out.shape != expected) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": output ", Describe(out),
                                                   " should have shape ", ShapeString(expected)));
  }
  const bool needs_element = op.kind == ReduceKind::kMax || op.kind == ReduceKind::kMin ||
                             op.kind == ReduceKind::kArgmax || op.kind == ReduceKind::kArgmin;
  if (l.n_out == 0) return absl::OkStatus();
  if (l.m == 0 && needs_element) {
    return absl::InvalidArgumentError(
        absl::StrCat("zero-size array to reduction operation ", name, " which has no identity"));
  }
  if (!MakeLayout(a.shape, reduced, &l)) {
    return absl::UnimplementedError(absl::StrCat(name, ": more than ", k::kMaxReduceRank,
                                                 " alternating kept and reduced axes in ",
                                                 Describe(a)));
  }
  const k::LaunchContext ctx = Launch(*s);
  const ReduceKind kind = op.kind;
  const size_t temp_bytes = k::ReduceAxesTempBytes(ctx, kind, a.dtype, l);
  std::shared_ptr<CudaBuffer> temp;
  if (temp_bytes > 0) {
    ASSIGN_OR_RETURN(temp, AllocateOn(s, static_cast<int64_t>(temp_bytes)));
  }
  // `temp` is freed (stream-ordered, after the reduction) when it goes out of scope.
  return Check(k::ReduceAxes(ctx, kind, a.dtype, a.data(), l, out.data(),
                             temp ? temp->data() : nullptr, temp_bytes),
               name);
}

absl::Status CudaBackend::Do(const StreamRef& s, const SliceOp& op) {
  const DeviceArray &a = *op.in, &out = *op.out;
  const size_t rank = a.shape.size();
  if (a.dtype != out.dtype || op.axes.size() != rank || out.shape.size() != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("slice: ", op.axes.size(), " axes for ", Describe(a), " -> ", Describe(out)));
  }
  const int64_t n = out.num_elements();
  if (n == 0) return absl::OkStatus();
  if (Overlaps(a, out))
    return absl::InvalidArgumentError("slice: output shares the input's buffer");
  const std::vector<int64_t> in_strides = ContiguousStrides(a.shape);
  std::vector<int64_t> strides[1] = {std::vector<int64_t>(rank)};
  int64_t base = 0;
  for (size_t d = 0; d < rank; ++d) {
    const SliceAxisSpec& ax = op.axes[d];
    const int64_t len = out.shape[d];
    const __int128 last =
        static_cast<__int128>(ax.first) + static_cast<__int128>(len - 1) * ax.step;
    if (ax.step == 0 || ax.first < 0 || ax.first >= a.shape[d] || last < 0 || last >= a.shape[d]) {
      return absl::InvalidArgumentError(
          absl::StrCat("slice: axis ", d, " leaves the input ", Describe(a)));
    }
    base += ax.first * in_strides[d];
    strides[0][d] = len == 1 ? 0 : ax.step * in_strides[d];
  }
  const k::StridedLayout layout = CollapseLayout(out.shape, strides);
  const void* src = static_cast<const char*>(a.data()) + base * ItemSize(a.dtype);
  cudaError_t e;
  if (layout.rank == 0 || (layout.rank == 1 && layout.stride[0][0] == 1)) {
    e = k::CastContiguous(Launch(*s), a.dtype, a.dtype, src, out.data(), n);
  } else {
    e = k::CastStrided(Launch(*s), a.dtype, a.dtype, src, out.data(), layout);
  }
  return Check(e, "slice");
}

absl::Status CudaBackend::Do(const StreamRef& s, const ConcatOp& op) {
  const DeviceArray& out = *op.out;
  const int rank = static_cast<int>(out.shape.size());
  if (op.ins.empty() || op.axis < 0 || op.axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "concatenate: ", op.ins.size(), " inputs along axis ", op.axis, " into ", Describe(out)));
  }
  int64_t along = 0;
  for (const DeviceArray& a : op.ins) {
    bool fits = a.dtype == out.dtype && static_cast<int>(a.shape.size()) == rank;
    for (int d = 0; fits && d < rank; ++d) fits = d == op.axis || a.shape[d] == out.shape[d];
    if (!fits) {
      return absl::InvalidArgumentError(
          absl::StrCat("concatenate: input ", Describe(a), " does not fit ", Describe(out)));
    }
    if (Overlaps(a, out)) {
      return absl::InvalidArgumentError("concatenate: output shares an input's buffer");
    }
    along += a.shape[op.axis];
  }
  if (along != out.shape[op.axis]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "concatenate: inputs give ", along, " along axis ", op.axis, ", not ", out.shape[op.axis]));
  }
  if (out.num_elements() == 0) return absl::OkStatus();
  // out is [outer, row] bytes; input i fills columns [offset, offset + width).
  int64_t outer = 1, inner = ItemSize(out.dtype);
  for (int d = 0; d < op.axis; ++d) outer *= out.shape[d];
  for (int d = op.axis + 1; d < rank; ++d) inner *= out.shape[d];
  const int64_t row = out.shape[op.axis] * inner;
  int64_t offset = 0;
  for (const DeviceArray& a : op.ins) {
    const int64_t width = a.shape[op.axis] * inner;
    if (width > 0) {
      char* dst = static_cast<char*>(out.data()) + offset;
      cudaError_t e;
      if (outer == 1) {
        e = cudaMemcpyAsync(dst, a.data(), static_cast<size_t>(width), cudaMemcpyDeviceToDevice,
                            s->stream());
      } else {
        e = cudaMemcpy2DAsync(dst, static_cast<size_t>(row), a.data(), static_cast<size_t>(width),
                              static_cast<size_t>(width), static_cast<size_t>(outer),
                              cudaMemcpyDeviceToDevice, s->stream());
      }
      RETURN_IF_ERROR(Check(e, "concatenate"));
    }
    offset += width;
  }
  return absl::OkStatus();
}

}  // namespace resident::cuda_internal

// The CUDA backend's ops: validation (every op checks what the executor
// should already have made right, so a bug upstream is INVALID_ARGUMENT, not
// a poisoned device), then kernel selection and launch. Kernels are in
// kernels/cuda; float matmul goes through cuBLAS.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/status_macros.h"
#include "server/device/cuda/cuda_backend_internal.h"
#include "server/device/cuda/strided_layout.h"

namespace resident::cuda_internal {
namespace {

namespace k = cuda_kernels;

absl::Status LaunchStatus(DeviceState& device, cudaError_t e,
                          absl::string_view what) {
  return device.Check(e, what);
}

// DTypeName as a std::string (Debian's Abseil has its own string_view).
std::string TypeName(DType d) { return std::string(DTypeName(d)); }

std::string Describe(const DeviceArray& a) {
  return absl::StrCat(TypeName(a.dtype), ShapeString(a.shape));
}

// The bit pattern of `value` converted to `dtype` as Cast would convert an
// array holding it (numpy.full's conversion).
uint64_t ScalarBits(const Scalar& value, DType dtype) {
  uint64_t bits = 0;
  switch (dtype) {
    case DType::kBool:
      bits = value.as_bool() ? 1 : 0;
      break;
    case DType::kInt32: {
      int32_t v;
      if (value.is_float()) {
        const double d = value.as_double();
        v = (d > -2147483649.0 && d < 2147483648.0)
                ? static_cast<int32_t>(d)
                : std::numeric_limits<int32_t>::min();
      } else {
        v = static_cast<int32_t>(value.as_int64());  // wraps
      }
      uint32_t u;
      std::memcpy(&u, &v, 4);
      bits = u;
      break;
    }
    case DType::kInt64: {
      const int64_t v = value.as_int64();
      std::memcpy(&bits, &v, 8);
      break;
    }
    case DType::kFloat32: {
      // Through double, as the CPU reference does.
      const float f = static_cast<float>(value.as_double());
      uint32_t u;
      std::memcpy(&u, &f, 4);
      bits = u;
      break;
    }
    case DType::kFloat64: {
      const double d = value.as_double();
      std::memcpy(&bits, &d, 8);
      break;
    }
  }
  return bits;
}

bool Mul64(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

// Elements an operand of a matmul must hold: (batch-1)*stride + rows*cols.
absl::StatusOr<int64_t> MatmulExtent(int64_t batch, int64_t stride,
                                     int64_t rows, int64_t cols) {
  int64_t matrix, reach;
  if (!Mul64(rows, cols, &matrix) || !Mul64(batch - 1, stride, &reach) ||
      __builtin_add_overflow(reach, matrix, &reach)) {
    return absl::InvalidArgumentError("matmul operand size overflows");
  }
  return reach;
}

}  // namespace

absl::Status CudaBackend::Fill(Stream& stream, const Scalar& value,
                               DeviceArray& out) {
  ASSIGN_OR_RETURN(auto s, Resolve(stream));
  RETURN_IF_ERROR(CheckArray(out, s, "Fill output"));
  DeviceGuard guard(device_->ordinal);
  return LaunchStatus(
      *device_,
      k::FillBits(Launch(*s), out.data(), static_cast<int>(ItemSize(out.dtype)),
                  ScalarBits(value, out.dtype), out.num_elements()),
      "Fill");
}

absl::Status CudaBackend::Arange(Stream& stream, const Scalar& start,
                                 const Scalar& delta, DeviceArray& out) {
  ASSIGN_OR_RETURN(auto s, Resolve(stream));
  RETURN_IF_ERROR(CheckArray(out, s, "Arange output"));
  if (out.shape.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Arange: output must be 1-D, not ", Describe(out)));
  }
  if (out.dtype == DType::kBool) {
    return absl::InvalidArgumentError("Arange: does not fill bool arrays");
  }
  DeviceGuard guard(device_->ordinal);
  const int64_t n = out.num_elements();
  cudaError_t e;
  if (IsFloating(out.dtype)) {
    e = k::ArangeFloat(Launch(*s), ToElemType(out.dtype), start.as_double(),
                       delta.as_double(), out.data(), n);
  } else {
    e = k::ArangeInt(Launch(*s), ToElemType(out.dtype), start.as_int64(),
                     delta.as_int64(), out.data(), n);
  }
  return LaunchStatus(*device_, e, "Arange");
}

absl::Status CudaBackend::Binary(Stream& stream, BinaryOp op,
                                 const DeviceArray& a, const DeviceArray& b,
                                 DeviceArray& out) {
  ASSIGN_OR_RETURN(auto s, Resolve(stream));
  RETURN_IF_ERROR(CheckArray(a, s, "Binary operand a"));
  RETURN_IF_ERROR(CheckArray(b, s, "Binary operand b"));
  RETURN_IF_ERROR(CheckArray(out, s, "Binary output"));
  if (a.dtype != out.dtype || b.dtype != out.dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat("Binary: dtypes differ: ", Describe(a), ", ", Describe(b),
                     " -> ", Describe(out)));
  }
  if ((out.dtype == DType::kBool && op == BinaryOp::kSubtract) ||
      (op == BinaryOp::kDivide && !IsFloating(out.dtype))) {
    return absl::InvalidArgumentError(
        absl::StrCat("Binary: operation not supported for ", TypeName(out.dtype)));
  }
  for (const DeviceArray* in : {&a, &b}) {
    if (!BroadcastsTo(in->shape, out.shape)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Binary: ", Describe(*in), " does not broadcast to ", Describe(out)));
    }
    // In-place is allowed only for an input of out's own shape.
    if (in->data() != nullptr && in->data() == out.data() &&
        in->num_elements() != out.num_elements()) {
      return absl::InvalidArgumentError(
          "Binary: output shares a buffer with a broadcast input");
    }
  }
  const int64_t n = out.num_elements();
  if (n == 0) return absl::OkStatus();
  const std::vector<int64_t> strides[2] = {BroadcastStrides(a.shape, out.shape),
                                           BroadcastStrides(b.shape, out.shape)};
  const k::StridedLayout layout = CollapseLayout(out.shape, strides);
  const k::ElemType t = ToElemType(out.dtype);
  const k::BinaryOpKind kop = static_cast<k::BinaryOpKind>(static_cast<int>(op));
  DeviceGuard guard(device_->ordinal);
  cudaError_t e;
  const int64_t sa = layout.rank == 0 ? 1 : layout.stride[0][0];
  const int64_t sb = layout.rank == 0 ? 1 : layout.stride[1][0];
  if (layout.rank <= 1 && sa == 1 && sb == 1) {
    e = k::BinaryContiguous(Launch(*s), t, kop, a.data(), b.data(), out.data(), n);
  } else if (layout.rank <= 1 && sa == 1 && sb == 0) {
    e = k::BinaryScalar(Launch(*s), t, kop, a.data(), b.data(),
                        /*scalar_on_left=*/false, out.data(), n);
  } else if (layout.rank <= 1 && sa == 0 && sb == 1) {
    e = k::BinaryScalar(Launch(*s), t, kop, b.data(), a.data(),
                        /*scalar_on_left=*/true, out.data(), n);
  } else {
    e = k::BinaryStrided(Launch(*s), t, kop, a.data(), b.data(), out.data(),
                         layout);
  }
  return LaunchStatus(*device_, e, "Binary");
}

absl::Status CudaBackend::Negative(Stream& stream, const DeviceArray& a,
                                   DeviceArray& out) {
  ASSIGN_OR_RETURN(auto s, Resolve(stream));
  RETURN_IF_ERROR(CheckArray(a, s, "Negative input"));
  RETURN_IF_ERROR(CheckArray(out, s, "Negative output"));
  if (a.dtype != out.dtype || a.dtype == DType::kBool) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Negative: not supported for ", Describe(a), " -> ", Describe(out)));
  }
  if (a.shape != out.shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Negative: shapes differ: ", Describe(a), " -> ", Describe(out)));
  }
  DeviceGuard guard(device_->ordinal);
  return LaunchStatus(*device_,
                      k::Negate(Launch(*s), ToElemType(a.dtype), a.data(),
                                out.data(), out.num_elements()),
                      "Negative");
}

absl::Status CudaBackend::Cast(Stream& stream, const DeviceArray& a,
                               DeviceArray& out) {
  ASSIGN_OR_RETURN(auto s, Resolve(stream));
  RETURN_IF_ERROR(CheckArray(a, s, "Cast input"));
  RETURN_IF_ERROR(CheckArray(out, s, "Cast output"));
  if (!BroadcastsTo(a.shape, out.shape)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Cast: ", Describe(a), " does not broadcast to ", Describe(out)));
  }
  const int64_t n = out.num_elements();
  if (n == 0) return absl::OkStatus();
  if (a.data() == out.data() &&
      (a.num_elements() != n || ItemSize(a.dtype) != ItemSize(out.dtype))) {
    return absl::InvalidArgumentError(
        "Cast: output shares a buffer with an input of another layout");
  }
  const std::vector<int64_t> strides[1] = {BroadcastStrides(a.shape, out.shape)};
  const k::StridedLayout layout = CollapseLayout(out.shape, strides);
  DeviceGuard guard(device_->ordinal);
  cudaError_t e;
  if (layout.rank == 0 || (layout.rank == 1 && layout.stride[0][0] == 1)) {
    e = k::CastContiguous(Launch(*s), ToElemType(a.dtype), ToElemType(out.dtype),
                          a.data(), out.data(), n);
  } else {
    e = k::CastStrided(Launch(*s), ToElemType(a.dtype), ToElemType(out.dtype),
                       a.data(), out.data(), layout);
  }
  return LaunchStatus(*device_, e, "Cast");
}

absl::Status CudaBackend::Matmul(Stream& stream, const MatmulShape& shape,
                                 const DeviceArray& a, const DeviceArray& b,
                                 DeviceArray& out) {
  ASSIGN_OR_RETURN(auto s, Resolve(stream));
  RETURN_IF_ERROR(CheckArray(a, s, "Matmul operand a"));
  RETURN_IF_ERROR(CheckArray(b, s, "Matmul operand b"));
  RETURN_IF_ERROR(CheckArray(out, s, "Matmul output"));
  if (a.dtype != out.dtype || b.dtype != out.dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat("Matmul: dtypes differ: ", Describe(a), ", ", Describe(b),
                     " -> ", Describe(out)));
  }
  const auto& [batch, m, kk, n, a_stride, b_stride] = shape;
  if (batch < 0 || m < 0 || kk < 0 || n < 0 || a_stride < 0 || b_stride < 0) {
    return absl::InvalidArgumentError("Matmul: negative dimension or stride");
  }
  int64_t out_elements;
  if (!Mul64(batch, m, &out_elements) || !Mul64(out_elements, n, &out_elements) ||
      out_elements != out.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Matmul: output ", Describe(out), " does not hold ", batch, " x ", m,
        " x ", n));
  }
  if (out_elements == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(const int64_t a_need, MatmulExtent(batch, a_stride, m, kk));
  ASSIGN_OR_RETURN(const int64_t b_need, MatmulExtent(batch, b_stride, kk, n));
  if (a_need > a.num_elements() || b_need > b.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Matmul: operands ", Describe(a), ", ", Describe(b),
        " are too small for batch ", batch, " of ", m, "x", kk, " @ ", kk, "x", n));
  }
  if (out.data() == a.data() || out.data() == b.data()) {
    return absl::InvalidArgumentError("Matmul: output shares a buffer with an input");
  }
  DeviceGuard guard(device_->ordinal);
  if (IsFloating(out.dtype) && kk > 0) return MatmulFloat(s, shape, a, b, out);
  // Integers and bool, and k == 0 for every dtype (the kernel writes zeros).
  if (IsFloating(out.dtype)) {
    return LaunchStatus(*device_,
                        k::FillBits(Launch(*s), out.data(),
                                    static_cast<int>(ItemSize(out.dtype)), 0,
                                    out_elements),
                        "Matmul (k = 0)");
  }
  return LaunchStatus(*device_,
                      k::MatmulInt(Launch(*s), ToElemType(out.dtype), a.data(),
                                   b.data(), out.data(), batch, m, kk, n,
                                   a_stride, b_stride),
                      "Matmul");
}

// Row-major C = A @ B is column-major C^T = B^T @ A^T: cuBLAS gets B as its
// first operand (n x k, leading dimension n) and A second (k x m, leading
// dimension k), and writes C^T (n x m, leading dimension n), which is C in
// row-major. 64-bit cuBLAS entry points, so no dimension limit below 2^63.
absl::Status CudaBackend::MatmulFloat(const std::shared_ptr<StreamState>& s,
                                      const MatmulShape& shape,
                                      const DeviceArray& a, const DeviceArray& b,
                                      DeviceArray& out) {
  ASSIGN_OR_RETURN(cublasHandle_t handle, s->Cublas());
  const auto& [batch, m, kk, n, a_stride, b_stride] = shape;
  cublasStatus_t st;
  if (out.dtype == DType::kFloat32) {
    const float one = 1.0f, zero = 0.0f;
    const float* pa = static_cast<const float*>(a.data());
    const float* pb = static_cast<const float*>(b.data());
    float* pc = static_cast<float*>(out.data());
    st = batch == 1 ? cublasSgemm_64(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, kk,
                                     &one, pb, n, pa, kk, &zero, pc, n)
                    : cublasSgemmStridedBatched_64(
                          handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, kk, &one, pb,
                          n, b_stride, pa, kk, a_stride, &zero, pc, n, m * n,
                          batch);
  } else {
    const double one = 1.0, zero = 0.0;
    const double* pa = static_cast<const double*>(a.data());
    const double* pb = static_cast<const double*>(b.data());
    double* pc = static_cast<double*>(out.data());
    st = batch == 1 ? cublasDgemm_64(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, kk,
                                     &one, pb, n, pa, kk, &zero, pc, n)
                    : cublasDgemmStridedBatched_64(
                          handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, kk, &one, pb,
                          n, b_stride, pa, kk, a_stride, &zero, pc, n, m * n,
                          batch);
  }
  RETURN_IF_ERROR(CublasStatus(st, "cuBLAS gemm", &device_->poisoned));
  return LaunchStatus(*device_, cudaPeekAtLastError(), "cuBLAS gemm launch");
}

absl::Status CudaBackend::Sum(Stream& stream, const DeviceArray& a,
                              std::optional<int> axis, DeviceArray& out) {
  ASSIGN_OR_RETURN(auto s, Resolve(stream));
  RETURN_IF_ERROR(CheckArray(a, s, "Sum input"));
  RETURN_IF_ERROR(CheckArray(out, s, "Sum output"));
  if (out.dtype != SumResultType(a.dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Sum: output of ", Describe(a), " must be ",
        TypeName(SumResultType(a.dtype)), ", not ", Describe(out)));
  }
  const int rank = static_cast<int>(a.shape.size());
  int64_t outer = 1, len = a.num_elements(), inner = 1;
  Shape expected;
  if (axis.has_value()) {
    int ax = *axis;
    if (ax < 0) ax += rank;
    if (ax < 0 || ax >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("Sum: axis ", *axis, " is out of range for ", Describe(a)));
    }
    outer = NumElements(absl::MakeConstSpan(a.shape).subspan(0, ax));
    len = a.shape[ax];
    inner = NumElements(absl::MakeConstSpan(a.shape).subspan(ax + 1));
    expected = a.shape;
    expected.erase(expected.begin() + ax);
  }
  if (out.shape != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Sum: output ", Describe(out), " should have shape ",
        ShapeString(expected)));
  }
  if (outer * inner == 0) return absl::OkStatus();
  DeviceGuard guard(device_->ordinal);
  const k::LaunchContext ctx = Launch(*s);
  const k::ElemType t = ToElemType(a.dtype);
  const size_t temp_bytes = k::SumAxisTempBytes(ctx, t, outer, len, inner);
  std::shared_ptr<CudaBuffer> temp;
  if (temp_bytes > 0) {
    ASSIGN_OR_RETURN(temp, AllocateOn(s, static_cast<int64_t>(temp_bytes)));
  }
  // `temp` is freed (stream-ordered, after the sum) when it goes out of scope.
  return LaunchStatus(
      *device_,
      k::SumAxis(ctx, t, a.data(), outer, len, inner, out.data(),
                 temp ? temp->data() : nullptr, temp_bytes),
      "Sum");
}

absl::Status CudaBackend::Transpose(Stream& stream, const DeviceArray& a,
                                    absl::Span<const int> perm,
                                    DeviceArray& out) {
  ASSIGN_OR_RETURN(auto s, Resolve(stream));
  RETURN_IF_ERROR(CheckArray(a, s, "Transpose input"));
  RETURN_IF_ERROR(CheckArray(out, s, "Transpose output"));
  const size_t rank = a.shape.size();
  if (a.dtype != out.dtype || perm.size() != rank || out.shape.size() != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Transpose: ", Describe(a), " -> ", Describe(out), " with axes (",
        absl::StrJoin(perm, ", "), ")"));
  }
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < rank; ++i) {
    const int p = perm[i];
    if (p < 0 || static_cast<size_t>(p) >= rank || seen[p] ||
        out.shape[i] != a.shape[p]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Transpose: axes (", absl::StrJoin(perm, ", "),
          ") are not a permutation taking ", Describe(a), " to ", Describe(out)));
    }
    seen[p] = true;
  }
  const int64_t n = out.num_elements();
  if (n == 0) return absl::OkStatus();
  if (a.data() == out.data()) {
    return absl::InvalidArgumentError("Transpose: output shares the input's buffer");
  }
  const std::vector<int64_t> in_strides = ContiguousStrides(a.shape);
  std::vector<int64_t> strides[1] = {std::vector<int64_t>(rank)};
  for (size_t i = 0; i < rank; ++i) strides[0][i] = in_strides[perm[i]];
  const k::StridedLayout l = CollapseLayout(out.shape, strides);
  const k::ElemType t = ToElemType(a.dtype);
  const int item = static_cast<int>(ItemSize(a.dtype));
  DeviceGuard guard(device_->ordinal);
  cudaError_t e;
  if (l.rank == 0 || (l.rank == 1 && l.stride[0][0] == 1)) {
    e = k::CastContiguous(Launch(*s), t, t, a.data(), out.data(), n);
  } else if (l.rank == 2 && l.stride[0][0] == 1 && l.stride[0][1] == l.shape[0]) {
    // out (C, R) from a contiguous (R, C).
    e = k::TransposeBatched2D(Launch(*s), item, a.data(), out.data(), 1,
                              l.shape[1], l.shape[0]);
  } else if (l.rank == 3 && l.stride[0][1] == 1 && l.stride[0][2] == l.shape[1] &&
             l.stride[0][0] == l.shape[1] * l.shape[2]) {
    // out (B, C, R) from a contiguous (B, R, C).
    e = k::TransposeBatched2D(Launch(*s), item, a.data(), out.data(), l.shape[0],
                              l.shape[2], l.shape[1]);
  } else {
    e = k::CastStrided(Launch(*s), t, t, a.data(), out.data(), l);
  }
  return LaunchStatus(*device_, e, "Transpose");
}

}  // namespace resident::cuda_internal

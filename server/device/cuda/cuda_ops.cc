// The CUDA backend's ops: Run checks the stream and every operand once
// (CheckOperands, then device and rank), then one Do() per op struct checks
// what is particular to that op (every op checks what the executor should
// already have made right, so a bug upstream is INVALID_ARGUMENT, not a
// poisoned device) and picks and launches the kernel. Kernels are in
// kernels/cuda; float matmul goes through cuBLAS.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <variant>
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

absl::Status LaunchStatus(DeviceState& device, cudaError_t e, absl::string_view what) {
  return device.Check(e, what);
}

// DTypeName as a std::string (Debian's Abseil has its own string_view).
std::string TypeName(DType d) { return std::string(DTypeName(d)); }

std::string Describe(const DeviceArray& a) {
  return absl::StrCat(TypeName(a.dtype), ShapeString(a.shape));
}

// The bit pattern of `value` converted to `dtype` as numpy.full converts it
// (core/scalar.h's ScalarAs, which the CPU backend's Fill uses too).
uint64_t ScalarBits(const Scalar& value, DType dtype) {
  return VisitDType(
      dtype,
      [&](auto zero) {
        using T = decltype(zero);
        const T v = ScalarAs<T>(value);
        uint64_t bits = 0;
        std::memcpy(&bits, &v, sizeof(T));
        return bits;
      },
      [] { return uint64_t{0}; });
}

bool Mul64(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// Elements an operand of a matmul must hold: (batch-1)*stride + rows*cols.
absl::StatusOr<int64_t> MatmulExtent(int64_t batch, int64_t stride, int64_t rows, int64_t cols) {
  int64_t matrix, reach;
  if (!Mul64(rows, cols, &matrix) || !Mul64(batch - 1, stride, &reach) ||
      __builtin_add_overflow(reach, matrix, &reach)) {
    return absl::InvalidArgumentError("matmul operand size overflows");
  }
  return reach;
}

}  // namespace

absl::Status CudaBackend::Run(Stream& stream, const DeviceOp& op) {
  ASSIGN_OR_RETURN(StreamRef s, Resolve(stream));
  RETURN_IF_ERROR(CheckOperands(op));
  for (const OpOperand& o : Operands(op)) {
    RETURN_IF_ERROR(CheckOnDevice(*o.array, s, OpLabel(op), o.role));
  }
  DeviceGuard guard(device_->ordinal);
  return std::visit([&](const auto& o) { return Do(s, o); }, op);
}

absl::Status CudaBackend::Do(const StreamRef& s, const FillOp& op) {
  const DeviceArray& out = *op.out;
  if (IsComplex(out.dtype)) {
    // (real, imaginary): 8 bytes for complex64, two words for complex128.
    uint64_t words[2] = {0, 0};
    cudaError_t e;
    if (out.dtype == DType::kComplex64) {
      const Complex64 v = ScalarAs<Complex64>(op.value);
      std::memcpy(words, &v, sizeof(v));
      e = k::FillBits(Launch(*s), out.data(), 8, words[0], out.num_elements());
    } else {
      const Complex128 v = ScalarAs<Complex128>(op.value);
      std::memcpy(words, &v, sizeof(v));
      e = k::FillBits128(Launch(*s), out.data(), words[0], words[1], out.num_elements());
    }
    return LaunchStatus(*device_, e, "Fill");
  }
  return LaunchStatus(*device_,
                      k::FillBits(Launch(*s), out.data(), static_cast<int>(ItemSize(out.dtype)),
                                  ScalarBits(op.value, out.dtype), out.num_elements()),
                      "Fill");
}

absl::Status CudaBackend::Do(const StreamRef& s, const ArangeOp& op) {
  const DeviceArray& out = *op.out;
  if (out.shape.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Arange: output must be 1-D, not ", Describe(out)));
  }
  if (out.dtype == DType::kBool) {
    return absl::InvalidArgumentError("Arange: does not fill bool arrays");
  }
  const int64_t n = out.num_elements();
  cudaError_t e;
  if (IsFloating(out.dtype)) {
    e = k::ArangeFloat(Launch(*s), out.dtype, op.start.as_double(), op.delta.as_double(),
                       out.data(), n);
    // The two elements NumPy stores rather than fills (-0.0 stays -0.0;
    // float start + step is rounded once, from double): one element each.
    const int item = static_cast<int>(ItemSize(out.dtype));
    if (e == cudaSuccess && n > 0) {
      e = k::FillBits(Launch(*s), out.data(), item, ScalarBits(op.start, out.dtype), 1);
    }
    if (e == cudaSuccess && n > 1) {
      e = k::FillBits(Launch(*s), static_cast<char*>(out.data()) + item, item,
                      ScalarBits(op.second, out.dtype), 1);
    }
  } else {
    e = k::ArangeInt(Launch(*s), out.dtype, op.start.as_int64(), op.delta.as_int64(), out.data(),
                     n);
  }
  return LaunchStatus(*device_, e, "Arange");
}

absl::Status CudaBackend::Do(const StreamRef& s, const ElementwiseOp& op) {
  const DeviceArray& out = *op.out;
  const char* name = ElementwiseName(op.kind);
  for (int i = 0; i < Arity(op.kind); ++i) {
    if (op.in[i]->dtype != out.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": dtypes differ: ", Describe(*op.in[i]), " -> ", Describe(out)));
    }
  }
  if (!ElementwiseAccepts(op.kind, out.dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": not supported for ", TypeName(out.dtype)));
  }
  // Every kind shares the binary path (the kernels switch on the kind; a
  // unary kind reads its input as both operands and uses one), but real
  // negative, whose kernel flips the sign bit as x86 does for NaNs.
  if (op.kind == ElementwiseKind::kNegative && !IsComplex(out.dtype)) {
    return Negative(s, *op.in[0], out);
  }
  const DeviceArray& b = Arity(op.kind) == 2 ? *op.in[1] : *op.in[0];
  return Binary(s, op.kind, *op.in[0], b, out);
}

absl::Status CudaBackend::Binary(const StreamRef& s, ElementwiseKind kind, const DeviceArray& a,
                                 const DeviceArray& b, const DeviceArray& out) {
  const char* name = ElementwiseName(kind);
  for (const DeviceArray* in : {&a, &b}) {
    if (!BroadcastsTo(in->shape, out.shape)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": ", Describe(*in), " does not broadcast to ", Describe(out)));
    }
    // In-place is allowed only for an input of out's own shape.
    if (in->data() != nullptr && in->data() == out.data() &&
        in->num_elements() != out.num_elements()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": output shares a buffer with a broadcast input"));
    }
  }
  const int64_t n = out.num_elements();
  if (n == 0) return absl::OkStatus();
  const std::vector<int64_t> strides[2] = {BroadcastStrides(a.shape, out.shape),
                                           BroadcastStrides(b.shape, out.shape)};
  const k::StridedLayout layout = CollapseLayout(out.shape, strides);
  const DType t = out.dtype;
  cudaError_t e;
  const int64_t sa = layout.rank == 0 ? 1 : layout.stride[0][0];
  const int64_t sb = layout.rank == 0 ? 1 : layout.stride[1][0];
  if (IsComplex(t)) {  // one strided kernel (kernels/cuda/complex.cu)
    e = k::ComplexStrided(Launch(*s), t, kind, a.data(), b.data(), out.data(), layout);
  } else if (layout.rank <= 1 && sa == 1 && sb == 1) {
    e = k::BinaryContiguous(Launch(*s), t, kind, a.data(), b.data(), out.data(), n);
  } else if (layout.rank <= 1 && sa == 1 && sb == 0) {
    e = k::BinaryScalar(Launch(*s), t, kind, a.data(), b.data(),
                        /*scalar_on_left=*/false, out.data(), n);
  } else if (layout.rank <= 1 && sa == 0 && sb == 1) {
    e = k::BinaryScalar(Launch(*s), t, kind, b.data(), a.data(),
                        /*scalar_on_left=*/true, out.data(), n);
  } else {
    e = k::BinaryStrided(Launch(*s), t, kind, a.data(), b.data(), out.data(), layout);
  }
  return LaunchStatus(*device_, e, name);
}

absl::Status CudaBackend::Negative(const StreamRef& s, const DeviceArray& a,
                                   const DeviceArray& out) {
  if (a.shape != out.shape) {
    return absl::InvalidArgumentError(
        absl::StrCat("negative: shapes differ: ", Describe(a), " -> ", Describe(out)));
  }
  return LaunchStatus(*device_,
                      k::Negate(Launch(*s), a.dtype, a.data(), out.data(), out.num_elements()),
                      "negative");
}

absl::Status CudaBackend::Do(const StreamRef& s, const CastOp& op) {
  const DeviceArray &a = *op.in, &out = *op.out;
  if (!BroadcastsTo(a.shape, out.shape)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Cast: ", Describe(a), " does not broadcast to ", Describe(out)));
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
  cudaError_t e;
  if (layout.rank == 0 || (layout.rank == 1 && layout.stride[0][0] == 1)) {
    e = k::CastContiguous(Launch(*s), a.dtype, out.dtype, a.data(), out.data(), n);
  } else {
    e = k::CastStrided(Launch(*s), a.dtype, out.dtype, a.data(), out.data(), layout);
  }
  return LaunchStatus(*device_, e, "Cast");
}

absl::Status CudaBackend::Do(const StreamRef& s, const MatmulOp& op) {
  const DeviceArray &a = *op.a, &b = *op.b, &out = *op.out;
  if (a.dtype != out.dtype || b.dtype != out.dtype) {
    return absl::InvalidArgumentError(absl::StrCat("Matmul: dtypes differ: ", Describe(a), ", ",
                                                   Describe(b), " -> ", Describe(out)));
  }
  const auto& [batch, m, kk, n, a_stride, b_stride] = op.shape;
  if (batch < 0 || m < 0 || kk < 0 || n < 0 || a_stride < 0 || b_stride < 0) {
    return absl::InvalidArgumentError("Matmul: negative dimension or stride");
  }
  int64_t out_elements;
  if (!Mul64(batch, m, &out_elements) || !Mul64(out_elements, n, &out_elements) ||
      out_elements != out.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat("Matmul: output ", Describe(out),
                                                   " does not hold ", batch, " x ", m, " x ", n));
  }
  if (out_elements == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(const int64_t a_need, MatmulExtent(batch, a_stride, m, kk));
  ASSIGN_OR_RETURN(const int64_t b_need, MatmulExtent(batch, b_stride, kk, n));
  if (a_need > a.num_elements() || b_need > b.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat("Matmul: operands ", Describe(a), ", ",
                                                   Describe(b), " are too small for batch ", batch,
                                                   " of ", m, "x", kk, " @ ", kk, "x", n));
  }
  if (out.data() == a.data() || out.data() == b.data()) {
    return absl::InvalidArgumentError("Matmul: output shares a buffer with an input");
  }
  const bool blas = IsFloating(out.dtype) || IsComplex(out.dtype);
  if (blas && kk > 0) return MatmulFloat(s, op.shape, a, b, out);
  // Integers and bool, and k == 0 for every dtype (the kernel writes zeros).
  if (blas) {
    return LaunchStatus(
        *device_,
        k::FillBits(Launch(*s), out.data(), static_cast<int>(ItemSize(out.dtype)), 0, out_elements),
        "Matmul (k = 0)");
  }
  return LaunchStatus(*device_,
                      k::MatmulInt(Launch(*s), out.dtype, a.data(), b.data(), out.data(), batch, m,
                                   kk, n, a_stride, b_stride),
                      "Matmul");
}

// Row-major C = A @ B is column-major C^T = B^T @ A^T: cuBLAS gets B as its
// first operand (n x k, leading dimension n) and A second (k x m, leading
// dimension k), and writes C^T (n x m, leading dimension n), which is C in
// row-major. The 32-bit entry points (those CuPy calls) when every
// dimension fits an int, the 64-bit ones beyond.
// v as a gemm scalar of T (cuBLAS's complex types are structs).
template <typename T>
T GemmScalar(int v) {
  if constexpr (std::is_same_v<T, cuComplex>) {
    return make_cuComplex(static_cast<float>(v), 0.0f);
  } else if constexpr (std::is_same_v<T, cuDoubleComplex>) {
    return make_cuDoubleComplex(static_cast<double>(v), 0.0);
  } else {
    return static_cast<T>(v);
  }
}

template <typename T, typename GemmFn, typename BatchedFn>
cublasStatus_t Gemm(cublasHandle_t handle, const MatmulShape& shape, const DeviceArray& a,
                    const DeviceArray& b, const DeviceArray& out, GemmFn gemm, BatchedFn batched) {
  const auto& [batch, m, kk, n, a_stride, b_stride] = shape;
  const T one = GemmScalar<T>(1), zero = GemmScalar<T>(0);
  const T* pa = static_cast<const T*>(a.data());
  const T* pb = static_cast<const T*>(b.data());
  T* pc = static_cast<T*>(out.data());
  return batch == 1
             ? gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, kk, &one, pb, n, pa, kk, &zero, pc, n)
             : batched(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, kk, &one, pb, n, b_stride, pa, kk,
                       a_stride, &zero, pc, n, m * n, batch);
}

// float16 / bfloat16: cublasGemmEx with the half type in and out and float
// accumulation (CUBLAS_COMPUTE_32F), each result rounded once: what
// NumPy's float16 matmul computes (in float32, rounded back). Same operand
// order as Gemm above.
static cublasStatus_t HalfGemm(cublasHandle_t handle, const MatmulShape& shape,
                               const DeviceArray& a, const DeviceArray& b, const DeviceArray& out,
                               bool narrow) {
  const auto& [batch, m, kk, n, a_stride, b_stride] = shape;
  const cudaDataType_t t = out.dtype == DType::kFloat16 ? CUDA_R_16F : CUDA_R_16BF;
  const float one = 1.0f, zero = 0.0f;
  const void* pa = a.data();
  const void* pb = b.data();
  void* pc = out.data();
  constexpr cublasOperation_t kN = CUBLAS_OP_N;
  if (narrow) {
    const int in = static_cast<int>(n), im = static_cast<int>(m), ik = static_cast<int>(kk);
    return batch == 1 ? cublasGemmEx(handle, kN, kN, in, im, ik, &one, pb, t, in, pa, t, ik, &zero,
                                     pc, t, in, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)
                      : cublasGemmStridedBatchedEx(handle, kN, kN, in, im, ik, &one, pb, t, in,
                                                   b_stride, pa, t, ik, a_stride, &zero, pc, t, in,
                                                   m * n, static_cast<int>(batch),
                                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  }
  return batch == 1 ? cublasGemmEx_64(handle, kN, kN, n, m, kk, &one, pb, t, n, pa, t, kk, &zero,
                                      pc, t, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)
                    : cublasGemmStridedBatchedEx_64(
                          handle, kN, kN, n, m, kk, &one, pb, t, n, b_stride, pa, t, kk, a_stride,
                          &zero, pc, t, n, m * n, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

absl::Status CudaBackend::MatmulFloat(const StreamRef& s, const MatmulShape& shape,
                                      const DeviceArray& a, const DeviceArray& b,
                                      const DeviceArray& out) {
  ASSIGN_OR_RETURN(cublasHandle_t handle, s->Cublas());
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  const bool narrow =
      shape.batch <= kIntMax && shape.m <= kIntMax && shape.k <= kIntMax && shape.n <= kIntMax;
  // The int API's arguments, narrowed where `narrow` says they fit.
  auto as_int = [](auto f) {
    return [f](cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t n, int64_t m,
               int64_t k, auto... rest) {
      return f(h, ta, tb, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), rest...);
    };
  };
  cublasStatus_t st;
  if (IsHalf(out.dtype)) {
    st = HalfGemm(handle, shape, a, b, out, narrow);
  } else if (out.dtype == DType::kComplex64) {  // cublasCgemm, as CuPy
    st = narrow ? Gemm<cuComplex>(handle, shape, a, b, out, as_int(cublasCgemm),
                                  as_int(cublasCgemmStridedBatched))
                : Gemm<cuComplex>(handle, shape, a, b, out, cublasCgemm_64,
                                  cublasCgemmStridedBatched_64);
  } else if (out.dtype == DType::kComplex128) {  // cublasZgemm
    st = narrow ? Gemm<cuDoubleComplex>(handle, shape, a, b, out, as_int(cublasZgemm),
                                        as_int(cublasZgemmStridedBatched))
                : Gemm<cuDoubleComplex>(handle, shape, a, b, out, cublasZgemm_64,
                                        cublasZgemmStridedBatched_64);
  } else if (out.dtype == DType::kFloat32) {
    st = narrow
             ? Gemm<float>(handle, shape, a, b, out, as_int(cublasSgemm),
                           as_int(cublasSgemmStridedBatched))
             : Gemm<float>(handle, shape, a, b, out, cublasSgemm_64, cublasSgemmStridedBatched_64);
  } else {
    st = narrow
             ? Gemm<double>(handle, shape, a, b, out, as_int(cublasDgemm),
                            as_int(cublasDgemmStridedBatched))
             : Gemm<double>(handle, shape, a, b, out, cublasDgemm_64, cublasDgemmStridedBatched_64);
  }
  RETURN_IF_ERROR(CublasStatus(st, "cuBLAS gemm", &device_->poisoned));
  return LaunchStatus(*device_, cudaPeekAtLastError(), "cuBLAS gemm launch");
}

absl::Status CudaBackend::Do(const StreamRef& s, const ReduceOp& op) {
  if (op.kind != ReduceKind::kSum) {
    return absl::InvalidArgumentError("ReduceOp is for sums; use ReduceAxesOp");
  }
  return Sum(s, *op.in, op.axis, *op.out);
}

absl::Status CudaBackend::Sum(const StreamRef& s, const DeviceArray& a, std::optional<int> axis,
                              const DeviceArray& out) {
  if (out.dtype != SumResultType(a.dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("Sum: output of ", Describe(a), " must be ",
                                                   TypeName(SumResultType(a.dtype)), ", not ",
                                                   Describe(out)));
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
    return absl::InvalidArgumentError(
        absl::StrCat("Sum: output ", Describe(out), " should have shape ", ShapeString(expected)));
  }
  if (outer * inner == 0) return absl::OkStatus();
  const k::LaunchContext ctx = Launch(*s);
  const DType t = a.dtype;
  const size_t temp_bytes = k::SumAxisTempBytes(ctx, t, outer, len, inner);
  std::shared_ptr<CudaBuffer> temp;
  if (temp_bytes > 0) {
    ASSIGN_OR_RETURN(temp, AllocateOn(s, static_cast<int64_t>(temp_bytes)));
  }
  // `temp` is freed (stream-ordered, after the sum) when it goes out of scope.
  return LaunchStatus(*device_,
                      k::SumAxis(ctx, t, a.data(), outer, len, inner, out.data(),
                                 temp ? temp->data() : nullptr, temp_bytes),
                      "Sum");
}

absl::Status CudaBackend::Do(const StreamRef& s, const TransposeOp& op) {
  const DeviceArray &a = *op.in, &out = *op.out;
  const absl::Span<const int> perm = op.perm;
  const size_t rank = a.shape.size();
  if (a.dtype != out.dtype || perm.size() != rank || out.shape.size() != rank) {
    return absl::InvalidArgumentError(absl::StrCat("Transpose: ", Describe(a), " -> ",
                                                   Describe(out), " with axes (",
                                                   absl::StrJoin(perm, ", "), ")"));
  }
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < rank; ++i) {
    const int p = perm[i];
    if (p < 0 || static_cast<size_t>(p) >= rank || seen[p] || out.shape[i] != a.shape[p]) {
      return absl::InvalidArgumentError(absl::StrCat("Transpose: axes (", absl::StrJoin(perm, ", "),
                                                     ") are not a permutation taking ", Describe(a),
                                                     " to ", Describe(out)));
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
  const DType t = a.dtype;
  const int item = static_cast<int>(ItemSize(a.dtype));
  cudaError_t e;
  if (l.rank == 0 || (l.rank == 1 && l.stride[0][0] == 1)) {
    e = k::CastContiguous(Launch(*s), t, t, a.data(), out.data(), n);
  } else if (l.rank == 2 && l.stride[0][0] == 1 && l.stride[0][1] == l.shape[0]) {
    // out (C, R) from a contiguous (R, C).
    e = k::TransposeBatched2D(Launch(*s), item, a.data(), out.data(), 1, l.shape[1], l.shape[0]);
  } else if (l.rank == 3 && l.stride[0][1] == 1 && l.stride[0][2] == l.shape[1] &&
             l.stride[0][0] == l.shape[1] * l.shape[2]) {
    // out (B, C, R) from a contiguous (B, R, C).
    e = k::TransposeBatched2D(Launch(*s), item, a.data(), out.data(), l.shape[0], l.shape[2],
                              l.shape[1]);
  } else {
    e = k::CastStrided(Launch(*s), t, t, a.data(), out.data(), l);
  }
  return LaunchStatus(*device_, e, "Transpose");
}

}  // namespace resident::cuda_internal

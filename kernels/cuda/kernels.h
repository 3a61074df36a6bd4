// CUDA kernels of the CUDA backend, behind plain C++ launch functions.
//
// This header is plain C++: server/device/cuda/*.cc include it without
// nvcc. The only CUDA types it names are cudaStream_t and cudaError_t; the
// element types and elementwise ops are core's DType and ElementwiseKind, the
// same vocabulary the CPU kernels and the backends use (a bool element is
// StorageType<kBool>, one uint8_t byte, on both). Every
// launch function queues work on `ctx.stream` and returns the launch error
// (cudaGetLastError), cudaSuccess when nothing needed launching.
//
// The caller has validated everything (dtypes, shapes, sizes, strides); these
// functions trust their arguments. Element counts and strides are in
// elements, never bytes. Semantics follow NumPy as the CPU reference defines
// them (server/device/device_op.h): elementwise float results bit-identical
// (compiled with --fmad=false, plain IEEE operations), integers wrap, bool
// add/multiply are or/and.
#ifndef RESIDENT_KERNELS_CUDA_KERNELS_H_
#define RESIDENT_KERNELS_CUDA_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"
#include "core/elementwise_kind.h"

namespace resident::cuda_kernels {

// Where and how wide to launch.
struct LaunchContext {
  cudaStream_t stream = nullptr;
  int sm_count = 1;  // multiprocessors of the device, to size grids
};

// Most dimensions an elementwise layout can carry (NumPy's limit).
inline constexpr int kMaxLayoutRank = 64;

// An output of `rank` dimensions (C-contiguous) and, for up to two inputs,
// the stride in elements of each output dimension in that input (0 where the
// input is broadcast). The backend collapses dimensions first (drops 1s,
// merges dimensions contiguous in every operand), so rank is usually 1-3.
struct StridedLayout {
  int32_t rank = 0;
  int64_t shape[kMaxLayoutRank];
  int64_t stride[2][kMaxLayoutRank];
};

// --- elementwise.cu ----------------------------------------------------------

// out[i] = a[i] op b[i], n elements, all contiguous, for any `op` but
// kNegative (it, or an op `t` does not accept, is cudaErrorInvalidValue); a
// unary op is called with b == a and reads a. Bool-valued ops (comparisons,
// isnan) write 0/1 of t. a, b and out may alias (a == b is detected and read
// once).
cudaError_t BinaryContiguous(const LaunchContext& ctx, DType t, ElementwiseKind op, const void* a,
                             const void* b, void* out, int64_t n);
// One operand is a single element: out[i] = a[i] op s (scalar_on_left:
// s op a[i]). `scalar` is a device pointer to that element.
cudaError_t BinaryScalar(const LaunchContext& ctx, DType t, ElementwiseKind op, const void* a,
                         const void* scalar, bool scalar_on_left, void* out, int64_t n);
// General broadcasting: out (contiguous, layout.shape) = a op b with a's
// strides in layout.stride[0] and b's in layout.stride[1].
cudaError_t BinaryStrided(const LaunchContext& ctx, DType t, ElementwiseKind op, const void* a,
                          const void* b, void* out, const StridedLayout& layout);
// out[i] = -a[i] (integers wrap), n contiguous elements; may alias.
cudaError_t Negate(const LaunchContext& ctx, DType t, const void* a, void* out, int64_t n);
// out = op(a, b) over complex64 / complex128 (ComplexKernelKind(op); a unary
// op reads a), strided as BinaryStrided; kernels/cuda/complex.cu.
cudaError_t ComplexStrided(const LaunchContext& ctx, DType t, ElementwiseKind op, const void* a,
                           const void* b, void* out, const StridedLayout& layout);

// --- cast.cu -----------------------------------------------------------------

// out[i] = convert(a[i]) for n contiguous elements. Float to integer
// truncates toward zero; NaN and out-of-range give the integer minimum;
// anything to bool is != 0. from == to is a copy.
cudaError_t CastContiguous(const LaunchContext& ctx, DType from, DType to, const void* a, void* out,
                           int64_t n);
// The same with a strided/broadcast input: out (contiguous, layout.shape)
// reads a through layout.stride[0]. Also used for transposes.
cudaError_t CastStrided(const LaunchContext& ctx, DType from, DType to, const void* a, void* out,
                        const StridedLayout& layout);

// --- fill.cu -----------------------------------------------------------------

// Sets n elements of `item_size` bytes (1, 2, 4 or 8) to the bit pattern in
// the low bytes of `bits`.
cudaError_t FillBits(const LaunchContext& ctx, void* out, int item_size, uint64_t bits, int64_t n);
// n 16-byte elements of the pattern (lo, hi): complex128 fills.
cudaError_t FillBits128(const LaunchContext& ctx, void* out, uint64_t lo, uint64_t hi, int64_t n);
// out[i] = start + T(i) * delta in T = t's own arithmetic (NumPy's arange
// fill): wrapping for int32/int64; for float32/float64 start and delta are
// first rounded to T. Not for bool.
cudaError_t ArangeInt(const LaunchContext& ctx, DType t, int64_t start, int64_t delta, void* out,
                      int64_t n);
cudaError_t ArangeFloat(const LaunchContext& ctx, DType t, double start, double delta, void* out,
                        int64_t n);

// --- reduce.cu ---------------------------------------------------------------

// Sum of all n elements of `in` into out[0] (type SumResultType(t)). Integers
// accumulate in wrapping 64-bit arithmetic, float32 and float64 in double.
// n == 0 writes 0. Needs SumAllTempBytes() bytes of device scratch `temp`
// (nullptr when that is 0), which must stay allocated until the work is done
// (a stream-ordered free after the launch does that).
size_t SumAllTempBytes(const LaunchContext& ctx, DType t, int64_t n);
cudaError_t SumAll(const LaunchContext& ctx, DType t, const void* in, int64_t n, void* out,
                   void* temp, size_t temp_bytes);

// Sum over the middle axis of `in` viewed as [outer, len, inner] into out
// [outer, inner], with SumAll's accumulation and scratch protocol (scratch
// is needed when the axis is long and the output small, to split the axis).
size_t SumAxisTempBytes(const LaunchContext& ctx, DType t, int64_t outer, int64_t len,
                        int64_t inner);
cudaError_t SumAxis(const LaunchContext& ctx, DType t, const void* in, int64_t outer, int64_t len,
                    int64_t inner, void* out, void* temp, size_t temp_bytes);

// --- matmul_int.cu -----------------------------------------------------------

// Row-major batched out[i] (m x n) = a[i] (m x k) @ b[i] (k x n) for bool
// (or of ands), int32 and int64 (wrapping). a[i] starts at i * a_stride.
// k == 0 writes zeros. Floats go through cuBLAS in the backend.
cudaError_t MatmulInt(const LaunchContext& ctx, DType t, const void* a, const void* b, void* out,
                      int64_t batch, int64_t m, int64_t k, int64_t n, int64_t a_stride,
                      int64_t b_stride);

// --- transpose.cu ------------------------------------------------------------

// in is [batch, rows, cols] contiguous; out[b][c][r] = in[b][r][c]. Tiled
// through shared memory so both sides are coalesced. item_size 1, 4 or 8.
cudaError_t TransposeBatched2D(const LaunchContext& ctx, int item_size, const void* in, void* out,
                               int64_t batch, int64_t rows, int64_t cols);

}  // namespace resident::cuda_kernels

#endif  // RESIDENT_KERNELS_CUDA_KERNELS_H_

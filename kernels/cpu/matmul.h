// Batched row-major matrix product. float32/float64 go through OpenBLAS;
// bool (or of ands) and integers (wrapping) use an i-k-j loop.
#ifndef RESIDENT_KERNELS_CPU_MATMUL_H_
#define RESIDENT_KERNELS_CPU_MATMUL_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "core/dtype.h"
#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

struct MatmulDims {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  // Elements between consecutive matrices of a / b; 0 reuses one matrix.
  int64_t a_batch_stride = 0, b_batch_stride = 0;
};

// out[i] (m x n, contiguous, batches packed) = a[i] (m x k) @ b[i] (k x n).
// All three have `dtype`; out must not overlap a or b. The caller checks
// that the strides and sizes fit the buffers (see MatmulElementsNeeded).
// A long float matmul runs in blocks of rows (and batches), calling `stop`
// between them: when it returns true, Matmul returns CANCELLED with `out`
// partly written.
absl::Status Matmul(ThreadPool* pool, DType dtype, const MatmulDims& dims, const void* a,
                    const void* b, void* out, const std::function<bool()>& stop = {});

// Elements a and b must hold for `dims` (0 when there is no batch or the
// matrix is empty), or INVALID_ARGUMENT for negative or overflowing dims.
struct MatmulExtent {
  int64_t a = 0, b = 0, out = 0;
};
absl::Status CheckMatmulDims(const MatmulDims& dims, MatmulExtent* extent);

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_MATMUL_H_

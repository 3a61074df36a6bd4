// Selecting a mask's elements for the CUDA backend (numpy.extract and
// flatnonzero), behind plain C++ launch functions (kernels.h's
// conventions): one count of the mask, a check of it against the count the
// program declared, and one cub::DeviceSelect::Flagged pass, whose flags
// read the check, so a wrong count selects nothing and never writes past
// the output.
#ifndef RESIDENT_KERNELS_CUDA_SELECT_H_
#define RESIDENT_KERNELS_CUDA_SELECT_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/kernels.h"

namespace resident::cuda_kernels {

// Device scratch bytes Extract needs for n elements.
size_t ExtractTempBytes(int64_t n);

// out[0:count) = the elements of `values` (item_size bytes each; null: their
// flat positions, as int64) where cond (n bools, nonzero bytes true) is
// true, in order. *true_count (device memory) receives cond's number of
// true elements; out is written only when that is `count`: the caller
// reads it back and reports a mismatch. `temp` holds ExtractTempBytes(n)
// until the work is done.
cudaError_t Extract(const LaunchContext& ctx, const uint8_t* cond, const void* values,
                    int item_size, int64_t n, int64_t count, void* out, int64_t* true_count,
                    void* temp, size_t temp_bytes);

}  // namespace resident::cuda_kernels

#endif  // RESIDENT_KERNELS_CUDA_SELECT_H_

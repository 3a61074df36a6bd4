// Fused elementwise loops for the CUDA backend: CUDA source generated from a
// FusedLoopSpec, compiled once by NVRTC (with --fmad=false, so results stay
// bit-identical to the op-by-op kernels), cached by kernel text, and launched
// through the runtime's library API (no link-time dependency on the driver).
#ifndef RESIDENT_SERVER_DEVICE_CUDA_FUSED_LOOP_H_
#define RESIDENT_SERVER_DEVICE_CUDA_FUSED_LOOP_H_

#include <cuda_runtime_api.h>

#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "server/device/device_op.h"

namespace resident::cuda_internal {

// The kernel's CUDA source for `spec` (public for tests and logs). The
// kernel is `resident_fused(in0, [b0,] ..., out0, ..., [partial,] trips, n)`:
// a broadcast param's layout follows its pointer, and a reducing region
// writes one partial per block.
std::string FusedLoopSource(const FusedLoopSpec& spec);
// The kernel alone, after the op table's functions (ElementwiseExprText())
// that FusedLoopSource puts first: what the cache is keyed by.
std::string FusedLoopKernel(const FusedLoopSpec& spec);

// A compiled spec: resident_fused, and for a reducing region
// resident_fused_finish(partial, count, out), which combines the per-block
// partials resident_fused writes.
struct FusedKernels {
  cudaKernel_t main = nullptr;
  cudaKernel_t finish = nullptr;
};

// Compiled kernels by kernel text, for one device.
class FusedKernelCache {
 public:
  explicit FusedKernelCache(int major, int minor) : major_(major), minor_(minor) {}
  ~FusedKernelCache();
  // The kernels of FusedLoopKernel's text `kernel`, compiling them (after
  // the op table's functions) on first use, outside the cache's lock.
  // Compiles racing past Admits may take the cache a few kernels over the
  // cap (at most one per launch in flight).
  absl::StatusOr<FusedKernels> Get(const std::string& kernel);
  // Whether `spec`'s kernel is cached or the cache has room (kMaxKernels),
  // and it has at most kMaxKernelArgs params and outs: past either cap the
  // fused op runs op by op; the text is made only then.
  bool Admits(const FusedLoopSpec& spec);

  static constexpr size_t kMaxKernels = 4096;
  // Params plus outs of one fused kernel (2 KiB of pointers, half the
  // classic 4 KiB parameter space); a spec with more is not admitted.
  static constexpr size_t kMaxKernelArgs = 256;
  static constexpr size_t kMaxKernelSteps = 512;  // ops of one fused kernel

 private:
  const int major_, minor_;
  std::mutex mu_;
  absl::flat_hash_map<std::string, std::pair<cudaLibrary_t, FusedKernels>> kernels_;
};

}  // namespace resident::cuda_internal

#endif  // RESIDENT_SERVER_DEVICE_CUDA_FUSED_LOOP_H_

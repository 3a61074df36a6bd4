// OpenBLAS's kernels for this CPU. Debian 12's OpenBLAS (0.3.21) picks them
// by the CPU's model; a model it does not know (what a hypervisor often
// reports, "Intel(R) Xeon(R) Processor") gets its slowest, "Prescott" (SSE3):
// 20 GFLOP/s in float64 on a 2-core AVX-512 VM where "SkylakeX" gives 116
// (NumPy's own OpenBLAS: 105). OpenBLAS reads OPENBLAS_CORETYPE only while
// it loads, so a process that wants the right kernels sets it and executes
// itself again, once.
#ifndef RESIDENT_KERNELS_CPU_BLAS_CORE_H_
#define RESIDENT_KERNELS_CPU_BLAS_CORE_H_

namespace resident::cpu {

// The OpenBLAS core this CPU's features call for ("SkylakeX" with AVX-512,
// "Haswell" with AVX2), when OpenBLAS fell back to "Prescott" and
// OPENBLAS_CORETYPE is unset; nullptr when nothing should change.
const char* BetterBlasCore();

// If BetterBlasCore() names one: sets OPENBLAS_CORETYPE and executes this
// program again with argv (call it first thing in main, before any thread
// starts). Returns only when nothing changed or the exec failed.
void ReexecWithBetterBlasCore(char** argv);

// While one is active, OpenBLAS runs each call on its caller's thread. For
// stacks of matrices spread over our pool: OpenBLAS's getrs has no size
// threshold, so its threads woke for every 32x32 solve and fought ours for
// the cores (10,000 stacked 32^2 solves: 470-740 ms on 2 cores, 40 ms
// without). Scopes nest and overlap across threads; the last one to end
// restores OpenBLAS's thread count.
class SingleThreadedBlas {
 public:
  explicit SingleThreadedBlas(bool active);
  ~SingleThreadedBlas();
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  bool active_;
};

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_BLAS_CORE_H_

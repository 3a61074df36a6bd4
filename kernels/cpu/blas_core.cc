#include "kernels/cpu/blas_core.h"

#include <cblas.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

namespace resident::cpu {

const char* BetterBlasCore() {
  if (getenv("OPENBLAS_CORETYPE") != nullptr) return nullptr;  // the user's choice
  const char* core = openblas_get_corename();
  if (core == nullptr || strcasecmp(core, "Prescott") != 0) return nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;
}

void ReexecWithBetterBlasCore(char** argv) {
  const char* core = BetterBlasCore();
  if (core == nullptr || setenv("OPENBLAS_CORETYPE", core, 1) != 0) return;
  execv("/proc/self/exe", argv);
  unsetenv("OPENBLAS_CORETYPE");  // exec failed: carry on as we were
}

namespace {

std::mutex single_thread_mu;
int single_thread_scopes = 0;  // guarded by single_thread_mu
int saved_blas_threads = 1;    // guarded by single_thread_mu

}  // namespace

SingleThreadedBlas::SingleThreadedBlas(bool active) : active_(active) {
  if (!active_) return;
  std::lock_guard<std::mutex> lock(single_thread_mu);
  if (single_thread_scopes++ == 0) {
    saved_blas_threads = openblas_get_num_threads();
    if (saved_blas_threads > 1) openblas_set_num_threads(1);
  }
}

SingleThreadedBlas::~SingleThreadedBlas() {
  if (!active_) return;
  std::lock_guard<std::mutex> lock(single_thread_mu);
  if (--single_thread_scopes == 0 && saved_blas_threads > 1) {
    openblas_set_num_threads(saved_blas_threads);
  }
}

}  // namespace resident::cpu

#include "kernels/cpu/blas_core.h"

#include <cblas.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>

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

}  // namespace resident::cpu

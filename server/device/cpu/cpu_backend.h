// The CPU backend: the reference implementation of every op, threaded for
// large arrays, dot/matmul through OpenBLAS for float dtypes. Ops run
// synchronously inside Run; a stream only copies (memcpy).
//
//   std::unique_ptr<Backend> cpu = NewCpuBackend(/*threads=*/2);
//   std::unique_ptr<Stream> stream = cpu->NewStream();
#ifndef RESIDENT_SERVER_DEVICE_CPU_CPU_BACKEND_H_
#define RESIDENT_SERVER_DEVICE_CPU_CPU_BACKEND_H_

#include <memory>

#include "server/device/backend.h"

namespace resident {

// A CPU backend with its own thread pool of `threads` (<= 0: one per
// hardware thread) and host allocator. Never fails.
std::unique_ptr<Backend> NewCpuBackend(int threads = 0);

// Readies the CPU libraries before the process starts anything: OpenBLAS's
// kernels for this CPU (kernels/cpu/blas_core.h), which may execute the
// program again with OPENBLAS_CORETYPE set.
void PrepareCpuLibraries(char** argv);

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_CPU_CPU_BACKEND_H_

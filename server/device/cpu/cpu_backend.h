// The CPU backend: the reference implementation of every op, threaded for
// large arrays, dot/matmul through OpenBLAS for float dtypes.
#ifndef RESIDENT_SERVER_DEVICE_CPU_CPU_BACKEND_H_
#define RESIDENT_SERVER_DEVICE_CPU_CPU_BACKEND_H_

#include <memory>

#include "server/device/backend.h"

namespace resident {

// threads <= 0: one per hardware thread.
std::unique_ptr<Backend> NewCpuBackend(int threads = 0);

}  // namespace resident

#endif  // RESIDENT_SERVER_DEVICE_CPU_CPU_BACKEND_H_

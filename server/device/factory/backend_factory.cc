// Chooses a backend from --device. The CUDA backend is linked only when it
// was built (RESIDENT_HAVE_CUDA).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/log.h"
#include "core/status_macros.h"
#include "server/device/cpu/cpu_backend.h"
#include "server/device/device.h"
#include "server/device/device_set.h"
#ifdef RESIDENT_HAVE_CUDA
#include "server/device/cuda/cuda_backend.h"
#endif

namespace resident {

void PrepareHostLibraries(char** argv) { PrepareCpuLibraries(argv); }

bool CudaSupportBuilt() {
#ifdef RESIDENT_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const std::string& spec) {
  if (spec == "cpu") return std::unique_ptr<Backend>(NewCpuBackend());
  int ordinal = 0;
  const bool is_auto = spec == "auto";
  if (!is_auto) {
    if (!absl::StartsWith(spec, "cuda:") || !absl::SimpleAtoi(spec.substr(5), &ordinal) ||
        ordinal < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown device '", spec, "': expected auto, cpu or cuda:N"));
    }
  }
#ifdef RESIDENT_HAVE_CUDA
  if (is_auto && CudaDeviceCount() == 0) {
    RESIDENT_LOG(kInfo, "device auto: no CUDA device present, using cpu");
    return std::unique_ptr<Backend>(NewCpuBackend());
  }
  return NewCudaBackend(ordinal);
#else
  if (is_auto) {
    RESIDENT_LOG(kInfo, "device auto: built without CUDA support, using cpu");
    return std::unique_ptr<Backend>(NewCpuBackend());
  }
  return absl::InvalidArgumentError(
      absl::StrCat("device '", spec,
                   "' needs CUDA support, which this build lacks "
                   "(configure with -DRESIDENT_CUDA=ON on a machine with nvcc)"));
#endif
}

absl::StatusOr<std::unique_ptr<DeviceSet>> CreateDeviceSet(const std::string& list,
                                                           int64_t limit_bytes) {
  if (limit_bytes < 0) return absl::InvalidArgumentError("--max-memory must not be negative");
#ifdef RESIDENT_HAVE_CUDA
  const int cuda_devices = CudaDeviceCount();
#else
  const int cuda_devices = -1;
#endif
  ASSIGN_OR_RETURN(std::vector<std::string> specs, ParseDeviceList(list, cuda_devices));
  const std::vector<std::string> names = UniqueDeviceNames(specs);
  std::vector<std::unique_ptr<Device>> devices;
  for (size_t i = 0; i < specs.size(); ++i) {
    ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, CreateBackend(specs[i]));
    devices.push_back(
        std::make_unique<Device>(std::move(backend), limit_bytes, static_cast<int>(i), names[i]));
  }
  return std::make_unique<DeviceSet>(std::move(devices));
}

}  // namespace resident

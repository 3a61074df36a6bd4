// Real device arrays for the session parts' unit tests: the CPU backend
// behind a budgeted Device, so buffers are charged and freed as in the
// server.
#ifndef RESIDENT_TESTS_UNIT_SESSION_DEVICE_ARRAYS_H_
#define RESIDENT_TESTS_UNIT_SESSION_DEVICE_ARRAYS_H_

#include <memory>

#include "gtest/gtest.h"
#include "server/device/cpu/cpu_backend.h"
#include "server/device/device.h"

namespace resident::testing_session {

class DeviceArrays {
 public:
  DeviceArrays() : device_(NewCpuBackend(1), 0), stream_(device_.backend().NewStream()) {}

  Device& device() { return device_; }
  std::shared_ptr<Stream> stream() { return stream_; }

  // A float64 array of shape {n}, allocated (not filled).
  DeviceArray F64(int64_t n) {
    DeviceArray a;
    a.dtype = DType::kFloat64;
    a.shape = {n};
    auto buffer = device_.Allocate(a.nbytes(), *stream_);
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    a.buffer = *std::move(buffer);
    return a;
  }
  // Another array over the same buffer (as a reshape makes).
  static DeviceArray SameBuffer(const DeviceArray& a, Shape shape) {
    DeviceArray b = a;
    b.shape = std::move(shape);
    return b;
  }

 private:
  Device device_;
  std::shared_ptr<Stream> stream_;
};

}  // namespace resident::testing_session

#endif  // RESIDENT_TESTS_UNIT_SESSION_DEVICE_ARRAYS_H_

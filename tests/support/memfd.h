// A shared-memory file for the region tests: `size` bytes, sealed against
// shrinking when `seal` (what HostRegion::Map asks for).
#ifndef RESIDENT_TESTS_SUPPORT_MEMFD_H_
#define RESIDENT_TESTS_SUPPORT_MEMFD_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "gtest/gtest.h"

namespace resident::testing_support {

inline int Memfd(int64_t size, bool seal) {
  const int fd = memfd_create("resident-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(ftruncate(fd, size), 0);
  if (seal) {
    EXPECT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
  }
  return fd;
}

}  // namespace resident::testing_support

#endif  // RESIDENT_TESTS_SUPPORT_MEMFD_H_

// ReleaseUnusedStack: the pages a thread's deep call touched go back, the
// frames still in use stay.
#include "core/thread_stack.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace resident {
namespace {

// Resident pages of the calling thread's stack.
int64_t ResidentStackPages() {
  pthread_attr_t attr;
  pthread_getattr_np(pthread_self(), &attr);
  void* base = nullptr;
  size_t size = 0;
  pthread_attr_getstack(&attr, &base, &size);
  pthread_attr_destroy(&attr);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in(size / page);
  if (mincore(base, size, in.data()) != 0) return -1;
  int64_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

// Touches about `bytes` of stack below the caller's frame.
__attribute__((noinline)) int64_t Deep(int64_t bytes) {
  volatile char block[64 << 10];
  std::memset(const_cast<char*>(block), 1, sizeof(block));
  return bytes <= static_cast<int64_t>(sizeof(block)) ? block[7]
                                                      : block[9] + Deep(bytes - sizeof(block));
}

TEST(ThreadStack, ReleasesWhatADeepCallTouched) {
  int64_t before = 0, deep = 0, after = 0, released = 0;
  std::thread t([&] {
    before = ResidentStackPages();
    Deep(int64_t{2} << 20);  // 2 MiB
    deep = ResidentStackPages();
    released = ReleaseUnusedStack();
    after = ResidentStackPages();
  });
  t.join();
  const int64_t page = sysconf(_SC_PAGESIZE);
  EXPECT_GE(deep - before, (int64_t{2} << 20) / page - 16) << "the deep call's pages";
  EXPECT_GE(released, int64_t{2} << 20);
  EXPECT_LE(after, before + (int64_t{128} << 10) / page) << "back to about where it started";
}

TEST(ThreadStack, LeavesTheMainThreadAlone) { EXPECT_EQ(ReleaseUnusedStack(), 0); }

}  // namespace
}  // namespace resident

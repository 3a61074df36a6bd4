#include "core/thread_stack.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

namespace resident {

int64_t ReleaseUnusedStack() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
  void* base = nullptr;
  size_t size = 0;
  const int got = pthread_attr_getstack(&attr, &base, &size);
  pthread_attr_destroy(&attr);
  if (got != 0 || base == nullptr) return 0;
  // The main thread's "stack" is the rlimit's size below its top, part of it
  // never mapped: leave it alone.
  if (getpid() == gettid()) return 0;
  const auto low = reinterpret_cast<uintptr_t>(base);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  volatile char here = 0;
  const auto sp = reinterpret_cast<uintptr_t>(&here);
  // Stacks grow down: [low, sp) is free; keep a margin for the frames of
  // the calls this thread makes next (and the ABI's red zone).
  constexpr uintptr_t kMargin = uintptr_t{64} << 10;
  if (sp < low + kMargin + page) return 0;
  const uintptr_t top = (sp - kMargin) & ~(page - 1);
  if (madvise(reinterpret_cast<void*>(low), top - low, MADV_DONTNEED) != 0) return 0;
  return static_cast<int64_t>(top - low);
}

}  // namespace resident

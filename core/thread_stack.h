// Giving back the stack pages a thread touched once and no longer uses.
//
// A worker that ran a deep call (LAPACK, a large program's planner) keeps
// every stack page it touched resident for the rest of its life, and an
// ended thread's stack waits in glibc's cache of stacks (up to 40 MiB) with
// its pages still resident. A worker that has been idle a while calls
// ReleaseUnusedStack() before it waits on, and an ending one before it ends.
//
//   if (cv.wait_for(lock, 1s) == std::cv_status::timeout) ReleaseUnusedStack();
#ifndef RESIDENT_CORE_THREAD_STACK_H_
#define RESIDENT_CORE_THREAD_STACK_H_

#include <cstdint>

namespace resident {

// Returns the calling thread's stack pages below its current frame (less a
// margin for the calls it is about to make) to the system; they read as
// zeros when touched again. The bytes released, 0 if none or unknown (the
// main thread, whose stack this leaves alone).
int64_t ReleaseUnusedStack();

}  // namespace resident

#endif  // RESIDENT_CORE_THREAD_STACK_H_

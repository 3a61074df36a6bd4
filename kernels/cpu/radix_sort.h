// A stable LSD radix sort of (key, value) pairs for the CPU backend's
// argsort and sort (kernels/cpu/sort.cc): 8-bit digits, a pass skipped
// when every key shares its digit, and each pass split over fixed chunks
// that count their digits and scatter in parallel (so one long row uses
// every thread). Keys are unsigned integers whose order is the sort's;
// values ride along (indices, or the elements' own bits).
#ifndef RESIDENT_KERNELS_CPU_RADIX_SORT_H_
#define RESIDENT_KERNELS_CPU_RADIX_SORT_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/cpu/thread_pool.h"

namespace resident::cpu {

// Sorts keys[0:n) stably, moving vals alike; keys2/vals2 are scratch of n.
// Returns whether the result ended in (keys2, vals2) rather than (keys,
// vals). chunks: how many parts each pass splits into (1: serial).
template <typename K, typename V>
bool RadixSortPairs(ThreadPool* pool, int chunks, K* keys, V* vals, K* keys2, V* vals2, int64_t n) {
  constexpr int kPasses = static_cast<int>(sizeof(K));
  if (n <= 1) return false;
  chunks = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(chunks, n / 4096)));
  const int64_t per = (n + chunks - 1) / chunks;
  std::vector<std::array<int64_t, 256>> count(static_cast<size_t>(chunks));
  bool swapped = false;
  for (int pass = 0; pass < kPasses; ++pass) {
    const int shift = pass * 8;
    auto digit = [shift](K k) { return static_cast<unsigned>((k >> shift) & 0xff); };
    ParallelFor(pool, chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        std::array<int64_t, 256>& h = count[c];
        h.fill(0);
        for (int64_t i = c * per, e = std::min(n, i + per); i < e; ++i) ++h[digit(keys[i])];
      }
    });
    // Skip a pass whose digit every key shares.
    int64_t first_bucket_total = 0;
    const unsigned d0 = digit(keys[0]);
    for (int c = 0; c < chunks; ++c) first_bucket_total += count[c][d0];
    if (first_bucket_total == n) continue;
    // Chunk c's bucket b starts after every smaller bucket and after
    // bucket b of the chunks before c.
    int64_t at = 0;
    for (int b = 0; b < 256; ++b) {
      for (int c = 0; c < chunks; ++c) {
        const int64_t k = count[c][b];
        count[c][b] = at;
        at += k;
      }
    }
    ParallelFor(pool, chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        std::array<int64_t, 256>& o = count[c];
        for (int64_t i = c * per, e = std::min(n, i + per); i < e; ++i) {
          const int64_t to = o[digit(keys[i])]++;
          keys2[to] = keys[i];
          vals2[to] = vals[i];
        }
      }
    });
    std::swap(keys, keys2);
    std::swap(vals, vals2);
    swapped = !swapped;
  }
  return swapped;
}

}  // namespace resident::cpu

#endif  // RESIDENT_KERNELS_CPU_RADIX_SORT_H_

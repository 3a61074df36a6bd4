#include "kernels/cpu/random.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "kernels/ziggurat.h"

namespace resident::cpu {
namespace {

// Elements per block of a fill that never rejects. Threads claim blocks
// as they go, so a core that another process holds takes fewer; a block's
// jump costs about as much as a hundred draws.
constexpr int64_t kBlockElems = int64_t{1} << 16;
// Units per run of a rejecting fill: the run's accepted values wait in a
// buffer that stays in L2 (128 KiB of int64) until the run's turn.
constexpr int64_t kRunUnits = int64_t{1} << 14;

// out[begin:end) = f(unit begin), ..., f(unit end - 1) of the fill's unit
// stream from generator g (kernels/pcg64.h): the rest of a partial draw
// first, then whole draws, then the tail.
template <int kBits, typename T, typename F>
void UnitsInto(const Pcg64& g, int64_t begin, int64_t end, T* out, F f) {
  constexpr int kPer = 64 / kBits;
  constexpr uint64_t kMask = kBits == 64 ? ~0ull : (1ull << kBits) - 1;
  Pcg64UnitStream<kBits> s(g, static_cast<uint64_t>(begin));
  int64_t i = begin;
  while (i < end && !s.AtDrawBoundary()) out[i++] = f(s.Next());
  for (; end - i >= kPer; i += kPer) {
    uint64_t x = s.NextDraw();
    for (int k = 0; k < kPer; ++k) {
      out[i + k] = f(x & kMask);
      if constexpr (kBits < 64) x >>= kBits;
    }
  }
  while (i < end) out[i++] = f(s.Next());
}

// A fill that never rejects: element i is f(unit i); blocks in parallel.
template <int kBits, typename T, typename F>
void FillUnits(const Pcg64& g, T* out, int64_t n, ThreadPool& pool, F f) {
  const int64_t blocks = (n + kBlockElems - 1) / kBlockElems;
  if (pool.num_threads() == 1 || blocks == 1) {
    UnitsInto<kBits>(g, 0, n, out, f);
    return;
  }
  std::atomic<int64_t> next{0};
  pool.ParallelFor(std::min<int64_t>(pool.num_threads(), blocks), 1, [&](int64_t, int64_t) {
    for (int64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < blocks;) {
      UnitsInto<kBits>(g, c * kBlockElems, std::min(n, (c + 1) * kBlockElems), out, f);
    }
  });
}

// Reads units from `stream` until `limit` are read or `want` accepted;
// writes the accepted values (off + value, wrapping in T) to dst. Returns
// how many were accepted; *read = units read. Units go in batches of as
// many as values are missing: none of them can be past the want-th
// accepted one, so the inner loops have no exit, and a rejected unit's
// value is written and then overwritten (no branch on acceptance).
template <int kBits, typename T>
int64_t Accept(Pcg64UnitStream<kBits>& stream, const Pcg64Bounds& bounds, T off, int64_t limit,
               int64_t want, T* dst, int64_t* read) {
  constexpr int kPer = 64 / kBits;
  constexpr uint64_t kMask = kBits == 64 ? ~0ull : (1ull << kBits) - 1;
  // Copies in registers: dst may alias the caller's objects as far as the
  // compiler knows.
  Pcg64UnitStream<kBits> s = stream;
  const Pcg64Bounds b = bounds;
  int64_t got = 0, r = 0;
  uint64_t v;
  const auto take = [&](uint64_t unit) {
    const bool ok = Pcg64Lemire<kBits>(unit, b, &v);
    dst[got] = static_cast<T>(off + static_cast<T>(v));
    got += ok ? 1 : 0;
  };
  while (r < limit && got < want) {
    int64_t k = std::min(want - got, limit - r);
    r += k;
    for (; k > 0 && !s.AtDrawBoundary(); --k) take(s.Next());
    for (; k >= kPer; k -= kPer) {
      uint64_t x = s.NextDraw();
      for (int i = 0; i < kPer; ++i) {
        take(x & kMask);
        if constexpr (kBits < 64) x >>= kBits;
      }
    }
    for (; k > 0; --k) take(s.Next());
  }
  stream = s;
  *read = r;
  return got;
}

// A fill of draws of variable units, in runs of kRunUnits units: returns
// the units it read. draw(first, limit, want, dst, &read) draws from unit
// `first` while fewer than `limit` units are read and `want` values
// placed, writes them to dst, returns how many and sets `read`; a draw may
// read past `limit` (a normal draw's further units), never one started
// there. Runs are drawn by whichever thread claims them; a run then waits
// for its turn (the runs before it placed), takes the output offset they
// reached, hands the turn on and copies its values there. A run whose
// predecessor read into it (rare) is drawn again from where that ended.
// The run that reaches n draws again up to the n-th value and ends the
// fill; runs claimed after it are dropped.
template <typename T, typename Draw>
int64_t FillInRuns(T* out, int64_t n, ThreadPool& pool, Draw draw) {
  constexpr int64_t kUnlimited = INT64_MAX;
  if (pool.num_threads() == 1 || n < 4 * kRunUnits) {
    int64_t read = 0;
    draw(0, kUnlimited, n, out, &read);
    return read;
  }
  std::atomic<int64_t> next_run{0};
  std::atomic<int64_t> turn{0};
  std::atomic<bool> done{false};
  int64_t placed = 0;   // values placed by the runs before `turn`
  int64_t reached = 0;  // the unit after the last of their draws
  int64_t units = 0;    // set by the run that ends the fill
  const int workers = pool.num_threads();
  pool.ParallelFor(workers, 1, [&](int64_t, int64_t) {
    std::vector<T> buf(kRunUnits);
    while (!done.load(std::memory_order_acquire)) {
      const int64_t run = next_run.fetch_add(1, std::memory_order_relaxed);
      const int64_t first = run * kRunUnits, end = first + kRunUnits;
      int64_t read = 0;
      int64_t got = draw(first, kRunUnits, kRunUnits, buf.data(), &read);
      while (turn.load(std::memory_order_acquire) != run) {
        if (done.load(std::memory_order_acquire)) return;
        std::this_thread::yield();
      }
      const int64_t at = placed;
      if (at == n) return;  // a run claimed after the last one
      int64_t start = first;
      if (reached > first) {
        start = reached;
        read = 0;
        got = start < end ? draw(start, end - start, kRunUnits, buf.data(), &read) : 0;
      }
      if (at + got >= n) {
        // The last run: the units up to the n-th value, no further.
        draw(start, end - start, n - at, out + at, &read);
        units = start + read;
        placed = n;
        done.store(true, std::memory_order_release);
        turn.store(run + 1, std::memory_order_release);
        return;
      }
      placed = at + got;
      reached = start + read;
      turn.store(run + 1, std::memory_order_release);
      std::memcpy(out + at, buf.data(), static_cast<size_t>(got) * sizeof(T));
    }
  });
  return units;
}

// A Lemire fill: returns the units it read.
template <int kBits, typename T>
int64_t FillLemire(const Pcg64& g, const Pcg64Bounds& b, T off, T* out, int64_t n,
                   ThreadPool& pool) {
  return FillInRuns(out, n, pool,
                    [&](int64_t first, int64_t limit, int64_t want, T* dst, int64_t* read) {
                      Pcg64UnitStream<kBits> s(g, static_cast<uint64_t>(first));
                      return Accept(s, b, off, limit, want, dst, read);
                    });
}

// Ziggurat draws (kernels/ziggurat.h) of Z from unit `first` while fewer
// than `limit` units are read and `want` placed: float64 as low + range * z
// (NumPy's normal and exponential; the standard draws are low -0.0, range
// 1, which is z exactly), float32 as z.
template <Ziggurat Z, int kBits, typename T, typename K>
int64_t DrawZiggurat(const Pcg64& g, int64_t first, int64_t limit, int64_t want,
                     const ZigguratView<T, K>& t, double low, double range, T* dst, int64_t* read) {
  Pcg64UnitStream<kBits> s(g, static_cast<uint64_t>(first));
  const auto next = [&s] { return s.Next(); };
  int64_t got = 0, r = 0;
  while (r < limit && got < want) {
    uint32_t used = 0;
    const T z = ZigguratDraw<Z>(s.Next(), next, t, &used);
    r += used;
    if constexpr (kBits == 64) {
      dst[got++] = Pcg64Uniform(low, range, z);
    } else {
      dst[got++] = z;
    }
  }
  *read = r;
  return got;
}

// A ziggurat fill of T (double: 64-bit units, float: 32-bit ones); returns
// the state after it.
template <Ziggurat Z, typename T>
Pcg64 FillZiggurat(const Pcg64& g, double low, double range, T* out, int64_t n, ThreadPool& pool) {
  constexpr int kBits = sizeof(T) == 8 ? 64 : 32;
  const auto t = ZigguratViewOf<Z, T>(NumpyZigguratTables());
  const int64_t units = FillInRuns(
      out, n, pool, [&](int64_t first, int64_t limit, int64_t want, T* dst, int64_t* read) {
        return DrawZiggurat<Z, kBits>(g, first, limit, want, t, low, range, dst, read);
      });
  return Pcg64AfterUnits(g, kBits, static_cast<uint64_t>(units));
}

// A bounded fill of T (unsigned, the element's width) with unit width kBits.
template <int kBits, typename T>
void FillBounded(const Pcg64& g, const Pcg64Plan& plan, uint64_t off64, uint64_t rng, void* out,
                 int64_t n, ThreadPool& pool, Pcg64* after) {
  T* o = static_cast<T*>(out);
  const T off = static_cast<T>(off64);
  if (plan.constant) {
    std::fill(o, o + n, off);
    *after = g;
    return;
  }
  if (!plan.rejects) {
    FillUnits<kBits>(g, o, n, pool,
                     [off](uint64_t u) { return static_cast<T>(off + static_cast<T>(u)); });
    *after = Pcg64AfterUnits(g, kBits, static_cast<uint64_t>(n));
    return;
  }
  const Pcg64Bounds b = Pcg64BoundsFor(kBits, rng);
  const int64_t units = FillLemire<kBits>(g, b, off, o, n, pool);
  *after = Pcg64AfterUnits(g, kBits, static_cast<uint64_t>(units));
}

}  // namespace

void RandomFill(const RandomParams& p, const uint64_t state_in[kPcg64StateWords],
                uint64_t state_out[kPcg64StateWords], void* out, int64_t n, ThreadPool& pool) {
  const Pcg64 g = Pcg64::FromWords(state_in);
  Pcg64 after = g;
  if (n > 0) {
    const Pcg64Plan plan = Pcg64PlanFor(p);
    switch (p.draw) {
      case RandomDraw::kDouble: {
        const double low = p.low, range = p.range;
        FillUnits<64>(g, static_cast<double*>(out), n, pool, [low, range](uint64_t u) {
          return Pcg64Uniform(low, range, Pcg64ToDouble(u));
        });
        after = Pcg64AfterUnits(g, 64, static_cast<uint64_t>(n));
        break;
      }
      case RandomDraw::kFloat:
        FillUnits<32>(g, static_cast<float*>(out), n, pool,
                      [](uint64_t u) { return Pcg64ToFloat(static_cast<uint32_t>(u)); });
        after = Pcg64AfterUnits(g, 32, static_cast<uint64_t>(n));
        break;
      case RandomDraw::kBounded64:
        if (plan.unit_bits == 32) {
          FillBounded<32, uint64_t>(g, plan, p.off, p.rng, out, n, pool, &after);
        } else {
          FillBounded<64, uint64_t>(g, plan, p.off, p.rng, out, n, pool, &after);
        }
        break;
      case RandomDraw::kBounded32:
        FillBounded<32, uint32_t>(g, plan, p.off, p.rng, out, n, pool, &after);
        break;
      case RandomDraw::kBounded16:
        FillBounded<16, uint16_t>(g, plan, p.off, p.rng, out, n, pool, &after);
        break;
      case RandomDraw::kBounded8:
        FillBounded<8, uint8_t>(g, plan, p.off, p.rng, out, n, pool, &after);
        break;
      case RandomDraw::kNormalDouble:
        after =
            FillZiggurat<Ziggurat::kNormal>(g, p.low, p.range, static_cast<double*>(out), n, pool);
        break;
      case RandomDraw::kNormalFloat:
        after = FillZiggurat<Ziggurat::kNormal>(g, 0.0, 1.0, static_cast<float*>(out), n, pool);
        break;
      case RandomDraw::kExponentialDouble:
        after = FillZiggurat<Ziggurat::kExponential>(g, p.low, p.range, static_cast<double*>(out),
                                                     n, pool);
        break;
      case RandomDraw::kExponentialFloat:
        after =
            FillZiggurat<Ziggurat::kExponential>(g, 0.0, 1.0, static_cast<float*>(out), n, pool);
        break;
      case RandomDraw::kBool: {
        uint8_t* o = static_cast<uint8_t*>(out);
        if (plan.constant) {
          std::fill(o, o + n, static_cast<uint8_t>(p.off != 0 ? 1 : 0));
        } else {
          FillUnits<1>(g, o, n, pool, [](uint64_t u) { return static_cast<uint8_t>(u); });
          after = Pcg64AfterUnits(g, 1, static_cast<uint64_t>(n));
        }
        break;
      }
    }
  }
  after.ToWords(state_out);
}

}  // namespace resident::cpu

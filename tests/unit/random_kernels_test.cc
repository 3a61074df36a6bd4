// kernels/pcg64.h and cpu::RandomFill against NumPy: every call in
// random_literals.inc (written by make_random_literals.py from
// numpy.random.Generator(PCG64)) run from NumPy's state before it, its
// values (a hash of all of them plus sampled ones) and NumPy's state after
// it compared, with pools of 1 and 4 threads giving the same bytes. Also
// PCG64.advance against NumPy, and larger rejecting fills over pools of
// several sizes against the single-threaded fill.
#include "kernels/cpu/random.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/cpu/thread_pool.h"
#include "kernels/pcg64.h"

namespace resident {
namespace {

struct RandomCase {
  const char* name;
  uint64_t before[kPcg64StateWords];
  RandomDraw draw;
  double low, range;
  uint64_t off, rng;
  int64_t n;
  uint64_t after[kPcg64StateWords];
  uint64_t hash;
  std::vector<std::pair<int64_t, uint64_t>> samples;  // {index, element bits}
};
struct AdvanceCase {
  uint64_t before[kPcg64StateWords];
  uint64_t delta_hi, delta_lo;
  uint64_t after[kPcg64StateWords];
};
#include "tests/unit/random_literals.inc"

RandomParams ParamsOf(const RandomCase& c) {
  RandomParams p;
  p.draw = c.draw;
  p.low = c.low;
  p.range = c.range;
  p.off = c.off;
  p.rng = c.rng;
  return p;
}

// Element i's bits, zero-extended.
uint64_t ElementBits(const uint8_t* out, int size, int64_t i) {
  uint64_t v = 0;
  std::memcpy(&v, out + i * size, size);  // little-endian
  return v;
}

uint64_t SplitMix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// make_random_literals.py's Hash: sum of SplitMix(bits_i + (i + 1) * golden).
uint64_t Hash(const uint8_t* out, int size, int64_t n) {
  uint64_t h = 0;
  for (int64_t i = 0; i < n; ++i) {
    h += SplitMix(ElementBits(out, size, i) + static_cast<uint64_t>(i + 1) * 0x9E3779B97F4A7C15ull);
  }
  return h;
}

constexpr int kGuard = 64;
constexpr uint8_t kGuardByte = 0xA5;

// Runs the fill into a buffer with guard bytes after it; checks the guard.
std::vector<uint8_t> Fill(const RandomParams& p, const uint64_t* before, int64_t n,
                          cpu::ThreadPool& pool, uint64_t* after) {
  const int size = RandomItemSize(p.draw);
  std::vector<uint8_t> out(static_cast<size_t>(n) * size + kGuard, kGuardByte);
  cpu::RandomFill(p, before, after, out.data(), n, pool);
  for (int g = 0; g < kGuard; ++g) {
    EXPECT_EQ(out[static_cast<size_t>(n) * size + g], kGuardByte) << "wrote past the end";
  }
  out.resize(static_cast<size_t>(n) * size);
  return out;
}

TEST(RandomFill, MatchesNumPyCalls) {
  cpu::ThreadPool one(1), four(4);
  int checked = 0;
  for (const RandomCase& c : kRandomCases) {
    SCOPED_TRACE(c.name);
    const RandomParams p = ParamsOf(c);
    const int size = RandomItemSize(p.draw);
    uint64_t after1[kPcg64StateWords], after4[kPcg64StateWords];
    const std::vector<uint8_t> out1 = Fill(p, c.before, c.n, one, after1);
    const std::vector<uint8_t> out4 = Fill(p, c.before, c.n, four, after4);
    for (const auto& [i, bits] : c.samples) {
      ASSERT_EQ(ElementBits(out1.data(), size, i), bits) << "element " << i;
    }
    EXPECT_EQ(Hash(out1.data(), size, c.n), c.hash);
    for (int w = 0; w < kPcg64StateWords; ++w) {
      EXPECT_EQ(after1[w], c.after[w]) << "state word " << w;
    }
    EXPECT_TRUE(out1 == out4) << "pools of 1 and 4 threads differ";
    EXPECT_EQ(std::memcmp(after1, after4, sizeof(after1)), 0);
    ++checked;
  }
  EXPECT_GT(checked, 300);
}

TEST(RandomFill, StateMayAlias) {
  cpu::ThreadPool pool(2);
  for (const RandomCase& c : kRandomCases) {
    if (c.n != 1000) continue;
    SCOPED_TRACE(c.name);
    uint64_t state[kPcg64StateWords];
    std::memcpy(state, c.before, sizeof(state));
    std::vector<uint8_t> out(static_cast<size_t>(c.n) * RandomItemSize(c.draw));
    cpu::RandomFill(ParamsOf(c), state, state, out.data(), c.n, pool);
    EXPECT_EQ(std::memcmp(state, c.after, sizeof(state)), 0);
  }
}

TEST(Pcg64, AdvanceMatchesNumPy) {
  for (const AdvanceCase& c : kAdvanceCases) {
    Pcg64 g = Pcg64::FromWords(c.before);
    g.Advance(Pcg128{c.delta_hi, c.delta_lo});
    uint64_t w[kPcg64StateWords];
    g.ToWords(w);
    EXPECT_EQ(std::memcmp(w, c.after, sizeof(w)), 0) << c.delta_hi << ":" << c.delta_lo;
  }
}

TEST(Pcg64, JumpsAgreeWithSteps) {
  Pcg64 g = Pcg64::FromWords(kRandomCases[0].before);
  Pcg64 stepped = g;
  for (uint64_t k = 1; k <= 300; ++k) {
    stepped.Step();
    Pcg64 jumped = g;
    jumped.Advance(k);
    ASSERT_EQ(jumped.state.hi, stepped.state.hi) << k;
    ASSERT_EQ(jumped.state.lo, stepped.state.lo) << k;
  }
  // Composition: 1000 then 2^70 equals 2^70 + 1000 in one jump.
  const Pcg64Jump a = Pcg64JumpFor(uint64_t{1000});
  const Pcg64Jump b = Pcg64JumpFor(Pcg128{64, 0});
  const Pcg64Jump ab = Pcg64Compose(a, b);
  const Pcg64Jump direct = Pcg64JumpFor(Pcg128{64, 1000});
  EXPECT_EQ(ab.mult.hi, direct.mult.hi);
  EXPECT_EQ(ab.mult.lo, direct.mult.lo);
  EXPECT_EQ(ab.gsum.hi, direct.gsum.hi);
  EXPECT_EQ(ab.gsum.lo, direct.gsum.lo);
}

// The fills against one draw at a time through Pcg64's own Next32 / Next64
// (NumPy's loops written out), from a state with has_uint32 set.
TEST(RandomFill, MatchesScalarDraws) {
  cpu::ThreadPool pool(3);
  Pcg64 g = Pcg64::FromWords(kRandomCases[0].before);
  g.Next32();  // buffer the high half
  uint64_t before[kPcg64StateWords];
  g.ToWords(before);
  constexpr int64_t kN = 200003;

  RandomParams f;
  f.draw = RandomDraw::kFloat;
  uint64_t after[kPcg64StateWords];
  std::vector<uint8_t> out = Fill(f, before, kN, pool, after);
  Pcg64 s = g;
  for (int64_t i = 0; i < kN; ++i) {
    float v;
    std::memcpy(&v, out.data() + 4 * i, 4);
    ASSERT_EQ(v, s.NextFloat()) << i;
  }
  uint64_t expect[kPcg64StateWords];
  s.ToWords(expect);
  EXPECT_EQ(std::memcmp(after, expect, sizeof(after)), 0);

  RandomParams u;  // uint64 in [7, 7 + 2^40]: 64-bit Lemire
  u.draw = RandomDraw::kBounded64;
  u.off = 7;
  u.rng = uint64_t{1} << 40;
  out = Fill(u, before, kN, pool, after);
  s = g;
  const uint64_t excl = u.rng + 1, threshold = (~0ull - u.rng) % excl;
  for (int64_t i = 0; i < kN; ++i) {
    uint64_t x = s.Next64();
    while (x * excl < threshold) x = s.Next64();
    ASSERT_EQ(ElementBits(out.data(), 8, i), u.off + Pcg64MulHi(x, excl)) << i;
  }
  s.ToWords(expect);
  EXPECT_EQ(std::memcmp(after, expect, sizeof(after)), 0);
}

// Rejecting and normal fills long enough for many runs: every pool size
// gives the single-threaded bytes and state (normal runs are redrawn where
// a draw reaches into the next run).
TEST(RandomFill, PoolSizesAgreeOnLongRejectingFills) {
  struct Span {
    RandomDraw draw;
    uint64_t rng;
  };
  const Span spans[] = {{RandomDraw::kBounded64, 999},
                        {RandomDraw::kBounded64, (uint64_t{1} << 63) + 5},
                        {RandomDraw::kBounded32, (uint64_t{1} << 31) + 1},
                        {RandomDraw::kBounded16, 0x8001},
                        {RandomDraw::kBounded8, 0x81},
                        {RandomDraw::kNormalDouble, 0},
                        {RandomDraw::kNormalFloat, 0},
                        {RandomDraw::kExponentialDouble, 0},
                        {RandomDraw::kExponentialFloat, 0}};
  cpu::ThreadPool p1(1), p2(2), p3(3), p4(4);
  uint64_t before[kPcg64StateWords];
  std::memcpy(before, kRandomCases[5].before, sizeof(before));
  before[kPcg64HasUint32] = 1;
  before[kPcg64Uinteger] = 0xDEADBEEF;
  for (const Span& sp : spans) {
    RandomParams p;
    p.draw = sp.draw;
    p.off = 3;
    p.rng = sp.rng;
    constexpr int64_t kN = 1 << 20;
    uint64_t a1[kPcg64StateWords], a[kPcg64StateWords];
    const std::vector<uint8_t> ref = Fill(p, before, kN, p1, a1);
    for (cpu::ThreadPool* pool : {&p2, &p3, &p4}) {
      EXPECT_TRUE(Fill(p, before, kN, *pool, a) == ref) << pool->num_threads();
      EXPECT_EQ(std::memcmp(a, a1, sizeof(a)), 0) << pool->num_threads();
    }
  }
}

}  // namespace
}  // namespace resident

// NumPy's default bit generator, PCG64 (XSL-RR 128/64), and the draws of
// numpy.random.Generator's random, uniform and integers on top of it, bit
// for bit, written once for the host (kernels/cpu) and for nvcc
// (kernels/cuda). It mirrors numpy/random/src/pcg64/pcg64.h and
// numpy/random/src/distributions/distributions.c.
//
// 128-bit arithmetic is two uint64 words, so one code path serves both
// compilers; only the high half of a 64x64 product differs (__umul64hi on
// the device, unsigned __int128 or 32-bit halves on the host).
//
// Parallel generation rests on jump-ahead: `delta` steps of the LCG are the
// affine map state -> mult * state + gsum * inc (Pcg64Jump), found in
// O(log delta) (Brown's method, NumPy's pcg_advance_lcg_128). A jump of k
// steps is itself an LCG step (multiplier mult, increment gsum * inc), so a
// thread can also walk the stream with stride k at the cost of one step.
//
// NumPy's draws read the generator through two streams:
//  - 64-bit draws (next_uint64, next_double): one LCG step each; they
//    neither read nor change the 32-bit buffer (has_uint32, uinteger);
//  - 32-bit draws (next_uint32, next_float): the buffered value first if
//    has_uint32, else a fresh 64-bit draw whose low half is returned and
//    whose high half is buffered. The fills of 16-bit, 8-bit and bool values
//    split each 32-bit draw into 2, 4 or 32 units, low bits first, with a
//    buffer local to one fill call.
// So every draw narrower than 64 bits reads unit i of one bit stream,
//   [uinteger's 32 bits, if has_uint32] ++ draw 1 ++ draw 2 ++ ...
// (each 64-bit draw low bits first), at bits [i * w, (i + 1) * w): units
// never straddle two draws. Pcg64UnitStream and Pcg64AfterUnits use this.
#ifndef RESIDENT_KERNELS_PCG64_H_
#define RESIDENT_KERNELS_PCG64_H_

#include <cstdint>

// As core/elementwise_expr.h defines it (an identical redefinition is
// allowed, so either header may come first).
#ifndef RESIDENT_HD
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define RESIDENT_HD __host__ __device__ __forceinline__
#else
#define RESIDENT_HD inline
#endif
#endif

namespace resident {

// --- what to draw --------------------------------------------------------------

// The element a fill writes and how it is drawn.
enum class RandomDraw : uint8_t {
  kDouble,     // float64: low + range * next_double (random, uniform)
  kFloat,      // float32: next_float (random(dtype=float32))
  kBounded64,  // 8-byte integers: random_bounded_uint64_fill
  kBounded32,  // 4-byte integers: random_bounded_uint32_fill
  kBounded16,  // 2-byte integers: random_bounded_uint16_fill
  kBounded8,   // 1-byte integers: random_bounded_uint8_fill
  kBool,       // one 0/1 byte: random_bounded_bool_fill
  // low + range * random_standard_normal (normal; standard_normal is low
  // -0.0, range 1): the ziggurat of kernels/ziggurat.h, a variable number
  // of 64-bit units per value.
  kNormalDouble,
  kNormalFloat,  // float32: random_standard_normal_f, 32-bit units
  // low + range * random_standard_exponential (exponential's scale is
  // range, low -0.0, which adds nothing): kernels/ziggurat.h as well.
  kExponentialDouble,
  kExponentialFloat,  // float32: random_standard_exponential_f
};

// The draws of a variable number of units (kernels/ziggurat.h).
RESIDENT_HD constexpr bool IsZigguratDraw(RandomDraw d) {
  return d == RandomDraw::kNormalDouble || d == RandomDraw::kNormalFloat ||
         d == RandomDraw::kExponentialDouble || d == RandomDraw::kExponentialFloat;
}

struct RandomParams {
  RandomDraw draw = RandomDraw::kDouble;
  // kDouble: out = low + range * next_double (NumPy's uniform; random() is
  // low 0, range 1). kFloat: next_float only. kNormalDouble: low + range *
  // standard normal (NumPy's normal: loc, scale); kExponentialDouble:
  // low + range * standard exponential (low -0.0, range the scale).
  double low = 0.0, range = 1.0;
  // Integers: out = off + bounded(rng), rng the inclusive span (high - low,
  // high - 1 - low without endpoint), both taken in the element's width and
  // wrapping there, exactly NumPy's random_bounded_uint{64,32,16,8}_fill /
  // bool_fill with use_masked = false (Generator's Lemire rejection).
  uint64_t off = 0, rng = 0;
};

// A generator's state as it travels (a device array on the GPU): NumPy's
// PCG64 state dict, {'state': {'state', 'inc'}, 'has_uint32', 'uinteger'}.
inline constexpr int kPcg64StateWords = 6;
enum Pcg64Word : int {
  kPcg64StateHi = 0,
  kPcg64StateLo = 1,
  kPcg64IncHi = 2,
  kPcg64IncLo = 3,
  kPcg64HasUint32 = 4,  // 0 or 1
  kPcg64Uinteger = 5,   // the buffered 32-bit value (kept when used)
};

// --- 128-bit words -------------------------------------------------------------

struct Pcg128 {
  uint64_t hi;
  uint64_t lo;
};

// The high word of a * b.
RESIDENT_HD uint64_t Pcg64MulHi(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#elif defined(__SIZEOF_INT128__)
  __extension__ typedef unsigned __int128 U128;
  return static_cast<uint64_t>((static_cast<U128>(a) * b) >> 64);
#else
  const uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
  const uint64_t w0 = a0 * b0;
  const uint64_t t = a1 * b0 + (w0 >> 32);
  const uint64_t w1 = (t & 0xFFFFFFFFu) + a0 * b1;
  return a1 * b1 + (t >> 32) + (w1 >> 32);
#endif
}

// The whole product a * b.
RESIDENT_HD Pcg128 Pcg64MulWide(uint64_t a, uint64_t b) {
#if !defined(__CUDA_ARCH__) && defined(__SIZEOF_INT128__)
  __extension__ typedef unsigned __int128 U128;
  const U128 m = static_cast<U128>(a) * b;  // one instruction on x86-64
  return Pcg128{static_cast<uint64_t>(m >> 64), static_cast<uint64_t>(m)};
#else
  return Pcg128{Pcg64MulHi(a, b), a * b};
#endif
}

RESIDENT_HD Pcg128 Pcg128Add(Pcg128 a, Pcg128 b) {
  const uint64_t lo = a.lo + b.lo;
  return Pcg128{a.hi + b.hi + (lo < b.lo ? 1u : 0u), lo};
}

// a * b mod 2^128: three multiplications.
RESIDENT_HD Pcg128 Pcg128Mul(Pcg128 a, Pcg128 b) {
  const Pcg128 low = Pcg64MulWide(a.lo, b.lo);
  return Pcg128{low.hi + a.hi * b.lo + a.lo * b.hi, low.lo};
}

// NumPy's PCG_DEFAULT_MULTIPLIER_128.
inline constexpr Pcg128 kPcg64Multiplier{0x2360ED051FC65DA4ull, 0x4385DF649FCCF645ull};

// --- jumps -----------------------------------------------------------------------

// `delta` LCG steps as the map state -> mult * state + gsum * inc (gsum =
// 1 + M + ... + M^(delta-1)); linear in inc, so it holds for any stream.
struct Pcg64Jump {
  Pcg128 mult;
  Pcg128 gsum;
};

// The jump of no steps.
RESIDENT_HD Pcg64Jump Pcg64Identity() { return Pcg64Jump{Pcg128{0, 1}, Pcg128{0, 0}}; }

// `first` then `second`.
RESIDENT_HD Pcg64Jump Pcg64Compose(const Pcg64Jump& first, const Pcg64Jump& second) {
  return Pcg64Jump{Pcg128Mul(second.mult, first.mult),
                   Pcg128Add(Pcg128Mul(second.mult, first.gsum), second.gsum)};
}

// The jump of `delta` steps (128-bit delta: NumPy's advance), by squaring.
RESIDENT_HD Pcg64Jump Pcg64JumpFor(Pcg128 delta) {
  Pcg64Jump acc = Pcg64Identity();
  Pcg128 cur_mult = kPcg64Multiplier;
  Pcg128 cur_gsum{0, 1};
  while (delta.hi != 0 || delta.lo != 0) {
    if (delta.lo & 1) {
      acc.mult = Pcg128Mul(acc.mult, cur_mult);
      acc.gsum = Pcg128Add(Pcg128Mul(acc.gsum, cur_mult), cur_gsum);
    }
    cur_gsum = Pcg128Mul(Pcg128Add(cur_mult, Pcg128{0, 1}), cur_gsum);
    cur_mult = Pcg128Mul(cur_mult, cur_mult);
    delta.lo = (delta.lo >> 1) | (delta.hi << 63);
    delta.hi >>= 1;
  }
  return acc;
}
RESIDENT_HD Pcg64Jump Pcg64JumpFor(uint64_t delta) { return Pcg64JumpFor(Pcg128{0, delta}); }

// --- the generator -----------------------------------------------------------------

// XSL-RR: the 64-bit value of the step that led to state s.
RESIDENT_HD uint64_t Pcg64Output(Pcg128 s) {
  const uint64_t x = s.hi ^ s.lo;
  const unsigned rot = static_cast<unsigned>(s.hi >> 58);
  return (x >> rot) | (x << ((64u - rot) & 63u));
}

// NumPy's uint64_to_double ((x >> 11) * 2^-53) and next_float's
// ((x >> 8) * 2^-24): exact conversions and products.
RESIDENT_HD double Pcg64ToDouble(uint64_t x) {
  return static_cast<double>(x >> 11) * (1.0 / 9007199254740992.0);
}
RESIDENT_HD float Pcg64ToFloat(uint32_t x) {
  return static_cast<float>(x >> 8) * (1.0f / 16777216.0f);
}

struct Pcg64 {
  Pcg128 state;
  Pcg128 inc;
  bool has_uint32;
  uint32_t uinteger;

  RESIDENT_HD static Pcg64 FromWords(const uint64_t* w) {
    return Pcg64{Pcg128{w[kPcg64StateHi], w[kPcg64StateLo]}, Pcg128{w[kPcg64IncHi], w[kPcg64IncLo]},
                 w[kPcg64HasUint32] != 0, static_cast<uint32_t>(w[kPcg64Uinteger])};
  }
  RESIDENT_HD void ToWords(uint64_t* w) const {
    w[kPcg64StateHi] = state.hi;
    w[kPcg64StateLo] = state.lo;
    w[kPcg64IncHi] = inc.hi;
    w[kPcg64IncLo] = inc.lo;
    w[kPcg64HasUint32] = has_uint32 ? 1 : 0;
    w[kPcg64Uinteger] = uinteger;
  }

  // One LCG step, as pcg_setseq_128_step_r.
  RESIDENT_HD void Step() { state = Pcg128Add(Pcg128Mul(state, kPcg64Multiplier), inc); }
  // The value of the step that led to the current state.
  RESIDENT_HD uint64_t Output() const { return Pcg64Output(state); }
  // Applies a jump to the state (the 32-bit buffer is the caller's).
  RESIDENT_HD void Apply(const Pcg64Jump& j) {
    state = Pcg128Add(Pcg128Mul(j.mult, state), Pcg128Mul(j.gsum, inc));
  }
  // `delta` steps in O(log delta); NumPy's advance also clears the 32-bit
  // buffer, this does not.
  RESIDENT_HD void Advance(Pcg128 delta) { Apply(Pcg64JumpFor(delta)); }
  RESIDENT_HD void Advance(uint64_t delta) { Apply(Pcg64JumpFor(delta)); }

  // pcg64_next64: step, then output the new state.
  RESIDENT_HD uint64_t Next64() {
    Step();
    return Output();
  }
  // pcg64_next32.
  RESIDENT_HD uint32_t Next32() {
    if (has_uint32) {
      has_uint32 = false;
      return uinteger;
    }
    const uint64_t x = Next64();
    has_uint32 = true;
    uinteger = static_cast<uint32_t>(x >> 32);
    return static_cast<uint32_t>(x);
  }
  RESIDENT_HD double NextDouble() { return Pcg64ToDouble(Next64()); }
  RESIDENT_HD float NextFloat() { return Pcg64ToFloat(Next32()); }
};

// NumPy's random_uniform: low + range * u, no FMA (kernels/cuda builds with
// --fmad=false, the host with -ffp-contract=off; the device intrinsics
// below never contract either way).
RESIDENT_HD double Pcg64Uniform(double low, double range, double u) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(low, __dmul_rn(range, u));
#else
  return low + range * u;
#endif
}

// --- draws as units of one stream ---------------------------------------------

// How a fill reads the generator: the unit width in bits (64: one 64-bit
// draw each; 32, 16, 8, 1: the bit stream above) and whether units can be
// rejected (Lemire).
struct Pcg64Plan {
  int unit_bits;  // 64, 32, 16, 8 or 1
  bool rejects;   // Lemire: a unit may be rejected
  bool constant;  // rng 0: every element is `off`, nothing drawn
};

// The plan of a fill, as distributions.c chooses its branch.
RESIDENT_HD Pcg64Plan Pcg64PlanFor(const RandomParams& p) {
  switch (p.draw) {
    case RandomDraw::kDouble:
      return Pcg64Plan{64, false, false};
    case RandomDraw::kFloat:
      return Pcg64Plan{32, false, false};
    case RandomDraw::kBounded64:
      if (p.rng == 0) return Pcg64Plan{64, false, true};
      if (p.rng < 0xFFFFFFFFull) return Pcg64Plan{32, true, false};  // 32-bit Lemire
      if (p.rng == 0xFFFFFFFFull) return Pcg64Plan{32, false, false};
      return Pcg64Plan{64, p.rng != ~0ull, false};
    case RandomDraw::kBounded32: {
      const uint32_t r = static_cast<uint32_t>(p.rng);
      return Pcg64Plan{32, r != 0 && r != 0xFFFFFFFFu, r == 0};
    }
    case RandomDraw::kBounded16: {
      const uint16_t r = static_cast<uint16_t>(p.rng);
      return Pcg64Plan{16, r != 0 && r != 0xFFFFu, r == 0};
    }
    case RandomDraw::kBounded8: {
      const uint8_t r = static_cast<uint8_t>(p.rng);
      return Pcg64Plan{8, r != 0 && r != 0xFFu, r == 0};
    }
    case RandomDraw::kBool:
      return Pcg64Plan{1, false, static_cast<uint8_t>(p.rng) == 0};
    case RandomDraw::kNormalDouble:  // variable units, but never Lemire's
    case RandomDraw::kExponentialDouble:
      return Pcg64Plan{64, false, false};
    case RandomDraw::kNormalFloat:
    case RandomDraw::kExponentialFloat:
      return Pcg64Plan{32, false, false};
  }
  return Pcg64Plan{64, false, false};
}

// Bytes of one element of the draw.
RESIDENT_HD int RandomItemSize(RandomDraw d) {
  switch (d) {
    case RandomDraw::kDouble:
    case RandomDraw::kBounded64:
    case RandomDraw::kNormalDouble:
    case RandomDraw::kExponentialDouble:
      return 8;
    case RandomDraw::kFloat:
    case RandomDraw::kBounded32:
    case RandomDraw::kNormalFloat:
    case RandomDraw::kExponentialFloat:
      return 4;
    case RandomDraw::kBounded16:
      return 2;
    case RandomDraw::kBounded8:
    case RandomDraw::kBool:
      return 1;
  }
  return 8;
}

// The state after a fill that read `units` units of `unit_bits` from `g`:
// 64-bit units are LCG steps and leave the 32-bit buffer alone; narrower
// ones round up to whole 32-bit draws (the fill's own 16/8/1-bit buffer is
// dropped, as NumPy drops it), the first of which is the buffered value if
// there is one. Every fresh 64-bit draw of next_uint32 buffers its high
// half, and using the buffer clears has_uint32 but keeps uinteger, so
// uinteger ends as the high half of the last fresh draw.
RESIDENT_HD Pcg64 Pcg64AfterUnits(Pcg64 g, int unit_bits, uint64_t units) {
  if (unit_bits == 64) {
    g.Advance(units);
    return g;
  }
  const uint64_t per32 = static_cast<uint64_t>(32 / unit_bits);
  uint64_t words = units / per32 + (units % per32 != 0 ? 1 : 0);
  if (words == 0) return g;
  if (g.has_uint32) {
    g.has_uint32 = false;
    --words;
  }
  if (words == 0) return g;
  g.Advance((words + 1) / 2);
  g.uinteger = static_cast<uint32_t>(g.Output() >> 32);
  g.has_uint32 = (words & 1) != 0;
  return g;
}

// Units [begin, ...) of a fill's stream, one at a time, from the fill's
// starting generator: the constructor jumps to unit `begin` (O(log)),
// Next() returns the unit's value in the low bits. For bursts of whole
// draws, NextDraw() hands out the 64-bit draws themselves while the stream
// is at a draw boundary (AtDrawBoundary()).
template <int kBits>
class Pcg64UnitStream {
 public:
  static_assert(kBits == 64 || kBits == 32 || kBits == 16 || kBits == 8 || kBits == 1);
  static constexpr int kPerDraw = 64 / kBits;
  static constexpr uint64_t kMask = kBits == 64 ? ~0ull : (1ull << kBits) - 1;

  RESIDENT_HD Pcg64UnitStream(const Pcg64& start, uint64_t begin) : g_(start) {
    uint64_t prefix = 0;  // units from the buffered uinteger
    if (kBits < 64 && start.has_uint32) prefix = 32 / kBits;
    if (begin < prefix) {
      bits_ = static_cast<uint64_t>(start.uinteger) >> (begin * kBits);
      left_ = static_cast<int>(prefix - begin);
      return;
    }
    const uint64_t q = begin - prefix;
    g_.Advance(q / kPerDraw);
    const int sub = static_cast<int>(q % kPerDraw);
    if (sub != 0) {
      bits_ = g_.Next64() >> (sub * kBits);
      left_ = kPerDraw - sub;
    }
  }

  RESIDENT_HD uint64_t Next() {
    if (left_ == 0) {
      bits_ = g_.Next64();
      left_ = kPerDraw;
    }
    const uint64_t u = bits_ & kMask;
    if constexpr (kBits < 64) bits_ >>= kBits;
    --left_;
    return u;
  }

  RESIDENT_HD bool AtDrawBoundary() const { return left_ == 0; }
  // The next whole 64-bit draw (only at a draw boundary).
  RESIDENT_HD uint64_t NextDraw() { return g_.Next64(); }
  RESIDENT_HD Pcg64& generator() { return g_; }

 private:
  Pcg64 g_;
  uint64_t bits_ = 0;
  int left_ = 0;  // units still in bits_
};

// --- bounded integers (Lemire, use_masked = false) -----------------------------

// One candidate of a bounded draw: the value (before `off`) and whether
// Lemire's test accepts it. rng_excl = rng + 1 in the unit's width and
// threshold = (max - rng) % rng_excl, both fixed per fill (Pcg64Bounds).
struct Pcg64Bounds {
  uint64_t rng_excl;
  uint64_t threshold;
};

// Lemire's constants for a span `rng` (not 0, not the width's maximum).
RESIDENT_HD Pcg64Bounds Pcg64BoundsFor(int unit_bits, uint64_t rng) {
  const uint64_t max = unit_bits == 64 ? ~0ull : (1ull << unit_bits) - 1;
  rng &= max;
  const uint64_t excl = rng + 1;
  return Pcg64Bounds{excl, (max - rng) % excl};
}

// The candidate from unit u: *value = the scaled unit's high part, returns
// whether it is accepted (leftover >= threshold; NumPy checks leftover <
// rng_excl first only to skip the division).
template <int kBits>
RESIDENT_HD bool Pcg64Lemire(uint64_t u, const Pcg64Bounds& b, uint64_t* value) {
  if constexpr (kBits == 64) {
    const Pcg128 m = Pcg64MulWide(u, b.rng_excl);
    *value = m.hi;
    return m.lo >= b.threshold;
  } else {
    const uint64_t m = u * b.rng_excl;  // < 2^(2 * kBits)
    *value = m >> kBits;
    return (m & ((1ull << kBits) - 1)) >= b.threshold;
  }
}

}  // namespace resident

#endif  // RESIDENT_KERNELS_PCG64_H_

// core/half.h's conversions: every float16 and bfloat16 bit pattern to float
// against an independent formula, every tie between neighbouring halves,
// and float32 / float64 values against NumPy's and ml_dtypes' astype bits
// (half_literals.inc, written by make_half_literals.py).
#include "core/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/dtype.h"

namespace resident {
namespace {

struct HalfCase32 {
  uint32_t f;
  uint16_t half, bf16;
};
struct HalfCase64 {
  uint64_t d;
  uint16_t half, bf16;
};
#include "tests/unit/half_literals.inc"

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}
uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
double FromBits64(uint64_t u) {
  double d;
  std::memcpy(&d, &u, sizeof(d));
  return d;
}

// binary16's value by its definition: (-1)^s * 2^(e-15) * 1.m, or
// 2^-14 * 0.m for e = 0.
double HalfValue(uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return s ? -mag : mag;
}

TEST(Half, EveryFloat16PatternWidensExactly) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const ResidentFloat16 h{static_cast<uint16_t>(b)};
    const float f = resident_half_to_float(h);
    const int e = (b >> 10) & 0x1f;
    if (e == 0x1f && (b & 0x3ff) != 0) {
      ASSERT_TRUE(std::isnan(f)) << b;
      ASSERT_EQ(Bits(f) >> 31, b >> 15) << b;              // sign kept
      ASSERT_EQ((Bits(f) >> 13) & 0x3ff, b & 0x3ff) << b;  // payload kept
    } else if (e == 0x1f) {
      ASSERT_EQ(f, (b >> 15) ? -INFINITY : INFINITY) << b;
    } else {
      ASSERT_EQ(static_cast<double>(f), HalfValue(static_cast<uint16_t>(b))) << b;
      ASSERT_EQ(std::signbit(f), (b >> 15) != 0) << b;
    }
    // Narrowing the widened value gives the pattern back (NaN stays NaN).
    const uint16_t back = resident_float_to_half(f).bits;
    if (std::isnan(f)) {
      ASSERT_EQ(back & 0x7c00, 0x7c00) << b;
      ASSERT_NE(back & 0x3ff, 0) << b;
    } else {
      ASSERT_EQ(back, b) << b;
    }
  }
}

TEST(Half, EveryBFloat16PatternWidensExactly) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = resident_bf16_to_float(ResidentBFloat16{static_cast<uint16_t>(b)});
    ASSERT_EQ(Bits(f), b << 16) << b;
    const uint16_t back = resident_float_to_bf16(f).bits;
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(resident_bf16_to_float(ResidentBFloat16{back}))) << b;
    } else {
      ASSERT_EQ(back, b) << b;
    }
  }
}

// The midpoint of two neighbouring finite halves (exact in float32 and
// float64) rounds to the one whose last mantissa bit is 0; a hair above it
// rounds up, a hair below down.
TEST(Half, EveryFloat16TieRoundsToEven) {
  for (uint32_t b = 0; b < 0x7bff; ++b) {  // positive finite, below the largest
    const double lo = HalfValue(static_cast<uint16_t>(b));
    const double hi = HalfValue(static_cast<uint16_t>(b + 1));
    const double mid = (lo + hi) / 2;
    const uint16_t even = (b & 1) ? b + 1 : b;
    ASSERT_EQ(resident_float_to_half(static_cast<float>(mid)).bits, even) << b;
    ASSERT_EQ(resident_double_to_half(mid).bits, even) << b;
    ASSERT_EQ(resident_double_to_half(-mid).bits, even | 0x8000) << b;
    ASSERT_EQ(resident_double_to_half(std::nextafter(mid, hi)).bits, b + 1) << b;
    ASSERT_EQ(resident_double_to_half(std::nextafter(mid, lo)).bits, b) << b;
  }
  // Half way between the largest finite (65504) and 65536 overflows to inf.
  EXPECT_EQ(resident_float_to_half(65520.0f).bits, 0x7c00);
  EXPECT_EQ(resident_float_to_half(65519.996f).bits, 0x7bff);
}

TEST(Half, EveryBFloat16TieRoundsToEven) {
  for (uint32_t b = 0; b < 0x7f7f; ++b) {
    const float lo = FromBits(b << 16), hi = FromBits((b + 1) << 16);
    const double mid = (static_cast<double>(lo) + hi) / 2;
    const uint16_t even = (b & 1) ? b + 1 : b;
    ASSERT_EQ(resident_float_to_bf16(static_cast<float>(mid)).bits, even) << b;
    ASSERT_EQ(resident_double_to_bf16(mid).bits, even) << b;
    ASSERT_EQ(resident_double_to_bf16(std::nextafter(mid, 1e300)).bits, b + 1) << b;
    ASSERT_EQ(resident_double_to_bf16(std::nextafter(mid, 0.0)).bits, b) << b;
  }
}

// NaN compares by being NaN of the same sign (NumPy keeps payload bits that
// C cannot promise); everything else by bits.
void ExpectSameHalf(uint16_t got, uint16_t want, int exp_bits, const char* what, uint64_t in) {
  const uint16_t exp_mask = static_cast<uint16_t>(((1u << exp_bits) - 1) << (15 - exp_bits));
  const uint16_t man_mask = static_cast<uint16_t>((1u << (15 - exp_bits)) - 1);
  const bool want_nan = (want & exp_mask) == exp_mask && (want & man_mask) != 0;
  if (want_nan) {
    EXPECT_TRUE((got & exp_mask) == exp_mask && (got & man_mask) != 0)
        << what << " of 0x" << std::hex << in << ": got 0x" << got;
    EXPECT_EQ(got >> 15, want >> 15) << what << " of 0x" << std::hex << in;
  } else {
    EXPECT_EQ(got, want) << what << " of 0x" << std::hex << in << " (" << FromBits64(in) << ")";
  }
}

TEST(Half, Float32RoundsAsNumPyAndMlDtypes) {
  for (const HalfCase32& c : kFloat32Cases) {
    const float f = FromBits(c.f);
    ExpectSameHalf(resident_float_to_half(f).bits, c.half, 5, "float16", c.f);
    ExpectSameHalf(resident_float_to_bf16(f).bits, c.bf16, 8, "bfloat16", c.f);
  }
}

TEST(Half, Float64RoundsOnceAsNumPyAndMlDtypes) {
  for (const HalfCase64& c : kFloat64Cases) {
    const double d = FromBits64(c.d);
    ExpectSameHalf(resident_double_to_half(d).bits, c.half, 5, "float16", c.d);
    ExpectSameHalf(resident_double_to_bf16(d).bits, c.bf16, 8, "bfloat16", c.d);
  }
}

TEST(Half, NaNBitsAreNumPys) {
  // The quiet NaNs NumPy and ml_dtypes write for float('nan').
  EXPECT_EQ(resident_float_to_half(NAN).bits, 0x7e00);
  EXPECT_EQ(resident_double_to_half(-static_cast<double>(NAN)).bits, 0xfe00);
  EXPECT_EQ(resident_float_to_bf16(NAN).bits, 0x7fc0);
  EXPECT_EQ(resident_double_to_bf16(static_cast<double>(NAN)).bits, 0x7fc0);
}

TEST(Half, DTypesAndStorage) {
  EXPECT_EQ(ItemSize(DType::kFloat16), 2);
  EXPECT_EQ(ItemSize(DType::kBFloat16), 2);
  EXPECT_EQ(*ParseDType("float16"), DType::kFloat16);
  EXPECT_EQ(*ParseDType("bfloat16"), DType::kBFloat16);
  EXPECT_TRUE(IsFloating(DType::kFloat16) && IsFloating(DType::kBFloat16));
  EXPECT_EQ(StorageType<DType::kFloat16>{}.bits, 0);  // value-initialised: +0.0
  static_assert(std::is_same_v<ComputeType<Float16>, float>);
  static_assert(std::is_same_v<ComputeType<BFloat16>, float>);
  static_assert(std::is_same_v<ComputeType<int8_t>, int8_t>);
}

}  // namespace
}  // namespace resident

// The op table (core/elementwise_kind.h) against NumPy's ufuncs, and the
// shared scalar expressions (core/elementwise_expr.h) against NumPy-computed
// literals. The names, arities and the dtypes each op accepts were read from
// numpy.<ufunc>.nin and .types (NumPy 2.x) for bool/int32/int64/float32/float64
// loops with one dtype throughout.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "core/elementwise_expr.h"
#include "core/elementwise_kind.h"
#include "gtest/gtest.h"

namespace resident {
namespace {

struct NumpyUfunc {
  const char* name;
  int nin;
  const char* loops;  // NumPy type chars of its same-dtype loops: ? b h i l B H I L f d e (E)
};
// numpy.<ufunc>.types reduced to our dtypes, NumPy 2.4, and E for bfloat16
// wherever ml_dtypes 0.7 registers the ufunc (every float loop; a kBoolResult op
// such as less has loops 'ii->?': it computes in int32).
constexpr NumpyUfunc kNumpy[] = {
    {"add", 2, "?bhilBHILfdeE"},
    {"subtract", 2, "bhilBHILfdeE"},
    {"multiply", 2, "?bhilBHILfdeE"},
    {"divide", 2, "fdeE"},
    {"negative", 1, "bhilBHILfdeE"},
    {"maximum", 2, "?bhilBHILfdeE"},
    {"minimum", 2, "?bhilBHILfdeE"},
    {"fmax", 2, "?bhilBHILfdeE"},
    {"fmin", 2, "?bhilBHILfdeE"},
    {"power", 2, "bhilBHILfdeE"},
    {"remainder", 2, "bhilBHILfdeE"},
    {"floor_divide", 2, "bhilBHILfdeE"},
    {"absolute", 1, "?bhilBHILfdeE"},
    {"sign", 1, "bhilBHILfdeE"},
    {"sqrt", 1, "fdeE"},
    {"exp", 1, "fdeE"},
    {"log", 1, "fdeE"},
    {"log1p", 1, "fdeE"},
    {"expm1", 1, "fdeE"},
    {"sin", 1, "fdeE"},
    {"cos", 1, "fdeE"},
    {"tanh", 1, "fdeE"},
    {"floor", 1, "?bhilBHILfdeE"},
    {"ceil", 1, "?bhilBHILfdeE"},
    {"equal", 2, "?bhilBHILfdeE"},
    {"not_equal", 2, "?bhilBHILfdeE"},
    {"less", 2, "?bhilBHILfdeE"},
    {"less_equal", 2, "?bhilBHILfdeE"},
    {"greater", 2, "?bhilBHILfdeE"},
    {"greater_equal", 2, "?bhilBHILfdeE"},
    {"logical_and", 2, "?bhilBHILfdeE"},
    {"logical_or", 2, "?bhilBHILfdeE"},
    {"logical_xor", 2, "?bhilBHILfdeE"},
    {"logical_not", 1, "?bhilBHILfdeE"},
    {"isnan", 1, "?bhilBHILfdeE"},
    {"isfinite", 1, "?bhilBHILfdeE"},
    {"tan", 1, "fdeE"},
    {"arcsin", 1, "fdeE"},
    {"arccos", 1, "fdeE"},
    {"arctan", 1, "fdeE"},
    {"sinh", 1, "fdeE"},
    {"cosh", 1, "fdeE"},
    {"arcsinh", 1, "fdeE"},
    {"arccosh", 1, "fdeE"},
    {"arctanh", 1, "fdeE"},
    {"log2", 1, "fdeE"},
    {"log10", 1, "fdeE"},
    {"rint", 1, "fdeE"},
    {"arctan2", 2, "fdeE"},
    {"hypot", 2, "fdeE"},
    {"logaddexp", 2, "fdeE"},
    {"copysign", 2, "fdeE"},
    {"nextafter", 2, "fd"},  // NumPy's "fdeE": Resident refuses the halves (README)
    {"trunc", 1, "?bhilBHILfdeE"},
    {"square", 1, "bhilBHILfdeE"},
    {"reciprocal", 1, "bhilBHILfdeE"},
    {"positive", 1, "bhilBHILfdeE"},
    {"conjugate", 1, "bhilBHILfdeE"},
    {"real", 1, "?bhilBHILfdeE"},  // numpy.real and numpy.imag: functions, any dtype
    {"imag", 1, "?bhilBHILfdeE"},
    {"isinf", 1, "?bhilBHILfdeE"},
    {"signbit", 1, "?bhilBHILfdeE"},  // NumPy's "fdeE" after casting integers: the same bool
    {"bitwise_and", 2, "?bhilBHIL"},
    {"bitwise_or", 2, "?bhilBHIL"},
    {"bitwise_xor", 2, "?bhilBHIL"},
    {"invert", 1, "?bhilBHIL"},
    {"left_shift", 2, "bhilBHIL"},
    {"right_shift", 2, "bhilBHIL"},
};

// NumPy's type character of d (kAllDTypes order).
char TypeChar(DType d) {
  constexpr char kChars[] = "?bhilBHILfdeE";  // E: ml_dtypes' bfloat16
  static_assert(sizeof(kChars) - 1 == std::size(kAllDTypes));
  for (size_t i = 0; i < std::size(kAllDTypes); ++i) {
    if (kAllDTypes[i] == d) return kChars[i];
  }
  return 0;
}

TEST(ElementwiseTableTest, EveryRowIsNumpysUfunc) {
  ASSERT_EQ(kNumElementwiseKinds, static_cast<int>(std::size(kNumpy)));
  for (const NumpyUfunc& u : kNumpy) {
    const ElementwiseInfo* e = FindElementwise(u.name);
    ASSERT_NE(e, nullptr) << u.name;
    EXPECT_EQ(e->arity, u.nin) << u.name;
    EXPECT_EQ(Arity(e->kind), u.nin);
    EXPECT_STREQ(ElementwiseName(e->kind), u.name);
    EXPECT_EQ(std::string(e->function), std::string("resident_ew_") + u.name);
    for (DType d : kAllDTypes) {
      const bool numpy_has = std::string(u.loops).find(TypeChar(d)) != std::string::npos;
      EXPECT_EQ(ElementwiseAccepts(e->kind, d), numpy_has) << u.name << " " << DTypeName(d);
    }
  }
  EXPECT_EQ(FindElementwise("true_divide_typo"), nullptr);
  EXPECT_EQ(FindElementwise("abs"), FindElementwise("absolute"));
  EXPECT_EQ(FindElementwise("mod"), FindElementwise("remainder"));
  EXPECT_EQ(FindElementwise("atan2"), FindElementwise("arctan2"));
  EXPECT_EQ(FindElementwise("bitwise_invert"), FindElementwise("invert"));
  EXPECT_EQ(FindElementwise(static_cast<ElementwiseKind>(200)), nullptr);
  EXPECT_EQ(Arity(static_cast<ElementwiseKind>(200)), 0);
}

// Literals from NumPy 2.4: np.left_shift(np.int8(1), np.int8(7)) == -128,
// np.right_shift(np.int8(-8), np.int8(100)) == -1, np.left_shift(np.int32(1),
// np.int32(-1)) == 0, np.reciprocal(np.int32([0, 2, -1])) == [INT_MIN, 0, -1],
// np.reciprocal(np.int8(0)) == 0, np.logaddexp(-inf, -inf) == -inf.
TEST(ElementwiseExprTest, ShiftsReciprocalLogaddexpAsNumpy) {
  EXPECT_EQ(resident_ew_left_shift(int8_t{1}, int8_t{7}), int8_t{-128});
  EXPECT_EQ(resident_ew_right_shift(int8_t{-8}, int8_t{100}), int8_t{-1});
  EXPECT_EQ(resident_ew_right_shift(int8_t{-8}, int8_t{2}), int8_t{-2});
  EXPECT_EQ(resident_ew_left_shift(int32_t{1}, int32_t{-1}), 0);
  EXPECT_EQ(resident_ew_right_shift(uint64_t{1} << 63, uint64_t{63}), uint64_t{1});
  EXPECT_EQ(resident_ew_reciprocal(int32_t{0}), -2147483647 - 1);
  EXPECT_EQ(resident_ew_reciprocal(int32_t{2}), 0);
  EXPECT_EQ(resident_ew_reciprocal(int32_t{-1}), -1);
  EXPECT_EQ(resident_ew_reciprocal(int8_t{0}), 0);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(resident_ew_logaddexp(-inf, -inf), -inf);
  EXPECT_TRUE(resident_ew_isinf(-inf));
  EXPECT_FALSE(resident_ew_isinf(std::nan("")));
  EXPECT_TRUE(resident_ew_signbit(-0.0));
  EXPECT_EQ(resident_ew_invert(uint8_t{0}), uint8_t{255});
}

// Literals from NumPy: np.int32(2147483647) + np.int32(1) == -2147483648, etc.
TEST(ElementwiseExprTest, IntegersWrapAsNumpy) {
  EXPECT_EQ(resident_ew_add(int32_t{2147483647}, int32_t{1}), -2147483647 - 1);
  EXPECT_EQ(resident_ew_subtract(std::numeric_limits<int64_t>::min(), int64_t{1}),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(resident_ew_multiply(int32_t{65536}, int32_t{65536}), 0);
  EXPECT_EQ(resident_ew_negative(int32_t{-2147483647 - 1}), -2147483647 - 1);
}

TEST(ElementwiseExprTest, BoolAddIsOrMultiplyIsAnd) {
  EXPECT_TRUE(resident_ew_add(true, true));
  EXPECT_TRUE(resident_ew_add(false, true));
  EXPECT_FALSE(resident_ew_add(false, false));
  EXPECT_FALSE(resident_ew_multiply(true, false));
  EXPECT_TRUE(resident_ew_multiply(true, true));
}

TEST(ElementwiseExprTest, FloatsAreIeee) {
  // np.float32(1) / np.float32(3) == 0.3333333432674408 (as float64)
  EXPECT_EQ(static_cast<double>(resident_ew_divide(1.0f, 3.0f)), 0.3333333432674408);
  EXPECT_TRUE(std::isinf(resident_ew_divide(1.0, 0.0)));
  EXPECT_TRUE(std::signbit(resident_ew_negative(0.0)));
}

}  // namespace
}  // namespace resident

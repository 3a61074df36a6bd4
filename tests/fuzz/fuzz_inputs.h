// Contents of the arrays the program fuzzer runs on: values that break
// careless kernels (zero, -0.0, extremes of each type, inf, NaN, denormals),
// cycled over the elements so every op meets each of them.
#ifndef RESIDENT_TESTS_FUZZ_FUZZ_INPUTS_H_
#define RESIDENT_TESTS_FUZZ_FUZZ_INPUTS_H_

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "core/dtype.h"

namespace resident::fuzz {

template <typename T>
void FillCycle(std::string& out, std::initializer_list<T> values) {
  const size_t n = out.size() / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    const T v = values.begin()[i % values.size()];
    std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
  }
}

// `n` elements of `dtype`, little-endian (bools are 0 or 1, as C++ needs).
inline std::string EdgeValues(DType dtype, int64_t n) {
  std::string out(static_cast<size_t>(n * ItemSize(dtype)), '\0');
  switch (dtype) {
    case DType::kBool:
      FillCycle<uint8_t>(out, {1, 0, 0, 1, 1});
      break;
    case DType::kInt8:
      FillCycle<int8_t>(out, {3, 0, -1, 127, -128, 1, -7, 2});
      break;
    case DType::kInt16:
      FillCycle<int16_t>(out, {3, 0, -1, 32767, -32768, 1, -7, 2});
      break;
    case DType::kUint8:
      FillCycle<uint8_t>(out, {3, 0, 255, 254, 128, 1, 7, 2});
      break;
    case DType::kUint16:
      FillCycle<uint16_t>(out, {3, 0, 65535, 65534, 32768, 1, 7, 2});
      break;
    case DType::kUint32:
      FillCycle<uint32_t>(out, {3, 0, 4294967295u, 4294967294u, 2147483648u, 1, 7, 2});
      break;
    case DType::kUint64:
      FillCycle<uint64_t>(out, {3, 0, ~uint64_t{0}, ~uint64_t{1}, uint64_t{1} << 63, 1, 7, 2});
      break;
    case DType::kInt32: {
      using L = std::numeric_limits<int32_t>;
      FillCycle<int32_t>(out, {3, 0, -1, L::max(), L::min(), 1, -7, 2});
      break;
    }
    case DType::kInt64: {
      using L = std::numeric_limits<int64_t>;
      FillCycle<int64_t>(out, {3, 0, -1, L::max(), L::min(), 1, -7, 2});
      break;
    }
    case DType::kFloat32: {
      using L = std::numeric_limits<float>;
      FillCycle<float>(out, {1.5f, 0.0f, -0.0f, L::infinity(), -L::infinity(), L::quiet_NaN(),
                             L::max(), L::lowest(), L::denorm_min(), 3e9f, -2.0f});
      break;
    }
    case DType::kFloat64: {
      using L = std::numeric_limits<double>;
      FillCycle<double>(out, {1.5, 0.0, -0.0, L::infinity(), -L::infinity(), L::quiet_NaN(),
                              L::max(), L::lowest(), L::denorm_min(), 1e19, -2.0});
      break;
    }
    case DType::kFloat16:  // 1.5, 0, -0, inf, -inf, NaN, max, lowest, denorm_min, -2
      FillCycle<uint16_t>(
          out, {0x3e00, 0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7bff, 0xfbff, 0x0001, 0xc000});
      break;
    case DType::kBFloat16:  // the same values as bfloat16 has them, and 3e9
      FillCycle<uint16_t>(out, {0x3fc0, 0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f7f, 0xff7f,
                                0x0001, 0x4f33, 0xc000});
      break;
    case DType::kComplex64: {  // parts from float32's edges
      using L = std::numeric_limits<float>;
      FillCycle<float>(out, {1.5f, 0.0f, -0.0f, L::infinity(), -L::infinity(), L::quiet_NaN(),
                             L::max(), L::denorm_min(), -2.0f});
      break;
    }
    case DType::kComplex128: {
      using L = std::numeric_limits<double>;
      FillCycle<double>(out, {1.5, 0.0, -0.0, L::infinity(), -L::infinity(), L::quiet_NaN(),
                              L::max(), L::denorm_min(), -2.0});
      break;
    }
  }
  return out;
}

}  // namespace resident::fuzz

#endif  // RESIDENT_TESTS_FUZZ_FUZZ_INPUTS_H_

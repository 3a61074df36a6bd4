// The handles the fuzzers' resolver knows. Instead of a fixed table, a known
// handle spells out the array it names: the magic "FZ", the dtype's index
// in kAllDTypes, the rank (at most 6) and six little-endian 16-bit
// dimensions (those past the rank zero). A mutation of a handle's bytes then
// gives the planner a new dtype or shape to check rather than only a
// NOT_FOUND, and the e2e request dump (tests/e2e/e2e_fixture.h) rewrites
// each uploaded array's handle into this form. Any other 16 bytes name no
// array (NOT_FOUND, as for a real server's unknown handle).
#ifndef RESIDENT_TESTS_FUZZ_FUZZ_HANDLES_H_
#define RESIDENT_TESTS_FUZZ_FUZZ_HANDLES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "core/dtype.h"
#include "core/handle_id.h"
#include "core/shape.h"

namespace resident::fuzz {

inline constexpr size_t kMaxHandleRank = 6;
inline constexpr int64_t kMaxHandleDim = 0xFFFF;

struct HandleType {
  DType dtype = DType::kFloat64;
  Shape shape;
};

// The handle naming an array of `dtype` and `shape`; nullopt when the shape
// has more than kMaxHandleRank dimensions or one outside [0, kMaxHandleDim].
inline std::optional<HandleId> EncodeHandle(DType dtype, const Shape& shape) {
  if (shape.size() > kMaxHandleRank) return std::nullopt;
  std::string b(HandleId::kSize, '\0');
  b[0] = 'F';
  b[1] = 'Z';
  b[2] = static_cast<char>(dtype);  // DType's values are kAllDTypes' indices
  b[3] = static_cast<char>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0 || shape[i] > kMaxHandleDim) return std::nullopt;
    b[4 + 2 * i] = static_cast<char>(shape[i] & 0xFF);
    b[5 + 2 * i] = static_cast<char>(shape[i] >> 8);
  }
  return HandleId::FromBytes(b);
}

// The array a handle names; nullopt for a handle EncodeHandle cannot return
// and for one whose size overflows int64 (no real array has such a shape).
inline std::optional<HandleType> DecodeHandle(const HandleId& h) {
  const std::string b = h.bytes();
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(b[i]); };
  if (b[0] != 'F' || b[1] != 'Z') return std::nullopt;
  if (byte(2) >= std::size(kAllDTypes) || byte(3) > kMaxHandleRank) return std::nullopt;
  HandleType t{kAllDTypes[byte(2)], Shape(byte(3))};
  for (size_t i = 0; i < kMaxHandleRank; ++i) {
    const int64_t d = byte(4 + 2 * i) | (int64_t{byte(5 + 2 * i)} << 8);
    if (i < t.shape.size()) {
      t.shape[i] = d;
    } else if (d != 0) {
      return std::nullopt;
    }
  }
  absl::StatusOr<int64_t> n = CheckedNumElements(t.shape);
  if (!n.ok() || !CheckedNumBytes(*n, ItemSize(t.dtype)).ok()) return std::nullopt;
  return t;
}

}  // namespace resident::fuzz

#endif  // RESIDENT_TESTS_FUZZ_FUZZ_HANDLES_H_

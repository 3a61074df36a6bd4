// Array shapes: element counts with overflow checks, broadcasting.
#ifndef RESIDENT_CORE_SHAPE_H_
#define RESIDENT_CORE_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace resident {

using Shape = std::vector<int64_t>;

// Most dimensions an array may have (NumPy's limit).
inline constexpr int kMaxRank = 64;

// The product of the dimensions. INVALID_ARGUMENT for a negative dimension,
// too many dimensions, or a product that overflows int64.
absl::StatusOr<int64_t> CheckedNumElements(absl::Span<const int64_t> shape);
// The same, for shapes already validated.
int64_t NumElements(absl::Span<const int64_t> shape);
// Bytes of num_elements * item_size, INVALID_ARGUMENT on overflow.
absl::StatusOr<int64_t> CheckedNumBytes(int64_t num_elements, int64_t item_size);

// NumPy broadcasting of two shapes; INVALID_ARGUMENT naming both when they
// do not broadcast.
absl::StatusOr<Shape> BroadcastShapes(absl::Span<const int64_t> a, absl::Span<const int64_t> b);

// "(1024, 512, 4, 4)", "()" and "(3,)" as NumPy prints them.
std::string ShapeString(absl::Span<const int64_t> shape);

// C-order strides in elements.
std::vector<int64_t> ContiguousStrides(absl::Span<const int64_t> shape);

}  // namespace resident

#endif  // RESIDENT_CORE_SHAPE_H_

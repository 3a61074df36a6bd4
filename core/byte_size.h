// Byte counts as people write them on command lines and in config files.
#ifndef RESIDENT_CORE_BYTE_SIZE_H_
#define RESIDENT_CORE_BYTE_SIZE_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace resident {

// "8G" -> 8 << 30: a non-negative integer with an optional K, M, G or T
// suffix (powers of 1024, either case). False for anything else, or past
// INT64_MAX.
bool ParseByteSize(absl::string_view text, int64_t* out);

}  // namespace resident

#endif  // RESIDENT_CORE_BYTE_SIZE_H_

#include "core/byte_size.h"

#include <limits>

#include "absl/strings/numbers.h"

namespace resident {

bool ParseByteSize(absl::string_view text, int64_t* out) {
  if (text.empty()) return false;
  int64_t scale = 1;
  switch (text.back()) {
    case 'K':
    case 'k':
      scale = int64_t{1} << 10;
      break;
    case 'M':
    case 'm':
      scale = int64_t{1} << 20;
      break;
    case 'G':
    case 'g':
      scale = int64_t{1} << 30;
      break;
    case 'T':
    case 't':
      scale = int64_t{1} << 40;
      break;
    default:
      break;
  }
  if (scale != 1) text.remove_suffix(1);
  int64_t v = 0;
  if (!absl::SimpleAtoi(text, &v) || v < 0 || v > std::numeric_limits<int64_t>::max() / scale) {
    return false;
  }
  *out = v * scale;
  return true;
}

}  // namespace resident

#include "core/handle_id.h"

#include <sys/random.h>

#include <cstdlib>

namespace resident {

HandleId HandleId::Random() {
  HandleId id;
  size_t got = 0;
  while (got < kSize) {
    const ssize_t n = getrandom(id.bytes_.data() + got, kSize - got, 0);
    if (n < 0) std::abort();  // no entropy source: never hand out weak ids
    got += static_cast<size_t>(n);
  }
  return id;
}

std::optional<HandleId> HandleId::FromBytes(std::string_view raw) {
  if (raw.size() != kSize) return std::nullopt;
  HandleId id;
  std::memcpy(id.bytes_.data(), raw.data(), kSize);
  return id;
}

std::optional<HandleId> HandleId::FromHex(std::string_view hex) {
  if (hex.size() != 2 * kSize) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  HandleId id;
  for (size_t i = 0; i < kSize; ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    id.bytes_[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return id;
}

std::string HandleId::ToHex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * kSize, '0');
  for (size_t i = 0; i < kSize; ++i) {
    out[2 * i] = kDigits[bytes_[i] >> 4];
    out[2 * i + 1] = kDigits[bytes_[i] & 15];
  }
  return out;
}

}  // namespace resident

// Opaque, unguessable 128-bit array handles.
#ifndef RESIDENT_CORE_HANDLE_ID_H_
#define RESIDENT_CORE_HANDLE_ID_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace resident {

class HandleId {
 public:
  static constexpr size_t kSize = 16;
  HandleId() { bytes_.fill(0); }

  // 128 bits from the kernel's CSPRNG (getrandom), so handles cannot be
  // guessed by other tenants.
  static HandleId Random();
  // From the 16 raw bytes of the wire format; nullopt for any other length.
  static std::optional<HandleId> FromBytes(std::string_view raw);
  // From 32 hex digits (the CLI's form); nullopt otherwise.
  static std::optional<HandleId> FromHex(std::string_view hex);

  std::string bytes() const {
    return std::string(reinterpret_cast<const char*>(bytes_.data()), kSize);
  }
  std::string ToHex() const;

  friend bool operator==(const HandleId& a, const HandleId& b) { return a.bytes_ == b.bytes_; }
  template <typename H>
  friend H AbslHashValue(H h, const HandleId& id) {
    return H::combine_contiguous(std::move(h), id.bytes_.data(), kSize);
  }

 private:
  std::array<uint8_t, kSize> bytes_;
};

}  // namespace resident

#endif  // RESIDENT_CORE_HANDLE_ID_H_

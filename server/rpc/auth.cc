#include "server/rpc/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace resident {
namespace {

constexpr absl::string_view kBearer = "Bearer ";

bool ValidTenant(absl::string_view t) {
  if (t.empty() || t.size() > 64) return false;
  return std::all_of(t.begin(), t.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

bool DecodeHex32(absl::string_view hex, std::array<uint8_t, 32>* out) {
  if (hex.size() != 64) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < 32; ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

}  // namespace

const char* RoleName(Role role) { return role == Role::kAdmin ? "admin" : "user"; }

std::array<uint8_t, 32> Sha256(absl::string_view data) {
  std::array<uint8_t, 32> out{};
  unsigned int n = 0;
  // One-shot EVP digest; SHA-256 cannot fail on valid arguments.
  EVP_Digest(data.data(), data.size(), out.data(), &n, EVP_sha256(), nullptr);
  return out;
}

std::string HexEncode(const uint8_t* data, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(size * 2, '0');
  for (size_t i = 0; i < size; ++i) {
    s[2 * i] = kDigits[data[i] >> 4];
    s[2 * i + 1] = kDigits[data[i] & 15];
  }
  return s;
}

Authenticator Authenticator::SingleUser() { return Authenticator(); }

absl::StatusOr<Authenticator> Authenticator::FromFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read tokens file ", path));
  std::stringstream text;
  text << in.rdbuf();
  return FromText(text.str(), path);
}

absl::StatusOr<Authenticator> Authenticator::FromText(absl::string_view text,
                                                      const std::string& source) {
  Authenticator auth;
  auth.enabled_ = true;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    auto bad = [&](absl::string_view why) {
      // The line itself is not echoed: a token pasted by mistake stays out of logs.
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line_no, ": ", why,
                       "; expected '<sha256-hex-of-token> <tenant> <user|admin>'"));
    };
    if (fields.size() != 3) {
      return bad(absl::StrCat("has ", fields.size(), " fields, not 3"));
    }
    Entry e;
    if (!DecodeHex32(fields[0], &e.hash)) {
      return bad("the first field is not 64 hex digits (a SHA-256)");
    }
    if (!ValidTenant(fields[1])) {
      return bad("the tenant must be 1-64 characters of letters, digits, '-', '_' or '.'");
    }
    if (fields[2] == "user") {
      e.identity.role = Role::kUser;
    } else if (fields[2] == "admin") {
      e.identity.role = Role::kAdmin;
    } else {
      return bad("the role must be 'user' or 'admin'");
    }
    e.identity.tenant = std::string(fields[1]);
    for (const Entry& other : auth.entries_) {
      if (other.hash == e.hash) return bad("repeats the hash of an earlier line");
    }
    auth.entries_.push_back(std::move(e));
  }
  return auth;
}

absl::StatusOr<Identity> Authenticator::Authenticate(const Metadata& metadata) const {
  if (!enabled_) return Identity{"default", Role::kAdmin};
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return absl::UnauthenticatedError(
        "no credentials: send 'authorization: Bearer <token>' (RESIDENT_TOKEN or --token)");
  }
  absl::string_view value(it->second.data(), it->second.size());
  if (!absl::StartsWith(value, kBearer) || value.size() == kBearer.size()) {
    return absl::UnauthenticatedError("the authorization header is not 'Bearer <token>'");
  }
  const std::array<uint8_t, 32> hash = Sha256(value.substr(kBearer.size()));
  // Every entry is compared, in constant time each, whatever matches.
  const Entry* found = nullptr;
  for (const Entry& e : entries_) {
    if (CRYPTO_memcmp(e.hash.data(), hash.data(), hash.size()) == 0) found = &e;
  }
  if (found == nullptr) return absl::UnauthenticatedError("invalid token");
  return found->identity;
}

absl::StatusOr<Identity> Authenticator::Authorize(const Metadata& metadata, Role needed) const {
  absl::StatusOr<Identity> who = Authenticate(metadata);
  if (!who.ok()) return who;
  if (needed == Role::kAdmin && who->role != Role::kAdmin) {
    return absl::PermissionDeniedError("this method needs the admin role");
  }
  return who;
}

}  // namespace resident

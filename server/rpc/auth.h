// Who a call acts for: tenants and roles from a tokens file.
//
// The tokens file holds one line per token, `<sha256-hex> <tenant> <role>`
// (role `user` or `admin`), with `#` comments and blank lines allowed; it
// never holds a token in the clear. Clients present `authorization: Bearer
// <token>`; the token is hashed and compared in constant time with every
// entry, so the time taken says nothing about which entry came close.
//
//   ASSIGN_OR_RETURN(Authenticator auth, Authenticator::FromFile(path));
//   ASSIGN_OR_RETURN(Identity who, auth.Authenticate(ctx.client_metadata()));
//
// Without a tokens file (Authenticator::SingleUser) every caller is tenant
// "default" with the admin role: the single-user mode for loopback use.
#ifndef RESIDENT_SERVER_RPC_AUTH_H_
#define RESIDENT_SERVER_RPC_AUTH_H_

#include <grpcpp/support/string_ref.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace resident {

enum class Role { kUser, kAdmin };
const char* RoleName(Role role);

struct Identity {
  std::string tenant;
  Role role = Role::kUser;
};

using Metadata = std::multimap<grpc::string_ref, grpc::string_ref>;

class Authenticator {
 public:
  // Every caller is tenant "default", role admin.
  static Authenticator SingleUser();
  // Parses a tokens file; INVALID_ARGUMENT naming the file and line for a
  // malformed line, NOT_FOUND if it cannot be read.
  static absl::StatusOr<Authenticator> FromFile(const std::string& path);
  // Parses tokens-file text; `source` names it in errors.
  static absl::StatusOr<Authenticator> FromText(absl::string_view text, const std::string& source);

  // False in single-user mode.
  bool enabled() const { return enabled_; }
  size_t size() const { return entries_.size(); }

  // The caller's identity from its `authorization: Bearer` metadata.
  // UNAUTHENTICATED for a missing, malformed or unknown token; the message
  // never repeats the token.
  absl::StatusOr<Identity> Authenticate(const Metadata& metadata) const;
  // Authenticate, then PERMISSION_DENIED unless the caller holds `needed`.
  absl::StatusOr<Identity> Authorize(const Metadata& metadata, Role needed) const;

 private:
  struct Entry {
    std::array<uint8_t, 32> hash;
    Identity identity;
  };
  bool enabled_ = false;
  std::vector<Entry> entries_;
};

// SHA-256 of `data` (through OpenSSL's libcrypto).
std::array<uint8_t, 32> Sha256(absl::string_view data);
std::string HexEncode(const uint8_t* data, size_t size);

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_AUTH_H_

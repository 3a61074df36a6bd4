// Per-tenant quotas: how many device bytes and how many arrays a tenant may
// hold. Read from the server's --quota-config file:
//
//   # comments and blank lines are ignored
//   default bytes=8G arrays=1000        # every tenant without its own line
//   tenant alice bytes=32G arrays=5000  # alice's own limits
//   tenant bob bytes=unlimited          # keys left out come from `default`
//
// bytes take K, M, G, T suffixes (powers of 1024); `unlimited` (or no line at
// all) means no limit. A tenant's bytes are the distinct device buffers its
// handles and names hold (an array kept under a name and still held by a
// handle counts once); its arrays are its handles plus its names.
#ifndef RESIDENT_SERVER_SESSION_QUOTA_H_
#define RESIDENT_SERVER_SESSION_QUOTA_H_

#include <cstdint>
#include <limits>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace resident {

struct Quota {
  static constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();
  int64_t max_bytes = kUnlimited;
  int64_t max_arrays = kUnlimited;
};

struct QuotaConfig {
  Quota defaults;
  absl::flat_hash_map<std::string, Quota> tenants;

  // The tenant's own quota, else the defaults.
  const Quota& For(const std::string& tenant) const;
};

// Parses the file format above. INVALID_ARGUMENT naming `source` and the
// line number for an unknown keyword or key, a bad number, a tenant listed
// twice or a second `default` line.
absl::StatusOr<QuotaConfig> ParseQuotaConfig(absl::string_view text,
                                             absl::string_view source = "quota config");
// Reads and parses a file; NOT_FOUND etc. (with the path) if it cannot be read.
absl::StatusOr<QuotaConfig> LoadQuotaConfig(const std::string& path);

// A byte size as core/byte_size.h reads it ("8G" -> 8 << 30), or
// "unlimited" -> Quota::kUnlimited. False for anything else.
bool ParseQuotaBytes(absl::string_view text, int64_t* out);

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_QUOTA_H_

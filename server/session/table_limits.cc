#include "server/session/table_limits.h"

#include "absl/strings/str_cat.h"

namespace resident {

absl::Status ServerLimitReached(absl::string_view what, int64_t limit, absl::string_view flag) {
  return absl::ResourceExhaustedError(absl::StrCat("the server's limit of ", limit, " ", what,
                                                   " is reached (", flag,
                                                   "); close sessions or release handles first"));
}

absl::Status TenantLimitReached(const std::string& tenant, int64_t count, absl::string_view what,
                                absl::string_view limit_name, absl::string_view flag,
                                absl::string_view advice) {
  return absl::ResourceExhaustedError(absl::StrCat("tenant '", tenant, "' has ", count, " ", what,
                                                   ", ", limit_name, " (", flag, "); ", advice));
}

}  // namespace resident

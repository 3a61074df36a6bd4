// The server-wide bounds on the session layer's tables, and the one way each
// kind of limit is reported when reached.
//
// Each handle or session costs host memory that no device quota sees, so
// one runaway script could otherwise fill the server's host memory. The
// parts that enforce a bound (SessionTable, HandleTable, NamedArrays,
// TransferSlots) word their RESOURCE_EXHAUSTED errors through these
// functions, so that every message names the flag that sets the limit.
//
// Thread-safety: plain values and pure functions.
//
//   if (open >= limits.max_sessions) {
//     return ServerLimitReached("open sessions", limits.max_sessions, "--max-sessions");
//   }
#ifndef RESIDENT_SERVER_SESSION_TABLE_LIMITS_H_
#define RESIDENT_SERVER_SESSION_TABLE_LIMITS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace resident {

// Defaults a lab would not hit by accident; RESOURCE_EXHAUSTED names the
// limit that was reached.
struct TableLimits {
  int64_t max_sessions = 1024;             // open at once, every tenant
  int64_t max_sessions_per_tenant = 256;   // open at once, one tenant
  int64_t max_handles = int64_t{1} << 20;  // every session together
  // One tenant's share of max_handles (every session of it together): a
  // quarter, so that one tenant's flood leaves room for the others.
  int64_t max_handles_per_tenant = int64_t{1} << 18;
  int64_t max_handles_per_session = int64_t{1} << 17;
  int64_t max_names_per_tenant = int64_t{1} << 16;
  // Uploads and downloads of one tenant in flight at once: each holds up
  // to two chunks of host memory while its client reads or writes.
  int64_t max_transfers_per_tenant = 64;
  // Shared-memory regions of one tenant mapped at once, and their bytes:
  // each is the client's memory page-locked in the server's address space.
  int64_t max_regions_per_tenant = 64;
  int64_t max_region_bytes_per_tenant = int64_t{16} << 30;
};

// "the server's limit of <limit> <what> is reached (<flag>); close sessions
// or release handles first".
absl::Status ServerLimitReached(absl::string_view what, int64_t limit, absl::string_view flag);

// "tenant '<tenant>' has <count> <what>, <limit_name> (<flag>); <advice>",
// e.g. limit_name "the server's limit per tenant", advice "close some first".
absl::Status TenantLimitReached(const std::string& tenant, int64_t count, absl::string_view what,
                                absl::string_view limit_name, absl::string_view flag,
                                absl::string_view advice);

}  // namespace resident

#endif  // RESIDENT_SERVER_SESSION_TABLE_LIMITS_H_

// Client-supplied strings in messages and logs.
//
// A hostile client may send an op name, array name or device name of a
// megabyte; echoing it would turn one bad request into a megabyte error
// (over the client's message limit, so it sees "Stream removed" instead of
// INVALID_ARGUMENT) and a megabyte log line. Every message that quotes
// what the client sent quotes it through ClientText: a short, escaped
// prefix with the full length when cut.
//
//   return InvalidArgumentError(StrCat("unknown op ", ClientText(w.op())));
//   // -> unknown op 'aaaaaaaa...' (1048576 bytes)
#ifndef RESIDENT_CORE_CLIENT_TEXT_H_
#define RESIDENT_CORE_CLIENT_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace resident {

// Bytes of a client string a message quotes.
inline constexpr size_t kClientTextMax = 64;
// The longest status message the server sends and the longest log line it
// writes: a last guard for messages built from many short parts.
inline constexpr size_t kMessageMax = 2048;

// `s` quoted, control bytes escaped, cut to kClientTextMax bytes.
inline std::string ClientText(absl::string_view s) {
  if (s.size() <= kClientTextMax) return absl::StrCat("'", absl::CHexEscape(s), "'");
  return absl::StrCat("'", absl::CHexEscape(s.substr(0, kClientTextMax)), "...' (", s.size(),
                      " bytes)");
}

// `message` cut to kMessageMax bytes, saying so.
inline std::string CapMessage(absl::string_view message) {
  if (message.size() <= kMessageMax) return std::string(message);
  return absl::StrCat(message.substr(0, kMessageMax), "... (", message.size(), " bytes in all)");
}

}  // namespace resident

#endif  // RESIDENT_CORE_CLIENT_TEXT_H_

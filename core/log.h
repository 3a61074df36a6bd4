// Minimal leveled logging to stderr, one line per call. Abseil's logging
// library is newer than Debian 12's Abseil, so this small stand-in is ours.
#ifndef RESIDENT_SERVER_BASE_LOG_H_
#define RESIDENT_SERVER_BASE_LOG_H_

#include <string_view>

#include "absl/strings/str_cat.h"

namespace resident {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Process-wide threshold, set once by main() from --log-level.
void SetLogLevel(LogLevel level);
bool ParseLogLevel(std::string_view name, LogLevel* level);
bool LogEnabled(LogLevel level);
void LogLine(LogLevel level, std::string_view message);

}  // namespace resident

#define RESIDENT_LOG(level, ...)                                        \
  do {                                                                  \
    if (::resident::LogEnabled(::resident::LogLevel::level))            \
      ::resident::LogLine(::resident::LogLevel::level,                  \
                          ::absl::StrCat(__VA_ARGS__));                 \
  } while (0)

#endif  // RESIDENT_SERVER_BASE_LOG_H_

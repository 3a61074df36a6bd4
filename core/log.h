// Minimal leveled logging to stderr, one line per call. Abseil's logging
// library is newer than Debian 12's Abseil, so this small stand-in is ours.
// Lines below ERROR are queued and written by a background thread (a call's
// path pays for a string, not a write); ERROR lines are written at once,
// after everything queued. FlushLog() before _Exit; exit() flushes itself.
#ifndef RESIDENT_CORE_LOG_H_
#define RESIDENT_CORE_LOG_H_

#include <string_view>

#include "absl/strings/str_cat.h"

namespace resident {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Process-wide threshold, set once by main() from --log-level.
void SetLogLevel(LogLevel level);
bool ParseLogLevel(std::string_view name, LogLevel* level);
bool LogEnabled(LogLevel level);
void LogLine(LogLevel level, std::string_view message);
// Writes every queued line now.
void FlushLog();

}  // namespace resident

#define RESIDENT_LOG(level, ...)                                                     \
  do {                                                                               \
    if (::resident::LogEnabled(::resident::LogLevel::level))                         \
      ::resident::LogLine(::resident::LogLevel::level, ::absl::StrCat(__VA_ARGS__)); \
  } while (0)

#endif  // RESIDENT_CORE_LOG_H_

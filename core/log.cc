#include "core/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace resident {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
constexpr const char* kNames[] = {"DEBUG", "INFO", "WARN", "ERROR"};
}  // namespace

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }

bool ParseLogLevel(std::string_view name, LogLevel* level) {
  if (name == "debug") *level = LogLevel::kDebug;
  else if (name == "info") *level = LogLevel::kInfo;
  else if (name == "warning" || name == "warn") *level = LogLevel::kWarning;
  else if (name == "error") *level = LogLevel::kError;
  else return false;
  return true;
}

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level; }

void LogLine(LogLevel level, std::string_view message) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          now.time_since_epoch()).count() % 1000);
  std::tm tm;
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
  // One fprintf per line so concurrent lines do not interleave.
  std::fprintf(stderr, "%s.%03dZ %s %.*s\n", stamp, ms,
               kNames[static_cast<int>(level)],
               static_cast<int>(message.size()), message.data());
}

}  // namespace resident

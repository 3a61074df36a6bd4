#include "core/log.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/client_text.h"

namespace resident {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
constexpr const char* kNames[] = {"DEBUG", "INFO", "WARN", "ERROR"};
// Lines queued beyond this are written by the caller (backpressure).
constexpr size_t kMaxQueued = 1 << 16;

struct Line {
  std::chrono::system_clock::time_point when;
  LogLevel level;
  std::string text;
};

void Write(const Line& line) {
  const std::time_t t = std::chrono::system_clock::to_time_t(line.when);
  const int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(line.when.time_since_epoch()).count() %
      1000);
  std::tm tm;
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
  // One fprintf per line so concurrent lines do not interleave.
  std::fprintf(stderr, "%s.%03dZ %s %.*s\n", stamp, ms, kNames[static_cast<int>(line.level)],
               static_cast<int>(line.text.size()), line.text.data());
}

// Lines are formatted and written by one background thread, so a request's
// path pays for a string and a queue push, not for a write to stderr. An
// error line is written at once (after what is queued), since it may be the
// last thing the process says.
class Writer {
 public:
  static Writer& Get() {
    static Writer* writer = new Writer();  // never destroyed: threads may log at exit
    return *writer;
  }

  void Push(Line line) {
    if (line.level == LogLevel::kError) {
      std::lock_guard<std::mutex> write(write_mu_);
      DrainLocked();
      Write(line);
      return;
    }
    bool wake = false;
    std::optional<Line> overflow;  // the queue is full: written by this thread
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.size() < kMaxQueued) {
        wake = queue_.empty();
        queue_.push_back(std::move(line));
      } else {
        overflow = std::move(line);
      }
    }
    if (overflow) {
      std::lock_guard<std::mutex> write(write_mu_);
      DrainLocked();
      Write(*overflow);
      return;
    }
    if (wake) cv_.notify_one();
  }

  void Flush() {
    std::lock_guard<std::mutex> write(write_mu_);
    DrainLocked();
  }

 private:
  Writer() {
    std::thread([this] { Loop(); }).detach();
    std::atexit([] { Writer::Get().Flush(); });
  }

  void Loop() {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return !queue_.empty(); });
      }
      Flush();
    }
  }

  // Writes every queued line, in order (write_mu_ held).
  void DrainLocked() {
    std::deque<Line> batch;
    {
      std::lock_guard<std::mutex> lock(mu_);
      batch.swap(queue_);
    }
    for (const Line& l : batch) Write(l);
    if (!batch.empty()) std::fflush(stderr);
  }

  std::mutex mu_;        // guards queue_
  std::mutex write_mu_;  // one writer at a time, in order
  std::condition_variable cv_;
  std::deque<Line> queue_;
};

}  // namespace

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }

bool ParseLogLevel(std::string_view name, LogLevel* level) {
  if (name == "debug")
    *level = LogLevel::kDebug;
  else if (name == "info")
    *level = LogLevel::kInfo;
  else if (name == "warning" || name == "warn")
    *level = LogLevel::kWarning;
  else if (name == "error")
    *level = LogLevel::kError;
  else
    return false;
  return true;
}

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level; }

void LogLine(LogLevel level, std::string_view message) {
  Writer::Get().Push(Line{std::chrono::system_clock::now(), level,
                          CapMessage(absl::string_view(message.data(), message.size()))});
}

void FlushLog() { Writer::Get().Flush(); }

}  // namespace resident

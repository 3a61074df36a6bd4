// The real resident-server binary (RESIDENT_SERVER_BINARY) as a child
// process on a --data-dir, for the suites that kill it with SIGKILL and
// restart it; plus small helpers those suites share.
#ifndef RESIDENT_TESTS_TENANCY_SERVER_PROCESS_H_
#define RESIDENT_TESTS_TENANCY_SERVER_PROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/tenancy/tenancy_fixture.h"

#ifndef RESIDENT_SERVER_BINARY
#error "RESIDENT_SERVER_BINARY must name the resident-server binary"
#endif

namespace resident::tenancy {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// n pseudo-random bytes (an LCG), the same for the same seed.
inline std::string RandomBytes(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    s[i] = static_cast<char>(seed >> 24);
  }
  return s;
}

// resident-server as a child process; its log goes to a file. `env` is set
// in the child only (e.g. RESIDENT_FAULT_INJECT).
class ServerProcess {
 public:
  ServerProcess(const std::string& data_dir, const std::string& log,
                const std::map<std::string, std::string>& env = {})
      : log_(log) {
    pid_ = fork();
    if (pid_ == 0) {
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      int fd = open(log.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
      dup2(fd, 2);
      dup2(fd, 1);
      execl(RESIDENT_SERVER_BINARY, RESIDENT_SERVER_BINARY, "--listen", "127.0.0.1:0",
            "--device", "cpu", "--data-dir", data_dir.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // The port is in the "listening on" line.
    const std::regex port_re("\\(port ([0-9]+)\\)");
    for (int i = 0; i < 1000 && port_ == 0; ++i) {
      std::smatch m;
      const std::string text = ReadFile(log);
      if (std::regex_search(text, m, port_re)) port_ = std::stoi(m[1]);
      if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (waitpid(pid_, &status_, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
    }
  }
  ~ServerProcess() { Kill(); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
    pid_ = -1;
  }
  // Waits up to `limit` for the process to exit by itself; true if it did.
  bool WaitForExit(std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (pid_ > 0) {
      if (waitpid(pid_, &status_, WNOHANG) == pid_) {
        pid_ = -1;
        return true;
      }
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
  // After it exited: whether a SIGKILL ended it (ours or its own).
  bool KilledBySigkill() const { return WIFSIGNALED(status_) && WTERMSIG(status_) == SIGKILL; }

  int port() const { return port_; }
  std::string log() const { return ReadFile(log_); }
  std::unique_ptr<client::Client> Connect() const {
    auto c = client::Client::Connect(absl::StrCat("127.0.0.1:", port_));
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *std::move(c) : nullptr;
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
  int port_ = 0;
  int status_ = 0;
};

}  // namespace resident::tenancy

#endif  // RESIDENT_TESTS_TENANCY_SERVER_PROCESS_H_

// The real resident-server binary as a child process of a test, its log in
// a file, its port read from the "listening on" line. Shared by every suite
// that kills, restarts or measures the real binary.
//
//   ServerProcess server(binary, {"--device", "cpu"}, "/tmp/log");
//   if (!server.ok()) ...;
//   connect to server.target(); ... server.rss_bytes() ...; server.Kill(SIGTERM);
#ifndef RESIDENT_TESTS_SUPPORT_SERVER_PROCESS_H_
#define RESIDENT_TESTS_SUPPORT_SERVER_PROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace resident::testing {

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ServerProcess {
 public:
  // Starts `binary --listen 127.0.0.1:0 args...` with `env` set in the
  // child only, and waits (up to 10 s) for its port.
  ServerProcess(const std::string& binary, const std::vector<std::string>& args,
                const std::string& log, const std::map<std::string, std::string>& env = {})
      : log_(log) {
    std::vector<std::string> argv = {binary, "--listen", "127.0.0.1:0"};
    argv.insert(argv.end(), args.begin(), args.end());
    unlink(log.c_str());  // never read an earlier run's port
    pid_ = fork();
    if (pid_ == 0) {
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      const int fd = open(log.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> c;
      c.reserve(argv.size());
      c.reserve(argv.size());
      c.reserve(argv.size());
      c.reserve(argv.size());
      for (std::string& a : argv) c.push_back(a.data());
      c.push_back(nullptr);
      execv(c[0], c.data());
      _exit(127);
    }
    const std::regex port_re("\\(port ([0-9]+)\\)");
    for (int i = 0; i < 1000 && port_ == 0 && alive(); ++i) {
      std::smatch m;
      const std::string text = ReadWholeFile(log);
      if (std::regex_search(text, m, port_re)) {
        port_ = std::stoi(m[1]);
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  }
  ~ServerProcess() { Kill(SIGKILL); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  bool ok() const { return port_ != 0; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string target() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return ReadWholeFile(log_); }

  // Whether the process still runs (false once it exited, with its status
  // kept in exit_status()).
  bool alive() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      exit_status_ = status;
      return false;
    }
    return true;
  }
  int exit_status() const { return exit_status_; }

  // Resident set size from /proc, bytes (0 if gone).
  int64_t rss_bytes() const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
    }
    return 0;
  }

  // Waits up to `limit` for the process to exit by itself; true if it did.
  bool WaitForExit(std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (alive()) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
  // After it exited: whether a SIGKILL ended it (ours or its own).
  bool KilledBySigkill() const {
    return WIFSIGNALED(exit_status_) && WTERMSIG(exit_status_) == SIGKILL;
  }

  // Sends `sig` and waits for the exit; returns the wait status.
  int Kill(int sig = SIGKILL) {
    if (pid_ <= 0) return exit_status_;
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    exit_status_ = status;
    return status;
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_status_ = 0;
};

}  // namespace resident::testing

#endif  // RESIDENT_TESTS_SUPPORT_SERVER_PROCESS_H_

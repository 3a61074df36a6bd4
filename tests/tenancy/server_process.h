// The real resident-server binary (RESIDENT_SERVER_BINARY) as a child
// process on a --data-dir, for the suites that kill it with SIGKILL and
// restart it (tests/support/server_process.h underneath); plus small helpers
// those suites share.
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
#include "tests/support/server_process.h"
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

// resident-server on the CPU with a --data-dir, as a child process whose
// log goes to a file. `env` is set in the child only (e.g.
// RESIDENT_FAULT_INJECT).
class ServerProcess : public resident::testing::ServerProcess {
 public:
  ServerProcess(const std::string& data_dir, const std::string& log,
                const std::map<std::string, std::string>& env = {})
      : resident::testing::ServerProcess(RESIDENT_SERVER_BINARY,
                                         {"--device", "cpu", "--data-dir", data_dir}, log, env) {}

  std::unique_ptr<client::Client> Connect() const {
    auto c = client::Client::Connect(target());
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *std::move(c) : nullptr;
  }
};

}  // namespace resident::tenancy

#endif  // RESIDENT_TESTS_TENANCY_SERVER_PROCESS_H_
